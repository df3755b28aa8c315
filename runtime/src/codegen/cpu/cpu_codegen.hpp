// The CPU target: kernels run in this process, a block's threads as loops.
//
// ABI of the generated code (see launch/cpu/cpu_launch.hpp for the runtime side):
//   kernel   void @<name>.blocks(ptr slots, ptr geometry, i64 first, i64 last, ptr shared)
//            runs blocks [first, last) of the grid, each block's threads
//            as loops over thread_idx z, y, x;
//   launch   i32 flyrt_cpu_launch(ptr blocks_function, ptr slots, ptr geometry, ptr known_block_size)
//            from host launchers (host_lowering.hpp).
#pragma once

#include <memory>

#include "../target_codegen.hpp"

namespace flyrt::codegen::cpu
{

inline constexpr const char* blocks_suffix = ".blocks";
inline constexpr const char* launch_symbol = "flyrt_cpu_launch";

std::unique_ptr<target_codegen> make_cpu_codegen(const target& t);

} // namespace flyrt::codegen::cpu
