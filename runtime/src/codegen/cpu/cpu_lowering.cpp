#include "cpu_lowering.hpp"

#include "../inline_math.hpp"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

namespace flyrt::codegen::cpu
{

using ir::arith;

void cpu_function_lowering::load_parameters(llvm::Value* slots)
{
    for (std::size_t i = 0; i < m_fn.parameters.size(); ++i)
    {
        const ir::value_id p = m_fn.parameters[i];
        llvm::Value* address = m_b.CreateConstInBoundsGEP1_64(m_b.getInt8Ty(), slots, i * slot_bytes);
        llvm::LoadInst* load = m_b.CreateLoad(llvm_type(m_fn.type_of(p)), address, m_fn.values[p].name);
        load->setMetadata(llvm::LLVMContext::MD_invariant_load, llvm::MDNode::get(m_ctx, {}));
        bind(p, load);
    }
}

llvm::Value* cpu_function_lowering::math(arith kind, llvm::ArrayRef<llvm::Value*> operands, ir::scalar s)
{
    // Inline f32 exp2 and f64 exp and log, so the loops around them
    // vectorize: LLVM 19 lowers llvm.exp and llvm.log to one libm call per
    // lane (f64's are also the AMD target's, checked here against numpy).
    // The rest are libm's (f16 and bf16 through its float functions).
    llvm::Value* x = operands[0];
    const bool f64 = s == ir::scalar::f64;
    switch (kind)
    {
    case arith::exp:
        return f64 ? exp_f64(m_b, x) : intrinsic(llvm::Intrinsic::exp, x);
    case arith::exp2:
    case arith::exp2_approx:
        return s == ir::scalar::f32 ? exp2_f32(m_b, x)
               : f64                ? exp2_f64(m_b, x)
                                    : intrinsic(llvm::Intrinsic::exp2, x);
    case arith::log:
        return f64 ? log_f64(m_b, x, false) : intrinsic(llvm::Intrinsic::log, x);
    case arith::log2:
        return f64 ? log_f64(m_b, x, true) : intrinsic(llvm::Intrinsic::log2, x);
    case arith::sqrt:
        return intrinsic(llvm::Intrinsic::sqrt, x);
    case arith::rsqrt:
        return m_b.CreateFDiv(llvm::ConstantFP::get(x->getType(), 1.0), intrinsic(llvm::Intrinsic::sqrt, x));
    case arith::sin:
        return intrinsic(llvm::Intrinsic::sin, x);
    case arith::cos:
        return intrinsic(llvm::Intrinsic::cos, x);
    case arith::tanh:
        return intrinsic(llvm::Intrinsic::tanh, x);
    case arith::pow:
        return m_b.CreateBinaryIntrinsic(llvm::Intrinsic::pow, x, operands[1]);
    case arith::erf:
    {
        // No LLVM intrinsic: libm's erf or erff, on floats widened as LLVM
        // widens f16 and bf16 for the others.
        if (f64 || s == ir::scalar::f32)
        {
            return call_per_lane(f64 ? "erf" : "erff", {x});
        }
        llvm::Type* wide = x->getType()->getWithNewType(m_b.getFloatTy());
        return m_b.CreateFPTrunc(call_per_lane("erff", {m_b.CreateFPExt(x, wide)}), x->getType());
    }
    default:
        throw std::logic_error("not a math function");
    }
}

llvm::CallInst* cpu_function_lowering::call_with_slots(const char* symbol, const ir::op& o)
{
    const std::size_t count = o.operands.size();
    llvm::Value* values = operand_slots(o);
    llvm::FunctionCallee callee = m_out.getOrInsertFunction(
        symbol,
        llvm::FunctionType::get(m_b.getVoidTy(), {m_b.getPtrTy(), m_b.getInt32Ty(), m_b.getPtrTy()}, false));
    return m_b.CreateCall(
        callee,
        {m_b.CreateGlobalStringPtr(o.callee), m_b.getInt32(static_cast<std::int32_t>(count)), values});
}

void cpu_function_lowering::report(const ir::op& o)
{
    // Cold: LLVM lays the report path out of the loop's way.
    llvm::CallInst* call = call_with_slots(report_symbol, o);
    call->getCalledFunction()->addFnAttr(llvm::Attribute::Cold);
    call->addFnAttr(llvm::Attribute::Cold);
}

// Int64 and Float64 values alike in 8-byte slots: the format says which.
void cpu_function_lowering::print(const ir::op& o)
{
    call_with_slots(print_symbol, o);
}

} // namespace flyrt::codegen::cpu
