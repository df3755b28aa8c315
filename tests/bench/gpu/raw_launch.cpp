// The peer of flyrt's cache-hit launch: the same PTX kernel launched with
// the CUDA driver API directly, back to back from C++. Prints the host time
// per cuLaunchKernel in microseconds (median of 5 runs of `calls`).
//   raw_launch KERNEL.ptx ENTRY calls
#include <cuda.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#define CHECK(call)                                                                                          \
    do                                                                                                       \
    {                                                                                                        \
        CUresult result = (call);                                                                            \
        if (result != CUDA_SUCCESS)                                                                          \
        {                                                                                                    \
            const char* name = nullptr;                                                                      \
            cuGetErrorName(result, &name);                                                                   \
            std::fprintf(stderr, "%s failed: %s\n", #call, name);                                            \
            return 1;                                                                                        \
        }                                                                                                    \
    } while (0)

int main(int argc, char** argv)
{
    if (argc != 4)
    {
        std::fprintf(stderr, "usage: %s KERNEL.ptx ENTRY calls\n", argv[0]);
        return 2;
    }
    std::ifstream file(argv[1]);
    std::stringstream ptx;
    ptx << file.rdbuf();
    const int calls = std::atoi(argv[3]);
    CHECK(cuInit(0));
    CUdevice device;
    CHECK(cuDeviceGet(&device, 0));
    CUcontext context;
    CHECK(cuDevicePrimaryCtxRetain(&context, device));
    CHECK(cuCtxSetCurrent(context));
    CUmodule module;
    CHECK(cuModuleLoadData(&module, ptx.str().c_str()));
    CUfunction function;
    CHECK(cuModuleGetFunction(&function, module, argv[2]));
    // vector_add's parameters: a, b, c as (pointer, shape, stride), then n.
    const int n = 16;
    CUdeviceptr buffers[3];
    for (CUdeviceptr& buffer : buffers)
    {
        CHECK(cuMemAlloc(&buffer, n * sizeof(float)));
    }
    std::int32_t shape = n, stride = 1, count = n;
    void* arguments[] = {
        &buffers[0], &shape, &stride, &buffers[1], &shape, &stride, &buffers[2], &shape, &stride, &count};
    std::vector<double> per_call;
    for (int run = 0; run < 6; ++run)
    {
        const auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < calls; ++i)
        {
            CHECK(cuLaunchKernel(function, 1, 1, 1, 256, 1, 1, 0, nullptr, arguments, nullptr));
        }
        const auto stop = std::chrono::steady_clock::now();
        CHECK(cuCtxSynchronize());
        if (run > 0) // the first is warm-up
        {
            per_call.push_back(std::chrono::duration<double, std::micro>(stop - start).count() / calls);
        }
    }
    std::sort(per_call.begin(), per_call.end());
    std::printf("%.3f\n", per_call[per_call.size() / 2]);
    return 0;
}
