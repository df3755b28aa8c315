// Runs a kernel's grid on the CPU: the blocks go to a thread pool spread
// over the cores; each call of the generated `.blocks` function runs a range
// of blocks, and a block's threads as loops inside it. Launches with little
// work run inline on the caller's thread. Either way the grid goes in pieces,
// so an interrupt stops a long launch between two.
#pragma once

#include <cstdint>

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

// Asked on the launching thread between pieces of a launch, at most every
// 50 ms: true stops it (blocks not started are skipped; it returns
// status_interrupted). The Python module installs one that runs Python's
// signal handlers, so Ctrl-C stops a long kernel; none by default.
void set_interrupt_check(bool (*check)());

// Entered around a launch that may take long (one spread over the pool, or
// one of much work on the caller's thread): the Python module releases the
// GIL there, so other Python threads run; a short launch keeps it (releasing
// would cost more than the launch). None by default.
struct blocking_section_hooks
{
    void* (*enter)() = nullptr;
    void (*leave)(void* entered) = nullptr;
};
void set_blocking_section_hooks(blocking_section_hooks hooks);

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
