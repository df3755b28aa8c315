// The CUDA driver API, opened at run time (libcuda.so.1): flyrt builds, and
// runs on the CPU, without CUDA; only work on an NVIDIA GPU needs a driver.
// The few types and constants used are declared here as the driver's ABI
// defines them (cuda.h), so no CUDA headers are needed to build.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace flyrt::launch::cuda
{

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = std::uint64_t;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;

inline constexpr CUresult CUDA_SUCCESS = 0;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2; // then Y, Z
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5;  // then Y, Z
inline constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
inline constexpr int CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;
inline constexpr CUresult CUDA_ERROR_NOT_READY = 600;
inline constexpr unsigned CU_MEMHOSTALLOC_PORTABLE = 1;
inline constexpr unsigned CU_MEMHOSTALLOC_DEVICEMAP = 2;
inline constexpr int CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1;
inline constexpr int CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES = 2;
inline constexpr int CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3;
inline constexpr int CU_FUNC_ATTRIBUTE_NUM_REGS = 4;
inline constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;
inline constexpr int CU_JIT_INFO_LOG_BUFFER = 3;
inline constexpr int CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4;
inline constexpr int CU_JIT_ERROR_LOG_BUFFER = 5;
inline constexpr int CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;
inline constexpr int CU_JIT_GENERATE_LINE_INFO = 13;
inline constexpr int CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6;

// cuLaunchKernelEx's arguments (CUDA 12.0 on), as cuda.h lays them out.
struct CUlaunchAttribute
{
    int id;
    char pad[4];
    union
    {
        char bytes[64];
        int programmatic_stream_serialization_allowed;
    } value;
};

struct CUlaunchConfig
{
    unsigned grid[3];
    unsigned block[3];
    unsigned shared_bytes;
    CUstream stream;
    CUlaunchAttribute* attributes;
    unsigned attribute_count;
};

// The entry points flyrt calls, resolved once per process.
struct driver_api
{
    CUresult (*cuInit)(unsigned);
    CUresult (*cuDeviceGetCount)(int*);
    CUresult (*cuDeviceGet)(CUdevice*, int);
    CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice);
    CUresult (*cuDeviceGetName)(char*, int, CUdevice);
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
    CUresult (*cuCtxGetCurrent)(CUcontext*);
    CUresult (*cuCtxSetCurrent)(CUcontext);
    CUresult (*cuModuleLoadDataEx)(CUmodule*, const void*, unsigned, int*, void**);
    CUresult (*cuModuleUnload)(CUmodule);
    CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
    CUresult (*cuModuleGetGlobal)(CUdeviceptr*, std::size_t*, CUmodule, const char*);
    CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
    CUresult (*cuFuncGetAttribute)(int*, int, CUfunction);
    CUresult (*cuLaunchKernel)(CUfunction,
                               unsigned,
                               unsigned,
                               unsigned,
                               unsigned,
                               unsigned,
                               unsigned,
                               unsigned,
                               CUstream,
                               void**,
                               void**);
    // Null where the driver predates CUDA 12: kernels then launch without attributes.
    CUresult (*cuLaunchKernelEx)(const CUlaunchConfig*, CUfunction, void**, void**);
    CUresult (*cuStreamSynchronize)(CUstream);
    CUresult (*cuStreamQuery)(CUstream);
    CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, std::size_t);
    CUresult (*cuMemHostAlloc)(void**, std::size_t, unsigned);
    CUresult (*cuMemHostGetDevicePointer)(CUdeviceptr*, void*, unsigned);
    CUresult (*cuMemFreeHost)(void*);
    CUresult (*cuStreamIsCapturing)(CUstream, int*);
    CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, std::size_t);
    CUresult (*cuMemGetInfo)(std::size_t*, std::size_t*);
    CUresult (*cuGetErrorName)(CUresult, const char**);
    CUresult (*cuGetErrorString)(CUresult, const char**);
};

// The driver, initialized; throws std::runtime_error saying why there is
// none (no libcuda.so.1, or cuInit failed: no GPU, a driver too old).
const driver_api& driver();

// Whether a driver with at least one device answers (never throws).
bool available();

// "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)".
std::string error_text(CUresult result);

struct device_info
{
    int ordinal = 0;
    std::string name;
    int major = 0;
    int minor = 0;
    int multiprocessors = 0;
    int max_threads_per_block = 0;
    int max_block[3] = {0, 0, 0}; // per dimension
    int max_grid[3] = {0, 0, 0};
    std::int64_t max_shared_per_block = 0; // opt-in maximum
    std::int64_t l2_bytes = 0;
};

int device_count();
device_info device(int ordinal);

// Waits for the work queued on `stream` (a driver handle, as an integer; 0
// the legacy default stream) of device `ordinal`, polling, so the wait can
// be given up: `interrupted` is asked about every 20 ms and true ends the
// wait early (returns false; the work goes on on the GPU). Throws
// std::runtime_error for a fault the work raised.
bool synchronize(int ordinal, std::int64_t stream, bool (*interrupted)());

// The same wait on the current context's `stream`: its result (CUDA_SUCCESS,
// or the fault), or CUDA_ERROR_NOT_READY when `interrupted` ended it.
CUresult wait(CUstream stream, bool (*interrupted)());

// Makes device `ordinal`'s primary context (the one PyTorch uses) current
// on this thread, retaining it on first use; returns it.
CUcontext use_device(int ordinal);

} // namespace flyrt::launch::cuda
