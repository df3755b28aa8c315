#include "cuda_kernel.hpp"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "../../codegen/nvptx/nvptx_codegen.hpp"
#include "../blocking.hpp"
#include "../kernel_output.hpp"
#include "../python_hooks.hpp"

namespace flyrt::launch::cuda
{
namespace
{

// The kernel launched last on each device, to name a suspect when an
// asynchronous fault surfaces at a later call.
constexpr int max_devices = 64;
// 4 KiB of parameters, 8 bytes each at most: CUDA's limit before Volta.
constexpr std::size_t max_parameters = 512;
std::atomic<const std::string*> g_last_launched[max_devices];

std::string suspect(int device)
{
    const std::string* last = device < max_devices ? g_last_launched[device].load() : nullptr;
    return last != nullptr ? "; the last flyrt kernel launched on this device was " + *last : "";
}

// Faults that leave the context unusable until the process restarts.
bool sticky(CUresult result)
{
    return result == 700 || result == 701 || result == 714 || result == 715 || result == 716 ||
           result == 717 || result == 718 || result == 719 || result == 720;
}

} // namespace

cuda_kernel::cuda_kernel(const jit::device_image& image, int ordinal)
    : m_name(image.kernel), m_device(ordinal), m_parameters(image.parameters),
      m_known_block(image.known_block), m_reports(image.reports),
      m_prints(image.code.find(std::string(") ") + codegen::nvptx::printf_function) != std::string::npos),
      m_overlaps_prior(image.code.find(codegen::nvptx::wait_for_prior_grids_instruction) != std::string::npos)
{
    if (m_parameters > max_parameters)
    {
        throw std::runtime_error("kernel " + m_name + " takes " + std::to_string(m_parameters) +
                                 " native arguments; CUDA launches take at most " +
                                 std::to_string(max_parameters));
    }
    const driver_api& api = driver();
    m_context = use_device(ordinal);
    const device_info info = cuda::device(ordinal);
    m_limits.threads = static_cast<std::uint64_t>(info.max_threads_per_block);
    m_limits.shared_bytes = static_cast<std::uint64_t>(info.max_shared_per_block);
    for (int d = 0; d < 3; ++d)
    {
        m_limits.grid[d] = static_cast<std::uint64_t>(info.max_grid[d]);
        m_limits.block[d] = static_cast<std::uint64_t>(info.max_block[d]);
    }
    std::vector<char> errors(16384, '\0');
    // Line information (the PTX's .loc) kept in the machine code, as nvcc's -lineinfo: Nsight Compute's
    // source view and cuda-gdb name the kernel's Python lines. The code itself is the same.
    int options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_GENERATE_LINE_INFO};
    void* values[] = {errors.data(), reinterpret_cast<void*>(errors.size()), reinterpret_cast<void*>(1)};
    std::size_t free_before = 0, free_after = 0, total = 0;
    api.cuMemGetInfo(&free_before, &total);
    // The cubin assembled at compile time where there is one; the PTX where
    // there is none or this driver cannot load it (a GPU of another
    // architecture, a driver older than the assembler): the driver compiles it.
    const bool assembled =
        !image.binary.empty() &&
        api.cuModuleLoadDataEx(&m_module, image.binary.data(), 3, options, values) == CUDA_SUCCESS;
    CUresult loaded = CUDA_SUCCESS;
    if (!assembled)
    {
        errors[0] = '\0';
        loaded = api.cuModuleLoadDataEx(&m_module, image.code.c_str(), 3, options, values);
    }
    m_resources.image_kind = assembled ? "cubin" : "ptx";
    m_resources.image_bytes = static_cast<std::int64_t>((assembled ? image.binary : image.code).size());
    if (loaded != CUDA_SUCCESS)
    {
        throw std::runtime_error("the CUDA driver rejected kernel " + m_name + ": " + error_text(loaded) +
                                 (errors[0] != '\0' ? "\n" + std::string(errors.data()) : std::string()));
    }
    CUresult found = api.cuModuleGetFunction(&m_function, m_module, m_name.c_str());
    CUdeviceptr record = 0, mirror = 0;
    std::size_t record_bytes = 0, mirror_bytes = 0;
    if (found == CUDA_SUCCESS && !m_reports.empty())
    {
        found = api.cuModuleGetGlobal(&record, &record_bytes, m_module, codegen::report_global);
    }
    if (found == CUDA_SUCCESS && record != 0)
    {
        found = api.cuModuleGetGlobal(&mirror, &mirror_bytes, m_module, codegen::report_mirror_global);
    }
    if (found != CUDA_SUCCESS)
    {
        api.cuModuleUnload(m_module);
        throw std::runtime_error("kernel " + m_name + " is missing from its own PTX: " + error_text(found));
    }
    if (record != 0)
    {
        if (record_bytes != sizeof(report_record) || mirror_bytes != sizeof(std::uint64_t))
        {
            api.cuModuleUnload(m_module);
            throw std::runtime_error("kernel " + m_name + ": its report record has an unexpected size");
        }
        try
        {
            m_reported = report_channel::open(m_name, ordinal, record, mirror, m_reports);
        }
        catch (...)
        {
            api.cuModuleUnload(m_module);
            throw;
        }
    }
    api.cuMemGetInfo(&free_after, &total);
    m_resources.kernel = m_name;
    m_resources.device = ordinal;
    m_resources.device_bytes =
        free_before > free_after ? static_cast<std::int64_t>(free_before - free_after) : 0;
    api.cuFuncGetAttribute(&m_resources.registers, CU_FUNC_ATTRIBUTE_NUM_REGS, m_function);
    api.cuFuncGetAttribute(&m_resources.static_shared_bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, m_function);
    api.cuFuncGetAttribute(&m_resources.local_bytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, m_function);
    api.cuFuncGetAttribute(&m_resources.constant_bytes, CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, m_function);
}

cuda_kernel::~cuda_kernel()
{
    for (auto& last : g_last_launched)
    {
        const std::string* mine = &m_name;
        last.compare_exchange_strong(mine, nullptr);
    }
    const driver_api& api = driver();
    CUcontext current = nullptr;
    api.cuCtxGetCurrent(&current);
    api.cuCtxSetCurrent(m_context);
    if (m_reported != nullptr)
    {
        m_reported->close();
        m_reported.reset(); // its host record, in this context
    }
    api.cuModuleUnload(m_module);
    api.cuCtxSetCurrent(current);
}

// The driver writes a kernel's printf output to C's stdout when the work
// that printed completes: wait for it (not while a graph is being captured,
// which would end the capture), and flush it there.
std::int32_t cuda_kernel::finish_printing(CUstream stream) const
{
    int capturing = 0;
    if (driver().cuStreamIsCapturing(stream, &capturing) != CUDA_SUCCESS || capturing != 0)
    {
        return 0;
    }
    const CUresult done = wait(stream, &python_interrupted);
    if (done == CUDA_ERROR_NOT_READY)
    {
        return status_interrupted;
    }
    if (done != CUDA_SUCCESS)
    {
        return fail("kernel " + m_name + ": " + error_text(done));
    }
    std::fflush(stdout);
    kernel_output::note_c_stdio();
    return 0;
}

std::int32_t cuda_kernel::launch(const std::uint64_t* slots, const geometry& g, std::int64_t stream)
{
    const driver_api& api = driver();
    const std::uint32_t shared = g.static_shared_bytes + g.smem_bytes;
    const std::string problem =
        geometry_problem(g, m_known_block[0] > 0 ? m_known_block.data() : nullptr, m_limits);
    if (!problem.empty())
    {
        return fail("kernel " + m_name + ": " + problem + " on this GPU");
    }
    if (g.grid[0] == 0 || g.grid[1] == 0 || g.grid[2] == 0)
    {
        return 0; // an empty grid runs nothing, as on the CPU
    }
    CUcontext current = nullptr;
    api.cuCtxGetCurrent(&current);
    if (current != m_context)
    {
        api.cuCtxSetCurrent(m_context);
    }
    auto* handle = reinterpret_cast<CUstream>(static_cast<std::intptr_t>(stream));
    if (m_reported != nullptr)
    {
        if (const std::int32_t earlier = m_reported->launching(handle); earlier != 0)
        {
            return earlier; // raised here: a checked launch does not wait for its own report
        }
    }
    if (shared > static_cast<std::uint32_t>(m_dynamic_shared_limit))
    {
        // Above 48 KiB a function must opt in to its dynamic shared memory.
        const CUresult raised = api.cuFuncSetAttribute(
            m_function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(shared));
        if (raised != CUDA_SUCCESS)
        {
            return fail("kernel " + m_name + ": cannot allow it " + std::to_string(shared) +
                        " bytes of shared memory: " + error_text(raised));
        }
        m_dynamic_shared_limit = static_cast<int>(shared);
    }
    void* arguments[max_parameters];
    for (std::size_t i = 0; i < m_parameters; ++i)
    {
        arguments[i] = const_cast<std::uint64_t*>(slots + i); // the driver copies each parameter's bytes
    }
    const CUresult launched = start(g, shared, handle, arguments);
    if (launched != CUDA_SUCCESS)
    {
        return fail("kernel " + m_name + ": launch failed: " + error_text(launched) +
                    (sticky(launched)
                         ? suspect(m_device) + " (an earlier launch faulted; this process's CUDA context is "
                                               "unusable until it restarts)"
                         : std::string()));
    }
    if (m_device < max_devices)
    {
        g_last_launched[m_device].store(&m_name);
    }
    if (m_prints)
    {
        if (const std::int32_t status = finish_printing(handle); status != 0)
        {
            return status;
        }
    }
    return 0;
}

CUresult cuda_kernel::start(const geometry& g, std::uint32_t shared, CUstream stream, void** arguments)
{
    const driver_api& api = driver();
    if (!m_overlaps_prior || api.cuLaunchKernelEx == nullptr)
    {
        return api.cuLaunchKernel(m_function,
                                  g.grid[0],
                                  g.grid[1],
                                  g.grid[2],
                                  g.block[0],
                                  g.block[1],
                                  g.block[2],
                                  shared,
                                  stream,
                                  arguments,
                                  nullptr);
    }
    // Programmatic dependent launch: the grid may start once the one ahead of it in the stream lets
    // it (griddepcontrol.launch_dependents, or its end), and waits for it where it says.
    CUlaunchAttribute overlap{};
    overlap.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    overlap.value.programmatic_stream_serialization_allowed = 1;
    CUlaunchConfig config{};
    for (int d = 0; d < 3; ++d)
    {
        config.grid[d] = g.grid[d];
        config.block[d] = g.block[d];
    }
    config.shared_bytes = shared;
    config.stream = stream;
    config.attributes = &overlap;
    config.attribute_count = 1;
    const CUresult launched = api.cuLaunchKernelEx(&config, m_function, arguments, nullptr);
    if (launched == CUDA_SUCCESS || sticky(launched))
    {
        return launched;
    }
    // A driver that refuses the overlap (an optimization; the kernel waits either way): stream order
    // from now on, and this launch's error, if it has one of its own, from the plain launch.
    m_overlaps_prior = false;
    return start(g, shared, stream, arguments);
}

} // namespace flyrt::launch::cuda
