#include "block_cost.hpp"

#include <array>
#include <cstdint>

namespace flyrt::launch
{
namespace
{

// Launches come from Python under the GIL, one at a time; a race between
// launches from threads that released it only blurs an estimate.
constexpr unsigned slot_bits = 6;
std::array<block_cost, 1u << slot_bits> g_costs;

} // namespace

block_cost& block_cost::of(const void* kernel)
{
    // Fibonacci hashing: code addresses share their low bits (alignment).
    const auto address = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(kernel));
    return g_costs[(address * 0x9E3779B97F4A7C15ull) >> (64 - slot_bits)];
}

std::uint64_t block_cost::expected_ns(const void* kernel, std::uint64_t blocks) const
{
    return m_kernel == kernel ? m_ns_per_block * blocks : 0;
}

bool block_cost::sample(const void* kernel)
{
    return m_kernel != kernel || m_launches++ % 16 == 0;
}

void block_cost::record(const void* kernel,
                        std::uint64_t blocks,
                        unsigned workers,
                        std::chrono::nanoseconds elapsed)
{
    if (m_kernel != kernel)
    {
        m_kernel = kernel;
        m_launches = 1;
    }
    m_ns_per_block = static_cast<std::uint64_t>(elapsed.count()) * workers / blocks;
}

} // namespace flyrt::launch
