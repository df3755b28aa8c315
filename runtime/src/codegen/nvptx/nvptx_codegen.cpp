#include "nvptx_codegen.hpp"

#include <stdexcept>
#include <unordered_map>

#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/MDBuilder.h>

#include "../gpu/device_launch.hpp"
#include "../gpu/gpu_kernel.hpp"

namespace flyrt::codegen::nvptx
{
namespace
{

using ir::arith;
using ir::scalar;

class nvptx_kernel_lowering : public gpu_kernel_lowering
{
public:
    using gpu_kernel_lowering::gpu_kernel_lowering;

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

    unsigned calling_convention() const override { return llvm::CallingConv::PTX_Kernel; }

    // fx.async_copy as cp.async (sm_80 on), whose source size operand of 0
    // zero-fills where fill is false. 16 bytes go .cg (through L2 only, as
    // streamed data should), 4 and 8 .ca (.cg takes 16 alone). Before sm_80,
    // or from an address not promised to be a multiple of the size, the copy
    // lands at once (function_lowering's).
    void async_copy(const ir::op& o) override
    {
        const ir::scalar element_kind = m_fn.type_of(o.operands[0]).pointee;
        const int bytes = o.attr * std::max(1, ir::bit_width(element_kind) / 8);
        if (!has_cp_async() || o.int_value < bytes)
        {
            gpu_kernel_lowering::async_copy(o);
            return;
        }
        using I = llvm::Intrinsic::ID;
        const I id = bytes == 16  ? llvm::Intrinsic::nvvm_cp_async_cg_shared_global_16_s
                     : bytes == 8 ? llvm::Intrinsic::nvvm_cp_async_ca_shared_global_8_s
                                  : llvm::Intrinsic::nvvm_cp_async_ca_shared_global_4_s;
        llvm::Type* element = llvm_type(element_kind);
        llvm::Value* size = m_b.CreateSelect(
            value(o.operands[4]), m_b.getInt32(static_cast<std::uint32_t>(bytes)), m_b.getInt32(0));
        m_b.CreateIntrinsic(id, {}, {address(o, element, 0), address(o, element, 2), size});
    }

    void async_commit(const ir::op&) override
    {
        if (has_cp_async())
        {
            m_b.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_commit_group, {}, {});
        }
    }

    void async_wait(const ir::op& o) override
    {
        if (has_cp_async())
        {
            m_b.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_wait_group,
                                {},
                                {m_b.getInt32(static_cast<std::uint32_t>(o.int_value))});
        }
    }

    bool has_cp_async() const { return compute_capability() >= 80; }

    // griddepcontrol (sm_90 on; before it kernels do not overlap, and both are nothing). A memory
    // clobber: no load moves above the wait.
    void grid_dependency(const ir::op& o) override
    {
        if (compute_capability() < 90)
        {
            return;
        }
        const std::string text = o.int_value == 0 ? std::string(wait_for_prior_grids_instruction) + ";"
                                                  : std::string("griddepcontrol.launch_dependents;");
        m_b.CreateCall(
            llvm::InlineAsm::get(llvm::FunctionType::get(m_b.getVoidTy(), false), text, "~{memory}", true));
    }

    // The target's sm_XY as XY.
    int compute_capability() const { return std::stoi(m_target.cpu.substr(3)); }

    void annotate_kernel() override
    {
        if (m_fn.known_block_size[0] > 0)
        {
            const char* names[3] = {"reqntidx", "reqntidy", "reqntidz"};
            for (int d = 0; d < 3; ++d)
            {
                annotate(names[d], m_fn.known_block_size[d]);
            }
        }
        if (m_fn.min_blocks_per_sm > 0)
        {
            // ptxas then keeps to the registers that many blocks leave each one
            annotate("minctasm", m_fn.min_blocks_per_sm);
        }
    }

    // shfl.sync's mask names the warp's threads that exist (the last warp
    // of a block may be partial).
    std::vector<llvm::Value*> move_pieces(const std::vector<llvm::Value*>& pieces, llvm::Value* lane) override
    {
        const unsigned lanes = static_cast<unsigned>(m_target.warp_size);
        llvm::Value* warp_first = m_b.CreateAnd(linear_thread(), m_b.getInt32(~(lanes - 1)));
        llvm::Value* present = m_b.CreateSub(thread_count(), warp_first);
        llvm::Value* full = m_b.CreateICmpUGE(present, m_b.getInt32(lanes));
        llvm::Value* partial = m_b.CreateSub(m_b.CreateShl(m_b.getInt32(1), present), m_b.getInt32(1));
        llvm::Value* mask = m_b.CreateSelect(full, m_b.getInt32(~0u), partial);
        std::vector<llvm::Value*> moved;
        for (llvm::Value* piece : pieces)
        {
            moved.push_back(m_b.CreateIntrinsic(
                llvm::Intrinsic::nvvm_shfl_sync_idx_i32, {}, {mask, piece, lane, m_b.getInt32(lanes - 1)}));
        }
        return moved;
    }

    // fx.mma as mma.sync of the warp, the fragments' pairs packed as the
    // instruction wants them (<2 x half>, or bf16 pairs in i32).
    // - f16 / bf16: the m16n8k16 intrinsic.
    // - e4m3fn on sm_89 on: m16n8k32 on e4m3 (PTX ISA 8.4: the JIT raises the
    //   kernel's PTX version when it sees this instruction), for which LLVM 19
    //   has no intrinsic: inline assembly.
    // - e4m3fnuz (the tensor cores have no such FP8), and e4m3fn before
    //   sm_89: every value is an f16 value, so the bytes are decoded exactly
    //   and two m16n8k16 cover k 0-15 and 16-31. No lane needs another's
    //   bytes: k is only summed over, so each f16 MMA takes the k that this
    //   lane holds in the m16n8k32 layout (a[8s + 0..7] and b[4s + 0..3] for
    //   step s), A's and B's permuted alike: FP8 k 16s + 4t + j sits at the f16
    //   MMA's k 2t + j (j < 2) or 2t + 6 + j (j >= 2).
    void mma(const ir::op& o) override
    {
        if (static_cast<ir::mma_layout>(o.int_value) == ir::mma_layout::wave)
        {
            throw std::logic_error(
                "flyrt: fx.wave_mma reached NVIDIA's code generation (the verifier refuses "
                "it for 32-lane warps)");
        }
        llvm::Value* a = value(o.operands[0]);
        llvm::Value* b = value(o.operands[1]);
        llvm::Value* c = value(o.operands[2]);
        const auto format = static_cast<ir::fp8_format>(o.attr);
        if (format == ir::fp8_format::e4m3fn && compute_capability() >= 89)
        {
            bind(o.results[0], warp_mma(fp8_mma(), a, b, c));
            return;
        }
        llvm::Function* f16 = llvm::Intrinsic::getDeclaration(
            &m_out,
            kind_of(o.operands[0]) == scalar::bf16 ? llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_bf16
                                                   : llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_f32_f32);
        if (format == ir::fp8_format::none)
        {
            bind(o.results[0], warp_mma(f16, a, b, c));
            return;
        }
        llvm::Value* a_halves = decode_fp8(a, format, llvm::FixedVectorType::get(m_b.getHalfTy(), 16));
        llvm::Value* b_halves = decode_fp8(b, format, llvm::FixedVectorType::get(m_b.getHalfTy(), 8));
        for (int s = 0; s < 2; ++s)
        {
            const int a0 = 8 * s;
            const int b0 = 4 * s;
            c = warp_mma(f16,
                         m_b.CreateShuffleVector(
                             a_halves, {a0, a0 + 1, a0 + 4, a0 + 5, a0 + 2, a0 + 3, a0 + 6, a0 + 7}),
                         m_b.CreateShuffleVector(b_halves, {b0, b0 + 1, b0 + 2, b0 + 3}),
                         c);
        }
        bind(o.results[0], c);
    }

    // ldmatrix of 1, 2 or 4 matrices (their rows: 16 bytes at a multiple of 16,
    // which the frontend proves); each lane's 32-bit words, one a matrix.
    void matrix_load(const ir::op& o) override
    {
        static constexpr llvm::Intrinsic::ID plain[] = {
            llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x1_b16,
            llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x2_b16,
            llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_b16};
        static constexpr llvm::Intrinsic::ID transposed[] = {
            llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x1_trans_b16,
            llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x2_trans_b16,
            llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_trans_b16};
        const int which = o.attr == 1 ? 0 : o.attr == 2 ? 1 : 2;
        llvm::Type* element = llvm_type(m_fn.type_of(o.operands[0]).pointee);
        llvm::Value* row = address(o, element);
        llvm::CallInst* words =
            m_b.CreateIntrinsic(o.int_value != 0 ? transposed[which] : plain[which], {row->getType()}, {row});
        words->addFnAttr(llvm::Attribute::Convergent);
        llvm::Value* packed = words;
        if (o.attr == 1)
        {
            packed = m_b.CreateInsertElement(
                llvm::PoisonValue::get(llvm::FixedVectorType::get(m_b.getInt32Ty(), 1)),
                words,
                std::uint64_t(0));
        }
        else
        {
            llvm::Value* vector = llvm::PoisonValue::get(
                llvm::FixedVectorType::get(m_b.getInt32Ty(), static_cast<unsigned>(o.attr)));
            for (unsigned m = 0; m < static_cast<unsigned>(o.attr); ++m)
            {
                vector = m_b.CreateInsertElement(vector, m_b.CreateExtractValue(words, m), m);
            }
            packed = vector;
        }
        bind(o.results[0], m_b.CreateBitCast(packed, llvm_type(m_fn.type_of(o.results[0]))));
    }

    llvm::FunctionCallee fp8_mma()
    {
        llvm::Type* f32 = m_b.getFloatTy();
        std::vector<llvm::Type*> parameters(6, m_b.getInt32Ty());
        parameters.insert(parameters.end(), 4, f32);
        auto* type =
            llvm::FunctionType::get(llvm::StructType::get(m_ctx, {f32, f32, f32, f32}), parameters, false);
        return {type,
                llvm::InlineAsm::get(type,
                                     std::string(fp8_mma_instruction) +
                                         " {$0,$1,$2,$3}, {$4,$5,$6,$7}, {$8,$9}, {$10,$11,$12,$13};",
                                     "=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f",
                                     true)};
    }

    // One warp's d = a b + c by `instruction`: a's and b's fragments as its
    // 32-bit registers, then c's four floats; its four results are d.
    llvm::Value* warp_mma(llvm::FunctionCallee instruction, llvm::Value* a, llvm::Value* b, llvm::Value* c)
    {
        llvm::FunctionType* type = instruction.getFunctionType();
        std::vector<llvm::Value*> arguments;
        for (llvm::Value* fragment : {a, b})
        {
            const unsigned words = static_cast<unsigned>(fragment->getType()->getPrimitiveSizeInBits() / 32);
            llvm::Value* packed =
                m_b.CreateBitCast(fragment, llvm::FixedVectorType::get(m_b.getInt32Ty(), words));
            for (unsigned w = 0; w < words; ++w)
            {
                arguments.push_back(
                    m_b.CreateBitCast(m_b.CreateExtractElement(packed, w),
                                      type->getParamType(static_cast<unsigned>(arguments.size()))));
            }
        }
        for (unsigned i = 0; i < 4; ++i)
        {
            arguments.push_back(m_b.CreateExtractElement(c, i));
        }
        // The whole warp takes part: LLVM 19 does not mark the intrinsic
        // convergent, and without it may move the call into a branch only
        // some lanes take (a bounds check's, say).
        llvm::CallInst* d = m_b.CreateCall(instruction, arguments);
        d->addFnAttr(llvm::Attribute::Convergent);
        llvm::Value* result = llvm::PoisonValue::get(c->getType());
        for (unsigned i = 0; i < 4; ++i)
        {
            result = m_b.CreateInsertElement(result, m_b.CreateExtractValue(d, i), i);
        }
        return result;
    }

    // FP8 -> f16 pairs by the conversion instruction of sm_89 on (e4m3fn);
    // e4m3fnuz is e4m3fn's value halved but for its three special codes
    // (0x80 NaN, 0x7F / 0xFF +-240), which are patched in.
    llvm::Value* decode_fp8(llvm::Value* bytes, ir::fp8_format format, llvm::Type* to) override
    {
        if (compute_capability() < 89)
        {
            return function_lowering::decode_fp8(bytes, format, to);
        }
        auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(bytes->getType());
        const unsigned lanes = vector != nullptr ? vector->getNumElements() : 1;
        llvm::Value* wide = as_vector(bytes);
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
            halves = patch_e4m3_specials(
                wide, m_b.CreateFMul(halves, llvm::ConstantFP::get(halves->getType(), 0.5)), format);
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

    // The rare path a word of four codes at a time, in PTX of its own: flags (bit 7 of a byte) for the
    // codes 0x7F / 0xFF and 0x80, spread over the two f16 lanes each pair of codes became by prmt's sign
    // replication, and those lanes replaced by logic ops. Some thirty instructions a word where a compare
    // and a select a lane took some fifty, in every copy of the path; written as PTX, not LLVM IR, because
    // LLVM's passes spent 40 ms a PA decode compile on the IR form of this cold code.
    llvm::Value* with_e4m3_specials(llvm::Value* bytes, llvm::Value* decoded, ir::fp8_format format) override
    {
        const unsigned lanes = llvm::cast<llvm::FixedVectorType>(bytes->getType())->getNumElements();
        if (lanes % 4 != 0 || !decoded->getType()->getScalarType()->isHalfTy())
        {
            return gpu_kernel_lowering::with_e4m3_specials(bytes, decoded, format);
        }
        llvm::Type* i32 = m_b.getInt32Ty();
        llvm::Value* words = m_b.CreateBitCast(bytes, llvm::FixedVectorType::get(i32, lanes / 4));
        llvm::Value* pairs = m_b.CreateBitCast(decoded, llvm::FixedVectorType::get(i32, lanes / 2));
        const bool fnuz = format == ir::fp8_format::e4m3fnuz;
        // $2: the word of codes; $3, $4: the f16 pairs of its codes 0-1 and 2-3; $0, $1: them patched.
        // 0x7F / 0xFF: fnuz +-240 (f16 0x5B80, the code's sign), fn NaN; 0x80: fnuz NaN, fn -0.
        std::string text = "{\n\t.reg .b32 %largest, %top, %y, %m, %v;\n"
                           "\tand.b32 %largest, $2, 0x7F7F7F7F;\n"
                           "\tadd.u32 %largest, %largest, 0x01010101;\n" // low 7 bits all set: into bit 7
                           "\tand.b32 %largest, %largest, 0x80808080;\n"
                           "\txor.b32 %y, $2, 0x80808080;\n" // 0x80: a zero byte of y
                           "\tand.b32 %top, %y, 0x7F7F7F7F;\n"
                           "\tadd.u32 %top, %top, 0x7F7F7F7F;\n"
                           "\tor.b32 %top, %top, %y;\n"
                           "\tor.b32 %top, %top, 0x7F7F7F7F;\n"
                           "\tnot.b32 %top, %top;\n";
        for (int pair = 0; pair < 2; ++pair)
        {
            const std::string out = "$" + std::to_string(pair);
            const std::string in = "$" + std::to_string(pair + 3);
            const std::string selector = pair == 0 ? "0x9988" : "0xBBAA";
            auto replace = [&](const std::string& from, const std::string& flags, const std::string& value)
            {
                text += "\tprmt.b32 %m, " + flags + ", 0, " + selector + ";\n";
                text += "\tand.b32 %v, " + value + ", %m;\n";
                text += "\tnot.b32 %m, %m;\n";
                text += "\tand.b32 " + out + ", " + from + ", %m;\n";
                text += "\tor.b32 " + out + ", " + out + ", %v;\n";
            };
            if (fnuz)
            {
                text += "\tprmt.b32 %y, $2, 0, " + selector + ";\n"; // each lane's code's sign
                text += "\tand.b32 %y, %y, 0x80008000;\n";
                text += "\tor.b32 %y, %y, 0x5B805B80;\n";
                replace(in, "%largest", "%y");
                replace(out, "%top", "0x7E007E00");
            }
            else
            {
                replace(in, "%largest", "0x7E007E00");
                replace(out, "%top", "0x80008000");
            }
        }
        text += "}";
        llvm::StructType* two = llvm::StructType::get(m_ctx, {i32, i32});
        llvm::InlineAsm* patch = llvm::InlineAsm::get(
            llvm::FunctionType::get(two, {i32, i32, i32}, false), text, "=&r,=&r,r,r,r", false);
        llvm::Value* out = llvm::PoisonValue::get(pairs->getType());
        for (unsigned i = 0; i < lanes / 4; ++i)
        {
            llvm::Value* patched = m_b.CreateCall(patch,
                                                  {m_b.CreateExtractElement(words, i),
                                                   m_b.CreateExtractElement(pairs, 2 * i),
                                                   m_b.CreateExtractElement(pairs, 2 * i + 1)});
            for (unsigned pair = 0; pair < 2; ++pair)
            {
                out = m_b.CreateInsertElement(out, m_b.CreateExtractValue(patched, pair), 2 * i + pair);
            }
        }
        return m_b.CreateBitCast(out, decoded->getType());
    }

    // LLVM 19's NVPTX backend drops an atomic's scope and order (every atom
    // comes out relaxed at GPU scope) and cannot select a scoped fence, so
    // both are written in PTX with the scope and order spelled out (sm_70 on).
    void atomic(const ir::op& o) override
    {
        const auto sem = ir::memory_semantics::unpack(o.int_value);
        const auto kind = static_cast<ir::atomic_op>(o.attr);
        const scalar s = kind_of(o.operands.back());
        const int bits = ir::bit_width(s);
        if (s == scalar::bf16 && compute_capability() < 90)
        {
            unsupported(o, "an atomic BFloat16 add (sm_90 and later)");
        }
        llvm::Type* element = llvm_type(s);
        // 16-bit floats travel in 16-bit integer registers ("h").
        llvm::Type* reg = bits == 16 ? m_b.getInt16Ty() : element;
        const char* constraint = bits == 16         ? "h"
                                 : s == scalar::f32 ? "f"
                                 : s == scalar::f64 ? "d"
                                 : bits == 32       ? "r"
                                                    : "l";
        llvm::Value* where = m_b.CreateAddrSpaceCast(address(o, element), m_b.getPtrTy());
        std::vector<llvm::Value*> args{where};
        for (std::size_t i = 2; i < o.operands.size(); ++i)
        {
            llvm::Value* v = value(o.operands[i]);
            if (kind == ir::atomic_op::sub) // PTX has no atom.sub: add the negation, exact for floats too
            {
                v = ir::is_float(s) ? m_b.CreateFNeg(v) : m_b.CreateNeg(v);
            }
            args.push_back(m_b.CreateBitCast(v, reg));
        }
        const std::string text =
            (sem.order == ir::memory_order::seq_cst ? "fence.sc." + scope_name(sem.scope) + ";\n\t" : "") +
            "atom" + semantics(sem.order) + "." + scope_name(sem.scope) + "." + operation(kind, s) +
            (kind == ir::atomic_op::cas ? " $0, [$1], $2, $3;" : " $0, [$1], $2;");
        std::string constraints = std::string("=") + constraint + ",l";
        std::vector<llvm::Type*> types{where->getType()};
        for (std::size_t i = 1; i < args.size(); ++i)
        {
            constraints += std::string(",") + constraint;
            types.push_back(reg);
        }
        constraints += ",~{memory}";
        llvm::InlineAsm* instruction =
            llvm::InlineAsm::get(llvm::FunctionType::get(reg, types, false), text, constraints, true);
        llvm::Value* old = m_b.CreateBitCast(m_b.CreateCall(instruction, args), element);
        bind(o.results[0], old);
        if (kind == ir::atomic_op::cas)
        {
            bind(o.results[1], m_b.CreateICmpEQ(old, value(o.operands[2])));
        }
    }

    void fence(const ir::op& o) override
    {
        const auto sem = ir::memory_semantics::unpack(o.int_value);
        const std::string text =
            std::string(sem.order == ir::memory_order::seq_cst ? "fence.sc." : "fence.acq_rel.") +
            scope_name(sem.scope) + ";";
        m_b.CreateCall(
            llvm::InlineAsm::get(llvm::FunctionType::get(m_b.getVoidTy(), false), text, "~{memory}", true));
    }

    // CUDA's device printf: vprintf(format, the values in 8-byte slots, as
    // the format's %lld and %f read them). The driver formats on the host.
    void print(const ir::op& o) override
    {
        llvm::FunctionCallee vprintf = m_out.getOrInsertFunction(
            printf_function,
            llvm::FunctionType::get(m_b.getInt32Ty(), {m_b.getPtrTy(), m_b.getPtrTy()}, false));
        m_b.CreateCall(vprintf, {m_b.CreateGlobalStringPtr(o.callee), operand_slots(o)});
    }

    static std::string scope_name(ir::memory_scope scope)
    {
        return scope == ir::memory_scope::block ? "cta" : scope == ir::memory_scope::device ? "gpu" : "sys";
    }

    // A seq_cst atomic is fence.sc, then the atomic with acquire and release.
    static std::string semantics(ir::memory_order order)
    {
        switch (order)
        {
        case ir::memory_order::relaxed:
            return ".relaxed";
        case ir::memory_order::acquire:
            return ".acquire";
        case ir::memory_order::release:
            return ".release";
        case ir::memory_order::acq_rel:
        case ir::memory_order::seq_cst:
            break;
        }
        return ".acq_rel";
    }

    // PTX's operation and type: add by the value's type, min and max by its
    // signedness, the bitwise ones, exchange and compare-exchange by its width.
    static std::string operation(ir::atomic_op kind, scalar s)
    {
        const std::string width = std::to_string(ir::bit_width(s));
        const std::string sign = ir::is_unsigned(s) ? ".u" : ".s";
        switch (kind)
        {
        case ir::atomic_op::add:
        case ir::atomic_op::sub:
            if (s == scalar::f16 || s == scalar::bf16)
            {
                return s == scalar::f16 ? "add.noftz.f16" : "add.noftz.bf16";
            }
            return "add" + std::string(ir::is_float(s) ? ".f" : ".u") + width;
        case ir::atomic_op::min:
            return "min" + sign + width;
        case ir::atomic_op::max:
            return "max" + sign + width;
        case ir::atomic_op::bit_and:
            return "and.b" + width;
        case ir::atomic_op::bit_or:
            return "or.b" + width;
        case ir::atomic_op::bit_xor:
            return "xor.b" + width;
        case ir::atomic_op::xchg:
            return "exch.b" + width;
        case ir::atomic_op::cas:
            break;
        }
        return "cas.b" + width;
    }

    // f64 exp and log, and sin, cos, tanh, erf and pow, come from CUDA's
    // libdevice (__nv_sinf, __nv_sin, ...), linked by the JIT.
    llvm::Value* f64_math(arith kind, llvm::Value* x) override
    {
        return call_per_lane(library_function(kind, true), {x});
    }

    std::string library_function(arith kind, bool f64) const override
    {
        return std::string("__nv_") + libm_name(kind) + (f64 ? "" : "f");
    }

    // ex2.approx.ftz.f32: what CUDA's exp2f compiles to under --use_fast_math
    const char* approximate_exp2() const override { return "llvm.nvvm.ex2.approx.ftz.f"; }

    // membar.sys (fence.sc.sys from sm_70): this LLVM's NVPTX selects no IR fence.
    void fence_for_host() override { m_b.CreateIntrinsic(llvm::Intrinsic::nvvm_membar_sys, {}, {}); }

    void annotate(const char* name, std::int32_t value)
    {
        llvm::Metadata* entry[] = {llvm::ValueAsMetadata::get(m_llvm_fn),
                                   llvm::MDString::get(m_ctx, name),
                                   llvm::ConstantAsMetadata::get(m_b.getInt32(value))};
        m_out.getOrInsertNamedMetadata("nvvm.annotations")->addOperand(llvm::MDNode::get(m_ctx, entry));
    }
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

} // namespace flyrt::codegen::nvptx
