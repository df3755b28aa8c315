#include "amdgpu_codegen.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IntrinsicsAMDGPU.h>

#include "../gpu/device_launch.hpp"
#include "../gpu/gpu_kernel.hpp"
#include "../inline_math.hpp"
#include "mfma_layout.hpp"

namespace flyrt::codegen::amdgpu
{
namespace
{

using ir::arith;
using ir::scalar;

bool uses_dynamic_shared(const ir::region& r)
{
    for (const auto& o : r.ops)
    {
        if (o->code == ir::opcode::shared && o->int_value < 0)
        {
            return true;
        }
        for (const auto& sub : o->regions)
        {
            if (uses_dynamic_shared(*sub))
            {
                return true;
            }
        }
    }
    return false;
}

// A lane-dependent i32 in IR, for mfma_layout's formulas.
struct lane_int
{
    llvm::IRBuilder<>* b;
    llvm::Value* v;
};

lane_int operator%(lane_int x, unsigned n)
{
    return {x.b, x.b->CreateURem(x.v, x.b->getInt32(n))};
}
lane_int operator/(lane_int x, unsigned n)
{
    return {x.b, x.b->CreateUDiv(x.v, x.b->getInt32(n))};
}
lane_int operator*(unsigned n, lane_int x)
{
    return {x.b, x.b->CreateMul(x.v, x.b->getInt32(n))};
}
lane_int operator+(lane_int x, lane_int y)
{
    return {x.b, x.b->CreateAdd(x.v, y.v)};
}
lane_int operator+(lane_int x, unsigned n)
{
    return {x.b, x.b->CreateAdd(x.v, x.b->getInt32(n))};
}

class amdgpu_kernel_lowering : public gpu_kernel_lowering
{
public:
    using gpu_kernel_lowering::gpu_kernel_lowering;

protected:
    unsigned calling_convention() const override { return llvm::CallingConv::AMDGPU_KERNEL; }

    void annotate_kernel() override
    {
        if (m_fn.known_block_size[0] <= 0)
        {
            return; // LLVM's default for kernels: 1 to 1024 threads
        }
        const std::int64_t threads =
            std::int64_t(m_fn.known_block_size[0]) * m_fn.known_block_size[1] * m_fn.known_block_size[2];
        const std::string size = std::to_string(threads);
        m_llvm_fn->addFnAttr("amdgpu-flat-work-group-size", size + "," + size);
        if (m_fn.min_blocks_per_sm > 0)
        {
            // That many blocks per compute unit: its four SIMDs share their waves.
            const std::int64_t waves = (threads + m_target.warp_size - 1) / m_target.warp_size;
            const std::int64_t per_simd = (m_fn.min_blocks_per_sm * waves + 3) / 4;
            m_llvm_fn->addFnAttr("amdgpu-waves-per-eu", std::to_string(per_simd));
        }
    }

    // Thread and block indices are registers; block and grid sizes come
    // from the dispatch's implicit arguments (code object v5: block counts
    // as u32 at 0, 4, 8; block sizes as u16 at 12, 14, 16).
    llvm::Value* special(ir::special_register which, int dim) override
    {
        using ir::special_register;
        static const llvm::Intrinsic::ID thread[3] = {llvm::Intrinsic::amdgcn_workitem_id_x,
                                                      llvm::Intrinsic::amdgcn_workitem_id_y,
                                                      llvm::Intrinsic::amdgcn_workitem_id_z};
        static const llvm::Intrinsic::ID block[3] = {llvm::Intrinsic::amdgcn_workgroup_id_x,
                                                     llvm::Intrinsic::amdgcn_workgroup_id_y,
                                                     llvm::Intrinsic::amdgcn_workgroup_id_z};
        switch (which)
        {
        case special_register::thread_idx:
            return m_b.CreateIntrinsic(thread[dim], {}, {});
        case special_register::block_idx:
            return m_b.CreateIntrinsic(block[dim], {}, {});
        case special_register::block_dim:
        {
            if (m_fn.known_block_size[0] > 0)
            {
                return m_b.getInt32(static_cast<std::uint32_t>(m_fn.known_block_size[dim]));
            }
            llvm::Value* size = m_b.CreateLoad(m_b.getInt16Ty(), implicit_argument(12 + 2 * dim));
            return m_b.CreateZExt(size, m_b.getInt32Ty());
        }
        case special_register::grid_dim:
            return m_b.CreateLoad(m_b.getInt32Ty(), implicit_argument(4 * dim));
        }
        throw std::logic_error("unknown special register");
    }

    // s_barrier, with the workgroup fences that make shared-memory writes
    // before it visible to reads after it (as HIP's __syncthreads).
    llvm::SyncScope::ID sync_scope(ir::memory_scope scope) override
    {
        // AMDGPU's memory model names: a block is a workgroup, a device an agent.
        switch (scope)
        {
        case ir::memory_scope::block:
            return m_ctx.getOrInsertSyncScopeID("workgroup");
        case ir::memory_scope::device:
            return m_ctx.getOrInsertSyncScopeID("agent");
        case ir::memory_scope::system:
            break;
        }
        return llvm::SyncScope::System;
    }

    void barrier(const ir::op&) override
    {
        const llvm::SyncScope::ID workgroup = m_ctx.getOrInsertSyncScopeID("workgroup");
        m_b.CreateFence(llvm::AtomicOrdering::Release, workgroup);
        m_b.CreateIntrinsic(llvm::Intrinsic::amdgcn_s_barrier, {}, {});
        m_b.CreateFence(llvm::AtomicOrdering::Acquire, workgroup);
    }

    // ROCm's hostcall printf from its ockl library (linked by the JIT): the
    // format, then the values seven at a time, each as 64 bits; the HIP
    // runtime formats them on the host.
    void print(const ir::op& o) override
    {
        llvm::Type* i64 = m_b.getInt64Ty();
        llvm::Type* i32 = m_b.getInt32Ty();
        // The format in the constant address space (4), read through a flat pointer.
        llvm::Value* format =
            m_b.CreateAddrSpaceCast(m_b.CreateGlobalStringPtr(o.callee, "", 4), m_b.getPtrTy());
        const std::size_t count = o.operands.size();
        llvm::Value* stream = m_b.CreateCall(
            m_out.getOrInsertFunction("__ockl_printf_begin", llvm::FunctionType::get(i64, {i64}, false)),
            {m_b.getInt64(0)});
        stream = m_b.CreateCall(
            m_out.getOrInsertFunction("__ockl_printf_append_string_n",
                                      llvm::FunctionType::get(i64, {i64, m_b.getPtrTy(), i64, i32}, false)),
            {stream, format, m_b.getInt64(o.callee.size() + 1), m_b.getInt32(count == 0 ? 1 : 0)});
        llvm::FunctionCallee append = m_out.getOrInsertFunction(
            "__ockl_printf_append_args",
            llvm::FunctionType::get(i64, {i64, i32, i64, i64, i64, i64, i64, i64, i64, i32}, false));
        for (std::size_t first = 0; first < count; first += 7)
        {
            const std::size_t n = std::min<std::size_t>(7, count - first);
            std::vector<llvm::Value*> arguments{stream, m_b.getInt32(static_cast<std::int32_t>(n))};
            for (std::size_t i = 0; i < 7; ++i)
            {
                llvm::Value* v = first + i < count ? value(o.operands[first + i]) : m_b.getInt64(0);
                arguments.push_back(v->getType()->isDoubleTy() ? m_b.CreateBitCast(v, i64) : v);
            }
            arguments.push_back(m_b.getInt32(first + n == count ? 1 : 0));
            stream = m_b.CreateCall(append, arguments);
        }
    }

    // A kernel with static arrays only gets them as a sized LDS array, which
    // its code object's group segment states (HIP's occupancy counts it);
    // one using `smem=` gets them all in the one dynamic array.
    llvm::Value* shared_memory() override
    {
        const bool dynamic = uses_dynamic_shared(m_fn.body);
        return shared_array(dynamic ? 0 : static_cast<std::uint64_t>(m_fn.static_shared_bytes));
    }

    std::vector<llvm::Value*> move_pieces(const std::vector<llvm::Value*>& pieces, llvm::Value* lane) override
    {
        std::vector<llvm::Value*> moved;
        for (llvm::Value* piece : pieces)
        {
            moved.push_back(pull(lane, piece));
        }
        return moved;
    }

    // Float64 exp and log in IR, so that kernels using them need no device
    // library (they vectorize with the CPU's, whose code they share).
    llvm::Value* f64_math(arith kind, llvm::Value* x) override
    {
        switch (kind)
        {
        case arith::exp:
            return exp_f64(m_b, x);
        case arith::exp2:
            return exp2_f64(m_b, x);
        case arith::log:
            return log_f64(m_b, x, false);
        default:
            return log_f64(m_b, x, true);
        }
    }

    // sin, cos, tanh, erf and pow from ROCm's device library (ocml), which
    // the JIT links when a kernel calls them.
    std::string library_function(arith kind, bool f64) const override
    {
        return std::string("__ocml_") + libm_name(kind) + (f64 ? "_f64" : "_f32");
    }

    // v_exp_f32 alone (llvm.exp2 adds the scaling that keeps denormal results)
    const char* approximate_exp2() const override { return "llvm.amdgcn.exp2.f32"; }

    void fence_for_host() override { m_b.CreateFence(llvm::AtomicOrdering::Release); } // system scope

    // FP8 by gfx94x's conversion instruction, whose FP8 is e4m3fnuz: four
    // bytes a word, two per conversion. e4m3fn is that reading doubled but
    // for its special codes, patched in.
    llvm::Value* decode_fp8(llvm::Value* bytes, ir::fp8_format format, llvm::Type* to) override
    {
        if (m_target.cpu.rfind("gfx94", 0) != 0)
        {
            return function_lowering::decode_fp8(bytes, format, to);
        }
        llvm::Value* wide = as_vector(bytes);
        const unsigned lanes = llvm::cast<llvm::FixedVectorType>(wide->getType())->getNumElements();
        const unsigned padded = (lanes + 3) / 4 * 4;
        std::vector<int> order;
        for (unsigned i = 0; i < padded; ++i)
        {
            order.push_back(static_cast<int>(i < lanes ? i : lanes - 1));
        }
        llvm::Value* words = m_b.CreateBitCast(m_b.CreateShuffleVector(wide, order),
                                               llvm::FixedVectorType::get(m_b.getInt32Ty(), padded / 4));
        llvm::Value* floats = llvm::PoisonValue::get(llvm::FixedVectorType::get(m_b.getFloatTy(), lanes));
        for (unsigned w = 0; w < padded / 4; ++w)
        {
            llvm::Value* word = m_b.CreateExtractElement(words, w);
            for (unsigned half = 0; half < 2; ++half)
            {
                llvm::Value* two = m_b.CreateIntrinsic(
                    llvm::Intrinsic::amdgcn_cvt_pk_f32_fp8, {}, {word, m_b.getInt1(half == 1)});
                for (unsigned e = 0; e < 2; ++e)
                {
                    const unsigned lane = 4 * w + 2 * half + e;
                    if (lane < lanes)
                    {
                        floats = m_b.CreateInsertElement(floats, m_b.CreateExtractElement(two, e), lane);
                    }
                }
            }
        }
        if (format == ir::fp8_format::e4m3fn)
        {
            floats = patch_e4m3_specials(
                wide, m_b.CreateFMul(floats, llvm::ConstantFP::get(floats->getType(), 2.0)), format);
        }
        if (!bytes->getType()->isVectorTy())
        {
            floats = m_b.CreateExtractElement(floats, std::uint64_t(0));
        }
        if (to->isVectorTy() && to->getScalarType()->isHalfTy())
        {
            return pack_halves(floats, lanes);
        }
        return to == floats->getType() ? floats : m_b.CreateFPCast(floats, to); // exact
    }

    // f16s of `floats` two a conversion (v_cvt_pkrtz_f16_f32): its rounding
    // toward zero is exact here, every FP8 value being an f16 value.
    llvm::Value* pack_halves(llvm::Value* floats, unsigned lanes)
    {
        llvm::Value* halves = llvm::PoisonValue::get(llvm::FixedVectorType::get(m_b.getHalfTy(), lanes));
        for (unsigned p = 0; p < lanes; p += 2)
        {
            llvm::Value* first = m_b.CreateExtractElement(floats, p);
            llvm::Value* second = p + 1 < lanes ? m_b.CreateExtractElement(floats, p + 1) : first;
            llvm::Value* two = m_b.CreateIntrinsic(llvm::Intrinsic::amdgcn_cvt_pkrtz, {}, {first, second});
            for (unsigned e = 0; e < 2 && p + e < lanes; ++e)
            {
                halves = m_b.CreateInsertElement(halves, m_b.CreateExtractElement(two, e), p + e);
            }
        }
        return halves;
    }

    // fx.mma: each half-wave h is a warp of the DSL with its own A (16xK),
    // B (Kx8) and C (the verifier asks for blocks of whole waves, so every
    // lane an MFMA reads is on). The wave multiplies each half on MFMA's
    // 16x16 blocks: A_h's and B_h's words are read across lanes into MFMA's
    // layout, and the product back into the DSL's, where C is added
    // (mfma_layout.hpp says which lane and register each comes from; B's
    // columns 8-15 and D's are left over).
    // - f16 / bf16 (K 16): one v_mfma_f32_16x16x16.
    // - e4m3fnuz on gfx94x (K 32): one v_mfma_f32_16x16x32_fp8_fp8, whose FP8
    //   it is.
    // - e4m3fn (K 32): its values are all f16 values, so each word is decoded
    //   exactly and two v_mfma_f32_16x16x16f16 take words 0 and 1 of each
    //   lane: exact products, NaN and signed zeros kept.
    void mma(const ir::op& o) override
    {
        if (static_cast<ir::mma_layout>(o.int_value) == ir::mma_layout::wave)
        {
            wave_mma(o);
            return;
        }
        const auto format = static_cast<ir::fp8_format>(o.attr);
        const bool fp8 = format != ir::fp8_format::none;
        const bool native_fp8 = format == ir::fp8_format::e4m3fnuz && m_target.cpu.rfind("gfx94", 0) == 0;
        const bool bf16 = kind_of(o.operands[0]) == scalar::bf16;
        const std::vector<llvm::Value*> a = words(value(o.operands[0]), 4);
        const std::vector<llvm::Value*> b = words(value(o.operands[1]), 2);
        llvm::Value* c = value(o.operands[2]);
        // An accumulator that is zero, or another product's result, is
        // added by the MFMA itself in MFMA's layout: a chain of products
        // (a dot product over K steps) moves only its last result back.
        const auto chained = m_mfma_results.find(o.operands[2]);
        const bool zero = llvm::isa<llvm::Constant>(c) && llvm::cast<llvm::Constant>(c)->isNullValue();
        auto u = [&](std::uint32_t v) { return m_b.getInt32(v); };
        const lane_int lane{&m_b, lane_id()};
        const mfma_layout::source<lane_int> a_from = mfma_layout::a_word(lane);
        const lane_int b_from = mfma_layout::b_word(lane);
        const lane_int own = lane % 32u; // this lane in its half-wave
        llvm::Value* first_half = m_b.CreateICmpULT(lane.v, u(32));
        llvm::Type* accumulator = llvm::FixedVectorType::get(m_b.getFloatTy(), 4);
        // this lane's word d of MFMA's A and B, from half-wave `base`'s fragments
        auto a_word = [&](llvm::Value* base, std::uint32_t d)
        { return gather({a[2 * d], a[2 * d + 1]}, m_b.CreateAdd(base, a_from.lane.v), a_from.pick.v); };
        auto b_word = [&](llvm::Value* base, std::uint32_t d)
        { return pull(m_b.CreateAdd(base, b_from.v), b[d]); };
        // MFMA's operand of `type`: this lane's two words
        auto pack = [&](auto word_at, llvm::Value* base, llvm::Type* type)
        {
            llvm::Value* pair = llvm::PoisonValue::get(llvm::FixedVectorType::get(m_b.getInt32Ty(), 2));
            for (std::uint32_t d = 0; d < 2; ++d)
            {
                pair = m_b.CreateInsertElement(pair, word_at(base, d), d);
            }
            return m_b.CreateBitCast(pair, type);
        };
        // f16 MFMA's operand: this lane's FP8 word d, decoded
        auto halves = [&](auto word_at, llvm::Value* base, std::uint32_t d)
        {
            return decode_fp8(
                m_b.CreateBitCast(word_at(base, d), llvm::FixedVectorType::get(m_b.getInt8Ty(), 4)),
                format,
                llvm::FixedVectorType::get(m_b.getHalfTy(), 4));
        };
        auto mfma = [&](llvm::Intrinsic::ID id, llvm::Value* x, llvm::Value* y, llvm::Value* sum)
        { return m_b.CreateIntrinsic(id, {}, {x, y, sum, u(0), u(0), u(0)}); };
        llvm::Value* result = nullptr;
        std::array<llvm::Value*, 2> products{};
        for (std::uint32_t h = 0; h < 2; ++h)
        {
            llvm::Value* base = u(32 * h);
            llvm::Value* product = chained != m_mfma_results.end()
                                       ? chained->second[h]
                                       : llvm::ConstantAggregateZero::get(accumulator);
            if (native_fp8)
            {
                product = mfma(llvm::Intrinsic::amdgcn_mfma_f32_16x16x32_fp8_fp8,
                               pack(a_word, base, m_b.getInt64Ty()),
                               pack(b_word, base, m_b.getInt64Ty()),
                               product);
            }
            else if (fp8)
            {
                for (std::uint32_t d = 0; d < 2; ++d)
                {
                    product = mfma(llvm::Intrinsic::amdgcn_mfma_f32_16x16x16f16,
                                   halves(a_word, base, d),
                                   halves(b_word, base, d),
                                   product);
                }
            }
            else
            {
                llvm::Type* type = llvm::FixedVectorType::get(bf16 ? m_b.getInt16Ty() : m_b.getHalfTy(), 4);
                product = mfma(bf16 ? llvm::Intrinsic::amdgcn_mfma_f32_16x16x16bf16_1k
                                    : llvm::Intrinsic::amdgcn_mfma_f32_16x16x16f16,
                               pack(a_word, base, type),
                               pack(b_word, base, type),
                               product);
            }
            std::vector<llvm::Value*> items;
            for (unsigned e = 0; e < 4; ++e)
            {
                items.push_back(m_b.CreateBitCast(m_b.CreateExtractElement(product, e), m_b.getInt32Ty()));
            }
            llvm::Value* mine = llvm::PoisonValue::get(accumulator);
            for (std::uint32_t x = 0; x < 4; ++x)
            {
                const mfma_layout::source<lane_int> from = mfma_layout::d_element(own, x);
                llvm::Value* item = gather({items[x / 2], items[2 + x / 2]}, from.lane.v, from.pick.v);
                mine = m_b.CreateInsertElement(mine, m_b.CreateBitCast(item, m_b.getFloatTy()), x);
            }
            result = h == 0 ? mine : m_b.CreateSelect(first_half, result, mine);
            products[h] = product;
        }
        if (chained != m_mfma_results.end() || zero)
        {
            m_mfma_results.emplace(o.results[0], products);
            bind(o.results[0], result);
        }
        else
        {
            bind(o.results[0], m_b.CreateFAdd(result, c));
        }
    }

    // fx.wave_mma: the lanes hold MFMA's own fragments, so one
    // v_mfma_f32_16x16x16 (f16, or bf16's 1k form) takes them as they are.
    void wave_mma(const ir::op& o)
    {
        const bool bf16 = kind_of(o.operands[0]) == scalar::bf16;
        llvm::Value* a = value(o.operands[0]);
        llvm::Value* b = value(o.operands[1]);
        if (bf16)
        {
            llvm::Type* words = llvm::FixedVectorType::get(m_b.getInt16Ty(), 4);
            a = m_b.CreateBitCast(a, words);
            b = m_b.CreateBitCast(b, words);
        }
        bind(o.results[0],
             m_b.CreateIntrinsic(
                 bf16 ? llvm::Intrinsic::amdgcn_mfma_f32_16x16x16bf16_1k
                      : llvm::Intrinsic::amdgcn_mfma_f32_16x16x16f16,
                 {},
                 {a, b, value(o.operands[2]), m_b.getInt32(0), m_b.getInt32(0), m_b.getInt32(0)}));
    }

private:
    // fx.mma results whose whole sum (accumulator included) is known in
    // MFMA's layout, per half-wave: the start of a chain's next product.
    std::unordered_map<ir::value_id, std::array<llvm::Value*, 2>> m_mfma_results;

    llvm::Value* implicit_argument(unsigned offset)
    {
        llvm::Value* base = m_b.CreateIntrinsic(llvm::Intrinsic::amdgcn_implicitarg_ptr, {}, {});
        return m_b.CreateConstInBoundsGEP1_64(m_b.getInt8Ty(), base, offset);
    }

    // This thread's lane in its wave.
    llvm::Value* lane_id()
    {
        llvm::Value* low =
            m_b.CreateIntrinsic(llvm::Intrinsic::amdgcn_mbcnt_lo, {}, {m_b.getInt32(~0u), m_b.getInt32(0)});
        return m_b.CreateIntrinsic(llvm::Intrinsic::amdgcn_mbcnt_hi, {}, {m_b.getInt32(~0u), low});
    }

    // The 32-bit word `word` of lane `source` (ds_bpermute addresses bytes).
    llvm::Value* pull(llvm::Value* source, llvm::Value* word)
    {
        return m_b.CreateIntrinsic(
            llvm::Intrinsic::amdgcn_ds_bpermute, {}, {m_b.CreateShl(source, m_b.getInt32(2)), word});
    }

    // Word `which` (per lane) of `words` as lane `source` holds it: every
    // candidate crosses lanes, the lane keeps its own choice.
    llvm::Value* gather(const std::vector<llvm::Value*>& words, llvm::Value* source, llvm::Value* which)
    {
        llvm::Value* chosen = pull(source, words[0]);
        for (std::size_t i = 1; i < words.size(); ++i)
        {
            chosen = m_b.CreateSelect(m_b.CreateICmpEQ(which, m_b.getInt32(static_cast<std::uint32_t>(i))),
                                      pull(source, words[i]),
                                      chosen);
        }
        return chosen;
    }

    // A fragment as `count` 32-bit words (pairs of 16-bit values, or four FP8 bytes).
    std::vector<llvm::Value*> words(llvm::Value* fragment, unsigned count)
    {
        llvm::Value* words = m_b.CreateBitCast(fragment, llvm::FixedVectorType::get(m_b.getInt32Ty(), count));
        std::vector<llvm::Value*> out;
        for (unsigned i = 0; i < count; ++i)
        {
            out.push_back(m_b.CreateExtractElement(words, i));
        }
        return out;
    }
};

class amdgpu_codegen : public target_codegen
{
public:
    using target_codegen::target_codegen;

    bool separate_device_module() const override { return true; }

    void emit_kernel(const ir::module& m, const ir::function& f, llvm::Module& out) const override
    {
        amdgpu_kernel_lowering(m, f, description(), out).emit();
    }

    llvm::Value*
    emit_launch_call(llvm::IRBuilder<>& b, llvm::Module& host, const launch_call& call) const override
    {
        return emit_device_launch_call(b, host, call);
    }
};

} // namespace

std::unique_ptr<target_codegen> make_amdgpu_codegen(const target& t)
{
    return std::make_unique<amdgpu_codegen>(t);
}

} // namespace flyrt::codegen::amdgpu
