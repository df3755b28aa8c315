#include "load_kernel.hpp"

#include <stdexcept>

#include "compile_only.hpp"
#include "cuda/cuda_kernel.hpp"
#include "hip/hip_kernel.hpp"

namespace flyrt::launch
{

std::unique_ptr<device_kernel> load_kernel(const jit::device_image& image, const target& kernels, int device)
{
    if (compile_only())
    {
        return std::make_unique<compiled_only_kernel>(
            image, kernels.max_threads_per_block, kernels.max_shared_bytes);
    }
    switch (kernels.kind)
    {
    case target_kind::nvptx:
        return std::make_unique<cuda::cuda_kernel>(image, device);
    case target_kind::amdgpu:
        return std::make_unique<hip::hip_kernel>(image, device);
    case target_kind::cpu:
        break;
    }
    throw std::runtime_error("device images for a target without a GPU runtime");
}

} // namespace flyrt::launch
