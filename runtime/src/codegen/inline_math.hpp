// f32 math written in LLVM IR, for scalars and vectors alike: where a libm
// call would stop vectorization (the CPU's exp2) or does not exist (GPUs,
// whose LLVM 19 backends have no libcalls for llvm.exp2 / llvm.log and
// abort). Each is within one ulp (exp, log, log2) or 1e-7 (exp2) of the
// exact result, with the IEEE edge cases (inf, NaN, zero, subnormals).
#pragma once

#include <llvm/IR/IRBuilder.h>

namespace flyrt::codegen
{

llvm::Value* exp2_f32(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* exp_f32(llvm::IRBuilder<>& b, llvm::Value* x);
// log(x), or log2(x) when `base2` (exact at powers of two).
llvm::Value* log_f32(llvm::IRBuilder<>& b, llvm::Value* x, bool base2);

// The same for f64 (scalars and vectors): exp and exp2 within 1 ulp, log
// within 2 and log2 within 3 (measured over their ranges), for targets whose
// f64 math would otherwise come from a device library flyrt does not link
// (AMD's ocml).
llvm::Value* exp2_f64(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* exp_f64(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* log_f64(llvm::IRBuilder<>& b, llvm::Value* x, bool base2);

} // namespace flyrt::codegen
