// Whether every bounds check of a block's threads passes, decided once per
// block before they run (Halide's bounds inference, at run time).
//
// A bounds check (an `if` whose else branch reports) stops LLVM from
// vectorizing the loop over a block's threads. Its condition is usually
// arithmetic on parameters, constants and indices: then the interval each
// such value spans over all the block's threads (thread indices over the
// block, loop variables over their ranges, both arms of every branch) is a
// few scalar instructions at block level. When every check holds over its
// intervals, the threads run a copy without checks; otherwise (an edge
// block, a loaded index) the checked copy, which reports the first
// violation. Intervals are i64 and over-approximate: any doubt (a possible
// wrap, a value the inference cannot follow) means the checked copy. A
// check inside a branch is decided for the threads that take it: the
// branch's comparison (`if i < n:`) narrows its operands' intervals there,
// so that a guarded edge block takes the copy without checks too.
#pragma once

#include <array>
#include <functional>
#include <optional>
#include <unordered_map>
#include <vector>

#include <llvm/IR/IRBuilder.h>

#include "flyrt/ir.hpp"
#include "flyrt/value_ranges.hpp"

namespace flyrt::codegen::cpu
{

// What code at block level knows of the blocks it decides for (i32 values):
// one block (block_idx == block_idx_last) or a range of them.
struct block_frame
{
    std::function<llvm::Value*(ir::value_id)> parameter;
    std::array<llvm::Value*, 3> block_idx{};
    std::array<llvm::Value*, 3> block_idx_last{};
    std::array<llvm::Value*, 3> block_dim{};
    std::array<llvm::Value*, 3> grid_dim{};
};

class bounds_inference
{
public:
    explicit bounds_inference(const ir::function& f);

    // Whether `o` is a bounds check: its then branch accesses, its else reports.
    static bool is_check(const ir::op& o);
    // Whether `ops` hold checks and the inference can follow every one.
    bool decides(const std::vector<const ir::op*>& ops) const;
    // An i1 at the builder's point: every check in `ops` holds for every
    // thread of every block of `frame`.
    llvm::Value*
    emit_verdict(llvm::IRBuilder<>& b, const std::vector<const ir::op*>& ops, const block_frame& frame);
    // An i32 at the builder's point: the x threads [0, end) of the one block
    // of `frame` are all that can have an effect in `ops`. Below block_dim.x
    // when `ops` are arithmetic around one guard `if x < y:` with nothing on
    // its else side, x = thread_idx.x + a value the same for every thread: the
    // threads past y's bound skip it (a grid's tail block, a launch of 16
    // elements on a block of 256).
    llvm::Value*
    emit_active_x(llvm::IRBuilder<>& b, const std::vector<const ir::op*>& ops, const block_frame& frame);

private:
    struct interval
    {
        llvm::Value* lo;
        llvm::Value* hi;
        llvm::Value* known; // i1: false when the interval may be wrong (a wrap, an unknown divisor)
    };
    // Where a value comes from: an op's result, or (result == -1) a for loop's variable.
    struct definition
    {
        const ir::op* op;
        int result;
    };
    // A branch a check lies in: the if, and which side (0: its condition held).
    struct guard
    {
        const ir::op* branch;
        int side;
    };
    struct check_site
    {
        const ir::op* check;
        std::vector<guard> guards; // outermost first
    };

    void index(const ir::region& r);
    bool follows(ir::value_id id) const;
    bool thread_invariant(ir::value_id id) const;
    std::optional<ir::ordering> ordering(const ir::op& branch, int side) const;
    const ir::op* guard_of(const std::vector<const ir::op*>& ops) const;
    bool is_thread_x_plus_invariant(ir::value_id id) const;
    bool any_check(const ir::op& o, bool& all_followed) const;
    void collect_checks(const ir::op& o, std::vector<guard>& guards, std::vector<check_site>& out) const;
    std::vector<check_site> checks_in(const std::vector<const ir::op*>& ops) const;
    // An i1: no thread gets past `g` (an interval it narrows is empty); its narrowed intervals go
    // into the memo.
    llvm::Value* narrow(const guard& g);
    interval of(ir::value_id id);
    interval compute(ir::value_id id);
    interval operation(const ir::op& o, int result);
    interval binary(const ir::op& o, const interval& a, const interval& b);
    interval fitted(interval r, ir::scalar kind);
    interval exact(llvm::Value* v, ir::scalar kind);
    interval loop_variable(const ir::op& loop, ir::scalar kind);

    const ir::function& m_fn;
    const ir::value_ranges m_static; // what every value can be, whatever the block
    std::vector<definition> m_defs;  // by value id; op null: a parameter or a value not followed
    std::vector<bool> m_followed;
    // Set while emitting a verdict:
    llvm::IRBuilder<>* m_b = nullptr;
    const block_frame* m_frame = nullptr;
    std::unordered_map<ir::value_id, interval> m_memo;
};

} // namespace flyrt::codegen::cpu
