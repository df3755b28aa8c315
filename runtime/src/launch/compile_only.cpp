#include "compile_only.hpp"

#include <atomic>

namespace flyrt::launch
{
namespace
{

std::atomic<bool> g_compile_only{false};

} // namespace

void set_compile_only(bool on)
{
    g_compile_only = on;
}

bool compile_only()
{
    return g_compile_only;
}

compiled_only_kernel::compiled_only_kernel(const jit::device_image& image,
                                           int max_threads,
                                           std::int64_t max_shared_bytes)
    : m_known_block(image.known_block)
{
    const auto threads = static_cast<std::uint64_t>(max_threads);
    m_limits = {{0x7FFFFFFF, 0x7FFFFFFF, 0x7FFFFFFF},
                {threads, threads, threads},
                threads,
                static_cast<std::uint64_t>(max_shared_bytes)};
    m_resources.kernel = image.kernel;
    m_resources.device = -1; // loaded on no device
    // What a device would be handed (see cuda_kernel, hip_kernel).
    const bool elf = image.code.rfind("\x7f"
                                      "ELF",
                                      0) == 0;
    m_resources.image_kind = !image.binary.empty() ? "cubin" : elf ? "code object" : "ptx";
    m_resources.image_bytes =
        static_cast<std::int64_t>((image.binary.empty() ? image.code : image.binary).size());
}

std::int32_t compiled_only_kernel::launch(const std::uint64_t*, const geometry& g, std::int64_t)
{
    const std::string problem =
        geometry_problem(g, m_known_block[0] > 0 ? m_known_block.data() : nullptr, m_limits);
    return problem.empty() ? 0 : fail("kernel " + m_resources.kernel + ": " + problem + " on this target");
}

} // namespace flyrt::launch
