#include "hip_kernel.hpp"

#include <array>
#include <stdexcept>

#include "../../jit/amdgpu_metadata.hpp"
#include "../blocking.hpp"
#include "kernel_arguments.hpp"

namespace flyrt::launch::hip
{
namespace
{

// What AMD GPUs allow a block (a workgroup): threads, and LDS bytes.
// AMD's usual limits (gfx9): 1024 threads and 64 KiB of LDS a block.
constexpr launch_limits amd_limits = {
    {0x7FFFFFFF, 0x7FFFFFFF, 0x7FFFFFFF}, {1024, 1024, 1024}, 1024, 64 * 1024};
// HIP's limit on a kernel's explicit arguments: 4 KiB.
constexpr std::size_t max_argument_bytes = 4096;

// Makes `ordinal` HIP's current device on this thread until this goes.
class current_device
{
public:
    explicit current_device(int ordinal) : m_api(runtime())
    {
        m_api.hipGetDevice(&m_previous);
        if (m_previous != ordinal)
        {
            m_api.hipSetDevice(ordinal);
        }
    }
    ~current_device() { m_api.hipSetDevice(m_previous); }
    current_device(const current_device&) = delete;
    current_device& operator=(const current_device&) = delete;

private:
    const runtime_api& m_api;
    int m_previous = 0;
};

} // namespace

hip_kernel::hip_kernel(const jit::device_image& image, int ordinal)
    : m_name(image.kernel), m_device(ordinal), m_arguments(image.arguments), m_known_block(image.known_block),
      m_reports(image.reports)
{
    if (kernel_arguments_size(m_arguments) > max_argument_bytes)
    {
        throw std::runtime_error(
            "kernel " + m_name + " takes " + std::to_string(kernel_arguments_size(m_arguments)) +
            " bytes of arguments; HIP launches take at most " + std::to_string(max_argument_bytes));
    }
    const runtime_api& api = runtime();
    current_device on(ordinal);
    if (const hipError_t loaded = api.hipModuleLoadData(&m_module, image.code.data()); loaded != hipSuccess)
    {
        throw std::runtime_error("the HIP runtime rejected the code object of kernel " + m_name + ": " +
                                 error_text(loaded));
    }
    hipError_t found = api.hipModuleGetFunction(&m_function, m_module, m_name.c_str());
    if (found == hipSuccess && !m_reports.empty())
    {
        found = api.hipModuleGetGlobal(&m_report, &m_report_bytes, m_module, codegen::report_global);
    }
    if (found != hipSuccess)
    {
        api.hipModuleUnload(m_module);
        throw std::runtime_error("kernel " + m_name +
                                 " is missing from its own code object: " + error_text(found));
    }
    m_resources.kernel = m_name;
    m_resources.device = ordinal;
    m_resources.image_kind = "code object";
    m_resources.image_bytes = static_cast<std::int64_t>(image.code.size());
    for (const jit::code_object_kernel& k : jit::read_code_object(image.code))
    {
        if (k.name == m_name)
        {
            m_resources.registers = static_cast<int>(k.vgprs);
            m_resources.static_shared_bytes = static_cast<int>(k.group_segment_bytes);
            m_resources.local_bytes = static_cast<int>(k.private_segment_bytes);
        }
    }
}

hip_kernel::~hip_kernel()
{
    current_device on(m_device);
    runtime().hipModuleUnload(m_module);
}

// The LDS a launch asks for beyond what the code object states (a kernel
// with static arrays only states them; others take all at launch).
std::uint32_t hip_kernel::dynamic_shared_bytes(const geometry& g) const
{
    const std::uint32_t all = g.static_shared_bytes + g.smem_bytes;
    const auto stated = static_cast<std::uint32_t>(m_resources.static_shared_bytes);
    return all > stated ? all - stated : 0;
}

std::int32_t hip_kernel::launch(const std::uint64_t* slots, const geometry& g, std::int64_t stream)
{
    const std::string problem =
        geometry_problem(g, m_known_block[0] > 0 ? m_known_block.data() : nullptr, amd_limits);
    if (!problem.empty())
    {
        return fail("kernel " + m_name + ": " + problem + " on this GPU");
    }
    if (g.grid[0] == 0 || g.grid[1] == 0 || g.grid[2] == 0)
    {
        return 0; // an empty grid runs nothing, as on the CPU
    }
    const runtime_api& api = runtime();
    current_device on(m_device);
    std::array<std::uint8_t, max_argument_bytes> arguments;
    pack_kernel_arguments(m_arguments, slots, arguments.data());
    std::size_t size = kernel_arguments_size(m_arguments);
    void* extra[] = {hip_launch_param_buffer_pointer,
                     arguments.data(),
                     hip_launch_param_buffer_size,
                     &size,
                     hip_launch_param_end};
    auto* handle = reinterpret_cast<hipStream_t>(static_cast<std::intptr_t>(stream));
    const hipError_t launched = api.hipModuleLaunchKernel(m_function,
                                                          g.grid[0],
                                                          g.grid[1],
                                                          g.grid[2],
                                                          g.block[0],
                                                          g.block[1],
                                                          g.block[2],
                                                          dynamic_shared_bytes(g),
                                                          handle,
                                                          nullptr,
                                                          extra);
    if (launched != hipSuccess)
    {
        return fail("kernel " + m_name + ": launch failed: " + error_text(launched));
    }
    return m_reports.empty() ? 0 : read_report(handle);
}

std::int32_t hip_kernel::read_report(hipStream_t stream)
{
    const runtime_api& api = runtime();
    return launch::read_report(
        m_name,
        m_reports,
        m_report_bytes,
        [&]
        {
            const hipError_t done = wait(stream, interrupt_check());
            return stream_wait{done == hipErrorNotReady,
                               done == hipSuccess || done == hipErrorNotReady ? std::string()
                                                                              : error_text(done)};
        },
        [&](report_record& record)
        {
            const hipError_t read = api.hipMemcpyDtoH(&record, m_report, sizeof record);
            return read == hipSuccess ? std::string() : error_text(read);
        },
        [&] { api.hipMemsetD8(m_report, 0, sizeof(report_record)); });
}

} // namespace flyrt::launch::hip
