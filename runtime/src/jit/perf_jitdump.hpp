// Linux `perf` sees JIT-compiled host code when FLYDSL_PERF_JITDUMP=1: each
// loaded function, its machine code and its Python lines go to a jitdump
// file (perf's format for JITs), which `perf inject --jit` turns into
// objects that `perf report` and `perf annotate` read.
#pragma once

namespace llvm::orc
{
class LLJIT;
}

namespace flyrt::jit
{

// Whether this process asked for jitdump files (FLYDSL_PERF_JITDUMP=1).
bool perf_jitdump_requested();

// Registers every object `jit` loads from now on with perf. Throws, naming
// the directory, when the dump cannot be written there.
void enable_perf_jitdump(llvm::orc::LLJIT& jit);

} // namespace flyrt::jit
