#include "hip_driver.hpp"

#include <dlfcn.h>

#include <stdexcept>

#include "../blocking.hpp"

namespace flyrt::launch::hip
{
namespace
{

struct loaded_runtime
{
    runtime_api api{};
    std::string problem; // empty: usable

    loaded_runtime()
    {
        void* library = nullptr;
        for (const char* name : {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"})
        {
            library = library != nullptr ? library : dlopen(name, RTLD_NOW | RTLD_LOCAL);
        }
        if (library == nullptr)
        {
            problem = "no HIP runtime on this machine (libamdhip64.so: " + std::string(dlerror()) + ")";
            return;
        }
        const bool resolved = bind(library, api.hipInit, "hipInit") &&
                              bind(library, api.hipGetDeviceCount, "hipGetDeviceCount") &&
                              bind(library, api.hipGetDevice, "hipGetDevice") &&
                              bind(library, api.hipSetDevice, "hipSetDevice") &&
                              bind(library, api.hipModuleLoadData, "hipModuleLoadData") &&
                              bind(library, api.hipModuleUnload, "hipModuleUnload") &&
                              bind(library, api.hipModuleGetFunction, "hipModuleGetFunction") &&
                              bind(library, api.hipModuleGetGlobal, "hipModuleGetGlobal") &&
                              bind(library, api.hipModuleLaunchKernel, "hipModuleLaunchKernel") &&
                              bind(library, api.hipStreamQuery, "hipStreamQuery") &&
                              bind(library, api.hipMemcpyDtoH, "hipMemcpyDtoH") &&
                              bind(library, api.hipMemsetD8, "hipMemsetD8") &&
                              bind(library, api.hipGetErrorName, "hipGetErrorName") &&
                              bind(library, api.hipGetErrorString, "hipGetErrorString");
        if (!resolved)
        {
            return;
        }
        int count = 0;
        if (const hipError_t result = api.hipInit(0); result != hipSuccess)
        {
            problem = "no AMD GPU (hipInit gave " + text_of(result) + ")";
        }
        else if (api.hipGetDeviceCount(&count) != hipSuccess || count == 0)
        {
            problem = "no AMD GPU (the HIP runtime sees no device)";
        }
    }

    template <class F> bool bind(void* library, F& slot, const char* name)
    {
        slot = reinterpret_cast<F>(dlsym(library, name));
        if (slot == nullptr)
        {
            problem = std::string("the HIP runtime lacks ") + name + " (too old for flyrt)";
        }
        return slot != nullptr;
    }

    std::string text_of(hipError_t result) const
    {
        const char* name = api.hipGetErrorName != nullptr ? api.hipGetErrorName(result) : nullptr;
        const char* description = api.hipGetErrorString != nullptr ? api.hipGetErrorString(result) : nullptr;
        if (name == nullptr)
        {
            return "HIP error " + std::to_string(result);
        }
        return std::string(name) + " (" + (description != nullptr ? description : "?") + ")";
    }
};

const loaded_runtime& loaded()
{
    static const loaded_runtime instance;
    return instance;
}

} // namespace

std::string problem()
{
    return loaded().problem;
}

const runtime_api& runtime()
{
    const loaded_runtime& r = loaded();
    if (!r.problem.empty())
    {
        throw std::runtime_error("HIP is not usable here: " + r.problem);
    }
    return r.api;
}

std::string error_text(hipError_t result)
{
    return loaded().text_of(result);
}

hipError_t wait(hipStream_t stream, bool (*interrupted)())
{
    const runtime_api& api = runtime();
    hipError_t state = hipSuccess;
    const bool finished = poll_until(
        [&]
        {
            state = api.hipStreamQuery(stream);
            return state != hipErrorNotReady;
        },
        interrupted);
    return finished ? state : hipErrorNotReady;
}

} // namespace flyrt::launch::hip
