// The AMD target: each kernel an `amdgpu_kernel` entry in a module of its
// own, compiled to a code object (jit/amdgpu_machine.hpp) and launched from
// host code through the loaded-kernel table (gpu/device_launch.hpp) and
// ROCm's HIP runtime. What GPU targets share (ABI, shared memory as LDS,
// reports) is in gpu/gpu_kernel.hpp.
//
// Waves are 64 lanes. fx.mma keeps its 32-lane fragments: each half-wave is
// one warp of the DSL and does its own 16x16x16 product, on the MFMA unit.
#pragma once

#include <memory>

#include "../target_codegen.hpp"

namespace flyrt::codegen::amdgpu
{

std::unique_ptr<target_codegen> make_amdgpu_codegen(const target& t);

} // namespace flyrt::codegen::amdgpu
