// What all code for this machine's CPU shares, kernels and host launchers
// alike: math inline or through libm, and error reports through the runtime.
#pragma once

#include "../lowering.hpp"

namespace flyrt::codegen::cpu
{

inline constexpr const char* report_symbol = "flyrt_report_error";
inline constexpr const char* print_symbol = "flyrt_print";
inline constexpr unsigned slot_bytes = 8; // one argument per 8-byte slot

class cpu_function_lowering : public function_lowering
{
public:
    using function_lowering::function_lowering;

protected:
    // Binds the function's parameters to their slots (`slots` points at them).
    void load_parameters(llvm::Value* slots);
    llvm::Value* math(ir::arith kind, llvm::ArrayRef<llvm::Value*> operands, ir::scalar s) override;
    void report(const ir::op& o) override;
    void print(const ir::op& o) override;

private:
    // Calls runtime function `symbol`(text, count, values) with the op's
    // operands in an array of 8-byte slots.
    llvm::CallInst* call_with_slots(const char* symbol, const ir::op& o);
};

} // namespace flyrt::codegen::cpu
