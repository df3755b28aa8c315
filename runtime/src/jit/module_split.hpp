// One LLVM module per function, so that each compiles (and is reused) alone.
//
// A traced module holds the host launcher and its kernels; a helper edit
// changes one kernel, and recompiling the others would be wasted work. Every
// defined function gets its own module, with the other functions declared
// and the module's private constants copied in; functions become external
// so the parts link again in one JITDylib. Helpers are inlined when traced,
// so no optimization across functions is lost.
#pragma once

#include <memory>
#include <vector>

namespace llvm
{
class Module;
}

namespace flyrt::jit
{

// The parts of `module` (which it modifies: functions become external), or
// none when it cannot be split (a private global that is written to).
std::vector<std::unique_ptr<llvm::Module>> split_by_function(llvm::Module& module);

} // namespace flyrt::jit
