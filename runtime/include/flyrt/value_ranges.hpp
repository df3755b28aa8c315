// What each integer value of a kernel can be, and the compares that this
// decides.
//
// A range is an interval with a stride: every value is lo + k * stride. The
// stride is what LLVM's own range analysis lacks and bounds checks need:
// `d = e % 128` where `e` steps by 8 from a multiple of 8 is at most 120, so
// a vector of 8 lanes read from `d` stays inside a row of 128. Sources are
// constants, thread and block indices (a block has at most 1,024 threads, or
// the kernel's known block size), and `for` induction variables; values the
// analysis cannot follow (loads, loop-carried values) are their type's whole
// range. Arithmetic that could wrap in its type gives the whole range. Inside
// a branch, what its condition's compares say narrows their operands: under
// `if (w > 0) & (w < 4)`, `w - 1` is at least 0.
#pragma once

#include <vector>

#include "flyrt/ir.hpp"

namespace flyrt::ir
{

using wide = __int128; // every value of every integer type, and their products

struct int_range
{
    wide lo = 0;
    wide hi = 0;
    wide stride = 0; // 0: one value (lo == hi)

    bool single() const { return lo == hi; }
};

class value_ranges
{
public:
    explicit value_ranges(const function& f);

    // The range of an integer (or Boolean) scalar value.
    const int_range& of(value_id id) const { return m_ranges.at(static_cast<std::size_t>(id)); }

private:
    void visit(const region& r);
    void visit(const op& o);
    int_range binary(const op& o) const;
    int_range special(const op& o) const;
    void set(value_id id, const int_range& r);
    int_range whole(value_id id) const;
    void visit_assuming(const region& r, value_id cond, bool holds);
    void assume(value_id cond, bool holds, std::vector<std::pair<value_id, int_range>>& saved);
    void narrow(value_id id, wide lo, wide hi, std::vector<std::pair<value_id, int_range>>& saved);

    const function& m_fn;
    std::vector<int_range> m_ranges;
    std::vector<const op*> m_defs; // the op that defines each value visited so far
};

// Rewrites the integer ops whose value the ranges decide into constants: a
// bounds check proven to hold becomes `true`, and LLVM drops its report.
void fold_decided_values(function& f);

} // namespace flyrt::ir
