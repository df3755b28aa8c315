// What a kernel's blocks cost, measured on earlier launches: whether waking
// the thread pool pays for a launch.
//
// Thread count says little about work: a persistent kernel (paged attention's
// workers) runs 8 blocks of 16 threads that each loop over thousands of
// pages. Launches are timed now and then (one in 16, and the first of each
// kernel), per kernel, in a small table that collisions only make forget.
#pragma once

#include <chrono>
#include <cstdint>

namespace flyrt::launch
{

class block_cost
{
public:
    // The cost slot of the kernel whose blocks `kernel` runs.
    static block_cost& of(const void* kernel);

    // Whether a launch of `kernel` was timed (and its slot not taken since).
    bool known(const void* kernel) const { return m_kernel == kernel; }
    // Nanoseconds `blocks` blocks of `kernel` are expected to take, or 0 when unknown.
    std::uint64_t expected_ns(const void* kernel, std::uint64_t blocks) const;

    // Whether to time this launch of `kernel` (always when nothing is known of it).
    bool sample(const void* kernel);

    // `blocks` blocks on `workers` threads took `elapsed`.
    void record(const void* kernel, std::uint64_t blocks, unsigned workers, std::chrono::nanoseconds elapsed);

private:
    const void* m_kernel = nullptr;
    std::uint64_t m_ns_per_block = 0;
    std::uint32_t m_launches = 0;
};

} // namespace flyrt::launch
