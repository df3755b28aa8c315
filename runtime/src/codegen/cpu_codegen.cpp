#include "cpu_codegen.hpp"

#include "flyrt/uniformity.hpp"

#include <stdexcept>

#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

namespace flyrt::codegen
{
namespace
{

using ir::arith;
using ir::opcode;
using ir::scalar;

constexpr unsigned slot_bytes = 8;

// Fields of the launch geometry record (flyrt::launch::geometry).
enum geometry_field : unsigned
{
    grid_x = 0,
    block_x = 3,
    smem_bytes = 6,
};

class function_emitter
{
public:
    function_emitter(const ir::module& m, const ir::function& f, llvm::Module& out)
        : m_module(m), m_fn(f), m_out(out), m_ctx(out.getContext()), m_b(m_ctx),
          m_values(f.values.size(), nullptr)
    {
    }

    void emit()
    {
        if (m_fn.kind == ir::function_kind::host)
        {
            emit_host();
        }
        else
        {
            emit_kernel();
        }
    }

private:
    // -- types ---------------------------------------------------------------

    llvm::Type* llvm_type(scalar kind)
    {
        switch (kind)
        {
        case scalar::i1:
            return m_b.getInt1Ty();
        case scalar::i8:
        case scalar::u8:
            return m_b.getInt8Ty();
        case scalar::i16:
        case scalar::u16:
            return m_b.getInt16Ty();
        case scalar::i32:
        case scalar::u32:
            return m_b.getInt32Ty();
        case scalar::i64:
        case scalar::u64:
            return m_b.getInt64Ty();
        case scalar::f16:
            return m_b.getHalfTy();
        case scalar::bf16:
            return m_b.getBFloatTy();
        case scalar::f32:
            return m_b.getFloatTy();
        case scalar::f64:
            return m_b.getDoubleTy();
        case scalar::ptr:
            return m_b.getPtrTy();
        }
        throw std::logic_error("unknown scalar kind");
    }

    llvm::Type* llvm_type(const ir::type& t)
    {
        llvm::Type* element = llvm_type(t.kind);
        return t.lanes > 1 ? llvm::FixedVectorType::get(element, t.lanes) : element;
    }

    scalar kind_of(ir::value_id id) const { return m_fn.type_of(id).kind; }

    // A value where it is used. In kernels with barriers, a value from
    // another thread segment (or a block-level loop's varying carried value)
    // is read back from its per-thread slot.
    llvm::Value* value(ir::value_id id)
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

    void bind(ir::value_id id, llvm::Value* v)
    {
        const auto i = static_cast<std::size_t>(id);
        m_values.at(i) = v;
        if (m_uniform == nullptr)
        {
            return;
        }
        m_value_segment[i] = m_segment;
        if (m_segment >= 0)
        {
            // Every value made inside a thread loop gets a per-thread slot;
            // LLVM deletes the slots nothing reads back.
            llvm::Type* t = llvm_type(m_fn.type_of(id));
            m_slots[i] = slot(t);
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

    // -- function shells -----------------------------------------------------

    void load_parameters(llvm::Value* slots)
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

    void emit_host()
    {
        auto* type = llvm::FunctionType::get(m_b.getInt32Ty(), {m_b.getPtrTy()}, false);
        m_llvm_fn = llvm::Function::Create(type, llvm::Function::ExternalLinkage, m_fn.name, m_out);
        m_b.SetInsertPoint(llvm::BasicBlock::Create(m_ctx, "entry", m_llvm_fn));
        load_parameters(m_llvm_fn->getArg(0));
        emit_region(m_fn.body);
        m_b.CreateRet(m_b.getInt32(0));
    }

    void emit_kernel()
    {
        llvm::Type* ptr = m_b.getPtrTy();
        llvm::Type* i64 = m_b.getInt64Ty();
        auto* type = llvm::FunctionType::get(m_b.getVoidTy(), {ptr, ptr, i64, i64, ptr}, false);
        m_llvm_fn =
            llvm::Function::Create(type, llvm::Function::ExternalLinkage, m_fn.name + blocks_suffix, m_out);
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
        counted_loop(first,
                     last,
                     "block",
                     [&](llvm::Value* linear)
                     {
                         llvm::Value* gx = m_b.CreateZExt(m_grid[0], m_b.getInt64Ty());
                         llvm::Value* gy = m_b.CreateZExt(m_grid[1], m_b.getInt64Ty());
                         m_block_idx[0] = m_b.CreateTrunc(m_b.CreateURem(linear, gx), m_b.getInt32Ty());
                         llvm::Value* rest = m_b.CreateUDiv(linear, gx);
                         m_block_idx[1] = m_b.CreateTrunc(m_b.CreateURem(rest, gy), m_b.getInt32Ty());
                         m_block_idx[2] = m_b.CreateTrunc(m_b.CreateUDiv(rest, gy), m_b.getInt32Ty());
                         if (m_uniform != nullptr)
                         {
                             emit_block_region(m_fn.body);
                         }
                         else
                         {
                             thread_loops([&] { emit_region(m_fn.body); });
                         }
                     });
        m_b.CreateRetVoid();
    }

    llvm::Value* load_geometry(llvm::Value* geometry, unsigned field)
    {
        llvm::Value* address = m_b.CreateConstInBoundsGEP1_64(m_b.getInt32Ty(), geometry, field);
        return m_b.CreateLoad(m_b.getInt32Ty(), address);
    }

    // Runs `body` once per thread of the block (z, y, x loops).
    template <class Body> void thread_loops(Body&& body)
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
                                                       m_block[0],
                                                       "tx",
                                                       [&](llvm::Value* tx)
                                                       {
                                                           m_thread_idx[0] = tx;
                                                           body();
                                                       });
                                      });
                     });
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
            thread_segment(
                [&]
                {
                    for (const ir::op* o : per_thread)
                    {
                        emit_op(*o);
                    }
                });
        }
    }

    bool hoistable(const ir::op& o) const
    {
        switch (o.code)
        {
        case opcode::constant:
        case opcode::unary:
        case opcode::binary:
        case opcode::compare:
        case opcode::select:
        case opcode::fma:
        case opcode::cast:
        case opcode::bitcast:
        case opcode::special:
        case opcode::shared:
            break;
        default:
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
        m_segment = -1;
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
                const ir::value_id source = o.operands[0];
                llvm::Value* src = m_b.CreateSExt(value(o.operands[1]), m_b.getInt64Ty());
                // A source outside the block reads the thread's own value.
                llvm::Value* inside = m_b.CreateICmpULT(src, m_thread_count);
                src = m_b.CreateSelect(inside, src, m_tid);
                llvm::Value* result = nullptr;
                if (m_slots[static_cast<std::size_t>(source)] == nullptr)
                {
                    result = value(source); // uniform: every thread holds the same
                }
                else
                {
                    llvm::Type* t = llvm_type(m_fn.type_of(source));
                    result =
                        m_b.CreateLoad(t, m_b.CreateGEP(t, m_slots[static_cast<std::size_t>(source)], src));
                }
                bind(o.results[0], result);
            });
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

    // -- regions and ops -----------------------------------------------------

    // Emits a region's ops; returns the values of its terminator (if any).
    std::vector<llvm::Value*> emit_region(const ir::region& r)
    {
        std::vector<llvm::Value*> yielded;
        for (const auto& o : r.ops)
        {
            if (o->code == opcode::yield || o->code == opcode::condition)
            {
                for (ir::value_id id : o->operands)
                {
                    yielded.push_back(value(id));
                }
            }
            else
            {
                emit_op(*o);
            }
        }
        return yielded;
    }

    void emit_op(const ir::op& o)
    {
        switch (o.code)
        {
        case opcode::constant:
            bind(o.results[0], constant(m_fn.type_of(o.results[0]), o));
            break;
        case opcode::special:
            bind(o.results[0], special(o));
            break;
        case opcode::unary:
            bind(o.results[0], unary(static_cast<arith>(o.attr), o.operands[0]));
            break;
        case opcode::binary:
            bind(o.results[0], binary(static_cast<arith>(o.attr), o.operands[0], o.operands[1]));
            break;
        case opcode::compare:
            bind(o.results[0], compare(static_cast<ir::predicate>(o.attr), o.operands[0], o.operands[1]));
            break;
        case opcode::select:
            bind(o.results[0],
                 m_b.CreateSelect(value(o.operands[0]), value(o.operands[1]), value(o.operands[2])));
            break;
        case opcode::fma:
            bind(o.results[0], fma(o));
            break;
        case opcode::cast:
            bind(o.results[0], cast(o.operands[0], m_fn.type_of(o.results[0])));
            break;
        case opcode::bitcast:
            bind(o.results[0],
                 m_b.CreateBitCast(value(o.operands[0]), llvm_type(m_fn.type_of(o.results[0]))));
            break;
        case opcode::load:
        {
            const ir::type& t = m_fn.type_of(o.results[0]);
            llvm::Type* element = llvm_type(t.kind);
            llvm::LoadInst* load = m_b.CreateLoad(llvm_type(t), address(o, element));
            load->setAlignment(llvm::Align(std::max(1, ir::bit_width(t.kind) / 8)));
            bind(o.results[0], load);
            break;
        }
        case opcode::store:
        {
            llvm::Type* element = llvm_type(kind_of(o.operands[2]));
            llvm::StoreInst* store = m_b.CreateStore(value(o.operands[2]), address(o, element));
            store->setAlignment(llvm::Align(std::max(1, ir::bit_width(kind_of(o.operands[2])) / 8)));
            break;
        }
        case opcode::extract:
            bind(o.results[0],
                 m_b.CreateExtractElement(value(o.operands[0]), static_cast<std::uint64_t>(o.int_value)));
            break;
        case opcode::insert:
            bind(o.results[0],
                 m_b.CreateInsertElement(
                     value(o.operands[0]), value(o.operands[1]), static_cast<std::uint64_t>(o.int_value)));
            break;
        case opcode::broadcast:
            bind(o.results[0], m_b.CreateVectorSplat(m_fn.type_of(o.results[0]).lanes, value(o.operands[0])));
            break;
        case opcode::reduce:
            bind(o.results[0], reduce(static_cast<arith>(o.attr), o.operands[0]));
            break;
        case opcode::if_:
            emit_if(o);
            break;
        case opcode::for_:
            emit_for(o);
            break;
        case opcode::while_:
            emit_while(o);
            break;
        case opcode::launch:
            emit_launch(o);
            break;
        case opcode::report:
            emit_report(o);
            break;
        case opcode::shared:
        {
            const std::int64_t aligned_static = (m_fn.static_shared_bytes + 63) / 64 * 64;
            const std::int64_t offset = o.int_value >= 0 ? o.int_value : aligned_static;
            bind(o.results[0],
                 m_b.CreateConstInBoundsGEP1_64(
                     m_b.getInt8Ty(), m_shared, static_cast<std::uint64_t>(offset)));
            break;
        }
        case opcode::barrier:
        case opcode::shuffle:
            // Only reached in kernels without block-level structure, which the
            // uniformity analysis rules out; emit_block_region handles them.
            throw std::logic_error("flyrt: a barrier outside block-level emission");
        case opcode::ret:
        case opcode::yield:
        case opcode::condition:
            break;
        }
    }

    llvm::Value* constant(const ir::type& t, const ir::op& o)
    {
        llvm::Type* type = llvm_type(t);
        if (ir::is_float(t.kind))
        {
            return llvm::ConstantFP::get(type, o.float_value);
        }
        if (t.kind == scalar::ptr)
        {
            return llvm::ConstantPointerNull::get(m_b.getPtrTy());
        }
        return llvm::ConstantInt::get(
            type, static_cast<std::uint64_t>(o.int_value), !ir::is_unsigned(t.kind));
    }

    llvm::Value* special(const ir::op& o)
    {
        const auto dim = static_cast<std::size_t>(o.int_value);
        switch (static_cast<ir::special_register>(o.attr))
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

    llvm::Value* intrinsic(llvm::Intrinsic::ID id, llvm::Value* x) { return m_b.CreateUnaryIntrinsic(id, x); }

    // 2^x for f32 (scalars and vectors) inline, so the loops around it
    // vectorize: LLVM 19 lowers llvm.exp2 to one libm call per lane. Range
    // reduction x = n + r, |r| <= 1/2; 2^r = 1 + r q(r) with q a degree-5
    // fit (Lawson-weighted least squares on Chebyshev nodes, max relative
    // error 1.0e-7 over the f32 range, numpy's exp2f has 2.2e-7); 2^n
    // applied as two exponent-field scalings so that results that overflow
    // or are subnormal come out right. NaN stays NaN.
    llvm::Value* exp2_f32(llvm::Value* x)
    {
        llvm::Type* type = x->getType();
        llvm::Type* ints = type->getWithNewType(m_b.getInt32Ty());
        auto real = [&](double v) { return llvm::ConstantFP::get(type, v); };
        auto integer = [&](std::uint64_t v) { return llvm::ConstantInt::get(ints, v); };
        llvm::Value* clamped =
            m_b.CreateBinaryIntrinsic(llvm::Intrinsic::minnum,
                                      m_b.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, x, real(-151.0)),
                                      real(129.0));
        llvm::Value* n = intrinsic(llvm::Intrinsic::floor, m_b.CreateFAdd(clamped, real(0.5)));
        llvm::Value* r = m_b.CreateFSub(clamped, n);
        llvm::Value* q = real(1.53533575e-04);
        for (double c : {1.33988761e-03, 9.61843739e-03, 5.55033247e-02, 2.40226479e-01, 6.93147203e-01})
        {
            q = m_b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {type}, {q, r, real(c)});
        }
        llvm::Value* p = m_b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {type}, {r, q, real(1.0)});
        llvm::Value* exponent = m_b.CreateFPToSI(n, ints);
        llvm::Value* half = m_b.CreateAShr(exponent, integer(1));
        auto power_of_two = [&](llvm::Value* e)
        { return m_b.CreateBitCast(m_b.CreateShl(m_b.CreateAdd(e, integer(127)), integer(23)), type); };
        llvm::Value* result = m_b.CreateFMul(m_b.CreateFMul(p, power_of_two(half)),
                                             power_of_two(m_b.CreateSub(exponent, half)));
        return m_b.CreateSelect(m_b.CreateFCmpUNO(x, x), x, result);
    }

    llvm::Value* unary(arith kind, ir::value_id operand)
    {
        llvm::Value* x = value(operand);
        const scalar s = kind_of(operand);
        const bool fp = ir::is_float(s);
        switch (kind)
        {
        case arith::neg:
            return fp ? m_b.CreateFNeg(x) : m_b.CreateNeg(x);
        case arith::bit_not:
            return m_b.CreateNot(x);
        case arith::abs:
            return fp ? intrinsic(llvm::Intrinsic::fabs, x)
                      : m_b.CreateBinaryIntrinsic(llvm::Intrinsic::abs, x, m_b.getFalse());
        case arith::exp:
            return intrinsic(llvm::Intrinsic::exp, x);
        case arith::exp2:
            return s == scalar::f32 ? exp2_f32(x) : intrinsic(llvm::Intrinsic::exp2, x);
        case arith::log:
            return intrinsic(llvm::Intrinsic::log, x);
        case arith::log2:
            return intrinsic(llvm::Intrinsic::log2, x);
        case arith::sqrt:
            return intrinsic(llvm::Intrinsic::sqrt, x);
        case arith::rsqrt:
            return m_b.CreateFDiv(llvm::ConstantFP::get(x->getType(), 1.0),
                                  intrinsic(llvm::Intrinsic::sqrt, x));
        case arith::floor:
            return intrinsic(llvm::Intrinsic::floor, x);
        case arith::ceil:
            return intrinsic(llvm::Intrinsic::ceil, x);
        default:
            throw std::logic_error("not a unary op");
        }
    }

    // Integer division and remainder that never trap: x / 0 is 0 (as in
    // numpy), and MIN / -1 wraps to MIN, instead of SIGFPE.
    llvm::Value* safe_divisor(llvm::Value* a, llvm::Value* b, bool is_signed, llvm::Value*& by_zero)
    {
        llvm::Type* t = b->getType();
        by_zero = m_b.CreateICmpEQ(b, llvm::ConstantInt::get(t, 0));
        llvm::Value* trap = by_zero;
        if (is_signed)
        {
            const unsigned width = t->getScalarSizeInBits();
            llvm::Value* min = llvm::ConstantInt::get(t, llvm::APInt::getSignedMinValue(width));
            llvm::Value* overflow = m_b.CreateAnd(m_b.CreateICmpEQ(a, min),
                                                  m_b.CreateICmpEQ(b, llvm::ConstantInt::getSigned(t, -1)));
            trap = m_b.CreateOr(trap, overflow);
        }
        return m_b.CreateSelect(trap, llvm::ConstantInt::get(t, 1), b);
    }

    llvm::Value* integer_divide(arith kind, llvm::Value* a, llvm::Value* b, bool is_signed)
    {
        llvm::Value* by_zero = nullptr;
        llvm::Value* divisor = safe_divisor(a, b, is_signed, by_zero);
        llvm::Value* q = kind == arith::div
                             ? (is_signed ? m_b.CreateSDiv(a, divisor) : m_b.CreateUDiv(a, divisor))
                             : (is_signed ? m_b.CreateSRem(a, divisor) : m_b.CreateURem(a, divisor));
        return m_b.CreateSelect(by_zero, llvm::ConstantInt::get(a->getType(), 0), q);
    }

    llvm::Value* binary(arith kind, ir::value_id lhs, ir::value_id rhs)
    {
        llvm::Value* a = value(lhs);
        llvm::Value* b = value(rhs);
        const scalar s = kind_of(lhs);
        const bool fp = ir::is_float(s);
        const bool is_signed = !ir::is_unsigned(s);
        switch (kind)
        {
        case arith::add:
            return fp ? m_b.CreateFAdd(a, b) : m_b.CreateAdd(a, b);
        case arith::sub:
            return fp ? m_b.CreateFSub(a, b) : m_b.CreateSub(a, b);
        case arith::mul:
            return fp ? m_b.CreateFMul(a, b) : m_b.CreateMul(a, b);
        case arith::div:
        case arith::rem:
        {
            if (fp)
            {
                return kind == arith::div ? m_b.CreateFDiv(a, b) : m_b.CreateFRem(a, b);
            }
            return integer_divide(kind, a, b, is_signed);
        }
        case arith::bit_and:
            return m_b.CreateAnd(a, b);
        case arith::bit_or:
            return m_b.CreateOr(a, b);
        case arith::bit_xor:
            return m_b.CreateXor(a, b);
        case arith::shl:
        case arith::shr:
        {
            // Shifting by the width or more is poison in LLVM; give 0 (or the
            // sign fill for an arithmetic right shift) as numpy does on x86.
            llvm::Type* t = a->getType();
            const unsigned width = t->getScalarSizeInBits();
            llvm::Value* too_far = m_b.CreateICmpUGE(b, llvm::ConstantInt::get(t, width));
            llvm::Value* amount = m_b.CreateSelect(too_far, llvm::ConstantInt::get(t, 0), b);
            if (kind == arith::shl)
            {
                return m_b.CreateSelect(too_far, llvm::ConstantInt::get(t, 0), m_b.CreateShl(a, amount));
            }
            if (is_signed)
            {
                llvm::Value* fill = m_b.CreateAShr(a, llvm::ConstantInt::get(t, width - 1));
                return m_b.CreateSelect(too_far, fill, m_b.CreateAShr(a, amount));
            }
            return m_b.CreateSelect(too_far, llvm::ConstantInt::get(t, 0), m_b.CreateLShr(a, amount));
        }
        case arith::min:
        case arith::max:
        {
            if (fp)
            {
                // NaN-propagating, like numpy.minimum / maximum.
                return m_b.CreateBinaryIntrinsic(
                    kind == arith::min ? llvm::Intrinsic::minimum : llvm::Intrinsic::maximum, a, b);
            }
            llvm::Intrinsic::ID id = kind == arith::min
                                         ? (is_signed ? llvm::Intrinsic::smin : llvm::Intrinsic::umin)
                                         : (is_signed ? llvm::Intrinsic::smax : llvm::Intrinsic::umax);
            return m_b.CreateBinaryIntrinsic(id, a, b);
        }
        default:
            throw std::logic_error("not a binary op");
        }
    }

    llvm::Value* compare(ir::predicate p, ir::value_id lhs, ir::value_id rhs)
    {
        llvm::Value* a = value(lhs);
        llvm::Value* b = value(rhs);
        const scalar s = kind_of(lhs);
        if (ir::is_float(s))
        {
            static const llvm::CmpInst::Predicate fp[] = {llvm::CmpInst::FCMP_OEQ,
                                                          llvm::CmpInst::FCMP_UNE,
                                                          llvm::CmpInst::FCMP_OLT,
                                                          llvm::CmpInst::FCMP_OLE,
                                                          llvm::CmpInst::FCMP_OGT,
                                                          llvm::CmpInst::FCMP_OGE};
            return m_b.CreateFCmp(fp[static_cast<int>(p)], a, b);
        }
        static const llvm::CmpInst::Predicate sint[] = {llvm::CmpInst::ICMP_EQ,
                                                        llvm::CmpInst::ICMP_NE,
                                                        llvm::CmpInst::ICMP_SLT,
                                                        llvm::CmpInst::ICMP_SLE,
                                                        llvm::CmpInst::ICMP_SGT,
                                                        llvm::CmpInst::ICMP_SGE};
        static const llvm::CmpInst::Predicate uint[] = {llvm::CmpInst::ICMP_EQ,
                                                        llvm::CmpInst::ICMP_NE,
                                                        llvm::CmpInst::ICMP_ULT,
                                                        llvm::CmpInst::ICMP_ULE,
                                                        llvm::CmpInst::ICMP_UGT,
                                                        llvm::CmpInst::ICMP_UGE};
        return m_b.CreateICmp(
            ir::is_unsigned(s) ? uint[static_cast<int>(p)] : sint[static_cast<int>(p)], a, b);
    }

    llvm::Value* reduce(arith kind, ir::value_id vector)
    {
        llvm::Value* v = value(vector);
        const scalar s = kind_of(vector);
        const bool fp = ir::is_float(s);
        switch (kind)
        {
        case arith::add:
            // In lane order, so results match a sequential sum.
            return fp ? m_b.CreateFAddReduce(llvm::ConstantFP::getNegativeZero(llvm_type(s)), v)
                      : m_b.CreateAddReduce(v);
        case arith::max:
            return fp ? m_b.CreateFPMaximumReduce(v) : m_b.CreateIntMaxReduce(v, !ir::is_unsigned(s));
        case arith::min:
            return fp ? m_b.CreateFPMinimumReduce(v) : m_b.CreateIntMinReduce(v, !ir::is_unsigned(s));
        default:
            throw std::logic_error("vectors reduce with add, min or max");
        }
    }

    llvm::Value* fma(const ir::op& o)
    {
        llvm::Value* a = value(o.operands[0]);
        llvm::Value* b = value(o.operands[1]);
        llvm::Value* c = value(o.operands[2]);
        if (ir::is_float(kind_of(o.operands[0])))
        {
            return m_b.CreateIntrinsic(llvm::Intrinsic::fma, {a->getType()}, {a, b, c});
        }
        return m_b.CreateAdd(m_b.CreateMul(a, b), c);
    }

    llvm::Value* cast(ir::value_id operand, const ir::type& result)
    {
        llvm::Value* x = value(operand);
        const scalar from = kind_of(operand);
        const scalar to = result.kind;
        llvm::Type* target = llvm_type(result);
        if (from == to)
        {
            return x;
        }
        const bool from_fp = ir::is_float(from);
        const bool to_fp = ir::is_float(to);
        if (to == scalar::i1)
        {
            return from_fp ? m_b.CreateFCmpUNE(x, llvm::ConstantFP::get(x->getType(), 0.0))
                           : m_b.CreateICmpNE(x, llvm::ConstantInt::get(x->getType(), 0));
        }
        if (from_fp && to_fp)
        {
            return m_b.CreateFPCast(x, target);
        }
        if (from_fp)
        {
            // Saturating: out-of-range and NaN inputs give defined results.
            return m_b.CreateIntrinsic(ir::is_unsigned(to) ? llvm::Intrinsic::fptoui_sat
                                                           : llvm::Intrinsic::fptosi_sat,
                                       {target, x->getType()},
                                       {x});
        }
        if (to_fp)
        {
            return ir::is_unsigned(from) ? m_b.CreateUIToFP(x, target) : m_b.CreateSIToFP(x, target);
        }
        return m_b.CreateIntCast(x, target, !ir::is_unsigned(from));
    }

    llvm::Value* address(const ir::op& o, llvm::Type* element)
    {
        llvm::Value* offset = value(o.operands[1]);
        offset = m_b.CreateIntCast(offset, m_b.getInt64Ty(), !ir::is_unsigned(kind_of(o.operands[1])));
        return m_b.CreateGEP(element, value(o.operands[0]), offset);
    }

    void emit_if(const ir::op& o)
    {
        auto* then_bb = llvm::BasicBlock::Create(m_ctx, "then", m_llvm_fn);
        auto* else_bb = llvm::BasicBlock::Create(m_ctx, "else", m_llvm_fn);
        auto* merge = llvm::BasicBlock::Create(m_ctx, "endif", m_llvm_fn);
        m_b.CreateCondBr(value(o.operands[0]), then_bb, else_bb);

        m_b.SetInsertPoint(then_bb);
        const auto then_values = emit_region(*o.regions[0]);
        llvm::BasicBlock* then_end = m_b.GetInsertBlock();
        m_b.CreateBr(merge);

        m_b.SetInsertPoint(else_bb);
        const auto else_values = emit_region(*o.regions[1]);
        llvm::BasicBlock* else_end = m_b.GetInsertBlock();
        m_b.CreateBr(merge);

        m_b.SetInsertPoint(merge);
        std::vector<llvm::PHINode*> phis; // all phis first: binding may add stores
        for (std::size_t i = 0; i < o.results.size(); ++i)
        {
            phis.push_back(m_b.CreatePHI(then_values[i]->getType(), 2));
            phis.back()->addIncoming(then_values[i], then_end);
            phis.back()->addIncoming(else_values[i], else_end);
        }
        for (std::size_t i = 0; i < o.results.size(); ++i)
        {
            bind(o.results[i], phis[i]);
        }
    }

    void emit_for(const ir::op& o)
    {
        const ir::region& body = *o.regions[0];
        llvm::Value* lower = value(o.operands[0]);
        llvm::Value* upper = value(o.operands[1]);
        llvm::Value* step = value(o.operands[2]);
        const bool is_signed = !ir::is_unsigned(kind_of(o.operands[0]));

        std::vector<llvm::Value*> inits; // before the header: reading them may emit loads
        for (std::size_t i = 3; i < o.operands.size(); ++i)
        {
            inits.push_back(value(o.operands[i]));
        }
        llvm::BasicBlock* pre = m_b.GetInsertBlock();
        auto* header = llvm::BasicBlock::Create(m_ctx, "for.header", m_llvm_fn);
        auto* inside = llvm::BasicBlock::Create(m_ctx, "for.body", m_llvm_fn);
        auto* exit = llvm::BasicBlock::Create(m_ctx, "for.exit", m_llvm_fn);
        m_b.CreateBr(header);

        m_b.SetInsertPoint(header);
        llvm::PHINode* iv = m_b.CreatePHI(lower->getType(), 2, "iv");
        iv->addIncoming(lower, pre);
        std::vector<llvm::PHINode*> carried;
        for (llvm::Value* init : inits)
        {
            llvm::PHINode* phi = m_b.CreatePHI(init->getType(), 2);
            phi->addIncoming(init, pre);
            carried.push_back(phi);
        }
        // Python's range: a positive step runs while iv < upper, a negative one while iv > upper.
        llvm::Value* keep_going = nullptr;
        if (auto* constant_step = llvm::dyn_cast<llvm::ConstantInt>(step))
        {
            const bool up = is_signed ? !constant_step->isNegative() : true;
            keep_going = up ? (is_signed ? m_b.CreateICmpSLT(iv, upper) : m_b.CreateICmpULT(iv, upper))
                            : m_b.CreateICmpSGT(iv, upper);
        }
        else
        {
            llvm::Value* up = is_signed ? m_b.CreateICmpSGT(step, llvm::ConstantInt::get(step->getType(), 0))
                                        : m_b.getTrue();
            llvm::Value* below = is_signed ? m_b.CreateICmpSLT(iv, upper) : m_b.CreateICmpULT(iv, upper);
            llvm::Value* above = m_b.CreateICmpSGT(iv, upper);
            keep_going = m_b.CreateSelect(up, below, above);
        }
        m_b.CreateCondBr(keep_going, inside, exit);

        m_b.SetInsertPoint(inside);
        bind(body.arguments[0], iv);
        for (std::size_t i = 0; i < carried.size(); ++i)
        {
            bind(body.arguments[i + 1], carried[i]);
        }
        const auto yielded = emit_region(body);
        llvm::BasicBlock* latch = m_b.GetInsertBlock();
        iv->addIncoming(m_b.CreateAdd(iv, step), latch);
        for (std::size_t i = 0; i < carried.size(); ++i)
        {
            carried[i]->addIncoming(yielded[i], latch);
        }
        m_b.CreateBr(header);

        m_b.SetInsertPoint(exit);
        for (std::size_t i = 0; i < carried.size(); ++i)
        {
            bind(o.results[i], carried[i]);
        }
    }

    void emit_while(const ir::op& o)
    {
        const ir::region& before = *o.regions[0];
        const ir::region& after = *o.regions[1];
        std::vector<llvm::Value*> inits; // before the header: reading them may emit loads
        for (ir::value_id id : o.operands)
        {
            inits.push_back(value(id));
        }
        llvm::BasicBlock* pre = m_b.GetInsertBlock();
        auto* header = llvm::BasicBlock::Create(m_ctx, "while.cond", m_llvm_fn);
        auto* inside = llvm::BasicBlock::Create(m_ctx, "while.body", m_llvm_fn);
        auto* exit = llvm::BasicBlock::Create(m_ctx, "while.exit", m_llvm_fn);
        m_b.CreateBr(header);

        m_b.SetInsertPoint(header);
        std::vector<llvm::PHINode*> carried;
        for (llvm::Value* init : inits)
        {
            llvm::PHINode* phi = m_b.CreatePHI(init->getType(), 2);
            phi->addIncoming(init, pre);
            carried.push_back(phi);
        }
        for (std::size_t i = 0; i < carried.size(); ++i)
        {
            bind(before.arguments[i], carried[i]);
        }
        const auto forwarded = emit_region(before); // cond, values...
        m_b.CreateCondBr(forwarded[0], inside, exit);

        m_b.SetInsertPoint(inside);
        for (std::size_t i = 0; i < carried.size(); ++i)
        {
            bind(after.arguments[i], forwarded[i + 1]);
        }
        const auto yielded = emit_region(after);
        llvm::BasicBlock* latch = m_b.GetInsertBlock();
        for (std::size_t i = 0; i < carried.size(); ++i)
        {
            carried[i]->addIncoming(yielded[i], latch);
        }
        m_b.CreateBr(header);

        m_b.SetInsertPoint(exit);
        for (std::size_t i = 0; i < carried.size(); ++i)
        {
            bind(o.results[i], forwarded[i + 1]);
        }
    }

    void emit_report(const ir::op& o)
    {
        const std::size_t count = o.operands.size();
        llvm::Value* values =
            m_b.CreateAlloca(llvm::ArrayType::get(m_b.getInt64Ty(), count == 0 ? 1 : count));
        for (std::size_t i = 0; i < count; ++i)
        {
            m_b.CreateStore(value(o.operands[i]),
                            m_b.CreateConstInBoundsGEP1_64(m_b.getInt64Ty(), values, i));
        }
        llvm::FunctionCallee report = m_out.getOrInsertFunction(
            report_symbol,
            llvm::FunctionType::get(
                m_b.getVoidTy(), {m_b.getPtrTy(), m_b.getInt32Ty(), m_b.getPtrTy()}, false));
        m_b.CreateCall(
            report,
            {m_b.CreateGlobalStringPtr(o.callee), m_b.getInt32(static_cast<std::int32_t>(count)), values});
    }

    void emit_launch(const ir::op& o)
    {
        const ir::function* callee = m_module.find(o.callee);
        llvm::Type* i32 = m_b.getInt32Ty();
        constexpr std::size_t geometry_fields = 8; // grid xyz, block xyz, smem, static shared
        llvm::Value* geometry = m_b.CreateAlloca(llvm::ArrayType::get(i32, geometry_fields));
        for (std::size_t i = 0; i < 7; ++i)
        {
            m_b.CreateStore(value(o.operands[i]), m_b.CreateConstInBoundsGEP1_64(i32, geometry, i));
        }
        m_b.CreateStore(
            m_b.getInt32(static_cast<std::uint32_t>((callee->static_shared_bytes + 63) / 64 * 64)),
            m_b.CreateConstInBoundsGEP1_64(i32, geometry, 7));
        const std::size_t count = callee->parameters.size();
        llvm::Value* slots = m_b.CreateAlloca(llvm::ArrayType::get(m_b.getInt64Ty(), count == 0 ? 1 : count));
        for (std::size_t i = 0; i < count; ++i)
        {
            m_b.CreateStore(value(o.operands[7 + i]),
                            m_b.CreateConstInBoundsGEP1_64(m_b.getInt8Ty(), slots, i * slot_bytes));
        }
        llvm::Function* kernel = m_out.getFunction(o.callee + blocks_suffix);
        llvm::Value* known = llvm::ConstantPointerNull::get(m_b.getPtrTy());
        if (callee->known_block_size[0] > 0)
        {
            const auto& size = callee->known_block_size;
            known = new llvm::GlobalVariable(
                m_out,
                llvm::ArrayType::get(i32, 3),
                true,
                llvm::GlobalValue::PrivateLinkage,
                llvm::ConstantDataArray::get(m_ctx, llvm::ArrayRef<std::int32_t>(size.data(), 3)),
                o.callee + ".known_block_size");
        }
        llvm::FunctionCallee launch = m_out.getOrInsertFunction(
            launch_symbol,
            llvm::FunctionType::get(
                i32, {m_b.getPtrTy(), m_b.getPtrTy(), m_b.getPtrTy(), m_b.getPtrTy()}, false));
        llvm::Value* status = m_b.CreateCall(launch, {kernel, slots, geometry, known});
        // A failed launch ends the launcher with its status.
        auto* failed = llvm::BasicBlock::Create(m_ctx, "launch.failed", m_llvm_fn);
        auto* next = llvm::BasicBlock::Create(m_ctx, "launch.ok", m_llvm_fn);
        m_b.CreateCondBr(m_b.CreateICmpNE(status, m_b.getInt32(0)), failed, next);
        m_b.SetInsertPoint(failed);
        m_b.CreateRet(status);
        m_b.SetInsertPoint(next);
    }

    const ir::module& m_module;
    const ir::function& m_fn;
    llvm::Module& m_out;
    llvm::LLVMContext& m_ctx;
    llvm::IRBuilder<> m_b;
    std::vector<llvm::Value*> m_values;
    // Kernels with barriers or shuffles only:
    std::unique_ptr<ir::uniformity> m_uniform;
    std::vector<int> m_value_segment;  // thread segment a value was made in (-1: block level)
    std::vector<llvm::Value*> m_slots; // per-thread storage of a value, or null
    int m_segment = -1;                // the thread loop being emitted (-1: block level)
    int m_segments = 0;
    llvm::Value* m_tid = nullptr; // block-linear thread index in the current thread loop
    llvm::Value* m_thread_count = nullptr;
    llvm::BasicBlock* m_entry = nullptr;
    llvm::Function* m_llvm_fn = nullptr;
    llvm::Value* m_shared = nullptr;
    llvm::Value* m_grid[3] = {};
    llvm::Value* m_block[3] = {};
    llvm::Value* m_block_idx[3] = {};
    llvm::Value* m_thread_idx[3] = {};
};

} // namespace

std::unique_ptr<llvm::Module> emit_cpu_module(const ir::module& m, llvm::LLVMContext& context)
{
    auto out = std::make_unique<llvm::Module>(m.name, context);
    // Kernels first: launches in host functions refer to them.
    for (auto kind : {ir::function_kind::kernel, ir::function_kind::host})
    {
        for (const auto& f : m.functions)
        {
            if (f->kind == kind)
            {
                function_emitter(m, *f, *out).emit();
            }
        }
    }
    std::string problems;
    llvm::raw_string_ostream stream(problems);
    if (llvm::verifyModule(*out, &stream))
    {
        throw std::logic_error("flyrt produced invalid LLVM IR: " + stream.str());
    }
    return out;
}

} // namespace flyrt::codegen
