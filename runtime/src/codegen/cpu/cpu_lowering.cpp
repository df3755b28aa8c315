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

llvm::Value* cpu_function_lowering::math(arith kind, llvm::Value* x, ir::scalar s)
{
    // Inline f32 exp2 and f64 exp and log, so the loops around them
    // vectorize: LLVM 19 lowers llvm.exp and llvm.log to one libm call per
    // lane (f64's are also the AMD target's, checked here against numpy).
    const bool f64 = s == ir::scalar::f64;
    switch (kind)
    {
    case arith::exp:
        return f64 ? exp_f64(m_b, x) : intrinsic(llvm::Intrinsic::exp, x);
    case arith::exp2:
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
    default:
        throw std::logic_error("not a math function");
    }
}

void cpu_function_lowering::report(const ir::op& o)
{
    // The values travel through a stack array made once in the entry block
    // (an alloca on the report path would grow the stack per loop trip), and
    // the call is cold: LLVM lays the report path out of the loop's way.
    const std::size_t count = o.operands.size();
    llvm::Function* fn = m_b.GetInsertBlock()->getParent();
    llvm::IRBuilder<> entry(&fn->getEntryBlock(), fn->getEntryBlock().getFirstInsertionPt());
    llvm::Value* values = entry.CreateAlloca(llvm::ArrayType::get(m_b.getInt64Ty(), count == 0 ? 1 : count));
    for (std::size_t i = 0; i < count; ++i)
    {
        m_b.CreateStore(value(o.operands[i]), m_b.CreateConstInBoundsGEP1_64(m_b.getInt64Ty(), values, i));
    }
    llvm::FunctionCallee report = m_out.getOrInsertFunction(
        report_symbol,
        llvm::FunctionType::get(m_b.getVoidTy(), {m_b.getPtrTy(), m_b.getInt32Ty(), m_b.getPtrTy()}, false));
    llvm::cast<llvm::Function>(report.getCallee())->addFnAttr(llvm::Attribute::Cold);
    llvm::CallInst* call = m_b.CreateCall(
        report,
        {m_b.CreateGlobalStringPtr(o.callee), m_b.getInt32(static_cast<std::int32_t>(count)), values});
    call->addFnAttr(llvm::Attribute::Cold);
}

} // namespace flyrt::codegen::cpu
