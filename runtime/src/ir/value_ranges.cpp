#include "flyrt/value_ranges.hpp"

#include <algorithm>
#include <tuple>

namespace flyrt::ir
{
namespace
{

// Limits every target shares: a block has at most 1,024 threads (so no
// index of it exceeds 1,023), a grid at most 2**31 - 1 blocks per dimension.
constexpr wide max_block_threads = 1024;
constexpr wide max_grid_blocks = (wide(1) << 31) - 1;

wide magnitude(wide v)
{
    return v < 0 ? -v : v;
}

wide gcd(wide a, wide b)
{
    a = magnitude(a);
    b = magnitude(b);
    while (b != 0)
    {
        const wide rest = a % b;
        a = b;
        b = rest;
    }
    return a;
}

wide floor_mod(wide v, wide m)
{
    const wide r = v % m;
    return r < 0 ? r + m : r;
}

int_range exact(wide v)
{
    return {v, v, 0};
}

// The values in [lo, hi] congruent to `base` modulo `stride` (0: just `base`).
int_range lattice(wide lo, wide hi, wide stride, wide base)
{
    if (stride == 0)
    {
        return exact(base);
    }
    const wide first = lo + floor_mod(base - lo, stride);
    const wide last = hi - floor_mod(hi - base, stride);
    if (first > last)
    {
        return {lo, hi, 1}; // empty: unreachable code, kept sound
    }
    return {first, last, first == last ? 0 : stride};
}

// A divisor of every value in `r`.
wide common_factor(const int_range& r)
{
    return gcd(r.lo, r.stride);
}

int_range join(const int_range& a, const int_range& b)
{
    return lattice(
        std::min(a.lo, b.lo), std::max(a.hi, b.hi), gcd(gcd(a.stride, b.stride), a.lo - b.lo), a.lo);
}

bool is_int_scalar(const type& t)
{
    return t.lanes == 1 && is_integer(t.kind);
}

int_range type_range(scalar kind)
{
    const int bits = bit_width(kind);
    if (is_unsigned(kind))
    {
        return {0, (wide(1) << bits) - 1, 1};
    }
    return {-(wide(1) << (bits - 1)), (wide(1) << (bits - 1)) - 1, 1};
}

// The largest power of two dividing `v` (0 for 0).
wide lowest_bit(wide v)
{
    return v & -v;
}

// `r` when the type holds all of it, else the type's whole range (the
// arithmetic may have wrapped), but for r's residue modulo the largest power
// of two dividing its stride: wrapping is modulo 2**bits, which keeps it (an
// offset's alignment survives a sum of products that may overflow).
int_range fit(const int_range& r, scalar kind)
{
    const int_range all = type_range(kind);
    if (r.lo >= all.lo && r.hi <= all.hi)
    {
        return r;
    }
    const int bits = bit_width(kind);
    const wide power = bits < 2 ? 0 : std::min(lowest_bit(magnitude(r.stride)), wide(1) << (bits - 1));
    return power > 1 ? lattice(all.lo, all.hi, power, r.lo) : all;
}

int_range multiply(const int_range& a, const int_range& b)
{
    constexpr wide limit = wide(1) << 63; // products of smaller magnitudes fit in `wide`
    if (std::max(magnitude(a.lo), magnitude(a.hi)) >= limit ||
        std::max(magnitude(b.lo), magnitude(b.hi)) >= limit)
    {
        return {-(wide(1) << 126), wide(1) << 126, 1}; // wider than any type: fit() makes it whole
    }
    const wide corners[] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
    const wide lo = *std::min_element(std::begin(corners), std::end(corners));
    const wide hi = *std::max_element(std::begin(corners), std::end(corners));
    if (a.single() || b.single())
    {
        const int_range& factor = a.single() ? a : b;
        const int_range& other = a.single() ? b : a;
        return lattice(lo, hi, magnitude(factor.lo) * other.stride, factor.lo * other.lo);
    }
    return lattice(lo, hi, common_factor(a) * common_factor(b), 0);
}

// C division: the quotient truncated towards zero.
int_range divide(const int_range& a, const int_range& b, scalar kind)
{
    if (b.lo <= 0)
    {
        return type_range(kind); // a divisor that may be zero or negative: not followed
    }
    wide lo = 0;
    wide hi = 0;
    if (a.lo >= 0)
    {
        lo = a.lo / b.hi;
        hi = a.hi / b.lo;
    }
    else if (a.hi <= 0)
    {
        lo = a.lo / b.lo;
        hi = a.hi / b.hi;
    }
    else
    {
        lo = a.lo / b.lo;
        hi = a.hi / b.lo;
    }
    if (b.single() && a.lo >= 0 && a.stride % b.lo == 0 && a.lo % b.lo == 0)
    {
        return lattice(lo, hi, a.stride / b.lo, a.lo / b.lo);
    }
    return {lo, hi, lo == hi ? 0 : 1};
}

// C remainder: the sign of the dividend.
int_range remainder(const int_range& a, const int_range& b, scalar kind)
{
    if (b.lo <= 0)
    {
        return type_range(kind);
    }
    if (a.lo >= 0)
    {
        if (a.hi < b.lo)
        {
            return a;
        }
        if (b.single())
        {
            const wide g = gcd(a.stride, b.lo);
            return g == 0 ? exact(a.lo % b.lo) : lattice(0, std::min(a.hi, b.lo - 1), g, floor_mod(a.lo, g));
        }
        return {0, std::min(a.hi, b.hi - 1), 1};
    }
    if (a.hi <= 0)
    {
        return {std::max(a.lo, 1 - b.hi), 0, 1};
    }
    return {1 - b.hi, b.hi - 1, 1};
}

// The smallest 2**k - 1 at least `v` (v >= 0): what OR and XOR of values up to v reach.
wide all_ones_above(wide v)
{
    wide ones = 0;
    while (ones < v)
    {
        ones = ones * 2 + 1;
    }
    return ones;
}

// 1: `predicate` holds for every pair of values; 0: for none; -1: it depends.
int decide(predicate p, const int_range& a, const int_range& b)
{
    switch (p)
    {
    case predicate::eq:
        return a.single() && b.single() && a.lo == b.lo ? 1 : (a.hi < b.lo || b.hi < a.lo ? 0 : -1);
    case predicate::ne:
    {
        const int equal = decide(predicate::eq, a, b);
        return equal < 0 ? -1 : 1 - equal;
    }
    case predicate::lt:
        return a.hi < b.lo ? 1 : (a.lo >= b.hi ? 0 : -1);
    case predicate::le:
        return a.hi <= b.lo ? 1 : (a.lo > b.hi ? 0 : -1);
    case predicate::gt:
        return decide(predicate::lt, b, a);
    case predicate::ge:
        return decide(predicate::le, b, a);
    }
    return -1;
}

bool decides(const function& f, const op& o, const value_ranges& ranges, int& outcome)
{
    if (o.code != opcode::compare || !is_int_scalar(f.type_of(o.operands[0])))
    {
        return false;
    }
    outcome = decide(static_cast<predicate>(o.attr), ranges.of(o.operands[0]), ranges.of(o.operands[1]));
    return outcome >= 0;
}

bool pure_integer_op(const function& f, const op& o)
{
    switch (o.code)
    {
    case opcode::unary:
    case opcode::binary:
    case opcode::compare:
    case opcode::select:
    case opcode::cast:
        return is_int_scalar(f.type_of(o.results[0]));
    default:
        return false;
    }
}

void fold(function& f, region& r, const value_ranges& ranges)
{
    for (auto& holder : r.ops)
    {
        op& o = *holder;
        for (auto& sub : o.regions)
        {
            fold(f, *sub, ranges);
        }
        if (pure_integer_op(f, o) && ranges.of(o.results[0]).single())
        {
            o.int_value = static_cast<std::int64_t>(ranges.of(o.results[0]).lo);
            o.code = opcode::constant;
            o.operands.clear();
            o.attr = 0;
        }
    }
}

} // namespace

value_ranges::value_ranges(const function& f) : m_fn(f), m_ranges(f.values.size()), m_defs(f.values.size())
{
    for (std::size_t id = 0; id < f.values.size(); ++id)
    {
        m_ranges[id] = whole(static_cast<value_id>(id));
    }
    visit(f.body);
}

int_range value_ranges::whole(value_id id) const
{
    const type& t = m_fn.type_of(id);
    return is_int_scalar(t) ? type_range(t.kind) : int_range{0, 0, 1};
}

void value_ranges::set(value_id id, const int_range& r)
{
    const type& t = m_fn.type_of(id);
    if (is_int_scalar(t))
    {
        int_range fitted = fit(r, t.kind);
        fitted.stride = fitted.single() ? 0 : fitted.stride;
        m_ranges.at(static_cast<std::size_t>(id)) = fitted;
    }
}

void value_ranges::visit(const region& r)
{
    for (const auto& o : r.ops)
    {
        visit(*o);
    }
}

void value_ranges::visit(const op& o)
{
    for (const value_id result : o.results)
    {
        m_defs.at(static_cast<std::size_t>(result)) = &o;
    }
    const auto operand_is_int = [&](std::size_t i) { return is_int_scalar(m_fn.type_of(o.operands.at(i))); };
    switch (o.code)
    {
    case opcode::constant:
        set(o.results[0], exact(o.int_value));
        break;
    case opcode::special:
        set(o.results[0], special(o));
        break;
    case opcode::unary:
    {
        const int_range& a = of(o.operands[0]);
        const auto kind = static_cast<arith>(o.attr);
        if (!operand_is_int(0))
        {
            break;
        }
        if (kind == arith::neg)
        {
            set(o.results[0], {-a.hi, -a.lo, a.stride});
        }
        else if (kind == arith::bit_not)
        {
            set(o.results[0], {-a.hi - 1, -a.lo - 1, a.stride});
        }
        else if (kind == arith::abs)
        {
            set(o.results[0],
                a.lo >= 0 ? a
                          : (a.hi <= 0 ? int_range{-a.hi, -a.lo, a.stride}
                                       : int_range{0, std::max(-a.lo, a.hi), 1}));
        }
        break;
    }
    case opcode::binary:
        if (operand_is_int(0))
        {
            set(o.results[0], binary(o));
        }
        break;
    case opcode::compare:
    {
        int outcome = -1;
        if (decides(m_fn, o, *this, outcome))
        {
            set(o.results[0], exact(outcome));
        }
        break;
    }
    case opcode::select:
    {
        const int_range& cond = of(o.operands[0]);
        if (!is_int_scalar(m_fn.type_of(o.results[0])) || !operand_is_int(0))
        {
            break;
        }
        set(o.results[0],
            cond.single() ? of(o.operands[cond.lo != 0 ? 1 : 2])
                          : join(of(o.operands[1]), of(o.operands[2])));
        break;
    }
    case opcode::cast:
        if (operand_is_int(0) && o.attr == 0)
        {
            set(o.results[0], of(o.operands[0]));
        }
        break;
    case opcode::if_:
    {
        visit_assuming(*o.regions[0], o.operands[0], true);
        visit_assuming(*o.regions[1], o.operands[0], false);
        if (o.results.empty())
        {
            break;
        }
        const auto& then_out = o.regions[0]->ops.back()->operands; // the yields
        const auto& else_out = o.regions[1]->ops.back()->operands;
        for (std::size_t i = 0; i < o.results.size(); ++i)
        {
            set(o.results[i], join(of(then_out.at(i)), of(else_out.at(i))));
        }
        break;
    }
    case opcode::for_:
    {
        const region& body = *o.regions[0];
        const value_id iv = body.arguments[0];
        const int_range lower = of(o.operands[0]);
        const int_range upper = of(o.operands[1]);
        const int_range step = of(o.operands[2]);
        const int_range all = whole(iv);
        const wide stride = gcd(lower.stride, common_factor(step));
        // Python's range: below `upper` going up, above it going down;
        // only where `iv + step` cannot wrap past the bound.
        if (step.lo > 0 && upper.hi - 1 + step.hi <= all.hi)
        {
            set(iv, lattice(lower.lo, upper.hi - 1, stride, lower.lo));
        }
        else if (step.hi < 0 && upper.lo + 1 + step.lo >= all.lo)
        {
            set(iv, lattice(upper.lo + 1, lower.hi, stride, lower.hi));
        }
        visit(body);
        break;
    }
    default:
        // Loads, shuffles, loop-carried and while values: the whole range
        // (already there); regions are still visited for what they define.
        for (const auto& sub : o.regions)
        {
            visit(*sub);
        }
        break;
    }
}

// A branch's region, with the ranges its condition narrows (restored after:
// values defined before the branch are also used outside it).
void value_ranges::visit_assuming(const region& r, value_id cond, bool holds)
{
    std::vector<std::pair<value_id, int_range>> saved;
    assume(cond, holds, saved);
    visit(r);
    for (auto it = saved.rbegin(); it != saved.rend(); ++it)
    {
        m_ranges.at(static_cast<std::size_t>(it->first)) = it->second;
    }
}

// Narrows what `cond` being `holds` says: an integer compare's operands, and
// through NOT, AND (both hold) and OR (neither does) of Booleans.
void value_ranges::assume(value_id cond, bool holds, std::vector<std::pair<value_id, int_range>>& saved)
{
    const op* def = m_defs.at(static_cast<std::size_t>(cond));
    if (def == nullptr)
    {
        return;
    }
    if (def->code == opcode::binary && m_fn.type_of(cond).kind == scalar::i1)
    {
        const auto kind = static_cast<arith>(def->attr);
        if ((kind == arith::bit_and && holds) || (kind == arith::bit_or && !holds))
        {
            assume(def->operands[0], holds, saved);
            assume(def->operands[1], holds, saved);
        }
        else if (kind == arith::bit_xor) // NOT, as the front end writes it: x ^ true
        {
            for (int i = 0; i < 2; ++i)
            {
                const int_range& other = of(def->operands[1 - i]);
                if (other.single() && other.lo != 0)
                {
                    assume(def->operands[i], !holds, saved);
                }
            }
        }
        return;
    }
    if (def->code != opcode::compare || !is_int_scalar(m_fn.type_of(def->operands[0])))
    {
        return;
    }
    if (const auto order = ordering_of(*def, holds))
    {
        // lesser < greater (or <=): lesser stays below greater's top, greater above lesser's bottom
        const int_range lesser = of(order->lesser);
        const int_range greater = of(order->greater);
        const wide gap = order->strict ? 1 : 0;
        narrow(order->lesser, lesser.lo, std::min(lesser.hi, greater.hi - gap), saved);
        narrow(order->greater, std::max(greater.lo, lesser.lo + gap), greater.hi, saved);
        return;
    }
    const value_id a = def->operands[0];
    const value_id b = def->operands[1];
    const int_range ra = of(a);
    const int_range rb = of(b);
    if ((static_cast<predicate>(def->attr) == predicate::eq) == holds) // a == b: both in the overlap
    {
        narrow(a, std::max(ra.lo, rb.lo), std::min(ra.hi, rb.hi), saved);
        narrow(b, std::max(ra.lo, rb.lo), std::min(ra.hi, rb.hi), saved);
        return;
    }
    // a != b: only a range's end can be cut off (`w != 0` of w in [0, 3] is [1, 3])
    for (const auto& [x, rx, ry] : {std::tuple{a, ra, rb}, std::tuple{b, rb, ra}})
    {
        if (ry.single() && !rx.single())
        {
            narrow(x, rx.lo + (ry.lo == rx.lo), rx.hi - (ry.lo == rx.hi), saved);
        }
    }
}

// `id` within [lo, hi] (on its stride) from here on; an empty interval (a
// branch that cannot run) narrows nothing.
void value_ranges::narrow(value_id id, wide lo, wide hi, std::vector<std::pair<value_id, int_range>>& saved)
{
    int_range& r = m_ranges.at(static_cast<std::size_t>(id));
    if (lo > hi || r.single())
    {
        return;
    }
    const int_range narrowed = lattice(lo, hi, r.stride, r.lo);
    if (narrowed.lo != r.lo || narrowed.hi != r.hi)
    {
        saved.emplace_back(id, r);
        r = narrowed;
    }
}

int_range value_ranges::special(const op& o) const
{
    const auto dim = static_cast<std::size_t>(o.int_value);
    const wide known = m_fn.known_block_size.at(dim);
    switch (static_cast<special_register>(o.attr))
    {
    case special_register::thread_idx:
        return {0, (known > 0 ? known : max_block_threads) - 1, 1};
    case special_register::block_dim:
        return known > 0 ? exact(known) : int_range{1, max_block_threads, 1};
    case special_register::block_idx:
        return {0, max_grid_blocks - 1, 1};
    case special_register::grid_dim:
        return {1, max_grid_blocks, 1};
    }
    return whole(o.results[0]);
}

int_range value_ranges::binary(const op& o) const
{
    const int_range& a = of(o.operands[0]);
    const int_range& b = of(o.operands[1]);
    const scalar kind = m_fn.type_of(o.results[0]).kind;
    const int bits = bit_width(kind);
    switch (static_cast<arith>(o.attr))
    {
    case arith::add:
        return lattice(a.lo + b.lo, a.hi + b.hi, gcd(a.stride, b.stride), a.lo + b.lo);
    case arith::sub:
        return lattice(a.lo - b.hi, a.hi - b.lo, gcd(a.stride, b.stride), a.lo - b.lo);
    case arith::mul:
        return multiply(a, b);
    case arith::div:
        return divide(a, b, kind);
    case arith::rem:
        return remainder(a, b, kind);
    case arith::min:
        return lattice(std::min(a.lo, b.lo), std::min(a.hi, b.hi), join(a, b).stride, a.lo);
    case arith::max:
        return lattice(std::max(a.lo, b.lo), std::max(a.hi, b.hi), join(a, b).stride, a.lo);
    case arith::bit_and:
        if (a.single() && b.single())
        {
            return exact(a.lo & b.lo);
        }
        if (a.single() || b.single())
        {
            // A mask of the low bits, 2**k - 1, of a value whose stride 2**k divides: its residue. A mask
            // of the high bits, -2**k: the value rounded down to a multiple of 2**k.
            const int_range& x = a.single() ? b : a;
            const wide mask = a.single() ? a.lo : b.lo;
            if (mask > 0 && lowest_bit(mask + 1) == mask + 1 && x.stride % (mask + 1) == 0)
            {
                return exact(floor_mod(x.lo, mask + 1));
            }
            if (mask < 0 && lowest_bit(-mask) == -mask)
            {
                return lattice(x.lo - floor_mod(x.lo, -mask), x.hi - floor_mod(x.hi, -mask), -mask, 0);
            }
        }
        if (a.lo >= 0 || b.lo >= 0)
        {
            return {0, a.lo >= 0 && b.lo >= 0 ? std::min(a.hi, b.hi) : (a.lo >= 0 ? a.hi : b.hi), 1};
        }
        break;
    case arith::bit_or:
    case arith::bit_xor:
        if (a.single() && b.single())
        {
            return exact(static_cast<arith>(o.attr) == arith::bit_or ? (a.lo | b.lo) : (a.lo ^ b.lo));
        }
        if (a.lo >= 0 && b.lo >= 0)
        {
            return {0, all_ones_above(std::max(a.hi, b.hi)), 1};
        }
        break;
    case arith::shl:
        if (b.single() && b.lo >= 0 && b.lo < bits)
        {
            return multiply(a, exact(wide(1) << static_cast<int>(b.lo)));
        }
        break;
    case arith::shr:
        if (b.single() && b.lo >= 0 && b.lo < bits)
        {
            const int k = static_cast<int>(b.lo);
            return {a.lo >> k, a.hi >> k, (a.lo >> k) == (a.hi >> k) ? 0 : 1};
        }
        break;
    default:
        break;
    }
    return type_range(kind);
}

void fold_decided_values(function& f)
{
    fold(f, f.body, value_ranges(f));
}

} // namespace flyrt::ir
