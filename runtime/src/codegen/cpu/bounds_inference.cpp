#include "bounds_inference.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>

#include <llvm/IR/Intrinsics.h>

namespace flyrt::codegen::cpu
{

using ir::arith;
using ir::opcode;
using ir::scalar;

namespace
{

bool is_int_scalar(const ir::type& t)
{
    return t.lanes == 1 && ir::is_integer(t.kind);
}

} // namespace

bounds_inference::bounds_inference(const ir::function& f)
    : m_fn(f), m_static(f), m_defs(f.values.size(), definition{nullptr, 0}),
      m_followed(f.values.size(), false)
{
    for (ir::value_id p : f.parameters)
    {
        m_followed[static_cast<std::size_t>(p)] = is_int_scalar(f.type_of(p));
    }
    index(f.body);
}

bool bounds_inference::follows(ir::value_id id) const
{
    return m_followed.at(static_cast<std::size_t>(id));
}

// Records where each value comes from and whether intervals follow it, in
// program order (operands first; an if's yields before its results).
void bounds_inference::index(const ir::region& r)
{
    for (const auto& holder : r.ops)
    {
        const ir::op& o = *holder;
        if (o.code == opcode::for_)
        {
            const ir::value_id iv = o.regions[0]->arguments[0];
            m_defs[static_cast<std::size_t>(iv)] = {&o, -1};
            m_followed[static_cast<std::size_t>(iv)] =
                follows(o.operands[0]) && follows(o.operands[1]) && follows(o.operands[2]);
        }
        for (const auto& sub : o.regions)
        {
            index(*sub);
        }
        bool followed = true;
        switch (o.code)
        {
        case opcode::constant:
        case opcode::special:
            break;
        case opcode::unary:
            followed = static_cast<arith>(o.attr) == arith::neg;
            break;
        case opcode::binary:
        case opcode::compare:
        case opcode::select:
            break;
        case opcode::cast:
            followed = o.attr == 0 && is_int_scalar(m_fn.type_of(o.operands[0]));
            break;
        case opcode::if_:
            for (const auto& side : o.regions)
            {
                for (ir::value_id v :
                     o.results.empty() ? std::vector<ir::value_id>{} : side->ops.back()->operands)
                {
                    followed = followed && follows(v);
                }
            }
            break;
        default:
            followed = false;
        }
        if (o.code != opcode::if_)
        {
            for (ir::value_id v : o.operands)
            {
                followed = followed && follows(v);
            }
        }
        for (std::size_t i = 0; i < o.results.size(); ++i)
        {
            const auto id = static_cast<std::size_t>(o.results[i]);
            m_defs[id] = {&o, static_cast<int>(i)};
            m_followed[id] = followed && is_int_scalar(m_fn.type_of(o.results[i]));
        }
    }
}

bool bounds_inference::is_check(const ir::op& o)
{
    if (o.code != opcode::if_)
    {
        return false;
    }
    for (const auto& inner : o.regions[1]->ops)
    {
        if (inner->code == opcode::report)
        {
            return true;
        }
    }
    return false;
}

void bounds_inference::collect_checks(const ir::op& o,
                                      std::vector<guard>& guards,
                                      std::vector<check_site>& out) const
{
    if (is_check(o))
    {
        out.push_back({&o, guards}); // and the checks its access is nested in (an alignment promise's)
    }
    for (std::size_t side = 0; side < o.regions.size(); ++side)
    {
        if (o.code == opcode::if_)
        {
            guards.push_back({&o, static_cast<int>(side)});
        }
        for (const auto& inner : o.regions[side]->ops)
        {
            collect_checks(*inner, guards, out);
        }
        if (o.code == opcode::if_)
        {
            guards.pop_back();
        }
    }
}

std::vector<bounds_inference::check_site>
bounds_inference::checks_in(const std::vector<const ir::op*>& ops) const
{
    std::vector<check_site> checks;
    std::vector<guard> guards;
    for (const ir::op* o : ops)
    {
        collect_checks(*o, guards, checks);
    }
    return checks;
}

bool bounds_inference::decides(const std::vector<const ir::op*>& ops) const
{
    const std::vector<check_site> checks = checks_in(ops);
    for (const check_site& site : checks)
    {
        if (!follows(site.check->operands[0]))
        {
            return false;
        }
    }
    return !checks.empty();
}

// What held on `side` of the branch `branch` (0: its condition, 1: its
// negation), where its condition is a comparison (ir::ordering_of).
std::optional<ir::ordering> bounds_inference::ordering(const ir::op& branch, int side) const
{
    const definition def = m_defs.at(static_cast<std::size_t>(branch.operands[0]));
    if (def.op == nullptr || def.result < 0 || def.op->code != opcode::compare)
    {
        return std::nullopt;
    }
    return ir::ordering_of(*def.op, side == 0);
}

llvm::Value* bounds_inference::narrow(const guard& g)
{
    llvm::IRBuilder<>& b = *m_b;
    const auto order = ordering(*g.branch, g.side);
    if (!order || !follows(g.branch->operands[0]))
    {
        return b.getFalse(); // a condition the inference cannot read narrows nothing
    }
    const auto [lesser_id, greater_id, strict] = *order;
    const interval lesser = of(lesser_id);
    const interval greater = of(greater_id);
    llvm::Value* gap = b.getInt64(strict ? 1 : 0);
    // The bounds move by the gap only where that cannot wrap (an i64 at its limit keeps its interval).
    llvm::Value* room = b.CreateAnd(b.CreateICmpSGT(greater.hi, b.getInt64(INT64_MIN + 1)),
                                    b.CreateICmpSLT(lesser.lo, b.getInt64(INT64_MAX - 1)));
    llvm::Value* use = b.CreateAnd(b.CreateAnd(lesser.known, greater.known), room);
    llvm::Value* lesser_hi =
        b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, lesser.hi, b.CreateSub(greater.hi, gap));
    llvm::Value* greater_lo =
        b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, greater.lo, b.CreateAdd(lesser.lo, gap));
    const interval narrowed_lesser{lesser.lo, b.CreateSelect(use, lesser_hi, lesser.hi), lesser.known};
    const interval narrowed_greater{b.CreateSelect(use, greater_lo, greater.lo), greater.hi, greater.known};
    m_memo[lesser_id] = narrowed_lesser;
    m_memo[greater_id] = narrowed_greater;
    return b.CreateAnd(use, b.CreateICmpSGT(narrowed_lesser.lo, narrowed_lesser.hi));
}

llvm::Value* bounds_inference::emit_verdict(llvm::IRBuilder<>& b,
                                            const std::vector<const ir::op*>& ops,
                                            const block_frame& frame)
{
    m_b = &b;
    m_frame = &frame;
    m_memo.clear();
    llvm::Value* all = b.getTrue();
    for (const check_site& site : checks_in(ops))
    {
        // Intervals narrowed by the check's branches hold in them alone: a memo of their own.
        std::unordered_map<ir::value_id, interval> outside;
        if (!site.guards.empty())
        {
            outside = m_memo;
        }
        llvm::Value* unreached = b.getFalse();
        for (const guard& g : site.guards)
        {
            unreached = b.CreateOr(unreached, narrow(g));
        }
        const interval c = of(site.check->operands[0]);
        llvm::Value* holds = b.CreateAnd(c.known, b.CreateICmpEQ(c.lo, b.getInt64(1)));
        all = b.CreateAnd(all, b.CreateOr(unreached, holds));
        if (!site.guards.empty())
        {
            m_memo = std::move(outside);
        }
    }
    m_b = nullptr;
    m_frame = nullptr;
    return all;
}

// Whether `id` is the same for every thread of a block: made of parameters,
// constants and block-level registers alone.
bool bounds_inference::thread_invariant(ir::value_id id) const
{
    const definition def = m_defs.at(static_cast<std::size_t>(id));
    if (def.op == nullptr)
    {
        return std::find(m_fn.parameters.begin(), m_fn.parameters.end(), id) != m_fn.parameters.end();
    }
    switch (def.op->code)
    {
    case opcode::constant:
        return true;
    case opcode::special:
        return static_cast<ir::special_register>(def.op->attr) != ir::special_register::thread_idx;
    case opcode::unary:
    case opcode::binary:
    case opcode::compare:
    case opcode::select:
    case opcode::cast:
        return def.result == 0 && std::all_of(def.op->operands.begin(),
                                              def.op->operands.end(),
                                              [this](ir::value_id v) { return thread_invariant(v); });
    default:
        return false;
    }
}

// Whether `id` is thread_idx.x, or thread_idx.x plus a thread-invariant value.
bool bounds_inference::is_thread_x_plus_invariant(ir::value_id id) const
{
    const definition def = m_defs.at(static_cast<std::size_t>(id));
    if (def.op == nullptr || def.result != 0)
    {
        return false;
    }
    const ir::op& o = *def.op;
    if (o.code == opcode::special)
    {
        return static_cast<ir::special_register>(o.attr) == ir::special_register::thread_idx &&
               o.int_value == 0;
    }
    if (o.code != opcode::binary || static_cast<arith>(o.attr) != arith::add)
    {
        return false;
    }
    return (is_thread_x_plus_invariant(o.operands[0]) && thread_invariant(o.operands[1])) ||
           (thread_invariant(o.operands[0]) && is_thread_x_plus_invariant(o.operands[1]));
}

// The one `if` of `ops` when every other op is arithmetic (no effect a
// thread that skips it could miss) and so is its else side; else null.
const ir::op* bounds_inference::guard_of(const std::vector<const ir::op*>& ops) const
{
    const ir::op* guard = nullptr;
    for (const ir::op* o : ops)
    {
        if (ir::is_arithmetic(o->code))
        {
            continue;
        }
        if (o->code != opcode::if_ || guard != nullptr ||
            !std::all_of(o->regions[1]->ops.begin(),
                         o->regions[1]->ops.end(),
                         [](const auto& inner)
                         { return ir::is_arithmetic(inner->code) || inner->code == opcode::yield; }))
        {
            return nullptr;
        }
        guard = o;
    }
    return guard;
}

// x(t) = U + t for thread t, U the same for all: x's interval over the block
// starts at or below U, so a thread t past y.hi - x.lo (the gap: one more
// for <=) fails x < y. Either interval unknown (a possible wrap): every
// thread runs.
llvm::Value* bounds_inference::emit_active_x(llvm::IRBuilder<>& b,
                                             const std::vector<const ir::op*>& ops,
                                             const block_frame& frame)
{
    llvm::Value* all = frame.block_dim[0];
    const ir::op* guard = guard_of(ops);
    if (guard == nullptr)
    {
        return all;
    }
    const auto order = ordering(*guard, 0);
    if (!order)
    {
        return all;
    }
    const auto [lesser_id, greater_id, strict] = *order;
    if (!follows(lesser_id) || !follows(greater_id) || !is_thread_x_plus_invariant(lesser_id) ||
        !thread_invariant(greater_id))
    {
        return all;
    }
    m_b = &b;
    m_frame = &frame;
    m_memo.clear();
    const interval x = of(lesser_id);
    const interval y = of(greater_id);
    m_b = nullptr;
    m_frame = nullptr;
    llvm::Value* wide_all = b.CreateZExt(all, b.getInt64Ty());
    llvm::Value* difference = b.CreateBinaryIntrinsic(llvm::Intrinsic::ssub_with_overflow, y.hi, x.lo);
    llvm::Value* known =
        b.CreateAnd(b.CreateAnd(x.known, y.known), b.CreateNot(b.CreateExtractValue(difference, 1)));
    llvm::Value* end = b.CreateExtractValue(difference, 0);
    if (!strict) // past the gap's end, an i64 at its limit: every thread
    {
        known = b.CreateAnd(known, b.CreateICmpSLT(end, b.getInt64(INT64_MAX)));
        end = b.CreateAdd(end, b.getInt64(1));
    }
    end = b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, end, b.getInt64(0));
    end = b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, end, wide_all);
    end = b.CreateSelect(known, end, wide_all);
    return b.CreateTrunc(end, all->getType());
}

bounds_inference::interval bounds_inference::of(ir::value_id id)
{
    auto it = m_memo.find(id);
    if (it == m_memo.end())
    {
        it = m_memo.emplace(id, compute(id)).first;
    }
    return it->second;
}

bounds_inference::interval bounds_inference::exact(llvm::Value* v, scalar kind)
{
    llvm::IRBuilder<>& b = *m_b;
    llvm::Value* wide =
        ir::is_unsigned(kind) ? b.CreateZExt(v, b.getInt64Ty()) : b.CreateSExt(v, b.getInt64Ty());
    return fitted({wide, wide, b.getTrue()}, kind);
}

// `r` when every value of it fits `kind` (a u64 must stay below 2**63), else not known.
bounds_inference::interval bounds_inference::fitted(interval r, scalar kind)
{
    llvm::IRBuilder<>& b = *m_b;
    const int bits = ir::bit_width(kind);
    if (kind == scalar::i64)
    {
        return r;
    }
    const std::int64_t low = ir::is_unsigned(kind) ? 0 : -(std::int64_t{1} << (bits - 1));
    llvm::Value* fits = b.CreateICmpSGE(r.lo, b.getInt64(low));
    if (bits < 64)
    {
        const std::int64_t high =
            ir::is_unsigned(kind) ? (std::int64_t{1} << bits) - 1 : (std::int64_t{1} << (bits - 1)) - 1;
        fits = b.CreateAnd(fits, b.CreateICmpSLE(r.hi, b.getInt64(high)));
    }
    r.known = b.CreateAnd(r.known, fits);
    return r;
}

bounds_inference::interval bounds_inference::compute(ir::value_id id)
{
    const definition def = m_defs.at(static_cast<std::size_t>(id));
    const scalar kind = m_fn.type_of(id).kind;
    if (def.op == nullptr)
    {
        return exact(m_frame->parameter(id), kind);
    }
    if (def.result >= 0)
    {
        return operation(*def.op, def.result);
    }
    return loop_variable(*def.op, kind);
}

// A for loop's variable: from `lower` up to below `upper`, when the step is
// positive and `iv + step` cannot wrap past `upper`. With a constant step,
// every value is congruent to `lower`'s static base modulo g = gcd(lower's
// static stride, step), so the last one is the largest such below `upper`:
// `range(0, body, 4)` ends at body - 4 when body is a multiple of 4, and
// `c + 3` stays below it.
bounds_inference::interval bounds_inference::loop_variable(const ir::op& loop, scalar kind)
{
    llvm::IRBuilder<>& b = *m_b;
    const interval lower = of(loop.operands[0]);
    const interval upper = of(loop.operands[1]);
    const interval step = of(loop.operands[2]);
    llvm::Value* known = b.CreateAnd(b.CreateAnd(lower.known, upper.known), step.known);
    known = b.CreateAnd(known, b.CreateICmpSGT(step.lo, b.getInt64(0)));
    const auto checked = [&](llvm::Intrinsic::ID op, llvm::Value* x, llvm::Value* y)
    {
        llvm::Value* pair = b.CreateBinaryIntrinsic(op, x, y);
        known = b.CreateAnd(known, b.CreateNot(b.CreateExtractValue(pair, 1)));
        return b.CreateExtractValue(pair, 0);
    };
    llvm::Value* last = checked(llvm::Intrinsic::ssub_with_overflow, upper.hi, b.getInt64(1));
    llvm::Value* beyond = checked(llvm::Intrinsic::sadd_with_overflow, last, step.hi);
    const ir::int_range& base = m_static.of(loop.operands[0]);
    const ir::int_range& stride = m_static.of(loop.operands[2]);
    constexpr ir::wide small = ir::wide(1) << 62;
    if (stride.single() && stride.lo > 0 && stride.lo < small && base.stride < small && base.lo > -small &&
        base.lo < small)
    {
        const std::int64_t g =
            std::gcd(static_cast<std::int64_t>(base.stride), static_cast<std::int64_t>(stride.lo));
        llvm::Value* offset =
            b.CreateSRem(b.CreateSub(last, b.getInt64(static_cast<std::int64_t>(base.lo))), b.getInt64(g));
        offset = b.CreateSelect(
            b.CreateICmpSLT(offset, b.getInt64(0)), b.CreateAdd(offset, b.getInt64(g)), offset);
        last = b.CreateSub(last, offset);
    }
    const interval reach = fitted({beyond, beyond, known}, kind);
    return fitted({lower.lo, last, reach.known}, kind);
}

bounds_inference::interval bounds_inference::operation(const ir::op& o, int result)
{
    llvm::IRBuilder<>& b = *m_b;
    const scalar kind = m_fn.type_of(o.results[static_cast<std::size_t>(result)]).kind;
    switch (o.code)
    {
    case opcode::constant:
    {
        llvm::Value* c = b.getInt64(o.int_value);
        return fitted({c, c, b.getTrue()}, kind);
    }
    case opcode::special:
    {
        const auto dim = static_cast<std::size_t>(o.int_value);
        switch (static_cast<ir::special_register>(o.attr))
        {
        case ir::special_register::thread_idx:
        {
            llvm::Value* size = b.CreateZExt(m_frame->block_dim[dim], b.getInt64Ty());
            return {b.getInt64(0), b.CreateSub(size, b.getInt64(1)), b.getTrue()};
        }
        case ir::special_register::block_idx:
            return {b.CreateZExt(m_frame->block_idx[dim], b.getInt64Ty()),
                    b.CreateZExt(m_frame->block_idx_last[dim], b.getInt64Ty()),
                    b.getTrue()};
        case ir::special_register::block_dim:
            return exact(m_frame->block_dim[dim], scalar::u32);
        case ir::special_register::grid_dim:
            return exact(m_frame->grid_dim[dim], scalar::u32);
        }
        break;
    }
    case opcode::unary:
    {
        const interval a = of(o.operands[0]);
        llvm::Value* zero = b.getInt64(0);
        llvm::Value* lo = b.CreateBinaryIntrinsic(llvm::Intrinsic::ssub_with_overflow, zero, a.hi);
        llvm::Value* hi = b.CreateBinaryIntrinsic(llvm::Intrinsic::ssub_with_overflow, zero, a.lo);
        llvm::Value* wrapped = b.CreateOr(b.CreateExtractValue(lo, 1), b.CreateExtractValue(hi, 1));
        return fitted({b.CreateExtractValue(lo, 0),
                       b.CreateExtractValue(hi, 0),
                       b.CreateAnd(a.known, b.CreateNot(wrapped))},
                      kind);
    }
    case opcode::binary:
        return fitted(binary(o, of(o.operands[0]), of(o.operands[1])), kind);
    case opcode::compare:
    {
        const interval x = of(o.operands[0]);
        const interval y = of(o.operands[1]);
        const auto p = static_cast<ir::predicate>(o.attr);
        llvm::Value* holds = nullptr; // for every pair of values
        llvm::Value* fails = nullptr; // for every pair of values
        if (p == ir::predicate::eq || p == ir::predicate::ne)
        {
            llvm::Value* same =
                b.CreateAnd(b.CreateAnd(b.CreateICmpEQ(x.lo, x.hi), b.CreateICmpEQ(y.lo, y.hi)),
                            b.CreateICmpEQ(x.lo, y.lo));
            llvm::Value* apart = b.CreateOr(b.CreateICmpSLT(x.hi, y.lo), b.CreateICmpSLT(y.hi, x.lo));
            holds = p == ir::predicate::eq ? same : apart;
            fails = p == ir::predicate::eq ? apart : same;
        }
        else
        {
            // x > y is y < x; x >= y is y <= x
            const bool swap = p == ir::predicate::gt || p == ir::predicate::ge;
            const interval& l = swap ? y : x;
            const interval& r = swap ? x : y;
            const bool strict = p == ir::predicate::lt || p == ir::predicate::gt;
            holds = strict ? b.CreateICmpSLT(l.hi, r.lo) : b.CreateICmpSLE(l.hi, r.lo);
            fails = strict ? b.CreateICmpSGE(l.lo, r.hi) : b.CreateICmpSGT(l.lo, r.hi);
        }
        return {b.CreateZExt(holds, b.getInt64Ty()),
                b.CreateZExt(b.CreateNot(fails), b.getInt64Ty()),
                b.CreateAnd(x.known, y.known)};
    }
    case opcode::select:
    {
        const interval c = of(o.operands[0]);
        const interval x = of(o.operands[1]);
        const interval y = of(o.operands[2]);
        llvm::Value* only_x = b.CreateICmpEQ(c.lo, b.getInt64(1));
        llvm::Value* only_y = b.CreateICmpEQ(c.hi, b.getInt64(0));
        llvm::Value* lo = b.CreateSelect(
            only_x,
            x.lo,
            b.CreateSelect(only_y, y.lo, b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, x.lo, y.lo)));
        llvm::Value* hi = b.CreateSelect(
            only_x,
            x.hi,
            b.CreateSelect(only_y, y.hi, b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, x.hi, y.hi)));
        return {lo, hi, b.CreateAnd(c.known, b.CreateAnd(x.known, y.known))};
    }
    case opcode::cast:
        return fitted(of(o.operands[0]), kind);
    case opcode::if_:
    {
        // Either side may have run: the union of what they yield.
        const interval x = of(o.regions[0]->ops.back()->operands.at(static_cast<std::size_t>(result)));
        const interval y = of(o.regions[1]->ops.back()->operands.at(static_cast<std::size_t>(result)));
        return {b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, x.lo, y.lo),
                b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, x.hi, y.hi),
                b.CreateAnd(x.known, y.known)};
    }
    default:
        break;
    }
    return {b.getInt64(0), b.getInt64(0), b.getFalse()};
}

bounds_inference::interval bounds_inference::binary(const ir::op& o, const interval& a, const interval& b_)
{
    llvm::IRBuilder<>& b = *m_b;
    const scalar kind = m_fn.type_of(o.results[0]).kind;
    llvm::Value* known = b.CreateAnd(a.known, b_.known);
    const auto checked = [&](llvm::Intrinsic::ID op, llvm::Value* x, llvm::Value* y)
    {
        llvm::Value* pair = b.CreateBinaryIntrinsic(op, x, y);
        known = b.CreateAnd(known, b.CreateNot(b.CreateExtractValue(pair, 1)));
        return b.CreateExtractValue(pair, 0);
    };
    const auto smin = [&](llvm::Value* x, llvm::Value* y)
    { return b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, x, y); };
    const auto smax = [&](llvm::Value* x, llvm::Value* y)
    { return b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, x, y); };
    const auto corners = [&](auto&& f)
    {
        llvm::Value* p[] = {f(a.lo, b_.lo), f(a.lo, b_.hi), f(a.hi, b_.lo), f(a.hi, b_.hi)};
        return interval{
            smin(smin(p[0], p[1]), smin(p[2], p[3])), smax(smax(p[0], p[1]), smax(p[2], p[3])), nullptr};
    };
    llvm::Value* zero = b.getInt64(0);
    llvm::Value* one = b.getInt64(1);
    interval r{zero, zero, nullptr};
    switch (static_cast<arith>(o.attr))
    {
    case arith::add:
        r = {checked(llvm::Intrinsic::sadd_with_overflow, a.lo, b_.lo),
             checked(llvm::Intrinsic::sadd_with_overflow, a.hi, b_.hi),
             nullptr};
        break;
    case arith::sub:
        r = {checked(llvm::Intrinsic::ssub_with_overflow, a.lo, b_.hi),
             checked(llvm::Intrinsic::ssub_with_overflow, a.hi, b_.lo),
             nullptr};
        break;
    case arith::mul:
        r = corners([&](llvm::Value* x, llvm::Value* y)
                    { return checked(llvm::Intrinsic::smul_with_overflow, x, y); });
        break;
    case arith::div:
    {
        // Truncating division by a positive divisor is monotone in each operand.
        llvm::Value* positive = b.CreateICmpSGT(b_.lo, zero);
        known = b.CreateAnd(known, positive);
        const interval safe{
            b.CreateSelect(positive, b_.lo, one), b.CreateSelect(positive, b_.hi, one), nullptr};
        llvm::Value* p[] = {b.CreateSDiv(a.lo, safe.lo),
                            b.CreateSDiv(a.lo, safe.hi),
                            b.CreateSDiv(a.hi, safe.lo),
                            b.CreateSDiv(a.hi, safe.hi)};
        r = {smin(smin(p[0], p[1]), smin(p[2], p[3])), smax(smax(p[0], p[1]), smax(p[2], p[3])), nullptr};
        break;
    }
    case arith::rem:
    {
        // The sign of the dividend, smaller than the divisor; the dividend
        // itself when it is non-negative and below every divisor.
        known = b.CreateAnd(known, b.CreateICmpSGT(b_.lo, zero));
        llvm::Value* below = b.CreateSub(b_.hi, one);
        llvm::Value* lo = b.CreateSelect(b.CreateICmpSGE(a.lo, zero), zero, smax(a.lo, b.CreateNeg(below)));
        llvm::Value* hi = b.CreateSelect(b.CreateICmpSLE(a.hi, zero), zero, smin(a.hi, below));
        llvm::Value* itself = b.CreateAnd(b.CreateICmpSGE(a.lo, zero), b.CreateICmpSLT(a.hi, b_.lo));
        r = {b.CreateSelect(itself, a.lo, lo), b.CreateSelect(itself, a.hi, hi), nullptr};
        break;
    }
    case arith::min:
        r = {smin(a.lo, b_.lo), smin(a.hi, b_.hi), nullptr};
        break;
    case arith::max:
        r = {smax(a.lo, b_.lo), smax(a.hi, b_.hi), nullptr};
        break;
    case arith::shl:
    case arith::shr:
    {
        // By one known amount within the type only.
        const int bits = ir::bit_width(kind);
        llvm::Value* amount = b.CreateAnd(b_.lo, b.getInt64(63));
        known = b.CreateAnd(known, b.CreateICmpEQ(b_.lo, b_.hi));
        known = b.CreateAnd(known, b.CreateICmpULT(b_.lo, b.getInt64(bits)));
        if (static_cast<arith>(o.attr) == arith::shr)
        {
            r = {b.CreateAShr(a.lo, amount), b.CreateAShr(a.hi, amount), nullptr};
        }
        else
        {
            llvm::Value* factor = b.CreateShl(one, amount);
            r = {checked(llvm::Intrinsic::smul_with_overflow, a.lo, factor),
                 checked(llvm::Intrinsic::smul_with_overflow, a.hi, factor),
                 nullptr};
        }
        break;
    }
    case arith::bit_and:
    case arith::bit_or:
    case arith::bit_xor:
        if (kind == scalar::i1)
        {
            // Booleans: AND and OR are monotone; XOR is known when both are.
            const auto attr = static_cast<arith>(o.attr);
            if (attr == arith::bit_xor)
            {
                llvm::Value* both = b.CreateAnd(b.CreateICmpEQ(a.lo, a.hi), b.CreateICmpEQ(b_.lo, b_.hi));
                llvm::Value* x = b.CreateXor(a.lo, b_.lo);
                r = {b.CreateSelect(both, x, zero), b.CreateSelect(both, x, one), nullptr};
            }
            else
            {
                const bool is_and = attr == arith::bit_and;
                r = {is_and ? b.CreateAnd(a.lo, b_.lo) : b.CreateOr(a.lo, b_.lo),
                     is_and ? b.CreateAnd(a.hi, b_.hi) : b.CreateOr(a.hi, b_.hi),
                     nullptr};
            }
        }
        else if (static_cast<arith>(o.attr) == arith::bit_and)
        {
            // A mask that is never negative bounds the result by itself.
            llvm::Value* a_mask = b.CreateICmpSGE(a.lo, zero);
            llvm::Value* b_mask = b.CreateICmpSGE(b_.lo, zero);
            known = b.CreateAnd(known, b.CreateOr(a_mask, b_mask));
            llvm::Value* hi = b.CreateSelect(a_mask, b.CreateSelect(b_mask, smin(a.hi, b_.hi), a.hi), b_.hi);
            r = {zero, hi, nullptr};
        }
        else
        {
            known = b.getFalse();
        }
        break;
    default:
        known = b.getFalse();
        break;
    }
    r.known = known;
    return r;
}

} // namespace flyrt::codegen::cpu
