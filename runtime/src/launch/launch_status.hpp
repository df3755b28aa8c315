// What every launcher shares, whatever its kernels run on: the geometry
// record host code passes, and how a launch reports failure.
#pragma once

#include <cstdint>
#include <string>

namespace flyrt::launch
{

// Layout shared with the generated code (codegen/host_lowering.cpp).
struct geometry
{
    std::uint32_t grid[3];
    std::uint32_t block[3];
    std::uint32_t smem_bytes;          // dynamic shared memory, `smem=` at launch
    std::uint32_t static_shared_bytes; // the kernel's own shared arrays, before it
};

// Status of a launch that failed, of one whose kernel reported an error (an
// index out of bounds), and of one stopped by an interrupt: the dispatcher
// raises RuntimeError, IndexError, and the interrupt's KeyboardInterrupt.
inline constexpr std::int32_t status_failed = 1;
inline constexpr std::int32_t status_reported = 2;
inline constexpr std::int32_t status_interrupted = 3;

// The launcher's last error message, for the thread that saw a non-zero status.
const std::string& last_error();

// Records `message` as this thread's last error; returns `status`.
std::int32_t fail(std::string message, std::int32_t status = status_failed);

// A report's message with each `{}` replaced by the next of `values`.
std::string format_report(const std::string& message, std::int32_t count, const std::int64_t* values);

// "(gx, gy, gz)" of three sizes, as a launch's error messages show them.
std::string dim3_text(const std::uint32_t* sizes);

// Why `g` cannot launch a kernel compiled for `known_block` (three sizes, or
// null: any) where a block holds at most `max_threads` threads and
// `max_shared_bytes` of shared memory; empty when it can.
std::string geometry_problem(const geometry& g,
                             const std::int32_t* known_block,
                             std::uint64_t max_threads,
                             std::uint64_t max_shared_bytes);

} // namespace flyrt::launch
