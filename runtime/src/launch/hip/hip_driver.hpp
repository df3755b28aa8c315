// ROCm's HIP runtime, opened at run time (libamdhip64.so): flyrt builds,
// compiles for AMD GPUs and runs on the CPU without ROCm; only launches on
// an AMD GPU need it. The few types and constants used are declared here as
// HIP's C ABI defines them (hip_runtime_api.h), so no HIP headers are
// needed to build.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace flyrt::launch::hip
{

using hipError_t = int;
using hipDeviceptr_t = void*;
using hipModule_t = struct ihipModule_t*;
using hipFunction_t = struct ihipModuleSymbol_t*;
using hipStream_t = struct ihipStream_t*;

inline constexpr hipError_t hipSuccess = 0;
inline constexpr hipError_t hipErrorNotReady = 600;
// hipModuleLaunchKernel's `extra`: the kernel arguments as one buffer.
inline void* const hip_launch_param_buffer_pointer = reinterpret_cast<void*>(0x01);
inline void* const hip_launch_param_buffer_size = reinterpret_cast<void*>(0x02);
inline void* const hip_launch_param_end = reinterpret_cast<void*>(0x03);

// The entry points flyrt calls, resolved once per process.
struct runtime_api
{
    hipError_t (*hipInit)(unsigned);
    hipError_t (*hipGetDeviceCount)(int*);
    hipError_t (*hipGetDevice)(int*);
    hipError_t (*hipSetDevice)(int);
    hipError_t (*hipModuleLoadData)(hipModule_t*, const void*);
    hipError_t (*hipModuleUnload)(hipModule_t);
    hipError_t (*hipModuleGetFunction)(hipFunction_t*, hipModule_t, const char*);
    hipError_t (*hipModuleGetGlobal)(hipDeviceptr_t*, std::size_t*, hipModule_t, const char*);
    hipError_t (*hipModuleLaunchKernel)(hipFunction_t,
                                        unsigned,
                                        unsigned,
                                        unsigned,
                                        unsigned,
                                        unsigned,
                                        unsigned,
                                        unsigned,
                                        hipStream_t,
                                        void**,
                                        void**);
    hipError_t (*hipStreamQuery)(hipStream_t);
    hipError_t (*hipMemcpyDtoH)(void*, hipDeviceptr_t, std::size_t);
    hipError_t (*hipMemsetD8)(hipDeviceptr_t, unsigned char, std::size_t);
    const char* (*hipGetErrorName)(hipError_t);
    const char* (*hipGetErrorString)(hipError_t);
};

// Why HIP cannot launch here ("" when it can): no libamdhip64, hipInit
// failed, or no AMD GPU answers. Never throws.
std::string problem();

// The runtime, with at least one device; throws std::runtime_error saying
// why there is none.
const runtime_api& runtime();

// "hipErrorInvalidValue (invalid argument)".
std::string error_text(hipError_t result);

// Waits for `stream`'s work as cuda::wait does: its result, or
// hipErrorNotReady when `interrupted` ended the wait.
hipError_t wait(hipStream_t stream, bool (*interrupted)());

} // namespace flyrt::launch::hip
