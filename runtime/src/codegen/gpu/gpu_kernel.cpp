#include "gpu_kernel.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>
#include <vector>

#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/MDBuilder.h>

#include "../inline_math.hpp"

namespace flyrt::codegen
{
namespace
{

using ir::arith;
using ir::scalar;

void collect_reports(const ir::region& r, std::vector<const ir::op*>& out)
{
    for (const auto& o : r.ops)
    {
        if (o->code == ir::opcode::report)
        {
            out.push_back(o.get());
        }
        for (const auto& sub : o->regions)
        {
            collect_reports(*sub, out);
        }
    }
}

} // namespace

std::vector<std::string> report_messages(const ir::function& f)
{
    std::vector<const ir::op*> reports;
    collect_reports(f.body, reports);
    std::vector<std::string> messages;
    for (const ir::op* o : reports)
    {
        messages.push_back(o->callee);
    }
    return messages;
}

void gpu_kernel_lowering::emit()
{
    std::vector<llvm::Type*> types;
    for (ir::value_id p : m_fn.parameters)
    {
        types.push_back(llvm_type(m_fn.type_of(p)));
    }
    auto* type = llvm::FunctionType::get(m_b.getVoidTy(), types, false);
    m_llvm_fn = llvm::Function::Create(type, llvm::Function::ExternalLinkage, m_fn.name, m_out);
    m_llvm_fn->setCallingConv(calling_convention());
    describe_source();
    for (std::size_t i = 0; i < m_fn.parameters.size(); ++i)
    {
        llvm::Argument* argument = m_llvm_fn->getArg(static_cast<unsigned>(i));
        argument->setName(m_fn.values[m_fn.parameters[i]].name);
        bind(m_fn.parameters[i], argument);
    }
    annotate_kernel();
    std::vector<const ir::op*> reports;
    collect_reports(m_fn.body, reports);
    for (std::size_t i = 0; i < reports.size(); ++i)
    {
        m_report_index[reports[i]] = static_cast<std::int32_t>(i);
        m_report_values_used =
            std::max(m_report_values_used,
                     std::min(reports[i]->operands.size(), static_cast<std::size_t>(report_values)));
    }
    m_b.SetInsertPoint(llvm::BasicBlock::Create(m_ctx, "entry", m_llvm_fn));
    if (!reports.empty())
    {
        m_claimed = m_b.CreateAlloca(m_b.getInt1Ty(), nullptr, "claimed"); // a register once promoted
        m_b.CreateStore(m_b.getFalse(), m_claimed);
    }
    emit_region(m_fn.body);
    if (!reports.empty())
    {
        mirror_report();
    }
    m_b.CreateRetVoid();
}

// The value thread `source` (block-linear) holds, from within the warp: a
// source outside the block reads the thread's own value, as on the CPU.
// Every thread of the warp gets here, as the verifier keeps shuffles out
// of divergent control flow. Any value travels as 32-bit pieces.
void gpu_kernel_lowering::shuffle(const ir::op& o)
{
    llvm::Value* v = value(o.operands[0]);
    llvm::Value* source = value(o.operands[1]);
    source = m_b.CreateSelect(m_b.CreateICmpULT(source, thread_count()), source, linear_thread());
    llvm::Value* lane =
        m_b.CreateAnd(source, m_b.getInt32(static_cast<std::uint32_t>(m_target.warp_size - 1)));

    llvm::Type* type = v->getType();
    const unsigned bits = type->isPointerTy() ? 64u : static_cast<unsigned>(type->getPrimitiveSizeInBits());
    const unsigned count = (bits + 31) / 32;
    llvm::Type* whole = m_b.getIntNTy(bits);
    llvm::Type* wide = m_b.getIntNTy(count * 32);
    llvm::Value* packed = type->isPointerTy() ? m_b.CreatePtrToInt(v, whole) : m_b.CreateBitCast(v, whole);
    packed = m_b.CreateZExt(packed, wide);
    std::vector<llvm::Value*> pieces;
    for (unsigned i = 0; i < count; ++i)
    {
        pieces.push_back(m_b.CreateTrunc(m_b.CreateLShr(packed, i * 32), m_b.getInt32Ty()));
    }
    const std::vector<llvm::Value*> moved = move_pieces(pieces, lane);
    llvm::Value* result = llvm::ConstantInt::get(wide, 0);
    for (unsigned i = 0; i < count; ++i)
    {
        result = m_b.CreateOr(result, m_b.CreateShl(m_b.CreateZExt(moved[i], wide), i * 32));
    }
    result = m_b.CreateTrunc(result, whole);
    bind(o.results[0],
         type->isPointerTy() ? m_b.CreateIntToPtr(result, type) : m_b.CreateBitCast(result, type));
}

llvm::Value* gpu_kernel_lowering::shared_memory()
{
    return shared_array(0);
}

llvm::GlobalVariable* gpu_kernel_lowering::shared_array(std::uint64_t bytes)
{
    llvm::GlobalVariable* shared = m_out.getGlobalVariable(shared_global, true);
    if (shared == nullptr)
    {
        auto* type = llvm::ArrayType::get(m_b.getInt8Ty(), bytes);
        const bool sized = bytes > 0;
        shared = new llvm::GlobalVariable(
            m_out,
            type,
            false,
            sized ? llvm::GlobalValue::InternalLinkage : llvm::GlobalValue::ExternalLinkage,
            sized ? llvm::UndefValue::get(type) : nullptr, // shared memory has no initializer
            shared_global,
            nullptr,
            llvm::GlobalValue::NotThreadLocal,
            m_target.shared_address_space);
        shared->setAlignment(llvm::Align(16));
    }
    return shared;
}

llvm::Value* gpu_kernel_lowering::as_vector(llvm::Value* bytes)
{
    if (bytes->getType()->isVectorTy())
    {
        return bytes;
    }
    return m_b.CreateInsertElement(
        llvm::PoisonValue::get(llvm::FixedVectorType::get(m_b.getInt8Ty(), 1)), bytes, std::uint64_t(0));
}

// Words holding no special code (a test of four bytes at once) keep the
// scaled reading; others, rare, have those lanes replaced.
llvm::Value*
gpu_kernel_lowering::patch_e4m3_specials(llvm::Value* bytes, llvm::Value* decoded, ir::fp8_format format)
{
    auto* byte_type = llvm::cast<llvm::FixedVectorType>(bytes->getType());
    const unsigned lanes = byte_type->getNumElements();
    llvm::Value* special = nullptr;
    if (lanes % 4 == 0)
    {
        llvm::Type* words = llvm::FixedVectorType::get(m_b.getInt32Ty(), lanes / 4);
        llvm::Value* w = m_b.CreateBitCast(bytes, words);
        auto splat = [&](std::uint32_t v) { return llvm::ConstantInt::get(words, v); };
        // a byte whose low 7 bits are all set: adding 1 carries into its top bit
        llvm::Value* low = m_b.CreateAnd(w, splat(0x7f7f7f7f));
        llvm::Value* largest = m_b.CreateAnd(m_b.CreateAdd(low, splat(0x01010101)), splat(0x80808080));
        // a byte of 0x80: a zero byte of w ^ 0x80808080
        llvm::Value* y = m_b.CreateXor(w, splat(0x80808080));
        llvm::Value* top_only = m_b.CreateAnd(
            m_b.CreateAnd(m_b.CreateSub(y, splat(0x01010101)), m_b.CreateNot(y)), splat(0x80808080));
        special = m_b.CreateICmpNE(m_b.CreateOrReduce(m_b.CreateOr(largest, top_only)), m_b.getInt32(0));
    }
    else
    {
        special = m_b.getTrue();
    }
    llvm::BasicBlock* fast = m_b.GetInsertBlock();
    auto* slow = llvm::BasicBlock::Create(m_ctx, "fp8.special", m_llvm_fn);
    auto* done = llvm::BasicBlock::Create(m_ctx, "fp8.done", m_llvm_fn);
    // Unlikely: kept a branch, not made selects that every word would pay for.
    m_b.CreateCondBr(special, slow, done, llvm::MDBuilder(m_ctx).createBranchWeights(1, 1 << 20));
    m_b.SetInsertPoint(slow);
    llvm::Value* patched = with_e4m3_specials(bytes, decoded, format);
    slow = m_b.GetInsertBlock();
    m_b.CreateBr(done);
    m_b.SetInsertPoint(done);
    llvm::PHINode* result = m_b.CreatePHI(decoded->getType(), 2);
    result->addIncoming(decoded, fast);
    result->addIncoming(patched, slow);
    return result;
}

llvm::Value*
gpu_kernel_lowering::with_e4m3_specials(llvm::Value* bytes, llvm::Value* decoded, ir::fp8_format format)
{
    auto* byte_type = llvm::cast<llvm::FixedVectorType>(bytes->getType());
    llvm::Type* type = decoded->getType();
    auto byte = [&](std::uint64_t v) { return llvm::ConstantInt::get(byte_type, v); };
    llvm::Value* largest = m_b.CreateICmpEQ(m_b.CreateAnd(bytes, byte(0x7F)), byte(0x7F));
    llvm::Value* top_only = m_b.CreateICmpEQ(bytes, byte(0x80));
    llvm::Value* patched = nullptr;
    if (format == ir::fp8_format::e4m3fnuz) // 0x7F / 0xFF are +-240, 0x80 is NaN
    {
        llvm::Value* limit = m_b.CreateSelect(m_b.CreateICmpUGE(bytes, byte(0x80)),
                                              llvm::ConstantFP::get(type, -240.0),
                                              llvm::ConstantFP::get(type, 240.0));
        patched = m_b.CreateSelect(largest, limit, decoded);
        patched = m_b.CreateSelect(top_only, llvm::ConstantFP::getNaN(type), patched);
    }
    else // e4m3fn: 0x7F / 0xFF are NaN, 0x80 is -0
    {
        patched = m_b.CreateSelect(largest, llvm::ConstantFP::getNaN(type), decoded);
        patched = m_b.CreateSelect(top_only, llvm::ConstantFP::getNegativeZero(type), patched);
    }
    return patched;
}

const char* gpu_kernel_lowering::libm_name(arith kind)
{
    static const std::pair<arith, const char*> names[] = {{arith::exp, "exp"},
                                                          {arith::exp2, "exp2"},
                                                          {arith::log, "log"},
                                                          {arith::log2, "log2"},
                                                          {arith::sin, "sin"},
                                                          {arith::cos, "cos"},
                                                          {arith::tanh, "tanh"},
                                                          {arith::erf, "erf"},
                                                          {arith::pow, "pow"}};
    for (const auto& [known, name] : names)
    {
        if (known == kind)
        {
            return name;
        }
    }
    throw std::logic_error("not a library math function");
}

llvm::Value* gpu_kernel_lowering::math(arith kind, llvm::ArrayRef<llvm::Value*> operands, scalar s)
{
    const bool from_library = kind == arith::sin || kind == arith::cos || kind == arith::tanh ||
                              kind == arith::erf || kind == arith::pow;
    if (s == scalar::f64 && from_library)
    {
        return call_per_lane(library_function(kind, true), operands);
    }
    if (s == scalar::f64 && kind != arith::sqrt && kind != arith::rsqrt)
    {
        // (no f64 approximation is faster than the exact exp2)
        return f64_math(kind == arith::exp2_approx ? arith::exp2 : kind, operands[0]);
    }
    // f16 and bf16 compute in f32, as their hardware does.
    llvm::Type* type = operands[0]->getType();
    const bool widen = s != scalar::f32 && s != scalar::f64;
    std::vector<llvm::Value*> wide;
    for (llvm::Value* operand : operands)
    {
        wide.push_back(widen ? m_b.CreateFPExt(operand, type->getWithNewType(m_b.getFloatTy())) : operand);
    }
    llvm::Value* x = wide[0];
    llvm::Value* result = nullptr;
    switch (kind)
    {
    case arith::exp:
        result = exp_f32(m_b, x);
        break;
    case arith::exp2:
        result = exp2_f32(m_b, x);
        break;
    case arith::exp2_approx:
        result = call_per_lane(approximate_exp2(), {x});
        break;
    case arith::log:
        result = log_f32(m_b, x, false);
        break;
    case arith::log2:
        result = log_f32(m_b, x, true);
        break;
    case arith::sqrt:
        result = intrinsic(llvm::Intrinsic::sqrt, x);
        break;
    case arith::rsqrt:
        result =
            m_b.CreateFDiv(llvm::ConstantFP::get(x->getType(), 1.0), intrinsic(llvm::Intrinsic::sqrt, x));
        break;
    default:
        if (!from_library)
        {
            throw std::logic_error("not a math function");
        }
        result = call_per_lane(library_function(kind, false), wide);
    }
    return widen ? m_b.CreateFPTrunc(result, type) : result;
}

llvm::GlobalVariable* gpu_kernel_lowering::zeroed_global(const char* name, llvm::Type* type)
{
    if (llvm::GlobalVariable* known = m_out.getGlobalVariable(name))
    {
        return known;
    }
    auto* made = new llvm::GlobalVariable(m_out,
                                          type,
                                          false,
                                          llvm::GlobalValue::ExternalLinkage,
                                          llvm::Constant::getNullValue(type),
                                          name,
                                          nullptr,
                                          llvm::GlobalValue::NotThreadLocal,
                                          m_target.global_address_space);
    made->setAlignment(llvm::Align(8));
    return made;
}

llvm::StructType* gpu_kernel_lowering::report_record()
{
    return llvm::StructType::get(
        m_ctx, {m_b.getInt32Ty(), m_b.getInt32Ty(), llvm::ArrayType::get(m_b.getInt64Ty(), report_values)});
}

void gpu_kernel_lowering::report(const ir::op& o)
{
    llvm::Type* i64 = m_b.getInt64Ty();
    llvm::StructType* record = report_record();
    llvm::GlobalVariable* global = zeroed_global(report_global, record);
    // The first report of a launch claims the record; later ones leave it.
    llvm::Value* claim = m_b.CreateAtomicCmpXchg(m_b.CreateStructGEP(record, global, 0),
                                                 m_b.getInt32(0),
                                                 m_b.getInt32(1),
                                                 llvm::MaybeAlign(4),
                                                 llvm::AtomicOrdering::Monotonic,
                                                 llvm::AtomicOrdering::Monotonic);
    auto* won = llvm::BasicBlock::Create(m_ctx, "report.first", m_llvm_fn);
    auto* done = llvm::BasicBlock::Create(m_ctx, "report.done", m_llvm_fn);
    m_b.CreateCondBr(m_b.CreateExtractValue(claim, 1), won, done);
    m_b.SetInsertPoint(won);
    m_b.CreateStore(m_b.getInt32(m_report_index.at(&o)), m_b.CreateStructGEP(record, global, 1));
    for (std::size_t i = 0; i < o.operands.size() && i < static_cast<std::size_t>(report_values); ++i)
    {
        m_b.CreateStore(m_b.CreateSExt(value(o.operands[i]), i64),
                        m_b.CreateGEP(record, global, {m_b.getInt32(0), m_b.getInt32(2), m_b.getInt32(i)}));
    }
    m_b.CreateStore(m_b.getTrue(), m_claimed);
    m_b.CreateBr(done);
    m_b.SetInsertPoint(done);
}

void gpu_kernel_lowering::mirror_report()
{
    llvm::Type* i32 = m_b.getInt32Ty();
    llvm::Type* i64 = m_b.getInt64Ty();
    llvm::StructType* record = report_record();
    llvm::GlobalVariable* global = zeroed_global(report_global, record);
    llvm::GlobalVariable* mirror = zeroed_global(report_mirror_global, i64);
    auto* copy = llvm::BasicBlock::Create(m_ctx, "report.mirror", m_llvm_fn);
    auto* done = llvm::BasicBlock::Create(m_ctx, "report.mirrored", m_llvm_fn);
    m_b.CreateCondBr(m_b.CreateLoad(m_b.getInt1Ty(), m_claimed), copy, done);
    m_b.SetInsertPoint(copy);
    llvm::Value* host = m_b.CreateLoad(i64, mirror);
    auto* mirrored = llvm::BasicBlock::Create(m_ctx, "report.host", m_llvm_fn);
    m_b.CreateCondBr(m_b.CreateICmpNE(host, m_b.getInt64(0)), mirrored, done);
    m_b.SetInsertPoint(mirrored);
    // The record as this thread wrote it (its own stores: visible to it), then (after a system-wide
    // fence, so the host never sees `taken` before the rest) `taken`.
    llvm::Value* into = m_b.CreateIntToPtr(host, m_b.getPtrTy());
    auto copied = [&](llvm::Type* type, llvm::ArrayRef<llvm::Value*> at)
    {
        m_b.CreateStore(
            m_b.CreateLoad(type, m_b.CreateGEP(record, global, at)), m_b.CreateGEP(record, into, at), true);
    };
    copied(i32, {m_b.getInt32(0), m_b.getInt32(1)});
    for (std::size_t i = 0; i < m_report_values_used; ++i)
    {
        copied(i64, {m_b.getInt32(0), m_b.getInt32(2), m_b.getInt32(static_cast<std::int32_t>(i))});
    }
    fence_for_host();
    m_b.CreateStore(m_b.getInt32(1), m_b.CreateStructGEP(record, into, 0), true);
    m_b.CreateBr(done);
    m_b.SetInsertPoint(done);
}

llvm::Value* gpu_kernel_lowering::linear_thread()
{
    using ir::special_register;
    llvm::Value* x = special(special_register::thread_idx, 0);
    llvm::Value* y = special(special_register::thread_idx, 1);
    llvm::Value* z = special(special_register::thread_idx, 2);
    llvm::Value* bx = special(special_register::block_dim, 0);
    llvm::Value* by = special(special_register::block_dim, 1);
    return m_b.CreateAdd(x, m_b.CreateMul(bx, m_b.CreateAdd(y, m_b.CreateMul(by, z))));
}

llvm::Value* gpu_kernel_lowering::thread_count()
{
    using ir::special_register;
    return m_b.CreateMul(
        m_b.CreateMul(special(special_register::block_dim, 0), special(special_register::block_dim, 1)),
        special(special_register::block_dim, 2));
}

} // namespace flyrt::codegen
