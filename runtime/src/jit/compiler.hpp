// From a verified flyrt module to what a target runs: the host launcher's
// objects for this machine's CPU and, for GPU targets, a device image per
// kernel; packed as one payload (code_bundle.hpp) that the disk cache
// stores and the loader (jit_engine.hpp) takes.
#pragma once

#include <string>

#include "code_bundle.hpp"
#include "flyrt/ir.hpp"
#include "flyrt/target.hpp"
#include "part_memo.hpp"

namespace flyrt::jit
{

// `llvm_ir_out`, if given, receives the optimized LLVM IR as text (for
// inspection; every function is compiled then).
std::string compile(const ir::module& m, const target& kernels, std::string* llvm_ir_out = nullptr);

// Keeps a loaded payload's parts (one compiled by another process, from the
// disk cache, for `kernels`) for this process's compiles, with the kernels'
// cubins: after a warm start, an edit recompiles (and assembles) only the
// parts whose IR it changed.
void remember_parts(const compiled_code& code, const target& kernels);

// Functions compiled, and reused from an earlier compile, in this process.
part_counts compiled_part_counts();

} // namespace flyrt::jit
