// The NVIDIA target: each kernel a PTX entry (`ptx_kernel` calling
// convention) in a module of its own, launched from host code through the
// loaded-kernel table (gpu/device_launch.hpp) and the CUDA driver. What
// GPU targets share (ABI, shared memory, reports) is in gpu/gpu_kernel.hpp.
#pragma once

#include <memory>

#include "../target_codegen.hpp"

namespace flyrt::codegen::nvptx
{

std::unique_ptr<target_codegen> make_nvptx_codegen(const target& t);

} // namespace flyrt::codegen::nvptx
