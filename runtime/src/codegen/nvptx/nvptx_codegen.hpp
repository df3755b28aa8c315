// The NVIDIA target: each kernel a PTX entry (`ptx_kernel` calling
// convention) in a module of its own, launched from host code through the
// loaded-kernel table (gpu/device_launch.hpp) and the CUDA driver. What
// GPU targets share (ABI, shared memory, reports) is in gpu/gpu_kernel.hpp.
#pragma once

#include <memory>

#include "../target_codegen.hpp"

namespace flyrt::codegen::nvptx
{

// CUDA's device printf, which the driver resolves: fx.printf calls it.
inline constexpr const char* printf_function = "vprintf";
// What a kernel that may start before the one ahead of it ends waits with (PTX ISA 7.8, sm_90 on):
// the launch lets such a kernel overlap its predecessor.
inline constexpr const char* wait_for_prior_grids_instruction = "griddepcontrol.wait";
// The FP8 tensor-core instruction (PTX ISA 8.4 and sm_89 on).
inline constexpr const char* fp8_mma_instruction = "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32";

std::unique_ptr<target_codegen> make_nvptx_codegen(const target& t);

} // namespace flyrt::codegen::nvptx
