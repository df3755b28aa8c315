// Device images for NVIDIA GPUs: one kernel's LLVM module to PTX at O3, with
// CUDA's libdevice linked when the kernel calls it (f64 exp and log; sin, cos,
// tanh, erf and pow).
//
// LLVM 19's NVPTX backend ends the process (a fatal error, no exception) on
// some generic math intrinsics, and a call it cannot resolve becomes an
// extern the driver rejects at load: the optimized module is checked for
// both before it reaches the backend, so a bad kernel is a Python error.
#pragma once

#include <string>

#include "flyrt/target.hpp"
#include "part_memo.hpp"

namespace llvm
{
class Module;
}

namespace flyrt::jit
{

// Where CUDA's libdevice.10.bc is ("" when this machine has none).
void set_libdevice_path(const std::string& path);

// PTX for `kernel` (a module holding one kernel, which it modifies).
compiled_part compile_ptx(llvm::Module& kernel, const target& gpu, std::string* llvm_ir_out);

} // namespace flyrt::jit
