// Runs a kernel's grid on the CPU: the blocks go to a thread pool spread
// over the cores; each call of the generated `.blocks` function runs a range
// of blocks, and a block's threads as loops inside it. Launches with little
// work run inline on the caller's thread. Either way the grid goes in pieces,
// so an interrupt (blocking.hpp's check, asked at most every 50 ms) stops a
// long launch between two.
#pragma once

#include <cstdint>

#include "../blocking.hpp"
#include "../launch_status.hpp"

namespace flyrt::launch
{

using blocks_function = void (*)(const void* slots,
                                 const geometry* g,
                                 std::uint64_t first_block,
                                 std::uint64_t last_block,
                                 void* shared_memory);

// Threads the pool may use (default: all cores); for benchmarks and tests.
void set_worker_count(unsigned count);
unsigned worker_count();

} // namespace flyrt::launch

// Called by generated kernels: records the launch's first error, the
// `{}` in `message` replaced by `values`.
extern "C" void flyrt_report_error(const char* message, std::int32_t count, const std::int64_t* values);

// Called by generated launchers. `known_block_size` (3 sizes, or null) is what
// the kernel was compiled for. Returns 0, or non-zero with last_error() set.
extern "C" std::int32_t flyrt_cpu_launch(flyrt::launch::blocks_function fn,
                                         const void* slots,
                                         const flyrt::launch::geometry* g,
                                         const std::int32_t* known_block_size);
