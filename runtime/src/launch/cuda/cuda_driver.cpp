#include "cuda_driver.hpp"

#include "../blocking.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace flyrt::launch::cuda
{
namespace
{

struct loaded_driver
{
    driver_api api{};
    std::string problem; // empty: usable

    loaded_driver()
    {
        void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        if (library == nullptr)
        {
            problem = std::string("no NVIDIA driver on this machine (") + dlerror() + ")";
            return;
        }
        // Versioned names where cuda.h maps the API to them.
        const bool resolved = bind(library, api.cuInit, "cuInit") &&
                              bind(library, api.cuDeviceGetCount, "cuDeviceGetCount") &&
                              bind(library, api.cuDeviceGet, "cuDeviceGet") &&
                              bind(library, api.cuDeviceGetAttribute, "cuDeviceGetAttribute") &&
                              bind(library, api.cuDeviceGetName, "cuDeviceGetName") &&
                              bind(library, api.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain") &&
                              bind(library, api.cuCtxGetCurrent, "cuCtxGetCurrent") &&
                              bind(library, api.cuCtxSetCurrent, "cuCtxSetCurrent") &&
                              bind(library, api.cuModuleLoadDataEx, "cuModuleLoadDataEx") &&
                              bind(library, api.cuModuleUnload, "cuModuleUnload") &&
                              bind(library, api.cuModuleGetFunction, "cuModuleGetFunction") &&
                              bind(library, api.cuModuleGetGlobal, "cuModuleGetGlobal_v2") &&
                              bind(library, api.cuFuncSetAttribute, "cuFuncSetAttribute") &&
                              bind(library, api.cuFuncGetAttribute, "cuFuncGetAttribute") &&
                              bind(library, api.cuLaunchKernel, "cuLaunchKernel") &&
                              bind(library, api.cuStreamSynchronize, "cuStreamSynchronize") &&
                              bind(library, api.cuStreamQuery, "cuStreamQuery") &&
                              bind(library, api.cuMemcpyHtoD, "cuMemcpyHtoD_v2") &&
                              bind(library, api.cuMemHostAlloc, "cuMemHostAlloc") &&
                              bind(library, api.cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2") &&
                              bind(library, api.cuMemFreeHost, "cuMemFreeHost") &&
                              bind(library, api.cuStreamIsCapturing, "cuStreamIsCapturing") &&
                              bind(library, api.cuMemsetD8, "cuMemsetD8_v2") &&
                              bind(library, api.cuMemGetInfo, "cuMemGetInfo_v2") &&
                              bind(library, api.cuGetErrorName, "cuGetErrorName") &&
                              bind(library, api.cuGetErrorString, "cuGetErrorString");
        if (!resolved)
        {
            return;
        }
        api.cuLaunchKernelEx =
            reinterpret_cast<decltype(api.cuLaunchKernelEx)>(dlsym(library, "cuLaunchKernelEx"));
        if (const CUresult result = api.cuInit(0); result != CUDA_SUCCESS)
        {
            problem = "the NVIDIA driver did not start: cuInit gave " + text_of(result);
        }
    }

    template <class F> bool bind(void* library, F& slot, const char* name)
    {
        slot = reinterpret_cast<F>(dlsym(library, name));
        if (slot == nullptr)
        {
            problem = std::string("the NVIDIA driver lacks ") + name + " (too old for flyrt)";
        }
        return slot != nullptr;
    }

    std::string text_of(CUresult result) const
    {
        const char* name = nullptr;
        const char* description = nullptr;
        if (api.cuGetErrorName == nullptr || api.cuGetErrorName(result, &name) != CUDA_SUCCESS)
        {
            return "CUDA error " + std::to_string(result);
        }
        api.cuGetErrorString(result, &description);
        return std::string(name) + " (" + (description != nullptr ? description : "?") + ")";
    }
};

const loaded_driver& loaded()
{
    static const loaded_driver instance;
    return instance;
}

void check(CUresult result, const char* what)
{
    if (result != CUDA_SUCCESS)
    {
        throw std::runtime_error(std::string(what) + " failed: " + error_text(result));
    }
}

} // namespace

const driver_api& driver()
{
    const loaded_driver& d = loaded();
    if (!d.problem.empty())
    {
        throw std::runtime_error("CUDA is not usable here: " + d.problem);
    }
    return d.api;
}

bool available()
{
    return loaded().problem.empty() && device_count() > 0;
}

std::string error_text(CUresult result)
{
    return loaded().text_of(result);
}

int device_count()
{
    int count = 0;
    if (driver().cuDeviceGetCount(&count) != CUDA_SUCCESS)
    {
        return 0;
    }
    return count;
}

device_info device(int ordinal)
{
    const driver_api& api = driver();
    const int count = device_count();
    if (ordinal < 0 || ordinal >= count)
    {
        throw std::runtime_error("CUDA device " + std::to_string(ordinal) +
                                 " does not exist (this machine has " + std::to_string(count) + ")");
    }
    CUdevice handle = 0;
    check(api.cuDeviceGet(&handle, ordinal), "cuDeviceGet");
    auto attribute = [&](int which)
    {
        int value = 0;
        check(api.cuDeviceGetAttribute(&value, which, handle), "cuDeviceGetAttribute");
        return value;
    };
    device_info info;
    info.ordinal = ordinal;
    char name[256] = {};
    check(api.cuDeviceGetName(name, sizeof name, handle), "cuDeviceGetName");
    info.name = name;
    info.major = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    info.minor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    info.multiprocessors = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    info.max_threads_per_block = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    for (int d = 0; d < 3; ++d)
    {
        info.max_block[d] = attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X + d);
        info.max_grid[d] = attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X + d);
    }
    info.max_shared_per_block = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    info.l2_bytes = attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    return info;
}

CUcontext use_device(int ordinal)
{
    const driver_api& api = driver();
    // Primary contexts, retained once and kept for the process's life: the
    // one PyTorch uses on the same device, so pointers pass freely.
    static std::mutex mutex;
    static std::vector<CUcontext> contexts;
    CUcontext context = nullptr;
    {
        std::lock_guard<std::mutex> lock(mutex);
        const bool known = ordinal >= 0 && static_cast<std::size_t>(ordinal) < contexts.size() &&
                           contexts[ordinal] != nullptr;
        if (!known)
        {
            if (ordinal < 0 || ordinal >= device_count())
            {
                throw std::runtime_error("CUDA device " + std::to_string(ordinal) + " does not exist");
            }
            contexts.resize(std::max(contexts.size(), static_cast<std::size_t>(ordinal) + 1), nullptr);
            CUdevice handle = 0;
            check(api.cuDeviceGet(&handle, ordinal), "cuDeviceGet");
            check(api.cuDevicePrimaryCtxRetain(&contexts[ordinal], handle), "cuDevicePrimaryCtxRetain");
        }
        context = contexts[ordinal];
    }
    CUcontext current = nullptr;
    api.cuCtxGetCurrent(&current);
    if (current != context)
    {
        check(api.cuCtxSetCurrent(context), "cuCtxSetCurrent");
    }
    return context;
}

CUresult wait(CUstream stream, bool (*interrupted)())
{
    // Polled, not waited for in the driver, so that `interrupted` is asked.
    CUresult state = CUDA_SUCCESS;
    const bool finished = poll_until(
        [&]
        {
            state = driver().cuStreamQuery(stream);
            return state != CUDA_ERROR_NOT_READY;
        },
        interrupted);
    if (!finished)
    {
        return CUDA_ERROR_NOT_READY;
    }
    // Done: this returns at once, and it is what hands kernels' printf output
    // to C's stdout (polling does not).
    return state == CUDA_SUCCESS ? driver().cuStreamSynchronize(stream) : state;
}

bool synchronize(int ordinal, std::int64_t stream, bool (*interrupted)())
{
    use_device(ordinal);
    const CUresult state = wait(reinterpret_cast<CUstream>(stream), interrupted);
    if (state != CUDA_SUCCESS && state != CUDA_ERROR_NOT_READY)
    {
        throw std::runtime_error("waiting for CUDA device " + std::to_string(ordinal) + ": " +
                                 error_text(state));
    }
    return state == CUDA_SUCCESS;
}

} // namespace flyrt::launch::cuda
