#include "nvptx_codegen.hpp"

#include <stdexcept>
#include <unordered_map>

#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/MDBuilder.h>

#include "../device_launch.hpp"
#include "../inline_math.hpp"
#include "../lowering.hpp"

namespace flyrt::codegen::nvptx
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

class nvptx_kernel_lowering : public function_lowering
{
public:
    using function_lowering::function_lowering;

    void emit() override
    {
        std::vector<llvm::Type*> types;
        for (ir::value_id p : m_fn.parameters)
        {
            types.push_back(llvm_type(m_fn.type_of(p)));
        }
        auto* type = llvm::FunctionType::get(m_b.getVoidTy(), types, false);
        m_llvm_fn = llvm::Function::Create(type, llvm::Function::ExternalLinkage, m_fn.name, m_out);
        m_llvm_fn->setCallingConv(llvm::CallingConv::PTX_Kernel);
        for (std::size_t i = 0; i < m_fn.parameters.size(); ++i)
        {
            llvm::Argument* argument = m_llvm_fn->getArg(static_cast<unsigned>(i));
            argument->setName(m_fn.values[m_fn.parameters[i]].name);
            bind(m_fn.parameters[i], argument);
        }
        if (m_fn.known_block_size[0] > 0)
        {
            annotate_block_size();
        }
        if (m_fn.min_blocks_per_sm > 0)
        {
            // ptxas then keeps to the registers that many blocks leave each one
            annotate("minctasm", m_fn.min_blocks_per_sm);
        }
        std::vector<const ir::op*> reports;
        collect_reports(m_fn.body, reports);
        for (std::size_t i = 0; i < reports.size(); ++i)
        {
            m_report_index[reports[i]] = static_cast<std::int32_t>(i);
        }
        m_b.SetInsertPoint(llvm::BasicBlock::Create(m_ctx, "entry", m_llvm_fn));
        emit_region(m_fn.body);
        m_b.CreateRetVoid();
    }

protected:
    llvm::Value* special(ir::special_register which, int dim) override
    {
        using I = llvm::Intrinsic::ID;
        static const I registers[4][3] = {
            {llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x,
             llvm::Intrinsic::nvvm_read_ptx_sreg_tid_y,
             llvm::Intrinsic::nvvm_read_ptx_sreg_tid_z},
            {llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x,
             llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
             llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z},
            {llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x,
             llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_y,
             llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_z},
            {llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x,
             llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_y,
             llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_z},
        };
        if (which == ir::special_register::block_dim && m_fn.known_block_size[0] > 0)
        {
            return m_b.getInt32(static_cast<std::uint32_t>(m_fn.known_block_size[dim]));
        }
        return m_b.CreateIntrinsic(registers[static_cast<int>(which)][dim], {}, {});
    }

    void barrier(const ir::op&) override { m_b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {}); }

    // The value thread `source` (block-linear) holds, from within the warp:
    // a source outside the block reads the thread's own value, as on the
    // CPU. The mask names the warp's threads that exist (the last warp of a
    // block may be partial); every one of them gets here, as the verifier
    // keeps shuffles out of divergent control flow.
    void shuffle(const ir::op& o) override
    {
        llvm::Value* v = value(o.operands[0]);
        llvm::Value* source = value(o.operands[1]);
        llvm::Value* tid = linear_thread();
        llvm::Value* threads = thread_count();
        const unsigned lanes = static_cast<unsigned>(m_target.warp_size);
        source = m_b.CreateSelect(m_b.CreateICmpULT(source, threads), source, tid);
        llvm::Value* lane = m_b.CreateAnd(source, m_b.getInt32(lanes - 1));
        llvm::Value* warp_first = m_b.CreateAnd(tid, m_b.getInt32(~(lanes - 1)));
        llvm::Value* present = m_b.CreateSub(threads, warp_first);
        llvm::Value* full = m_b.CreateICmpUGE(present, m_b.getInt32(lanes));
        llvm::Value* partial = m_b.CreateSub(m_b.CreateShl(m_b.getInt32(1), present), m_b.getInt32(1));
        llvm::Value* mask = m_b.CreateSelect(full, m_b.getInt32(~0u), partial);

        // Any value travels as 32-bit pieces.
        llvm::Type* type = v->getType();
        const unsigned bits =
            type->isPointerTy() ? 64u : static_cast<unsigned>(type->getPrimitiveSizeInBits());
        const unsigned pieces = (bits + 31) / 32;
        llvm::Type* whole = m_b.getIntNTy(bits);
        llvm::Type* wide = m_b.getIntNTy(pieces * 32);
        llvm::Value* packed =
            type->isPointerTy() ? m_b.CreatePtrToInt(v, whole) : m_b.CreateBitCast(v, whole);
        packed = m_b.CreateZExt(packed, wide);
        llvm::Value* result = llvm::ConstantInt::get(wide, 0);
        for (unsigned i = 0; i < pieces; ++i)
        {
            llvm::Value* piece = m_b.CreateTrunc(m_b.CreateLShr(packed, i * 32), m_b.getInt32Ty());
            llvm::Value* moved = m_b.CreateIntrinsic(
                llvm::Intrinsic::nvvm_shfl_sync_idx_i32, {}, {mask, piece, lane, m_b.getInt32(lanes - 1)});
            result = m_b.CreateOr(result, m_b.CreateShl(m_b.CreateZExt(moved, wide), i * 32));
        }
        result = m_b.CreateTrunc(result, whole);
        bind(o.results[0],
             type->isPointerTy() ? m_b.CreateIntToPtr(result, type) : m_b.CreateBitCast(result, type));
    }

    // fx.mma as one mma.sync.m16n8k16 of the warp: the fragments' pairs
    // packed as the intrinsic wants them (<2 x half>, or bf16 pairs in i32).
    void mma(const ir::op& o) override
    {
        const bool bf16 = kind_of(o.operands[0]) == scalar::bf16;
        llvm::Function* intrinsic =
            llvm::Intrinsic::getDeclaration(&m_out,
                                            bf16 ? llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_bf16
                                                 : llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_f32_f32);
        llvm::FunctionType* type = intrinsic->getFunctionType();
        std::vector<llvm::Value*> arguments;
        for (unsigned operand = 0; operand < 2; ++operand)
        {
            llvm::Value* fragment = value(o.operands[operand]);
            const unsigned pairs = operand == 0 ? 4 : 2;
            for (unsigned p = 0; p < pairs; ++p)
            {
                llvm::Value* pair =
                    m_b.CreateShuffleVector(fragment, {static_cast<int>(2 * p), static_cast<int>(2 * p + 1)});
                arguments.push_back(
                    m_b.CreateBitCast(pair, type->getParamType(static_cast<unsigned>(arguments.size()))));
            }
        }
        llvm::Value* c = value(o.operands[2]);
        for (unsigned i = 0; i < 4; ++i)
        {
            arguments.push_back(m_b.CreateExtractElement(c, i));
        }
        // The whole warp takes part: LLVM 19 does not mark the intrinsic
        // convergent, and without it may move the call into a branch only
        // some lanes take (a bounds check's, say).
        llvm::CallInst* d = m_b.CreateCall(intrinsic, arguments);
        d->addFnAttr(llvm::Attribute::Convergent);
        llvm::Value* result = llvm::PoisonValue::get(c->getType());
        for (unsigned i = 0; i < 4; ++i)
        {
            result = m_b.CreateInsertElement(result, m_b.CreateExtractValue(d, i), i);
        }
        bind(o.results[0], result);
    }

    llvm::Value* shared_memory() override
    {
        llvm::GlobalVariable* shared = m_out.getGlobalVariable(shared_global);
        if (shared == nullptr)
        {
            shared = new llvm::GlobalVariable(m_out,
                                              llvm::ArrayType::get(m_b.getInt8Ty(), 0),
                                              false,
                                              llvm::GlobalValue::ExternalLinkage,
                                              nullptr,
                                              shared_global,
                                              nullptr,
                                              llvm::GlobalValue::NotThreadLocal,
                                              m_target.shared_address_space);
            shared->setAlignment(llvm::Align(16));
        }
        return shared;
    }

    // FP8 -> f16 pairs by the conversion instruction of sm_89 on (e4m3fn);
    // e4m3fnuz is e4m3fn's value halved but for its three special codes
    // (0x80 NaN, 0x7F / 0xFF +-240), which are patched in.
    llvm::Value* decode_fp8(llvm::Value* bytes, ir::fp8_format format, llvm::Type* to) override
    {
        if (std::stoi(m_target.cpu.substr(3)) < 89)
        {
            return function_lowering::decode_fp8(bytes, format, to);
        }
        auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(bytes->getType());
        const unsigned lanes = vector != nullptr ? vector->getNumElements() : 1;
        llvm::Value* wide = vector != nullptr
                                ? bytes
                                : m_b.CreateInsertElement(
                                      llvm::PoisonValue::get(llvm::FixedVectorType::get(m_b.getInt8Ty(), 1)),
                                      bytes,
                                      std::uint64_t(0));
        llvm::InlineAsm* convert =
            llvm::InlineAsm::get(llvm::FunctionType::get(m_b.getInt32Ty(), {m_b.getInt16Ty()}, false),
                                 "cvt.rn.f16x2.e4m3x2 $0, $1;",
                                 "=r,h",
                                 false);
        llvm::Type* half2 = llvm::FixedVectorType::get(m_b.getHalfTy(), 2);
        llvm::Value* halves = llvm::PoisonValue::get(llvm::FixedVectorType::get(m_b.getHalfTy(), lanes));
        for (unsigned p = 0; 2 * p < lanes; ++p)
        {
            const int second = 2 * p + 1 < lanes ? static_cast<int>(2 * p + 1) : static_cast<int>(2 * p);
            llvm::Value* two = m_b.CreateShuffleVector(wide, {static_cast<int>(2 * p), second});
            llvm::Value* h2 =
                m_b.CreateBitCast(m_b.CreateCall(convert, {m_b.CreateBitCast(two, m_b.getInt16Ty())}), half2);
            for (unsigned e = 0; e < 2 && 2 * p + e < lanes; ++e)
            {
                halves = m_b.CreateInsertElement(halves, m_b.CreateExtractElement(h2, e), 2 * p + e);
            }
        }
        if (format == ir::fp8_format::e4m3fnuz)
        {
            halves =
                fnuz_from_fn(wide, m_b.CreateFMul(halves, llvm::ConstantFP::get(halves->getType(), 0.5)));
        }
        if (vector == nullptr)
        {
            halves = m_b.CreateExtractElement(halves, std::uint64_t(0));
        }
        if (to == halves->getType())
        {
            return halves;
        }
        // f32 and f64 exactly; bf16 through f32 (every FP8 value is a bf16)
        llvm::Value* single = m_b.CreateFPExt(halves, halves->getType()->getWithNewType(m_b.getFloatTy()));
        return to == single->getType() ? single : m_b.CreateFPCast(single, to);
    }

    // e4m3fnuz bytes as f16 from their e4m3fn reading halved: right but for
    // 0x80 (NaN) and 0x7F / 0xFF (+-240). Words holding none of those (a
    // test of four bytes at once) keep that result; others, rare, have
    // those lanes replaced.
    llvm::Value* fnuz_from_fn(llvm::Value* bytes, llvm::Value* halves)
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
            llvm::Value* nan = m_b.CreateAnd(
                m_b.CreateAnd(m_b.CreateSub(y, splat(0x01010101)), m_b.CreateNot(y)), splat(0x80808080));
            special = m_b.CreateICmpNE(m_b.CreateOrReduce(m_b.CreateOr(largest, nan)), m_b.getInt32(0));
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
        llvm::Type* type = halves->getType();
        auto byte = [&](std::uint64_t v) { return llvm::ConstantInt::get(byte_type, v); };
        llvm::Value* largest = m_b.CreateICmpEQ(m_b.CreateAnd(bytes, byte(0x7F)), byte(0x7F));
        llvm::Value* top = m_b.CreateSelect(m_b.CreateICmpUGE(bytes, byte(0x80)),
                                            llvm::ConstantFP::get(type, -240.0),
                                            llvm::ConstantFP::get(type, 240.0));
        llvm::Value* patched = m_b.CreateSelect(largest, top, halves);
        patched =
            m_b.CreateSelect(m_b.CreateICmpEQ(bytes, byte(0x80)), llvm::ConstantFP::getNaN(type), patched);
        m_b.CreateBr(done);
        m_b.SetInsertPoint(done);
        llvm::PHINode* result = m_b.CreatePHI(type, 2);
        result->addIncoming(halves, fast);
        result->addIncoming(patched, slow);
        return result;
    }

    llvm::Value* math(arith kind, llvm::Value* x, scalar s) override
    {
        if (s == scalar::f64)
        {
            return f64_math(kind, x);
        }
        // f16 and bf16 compute in f32, as their hardware does.
        llvm::Type* type = x->getType();
        llvm::Value* wide = s == scalar::f32 ? x : m_b.CreateFPExt(x, type->getWithNewType(m_b.getFloatTy()));
        llvm::Value* result = nullptr;
        switch (kind)
        {
        case arith::exp:
            result = exp_f32(m_b, wide);
            break;
        case arith::exp2:
            result = exp2_f32(m_b, wide);
            break;
        case arith::log:
            result = log_f32(m_b, wide, false);
            break;
        case arith::log2:
            result = log_f32(m_b, wide, true);
            break;
        case arith::sqrt:
            result = intrinsic(llvm::Intrinsic::sqrt, wide);
            break;
        case arith::rsqrt:
            result = m_b.CreateFDiv(llvm::ConstantFP::get(wide->getType(), 1.0),
                                    intrinsic(llvm::Intrinsic::sqrt, wide));
            break;
        default:
            throw std::logic_error("not a math function");
        }
        return s == scalar::f32 ? result : m_b.CreateFPTrunc(result, type);
    }

    void report(const ir::op& o) override
    {
        llvm::Type* i32 = m_b.getInt32Ty();
        llvm::Type* i64 = m_b.getInt64Ty();
        auto* record = llvm::StructType::get(m_ctx, {i32, i32, llvm::ArrayType::get(i64, report_values)});
        llvm::GlobalVariable* global = m_out.getGlobalVariable(report_global);
        if (global == nullptr)
        {
            global = new llvm::GlobalVariable(m_out,
                                              record,
                                              false,
                                              llvm::GlobalValue::ExternalLinkage,
                                              llvm::Constant::getNullValue(record),
                                              report_global,
                                              nullptr,
                                              llvm::GlobalValue::NotThreadLocal,
                                              m_target.global_address_space);
            global->setAlignment(llvm::Align(8));
        }
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
        for (std::size_t i = 0; i < o.operands.size() && i < report_values; ++i)
        {
            llvm::Value* v = m_b.CreateSExt(value(o.operands[i]), i64);
            m_b.CreateStore(
                v, m_b.CreateGEP(record, global, {m_b.getInt32(0), m_b.getInt32(2), m_b.getInt32(i)}));
        }
        m_b.CreateBr(done);
        m_b.SetInsertPoint(done);
    }

private:
    llvm::Value* linear_thread()
    {
        using ir::special_register;
        llvm::Value* x = special(special_register::thread_idx, 0);
        llvm::Value* y = special(special_register::thread_idx, 1);
        llvm::Value* z = special(special_register::thread_idx, 2);
        llvm::Value* bx = special(special_register::block_dim, 0);
        llvm::Value* by = special(special_register::block_dim, 1);
        return m_b.CreateAdd(x, m_b.CreateMul(bx, m_b.CreateAdd(y, m_b.CreateMul(by, z))));
    }

    llvm::Value* thread_count()
    {
        using ir::special_register;
        return m_b.CreateMul(
            m_b.CreateMul(special(special_register::block_dim, 0), special(special_register::block_dim, 1)),
            special(special_register::block_dim, 2));
    }

    // f64 exp and log come from CUDA's libdevice, linked by the JIT; sqrt is
    // an instruction.
    llvm::Value* f64_math(arith kind, llvm::Value* x)
    {
        if (kind == arith::sqrt || kind == arith::rsqrt)
        {
            llvm::Value* root = intrinsic(llvm::Intrinsic::sqrt, x);
            return kind == arith::sqrt ? root
                                       : m_b.CreateFDiv(llvm::ConstantFP::get(x->getType(), 1.0), root);
        }
        const char* name = kind == arith::exp    ? "__nv_exp"
                           : kind == arith::exp2 ? "__nv_exp2"
                           : kind == arith::log  ? "__nv_log"
                                                 : "__nv_log2";
        llvm::FunctionCallee callee = m_out.getOrInsertFunction(
            name, llvm::FunctionType::get(m_b.getDoubleTy(), {m_b.getDoubleTy()}, false));
        auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(x->getType());
        if (vector == nullptr)
        {
            return m_b.CreateCall(callee, {x});
        }
        llvm::Value* result = llvm::PoisonValue::get(vector);
        for (unsigned lane = 0; lane < vector->getNumElements(); ++lane)
        {
            result = m_b.CreateInsertElement(
                result, m_b.CreateCall(callee, {m_b.CreateExtractElement(x, lane)}), lane);
        }
        return result;
    }

    void annotate_block_size()
    {
        const char* names[3] = {"reqntidx", "reqntidy", "reqntidz"};
        for (int d = 0; d < 3; ++d)
        {
            annotate(names[d], m_fn.known_block_size[d]);
        }
    }

    void annotate(const char* name, std::int32_t value)
    {
        llvm::Metadata* entry[] = {llvm::ValueAsMetadata::get(m_llvm_fn),
                                   llvm::MDString::get(m_ctx, name),
                                   llvm::ConstantAsMetadata::get(m_b.getInt32(value))};
        m_out.getOrInsertNamedMetadata("nvvm.annotations")->addOperand(llvm::MDNode::get(m_ctx, entry));
    }

    std::unordered_map<const ir::op*, std::int32_t> m_report_index;
};

class nvptx_codegen : public target_codegen
{
public:
    using target_codegen::target_codegen;

    bool separate_device_module() const override { return true; }

    void emit_kernel(const ir::module& m, const ir::function& f, llvm::Module& out) const override
    {
        nvptx_kernel_lowering(m, f, description(), out).emit();
    }

    llvm::Value*
    emit_launch_call(llvm::IRBuilder<>& b, llvm::Module& host, const launch_call& call) const override
    {
        return emit_device_launch_call(b, host, call);
    }
};

} // namespace

std::unique_ptr<target_codegen> make_nvptx_codegen(const target& t)
{
    return std::make_unique<nvptx_codegen>(t);
}

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

} // namespace flyrt::codegen::nvptx
