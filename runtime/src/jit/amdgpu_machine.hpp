// Code objects for AMD GPUs: one kernel's LLVM module to an AMDGPU object
// at O3 (code object v5), linked by ld.lld into the shared ELF that HIP's
// hipModuleLoadData takes. The linker runs as a program: $FLYDSL_LLD, else
// LLVM 19's ld.lld (ld.lld-19 on PATH, or beside the LLVM flyrt was built
// with). ROCm's ocml is linked into a kernel that calls it (sin, cos, tanh,
// erf, pow); calls nothing resolves are a Python error before the backend
// sees them.
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

// The code object for `kernel` (a module holding one kernel, which it modifies).
compiled_part compile_code_object(llvm::Module& kernel, const target& gpu, std::string* llvm_ir_out);

// Where ROCm's ocml.bc is ("" when this machine has none).
void set_ocml_path(const std::string& path);

// The ld.lld flyrt runs ("" when none is found).
std::string linker_path();

} // namespace flyrt::jit
