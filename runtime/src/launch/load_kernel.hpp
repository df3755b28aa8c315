// A device image loaded where its target runs it: through the CUDA or HIP
// driver, or, in compile-only mode, nowhere.
#pragma once

#include <memory>

#include "../jit/code_bundle.hpp"
#include "device_kernel.hpp"
#include "flyrt/target.hpp"

namespace flyrt::launch
{

// `kernels` is the target the image was compiled for; `device` the GPU.
std::unique_ptr<device_kernel> load_kernel(const jit::device_image& image, const target& kernels, int device);

} // namespace flyrt::launch
