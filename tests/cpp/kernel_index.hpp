// What the C++ tests' kernels start with: the thread's index in the grid.
#pragma once

#include "flyrt/builder.hpp"

namespace flyrt::test
{

// block_idx.x * block_dim.x + thread_idx.x, as i32, at `line`.
inline ir::value_id global_index(ir::function_builder& k, int line)
{
    return k.binary(ir::arith::add,
                    k.binary(ir::arith::mul,
                             k.special(ir::special_register::block_idx, 0, line),
                             k.special(ir::special_register::block_dim, 0, line),
                             line),
                    k.special(ir::special_register::thread_idx, 0, line),
                    line);
}

} // namespace flyrt::test
