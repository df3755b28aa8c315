// Host code: relocatable objects for this machine's CPU, one per function,
// at O3; an object whose IR this process compiled before is reused.
#pragma once

#include <string>
#include <vector>

#include "flyrt/target.hpp"
#include "part_memo.hpp"

namespace llvm
{
class Module;
}

namespace flyrt::jit
{

// Registers this machine's target with LLVM, once per process: LLVM's registry
// is a list that two threads registering the same target at once make cyclic.
void initialize_native_target();

// Compiles `module` (which it modifies) for `cpu`. `llvm_ir_out`, if given,
// receives the optimized LLVM IR (every function is compiled then).
std::vector<compiled_part> compile_host(llvm::Module& module, const target& cpu, std::string* llvm_ir_out);

} // namespace flyrt::jit
