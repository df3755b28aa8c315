// Conversions that LLVM lowers to runtime-library calls on CPUs without the
// instructions for them: rounding to BFloat16 on x86 without AVX512-BF16 or
// AVX-NE-CONVERT calls __truncsfbf2 / __truncdfbf2. GCC 12's libgcc (Debian
// 12's) has neither (GCC 13 added them), and a library loaded into the
// process may export them with the ABI from before LLVM 17, so the JIT
// resolves these names to flyrt's own, with compiler-rt's semantics.
#pragma once

namespace flyrt::jit
{

// A BFloat16 comes back the way LLVM 19 expects it on x86-64: in the low 16
// bits of xmm0, so these return a float whose bit pattern holds it there.
extern "C" float flyrt_truncsfbf2(float x);
extern "C" float flyrt_truncdfbf2(double x);

} // namespace flyrt::jit
