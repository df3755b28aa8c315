#include "host_lowering.hpp"

#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>

namespace flyrt::codegen
{

void host_lowering::emit()
{
    auto* type = llvm::FunctionType::get(m_b.getInt32Ty(), {m_b.getPtrTy(), m_b.getPtrTy()}, false);
    m_llvm_fn = llvm::Function::Create(type, llvm::Function::ExternalLinkage, m_fn.name, m_out);
    describe_source();
    m_kernels = m_llvm_fn->getArg(1);
    m_b.SetInsertPoint(llvm::BasicBlock::Create(m_ctx, "entry", m_llvm_fn));
    load_parameters(m_llvm_fn->getArg(0));
    emit_region(m_fn.body);
    m_b.CreateRet(m_b.getInt32(0));
}

void host_lowering::launch(const ir::op& o)
{
    const ir::function* callee = nullptr;
    std::size_t index = 0;
    for (const auto& f : m_module.functions)
    {
        if (f->name == o.callee)
        {
            callee = f.get();
            break;
        }
        index += f->kind == ir::function_kind::kernel ? 1 : 0;
    }
    llvm::Type* i32 = m_b.getInt32Ty();
    // launch::geometry: grid xyz, block xyz, smem, the kernel's static shared bytes
    constexpr std::size_t geometry_fields = 8;
    constexpr std::size_t sizes = ir::launch_operands - 1; // all but the stream
    llvm::Value* geometry = m_b.CreateAlloca(llvm::ArrayType::get(i32, geometry_fields));
    for (std::size_t i = 0; i < sizes; ++i)
    {
        m_b.CreateStore(value(o.operands[i]), m_b.CreateConstInBoundsGEP1_64(i32, geometry, i));
    }
    m_b.CreateStore(m_b.getInt32(static_cast<std::uint32_t>((callee->static_shared_bytes + 63) / 64 * 64)),
                    m_b.CreateConstInBoundsGEP1_64(i32, geometry, sizes));
    const std::size_t count = callee->parameters.size();
    llvm::Value* slots = m_b.CreateAlloca(llvm::ArrayType::get(m_b.getInt64Ty(), count == 0 ? 1 : count));
    for (std::size_t i = 0; i < count; ++i)
    {
        m_b.CreateStore(value(o.operands[ir::launch_operands + i]),
                        m_b.CreateConstInBoundsGEP1_64(m_b.getInt8Ty(), slots, i * cpu::slot_bytes));
    }
    llvm::Value* stream = value(o.operands[ir::launch_operands - 1]);
    llvm::Value* status =
        m_device.emit_launch_call(m_b, m_out, {*callee, index, m_kernels, slots, geometry, stream});
    // A failed launch ends the launcher with its status.
    auto* failed = llvm::BasicBlock::Create(m_ctx, "launch.failed", m_llvm_fn);
    auto* next = llvm::BasicBlock::Create(m_ctx, "launch.ok", m_llvm_fn);
    m_b.CreateCondBr(m_b.CreateICmpNE(status, m_b.getInt32(0)), failed, next);
    m_b.SetInsertPoint(failed);
    m_b.CreateRet(status);
    m_b.SetInsertPoint(next);
}

} // namespace flyrt::codegen
