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

// A size past 32 bits reaches the geometry record as this (the launch op
// narrows its 64-bit operands so, kernel.py): refused, never truncated.
inline constexpr std::uint32_t size_beyond_32_bits = 0x80000000u;

// What a target launches: the largest grid and block in each dimension, and
// the threads and shared memory of one block.
struct launch_limits
{
    std::uint64_t grid[3];
    std::uint64_t block[3];
    std::uint64_t threads;
    std::uint64_t shared_bytes;
};

// What the CPU launcher takes: any 32-bit grid, a GPU's block limits (so
// that kernels port).
launch_limits cpu_limits();

// "(gx, gy, gz)" of three sizes, as a launch's error messages show them.
std::string dim3_text(const std::uint32_t* sizes);

// Why `g` cannot launch a kernel compiled for `known_block` (three sizes, or
// null: any) within `limits`; empty when it can.
std::string geometry_problem(const geometry& g, const std::int32_t* known_block, const launch_limits& limits);

} // namespace flyrt::launch
