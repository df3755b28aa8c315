// Which values of a kernel differ between the threads of a block.
//
// A value is varying when it depends on thread_idx, on a shuffle, or on
// control flow that does; everything else is uniform: the same for every
// thread of a block (a load from a uniform address included: threads that
// race on that location have no defined result on a GPU either). Barriers and shuffles may only sit in
// uniform control flow, and the CPU backend computes uniform values once
// per block instead of once per thread.
#pragma once

#include <unordered_map>
#include <vector>

#include "flyrt/ir.hpp"

namespace flyrt::ir
{

// A barrier, or an op of a warp's lanes together (shuffle, mma, matrix load):
// every thread must reach it.
inline bool reached_together(opcode code)
{
    return code == opcode::barrier || code == opcode::shuffle || code == opcode::mma ||
           code == opcode::matrix_load;
}

class uniformity
{
public:
    explicit uniformity(const function& f);

    bool varying(value_id id) const { return m_varying.at(static_cast<std::size_t>(id)); }
    // Whether `o` is, or contains, an op reached_together.
    bool synchronizes(const op& o) const;
    bool any_sync() const { return m_any_sync; }

private:
    bool visit(const region& r);
    bool mark(value_id id, bool varying);
    bool any_varying(const std::vector<value_id>& ids) const;

    std::vector<bool> m_varying;
    std::unordered_map<const op*, bool> m_sync;
    bool m_any_sync = false;
};

} // namespace flyrt::ir
