// What all code for this machine's CPU shares, kernels and host launchers
// alike: math inline or through libm, and error reports through the runtime.
#pragma once

#include "../lowering.hpp"

namespace flyrt::codegen::cpu
{

inline constexpr const char* report_symbol = "flyrt_report_error";
inline constexpr unsigned slot_bytes = 8; // one argument per 8-byte slot

class cpu_function_lowering : public function_lowering
{
public:
    using function_lowering::function_lowering;

protected:
    // Binds the function's parameters to their slots (`slots` points at them).
    void load_parameters(llvm::Value* slots);
    llvm::Value* math(ir::arith kind, llvm::Value* x, ir::scalar s) override;
    void report(const ir::op& o) override;
};

} // namespace flyrt::codegen::cpu
