#include "cpu_codegen.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>

#include "flyrt/uniformity.hpp"

#include "bounds_inference.hpp"
#include "cpu_lowering.hpp"

namespace flyrt::codegen::cpu
{
namespace
{

using ir::opcode;

// Fields of the launch geometry record (flyrt::launch::geometry).
enum geometry_field : unsigned
{
    grid_x = 0,
    block_x = 3,
};

// A kernel as `void @<name>.blocks(ptr slots, ptr geometry, i64 first, i64
// last, ptr shared)`: runs blocks [first, last) of the grid, each block's
// threads as loops over thread_idx z, y, x. With barriers or shuffles, a
// block's code runs at block level around one thread loop per stretch
// between them; values that cross one live in per-thread slots.
class cpu_kernel_lowering : public cpu_function_lowering
{
public:
    using cpu_function_lowering::cpu_function_lowering;

    void emit() override
    {
        llvm::Type* ptr = m_b.getPtrTy();
        llvm::Type* i64 = m_b.getInt64Ty();
        auto* type = llvm::FunctionType::get(m_b.getVoidTy(), {ptr, ptr, i64, i64, ptr}, false);
        m_llvm_fn =
            llvm::Function::Create(type, llvm::Function::ExternalLinkage, m_fn.name + blocks_suffix, m_out);
        describe_source();
        llvm::Value* slots = m_llvm_fn->getArg(0);
        llvm::Value* geometry = m_llvm_fn->getArg(1);
        llvm::Value* first = m_llvm_fn->getArg(2);
        llvm::Value* last = m_llvm_fn->getArg(3);
        m_shared = m_llvm_fn->getArg(4);

        m_entry = llvm::BasicBlock::Create(m_ctx, "entry", m_llvm_fn);
        m_b.SetInsertPoint(m_entry);
        load_parameters(slots);
        for (unsigned d = 0; d < 3; ++d)
        {
            m_grid[d] = load_geometry(geometry, grid_x + d);
            m_block[d] = m_fn.known_block_size[0] > 0 ? m_b.getInt32(m_fn.known_block_size[d])
                                                      : load_geometry(geometry, block_x + d);
        }
        m_bounds = std::make_unique<bounds_inference>(m_fn);
        m_thread_count = m_b.CreateZExt(
            m_b.CreateMul(m_b.CreateMul(m_block[0], m_block[1]), m_block[2]), m_b.getInt64Ty(), "threads");
        auto analysis = std::make_unique<ir::uniformity>(m_fn);
        if (analysis->any_sync())
        {
            m_uniform = std::move(analysis);
            m_value_segment.assign(m_fn.values.size(), -1);
            m_slots.assign(m_fn.values.size(), nullptr);
        }

        // for b in [first, last): decompose into block_idx, run the block's threads
        const auto blocks = [&](auto&& run_block)
        {
            counted_loop(first,
                         last,
                         "block",
                         [&](llvm::Value* linear)
                         {
                             const auto index = decompose(linear);
                             std::copy(index.begin(), index.end(), std::begin(m_block_idx));
                             run_block();
                         });
        };
        if (m_uniform != nullptr)
        {
            blocks([&] { emit_block_region(m_fn.body); });
        }
        else if (!m_bounds->decides(ops_of(m_fn.body)))
        {
            blocks([&] { run_threads(ops_of(m_fn.body)); });
        }
        else
        {
            // Blocks [first, last) all inside every tensor (the usual case for
            // a piece of an elementwise grid): no check and no per-block
            // inference; a piece with an edge block decides block by block.
            const auto lo = decompose(first);
            const auto hi = decompose(m_b.CreateSub(last, m_b.getInt64(1)));
            block_frame piece = frame();
            for (unsigned d = 0; d < 3; ++d)
            {
                // a dimension the piece wraps around spans all its blocks
                llvm::Value* wraps = m_b.CreateICmpUGT(lo[d], hi[d]);
                for (unsigned outer = d + 1; outer < 3; ++outer)
                {
                    wraps = m_b.CreateOr(wraps, m_b.CreateICmpNE(lo[outer], hi[outer]));
                }
                piece.block_idx[d] = m_b.CreateSelect(wraps, m_b.getInt32(0), lo[d]);
                piece.block_idx_last[d] =
                    m_b.CreateSelect(wraps, m_b.CreateSub(m_grid[d], m_b.getInt32(1)), hi[d]);
            }
            llvm::Value* inside = m_bounds->emit_verdict(m_b, ops_of(m_fn.body), piece);
            either_copy(
                m_b.CreateAnd(m_b.CreateICmpULT(first, last), inside),
                "blocks",
                [&]
                {
                    blocks([&]
                           { thread_loops([&] { emit_region(m_fn.body); }, active_x(ops_of(m_fn.body))); });
                },
                [&] { blocks([&] { run_threads(ops_of(m_fn.body)); }); });
        }
        m_b.CreateRetVoid();
    }

private:
    llvm::Value* shared_memory() override { return m_shared; }

    // Barriers and shuffles are emitted at block level (emit_block_region);
    // the uniformity analysis puts every one there.
    void barrier(const ir::op&) override
    {
        throw std::logic_error("flyrt: a barrier outside block-level code");
    }
    void shuffle(const ir::op&) override
    {
        throw std::logic_error("flyrt: a shuffle outside block-level code");
    }
    void mma(const ir::op&) override { throw std::logic_error("flyrt: fx.mma outside block-level code"); }

    // A value where it is used. In kernels with barriers, a value from
    // another thread segment (or a block-level loop's varying carried value)
    // is read back from its per-thread slot.
    llvm::Value* value(ir::value_id id) override
    {
        const auto i = static_cast<std::size_t>(id);
        if (m_uniform == nullptr)
        {
            return m_values.at(i);
        }
        if (m_values[i] != nullptr && (m_value_segment[i] == -1 || m_value_segment[i] == m_segment))
        {
            return m_values[i];
        }
        if (m_slots[i] == nullptr)
        {
            throw std::logic_error("flyrt: value %" + std::to_string(id) +
                                   " crosses a barrier without a slot");
        }
        // Outside a thread loop only uniform values are read: thread 0's copy.
        llvm::Value* thread = m_segment >= 0 ? m_tid : m_b.getInt64(0);
        llvm::Type* t = llvm_type(m_fn.type_of(id));
        return m_b.CreateLoad(t, m_b.CreateGEP(t, m_slots[i], thread));
    }

    void bind(ir::value_id id, llvm::Value* v) override
    {
        const auto i = static_cast<std::size_t>(id);
        m_values.at(i) = v;
        if (m_uniform == nullptr)
        {
            return;
        }
        const bool again = m_slots[i] != nullptr && m_value_segment[i] == m_segment;
        m_value_segment[i] = m_segment;
        if (m_segment >= 0)
        {
            // Every value made inside a thread loop gets a per-thread slot
            // (one for all copies of the loop); LLVM deletes the slots
            // nothing reads back.
            llvm::Type* t = llvm_type(m_fn.type_of(id));
            m_slots[i] = again ? m_slots[i] : slot(t);
            m_b.CreateStore(v, m_b.CreateGEP(t, m_slots[i], m_tid));
        }
    }

    // Per-thread storage of one value for the block being run.
    llvm::Value* slot(llvm::Type* t)
    {
        llvm::IRBuilder<> entry(m_entry->getTerminator());
        return entry.CreateAlloca(t, m_thread_count);
    }

    // A value living only in its per-thread slot (block-level loop results).
    void bind_slot(ir::value_id id, llvm::Value* storage)
    {
        const auto i = static_cast<std::size_t>(id);
        m_values[i] = nullptr;
        m_slots[i] = storage;
        m_value_segment[i] = -2;
    }

    llvm::Value* special(ir::special_register which, int dim) override
    {
        switch (which)
        {
        case ir::special_register::thread_idx:
            return m_thread_idx[dim];
        case ir::special_register::block_idx:
            return m_block_idx[dim];
        case ir::special_register::block_dim:
            return m_block[dim];
        case ir::special_register::grid_dim:
            return m_grid[dim];
        }
        throw std::logic_error("unknown special register");
    }

    llvm::Value* load_geometry(llvm::Value* geometry, unsigned field)
    {
        llvm::Value* address = m_b.CreateConstInBoundsGEP1_64(m_b.getInt32Ty(), geometry, field);
        return m_b.CreateLoad(m_b.getInt32Ty(), address);
    }

    // Runs `body` once per thread of the block (z, y, x loops), x below
    // `x_end` (null: the block's size).
    template <class Body> void thread_loops(Body&& body, llvm::Value* x_end = nullptr)
    {
        llvm::Value* zero = m_b.getInt32(0);
        counted_loop(zero,
                     m_block[2],
                     "tz",
                     [&](llvm::Value* tz)
                     {
                         m_thread_idx[2] = tz;
                         counted_loop(zero,
                                      m_block[1],
                                      "ty",
                                      [&](llvm::Value* ty)
                                      {
                                          m_thread_idx[1] = ty;
                                          counted_loop(zero,
                                                       x_end != nullptr ? x_end : m_block[0],
                                                       "tx",
                                                       [&](llvm::Value* tx)
                                                       {
                                                           m_thread_idx[0] = tx;
                                                           body();
                                                       });
                                      });
                     });
    }

    // The end of this block's x threads that can have an effect in `ops`.
    llvm::Value* active_x(const std::vector<const ir::op*>& ops)
    {
        return m_bounds->emit_active_x(m_b, ops, frame());
    }

    // The grid position (x, y, z; i32) of linear block `linear` (i64).
    std::array<llvm::Value*, 3> decompose(llvm::Value* linear)
    {
        llvm::Value* gx = m_b.CreateZExt(m_grid[0], m_b.getInt64Ty());
        llvm::Value* gy = m_b.CreateZExt(m_grid[1], m_b.getInt64Ty());
        llvm::Value* rest = m_b.CreateUDiv(linear, gx);
        return {m_b.CreateTrunc(m_b.CreateURem(linear, gx), m_b.getInt32Ty()),
                m_b.CreateTrunc(m_b.CreateURem(rest, gy), m_b.getInt32Ty()),
                m_b.CreateTrunc(m_b.CreateUDiv(rest, gy), m_b.getInt32Ty())};
    }

    // What the inference knows at block level: this block's position.
    block_frame frame()
    {
        block_frame f;
        f.parameter = [this](ir::value_id id) { return value(id); };
        std::copy(std::begin(m_block_idx), std::end(m_block_idx), f.block_idx.begin());
        std::copy(std::begin(m_block_idx), std::end(m_block_idx), f.block_idx_last.begin());
        std::copy(std::begin(m_block), std::end(m_block), f.block_dim.begin());
        std::copy(std::begin(m_grid), std::end(m_grid), f.grid_dim.begin());
        return f;
    }

    // -- bounds checks: a block whose checks all pass runs without them -----

    // `ops` for every thread of the block: when they hold bounds checks the
    // inference follows, in a copy without checks if they all hold for the
    // block (bounds_inference), else in the checked copy.
    void run_threads(const std::vector<const ir::op*>& ops)
    {
        const bool segmented = m_uniform != nullptr;
        const auto loop = [&](auto&& body)
        {
            if (segmented)
            {
                segment_loop(body);
            }
            else
            {
                thread_loops(body, active_x(ops));
            }
        };
        const auto all = [&]
        {
            for (const ir::op* o : ops)
            {
                emit_op(*o);
            }
        };
        if (!m_bounds->decides(ops))
        {
            m_segment = segmented ? ++m_segments : -1;
            loop(all);
            m_segment = -1;
            return;
        }
        llvm::Value* verdict = m_bounds->emit_verdict(m_b, ops, frame());
        m_segment = segmented ? ++m_segments : -1; // both copies: one segment, one set of slots
        either_copy(verdict, "threads", [&] { loop(all); }, [&] { loop(all); });
        m_segment = -1;
    }

    // Where `checks_hold`, what `emit` makes with the bounds checks elided;
    // elsewhere what `emit_checked` makes (`name` labels the blocks).
    template <class Emit, class EmitChecked>
    void
    either_copy(llvm::Value* checks_hold, const std::string& name, Emit&& emit, EmitChecked&& emit_checked)
    {
        auto* unchecked = llvm::BasicBlock::Create(m_ctx, name + ".unchecked", m_llvm_fn);
        auto* checked = llvm::BasicBlock::Create(m_ctx, name + ".checked", m_llvm_fn);
        auto* done = llvm::BasicBlock::Create(m_ctx, name + ".done", m_llvm_fn);
        m_b.CreateCondBr(checks_hold, unchecked, checked);
        m_b.SetInsertPoint(unchecked);
        m_elide_checks = true;
        emit();
        m_elide_checks = false;
        m_b.CreateBr(done);
        m_b.SetInsertPoint(checked);
        emit_checked();
        m_b.CreateBr(done);
        m_b.SetInsertPoint(done);
    }

    void emit_if(const ir::op& o) override
    {
        if (!(m_elide_checks && bounds_inference::is_check(o)))
        {
            function_lowering::emit_if(o);
            return;
        }
        const auto accessed = emit_region(*o.regions[0]); // in bounds for the whole block
        for (std::size_t i = 0; i < o.results.size(); ++i)
        {
            bind(o.results[i], accessed[i]);
        }
    }

    static std::vector<const ir::op*> ops_of(const ir::region& r)
    {
        std::vector<const ir::op*> ops;
        for (const auto& o : r.ops)
        {
            if (o->code != opcode::yield && o->code != opcode::condition)
            {
                ops.push_back(o.get());
            }
        }
        return ops;
    }

    // Emits `for (i = begin; i < end; ++i) body(i)` (unsigned, no carried values).
    template <class Body>
    void counted_loop(llvm::Value* begin, llvm::Value* end, const char* name, Body&& body)
    {
        llvm::BasicBlock* pre = m_b.GetInsertBlock();
        auto* header = llvm::BasicBlock::Create(m_ctx, std::string(name) + ".header", m_llvm_fn);
        auto* inside = llvm::BasicBlock::Create(m_ctx, std::string(name) + ".body", m_llvm_fn);
        auto* exit = llvm::BasicBlock::Create(m_ctx, std::string(name) + ".exit", m_llvm_fn);
        m_b.CreateBr(header);
        m_b.SetInsertPoint(header);
        llvm::PHINode* i = m_b.CreatePHI(begin->getType(), 2, name);
        i->addIncoming(begin, pre);
        m_b.CreateCondBr(m_b.CreateICmpULT(i, end), inside, exit);
        m_b.SetInsertPoint(inside);
        body(i);
        llvm::Value* next = m_b.CreateNUWAdd(i, llvm::ConstantInt::get(begin->getType(), 1));
        i->addIncoming(next, m_b.GetInsertBlock());
        m_b.CreateBr(header);
        m_b.SetInsertPoint(exit);
    }

    // -- kernels with barriers: block-level code and thread segments -------

    // Runs `ops` for every thread: uniform, side-effect-free ops whose inputs
    // are ready once per block, the rest in one loop over the threads.
    void flush(std::vector<const ir::op*>& ops)
    {
        std::vector<const ir::op*> per_thread;
        for (const ir::op* o : ops)
        {
            if (per_thread.empty() && hoistable(*o))
            {
                emit_op(*o);
            }
            else
            {
                per_thread.push_back(o);
            }
        }
        ops.clear();
        if (!per_thread.empty())
        {
            run_threads(per_thread);
        }
    }

    bool hoistable(const ir::op& o) const
    {
        if (!ir::is_arithmetic(o.code) && o.code != opcode::shared)
        {
            return false;
        }
        for (ir::value_id r : o.results)
        {
            if (m_uniform->varying(r))
            {
                return false;
            }
        }
        for (ir::value_id v : o.operands)
        {
            if (m_values[static_cast<std::size_t>(v)] == nullptr ||
                m_value_segment[static_cast<std::size_t>(v)] != -1)
            {
                return false;
            }
        }
        return true;
    }

    template <class Body> void thread_segment(Body&& body)
    {
        m_segment = ++m_segments;
        segment_loop(body);
        m_segment = -1;
    }

    // The current segment's loop over the threads, with m_tid set.
    template <class Body> void segment_loop(Body&& body)
    {
        thread_loops(
            [&]
            {
                llvm::Value* bx = m_b.CreateZExt(m_block[0], m_b.getInt64Ty());
                llvm::Value* by = m_b.CreateZExt(m_block[1], m_b.getInt64Ty());
                llvm::Value* ty = m_b.CreateZExt(m_thread_idx[1], m_b.getInt64Ty());
                llvm::Value* tz = m_b.CreateZExt(m_thread_idx[2], m_b.getInt64Ty());
                m_tid = m_b.CreateAdd(m_b.CreateZExt(m_thread_idx[0], m_b.getInt64Ty()),
                                      m_b.CreateMul(bx, m_b.CreateAdd(ty, m_b.CreateMul(by, tz))));
                body();
            });
    }

    // A region run once per block: ops up to each barrier or shuffle run as
    // one loop over the threads; uniform loops and branches that contain
    // barriers run at block level around their own thread loops.
    std::vector<ir::value_id> emit_block_region(const ir::region& r)
    {
        std::vector<const ir::op*> pending;
        for (const auto& holder : r.ops)
        {
            const ir::op& o = *holder;
            if (o.code == opcode::yield || o.code == opcode::condition)
            {
                flush(pending);
                return o.operands;
            }
            if (!m_uniform->synchronizes(o))
            {
                pending.push_back(&o);
                continue;
            }
            flush(pending);
            switch (o.code)
            {
            case opcode::barrier:
                break; // the end of the thread loop is the barrier
            case opcode::shuffle:
                emit_shuffle(o);
                break;
            case opcode::mma:
                emit_mma(o);
                break;
            case opcode::for_:
                emit_block_for(o);
                break;
            case opcode::if_:
                emit_block_if(o);
                break;
            default:
                throw std::logic_error(
                    "flyrt: barriers inside this construct are not supported by the CPU backend");
            }
        }
        flush(pending);
        return {};
    }

    void emit_shuffle(const ir::op& o)
    {
        thread_segment(
            [&]
            {
                llvm::Value* src = m_b.CreateSExt(value(o.operands[1]), m_b.getInt64Ty());
                bind(o.results[0], value_of_thread(o.operands[0], src));
            });
    }

    // What `id` holds in thread `thread` (block-linear, i64) of this block;
    // a thread outside the block reads the current thread's own.
    llvm::Value* value_of_thread(ir::value_id id, llvm::Value* thread)
    {
        llvm::Value* slot = m_slots[static_cast<std::size_t>(id)];
        if (slot == nullptr)
        {
            return value(id); // uniform: every thread holds the same
        }
        thread = m_b.CreateSelect(m_b.CreateICmpULT(thread, m_thread_count), thread, m_tid);
        llvm::Type* t = llvm_type(m_fn.type_of(id));
        return m_b.CreateLoad(t, m_b.CreateGEP(t, slot, thread));
    }

    // Where an operand of an exact MMA lives: the lane (within the warp or
    // wave) whose fragment holds it, and the element of that fragment.
    struct held_at
    {
        llvm::Value* lane;
        unsigned element;
    };

    // D[i] = C[i] + sum over k of A(i, k) B(i, k), per lane of groups of
    // `lanes`: products exact in f32, summed in order of k. `a_at(lane, i, k)`
    // and `b_at` say which lane and element hold the operands (the layouts of
    // matrix.py); `widen` turns an element into f32.
    template <class APlace, class BPlace, class Widen>
    void
    emit_exact_mma(const ir::op& o, unsigned lanes, unsigned steps, APlace a_at, BPlace b_at, Widen widen)
    {
        thread_segment(
            [&]
            {
                llvm::Value* lane = m_b.CreateURem(m_tid, m_b.getInt64(lanes));
                llvm::Value* group = m_b.CreateSub(m_tid, lane);
                auto element = [&](ir::value_id id, held_at at)
                {
                    llvm::Value* fragment = value_of_thread(id, m_b.CreateAdd(group, at.lane));
                    return widen(m_b.CreateExtractElement(fragment, at.element));
                };
                llvm::Value* c = value(o.operands[2]);
                llvm::Value* d = llvm::PoisonValue::get(c->getType());
                for (unsigned i = 0; i < 4; ++i)
                {
                    llvm::Value* sum = m_b.CreateExtractElement(c, i);
                    for (unsigned k = 0; k < steps; ++k)
                    {
                        sum = m_b.CreateFAdd(sum,
                                             m_b.CreateFMul(element(o.operands[0], a_at(lane, i, k)),
                                                            element(o.operands[1], b_at(lane, i, k))));
                    }
                    d = m_b.CreateInsertElement(d, sum, i);
                }
                bind(o.results[0], d);
            });
    }

    // fx.mma, exactly, in NVIDIA's layout over a warp of 32 (matrix.py). A
    // lane holds `pack` consecutive k of a row in each 32-bit word: 2 (f16,
    // bf16; K = 16) or 4 (FP8; K = 32). Result i of lane 4g + t is (row g +
    // 8 (i / 2), column 2t + i % 2); A[row][k] is element (k % p) + p (row /
    // 8) + 2p (k / 4p) of lane 4 (row % 8) + (k % 4p) / p, B[k][column]
    // element (k % p) + p (k / 4p) of lane 4 column + (k % 4p) / p.
    void emit_mma(const ir::op& o)
    {
        if (static_cast<ir::mma_layout>(o.int_value) == ir::mma_layout::wave)
        {
            emit_wave_mma(o);
            return;
        }
        const auto fp8 = static_cast<ir::fp8_format>(o.attr);
        const unsigned p = fp8 == ir::fp8_format::none ? 2 : 4;
        llvm::Type* f32 = m_b.getFloatTy();
        auto a_at = [&](llvm::Value* lane, unsigned i, unsigned k)
        {
            llvm::Value* g = m_b.CreateUDiv(lane, m_b.getInt64(4));
            return held_at{m_b.CreateAdd(m_b.CreateMul(g, m_b.getInt64(4)), m_b.getInt64((k % (4 * p)) / p)),
                           (k % p) + p * (i / 2) + 2 * p * (k / (4 * p))};
        };
        auto b_at = [&](llvm::Value* lane, unsigned i, unsigned k)
        {
            llvm::Value* column = m_b.CreateAdd(
                m_b.CreateMul(m_b.CreateURem(lane, m_b.getInt64(4)), m_b.getInt64(2)), m_b.getInt64(i % 2));
            return held_at{
                m_b.CreateAdd(m_b.CreateMul(column, m_b.getInt64(4)), m_b.getInt64((k % (4 * p)) / p)),
                (k % p) + p * (k / (4 * p))};
        };
        emit_exact_mma(
            o,
            32,
            8 * p,
            a_at,
            b_at,
            [&](llvm::Value* x)
            { return fp8 == ir::fp8_format::none ? m_b.CreateFPExt(x, f32) : decode_fp8(x, fp8, f32); });
    }

    // fx.wave_mma, exactly: MFMA's layout over a wave of 64 (matrix.py), lane
    // l holding row l % 16 of A and column l % 16 of B, four k from 4 (l / 16),
    // and rows 4 (l / 16) .. + 3 of column l % 16 of C and D: A[row][k] is
    // element k % 4 of lane row + 16 (k / 4), B[k][column] of lane column +
    // 16 (k / 4).
    void emit_wave_mma(const ir::op& o)
    {
        llvm::Type* f32 = m_b.getFloatTy();
        auto a_at = [&](llvm::Value* lane, unsigned i, unsigned k)
        {
            llvm::Value* row = m_b.CreateAdd(
                m_b.CreateMul(m_b.CreateUDiv(lane, m_b.getInt64(16)), m_b.getInt64(4)), m_b.getInt64(i));
            return held_at{m_b.CreateAdd(row, m_b.getInt64(16 * (k / 4))), k % 4};
        };
        auto b_at = [&](llvm::Value* lane, unsigned, unsigned k)
        {
            llvm::Value* column = m_b.CreateURem(lane, m_b.getInt64(16));
            return held_at{m_b.CreateAdd(column, m_b.getInt64(16 * (k / 4))), k % 4};
        };
        emit_exact_mma(o, 64, 16, a_at, b_at, [&](llvm::Value* x) { return m_b.CreateFPExt(x, f32); });
    }

    // Copies each varying value into a slot of its own, for every thread.
    void store_to_slots(const std::vector<ir::value_id>& values, const std::vector<llvm::Value*>& slots)
    {
        thread_segment(
            [&]
            {
                for (std::size_t i = 0; i < values.size(); ++i)
                {
                    if (slots[i] != nullptr)
                    {
                        llvm::Type* t = llvm_type(m_fn.type_of(values[i]));
                        m_b.CreateStore(value(values[i]), m_b.CreateGEP(t, slots[i], m_tid));
                    }
                }
            });
    }

    void emit_block_for(const ir::op& o)
    {
        const ir::region& body = *o.regions[0];
        const std::size_t count = o.results.size();
        llvm::Value* lower = value(o.operands[0]);
        llvm::Value* upper = value(o.operands[1]);
        llvm::Value* step = value(o.operands[2]);
        const bool is_signed = !ir::is_unsigned(kind_of(o.operands[0]));

        // Varying carried values live in per-thread slots across iterations.
        std::vector<llvm::Value*> carried_slots(count, nullptr);
        std::vector<ir::value_id> inits(o.operands.begin() + 3, o.operands.end());
        for (std::size_t i = 0; i < count; ++i)
        {
            if (m_uniform->varying(o.results[i]))
            {
                carried_slots[i] = slot(llvm_type(m_fn.type_of(o.results[i])));
            }
        }
        store_to_slots(inits, carried_slots);

        llvm::BasicBlock* pre = m_b.GetInsertBlock();
        auto* header = llvm::BasicBlock::Create(m_ctx, "bfor.header", m_llvm_fn);
        auto* inside = llvm::BasicBlock::Create(m_ctx, "bfor.body", m_llvm_fn);
        auto* exit = llvm::BasicBlock::Create(m_ctx, "bfor.exit", m_llvm_fn);
        std::vector<llvm::Value*> uniform_inits(count, nullptr);
        for (std::size_t i = 0; i < count; ++i)
        {
            if (carried_slots[i] == nullptr)
            {
                uniform_inits[i] = value(inits[i]);
            }
        }
        pre = m_b.GetInsertBlock();
        m_b.CreateBr(header);
        m_b.SetInsertPoint(header);
        llvm::PHINode* iv = m_b.CreatePHI(lower->getType(), 2, "biv");
        iv->addIncoming(lower, pre);
        std::vector<llvm::PHINode*> phis(count, nullptr);
        for (std::size_t i = 0; i < count; ++i)
        {
            if (carried_slots[i] == nullptr)
            {
                phis[i] = m_b.CreatePHI(uniform_inits[i]->getType(), 2);
                phis[i]->addIncoming(uniform_inits[i], pre);
            }
        }
        llvm::Value* up =
            is_signed ? m_b.CreateICmpSGT(step, llvm::ConstantInt::get(step->getType(), 0)) : m_b.getTrue();
        llvm::Value* below = is_signed ? m_b.CreateICmpSLT(iv, upper) : m_b.CreateICmpULT(iv, upper);
        m_b.CreateCondBr(m_b.CreateSelect(up, below, m_b.CreateICmpSGT(iv, upper)), inside, exit);

        m_b.SetInsertPoint(inside);
        bind(body.arguments[0], iv);
        for (std::size_t i = 0; i < count; ++i)
        {
            if (carried_slots[i] != nullptr)
            {
                bind_slot(body.arguments[i + 1], carried_slots[i]);
            }
            else
            {
                bind(body.arguments[i + 1], phis[i]);
            }
        }
        const auto yielded = emit_block_region(body);
        store_to_slots(yielded, carried_slots);
        for (std::size_t i = 0; i < count; ++i)
        {
            if (phis[i] != nullptr)
            {
                phis[i]->addIncoming(value(yielded[i]), m_b.GetInsertBlock());
            }
        }
        iv->addIncoming(m_b.CreateAdd(iv, step), m_b.GetInsertBlock());
        m_b.CreateBr(header);

        m_b.SetInsertPoint(exit);
        for (std::size_t i = 0; i < count; ++i)
        {
            if (carried_slots[i] != nullptr)
            {
                bind_slot(o.results[i], carried_slots[i]);
            }
            else
            {
                bind(o.results[i], phis[i]);
            }
        }
    }

    void emit_block_if(const ir::op& o)
    {
        const std::size_t count = o.results.size();
        std::vector<llvm::Value*> result_slots(count, nullptr);
        for (std::size_t i = 0; i < count; ++i)
        {
            if (m_uniform->varying(o.results[i]))
            {
                result_slots[i] = slot(llvm_type(m_fn.type_of(o.results[i])));
            }
        }
        auto* then_bb = llvm::BasicBlock::Create(m_ctx, "bthen", m_llvm_fn);
        auto* else_bb = llvm::BasicBlock::Create(m_ctx, "belse", m_llvm_fn);
        auto* merge = llvm::BasicBlock::Create(m_ctx, "bendif", m_llvm_fn);
        m_b.CreateCondBr(value(o.operands[0]), then_bb, else_bb);
        std::vector<std::vector<llvm::Value*>> uniform_out(2);
        std::vector<llvm::BasicBlock*> ends(2);
        llvm::BasicBlock* blocks[2] = {then_bb, else_bb};
        for (int side = 0; side < 2; ++side)
        {
            m_b.SetInsertPoint(blocks[side]);
            const auto yielded = emit_block_region(*o.regions[side]);
            store_to_slots(yielded, result_slots);
            for (std::size_t i = 0; i < count; ++i)
            {
                uniform_out[side].push_back(result_slots[i] == nullptr ? value(yielded[i]) : nullptr);
            }
            ends[side] = m_b.GetInsertBlock();
            m_b.CreateBr(merge);
        }
        m_b.SetInsertPoint(merge);
        std::vector<llvm::PHINode*> phis(count, nullptr);
        for (std::size_t i = 0; i < count; ++i)
        {
            if (result_slots[i] == nullptr)
            {
                phis[i] = m_b.CreatePHI(uniform_out[0][i]->getType(), 2);
                phis[i]->addIncoming(uniform_out[0][i], ends[0]);
                phis[i]->addIncoming(uniform_out[1][i], ends[1]);
            }
        }
        for (std::size_t i = 0; i < count; ++i)
        {
            if (result_slots[i] != nullptr)
            {
                bind_slot(o.results[i], result_slots[i]);
            }
            else
            {
                bind(o.results[i], phis[i]);
            }
        }
    }

    std::unique_ptr<bounds_inference> m_bounds;
    bool m_elide_checks = false; // emitting the copy for blocks whose checks all hold
    // Kernels with barriers or shuffles only:
    std::unique_ptr<ir::uniformity> m_uniform;
    std::vector<int> m_value_segment;  // thread segment a value was made in (-1: block level)
    std::vector<llvm::Value*> m_slots; // per-thread storage of a value, or null
    int m_segment = -1;                // the thread loop being emitted (-1: block level)
    int m_segments = 0;
    llvm::Value* m_tid = nullptr; // block-linear thread index in the current thread loop
    llvm::Value* m_thread_count = nullptr;
    llvm::BasicBlock* m_entry = nullptr;
    llvm::Value* m_shared = nullptr;
    llvm::Value* m_grid[3] = {};
    llvm::Value* m_block[3] = {};
    llvm::Value* m_block_idx[3] = {};
    llvm::Value* m_thread_idx[3] = {};
};

class cpu_codegen : public target_codegen
{
public:
    using target_codegen::target_codegen;

    bool separate_device_module() const override { return false; }

    void emit_kernel(const ir::module& m, const ir::function& f, llvm::Module& out) const override
    {
        cpu_kernel_lowering(m, f, description(), out).emit();
    }

    llvm::Value*
    emit_launch_call(llvm::IRBuilder<>& b, llvm::Module& host, const launch_call& call) const override
    {
        const ir::function& kernel = call.kernel;
        llvm::Value* known = llvm::ConstantPointerNull::get(b.getPtrTy());
        if (kernel.known_block_size[0] > 0)
        {
            const auto& size = kernel.known_block_size;
            known = new llvm::GlobalVariable(
                host,
                llvm::ArrayType::get(b.getInt32Ty(), 3),
                true,
                llvm::GlobalValue::PrivateLinkage,
                llvm::ConstantDataArray::get(host.getContext(), llvm::ArrayRef<std::int32_t>(size.data(), 3)),
                kernel.name + ".known_block_size");
        }
        llvm::FunctionCallee launch = host.getOrInsertFunction(
            launch_symbol,
            llvm::FunctionType::get(
                b.getInt32Ty(), {b.getPtrTy(), b.getPtrTy(), b.getPtrTy(), b.getPtrTy()}, false));
        // Launches on the CPU are synchronous: the stream does not matter.
        return b.CreateCall(
            launch, {host.getFunction(kernel.name + blocks_suffix), call.slots, call.geometry, known});
    }
};

} // namespace

std::unique_ptr<target_codegen> make_cpu_codegen(const target& t)
{
    return std::make_unique<cpu_codegen>(t);
}

} // namespace flyrt::codegen::cpu
