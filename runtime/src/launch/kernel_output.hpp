// What kernels print with fx.printf. A CPU kernel's text is gathered here
// and written to Python's sys.stdout when its launcher returns, so it lands
// where print() would (a notebook cell, pytest's capture), after what the
// cell printed before. A GPU kernel's printf goes through its driver to C's
// stdout, flushed when the launch completes; flushing Python's stdout then
// (the launcher does) drains fd 1 into the cell in the xflydsl kernel.
#pragma once

#include <cstdint>
#include <string>

namespace flyrt::launch::kernel_output
{

// One printf's text, whole: lines of different threads never tear.
void append(const std::string& text);

// A GPU kernel's printf reached C's stdout (flushed).
void note_c_stdio();

// Whether anything waits for take(): one relaxed load, on every launch.
bool pending();

// What CPU kernels printed since the last take (""), and clears it.
std::string take();

// The text of one printf: each conversion of `format` (C's, with the "ll"
// of Int64 values) applied to the next slot, an Int64 or a Float64's bits.
std::string format(const char* format, std::int32_t count, const std::int64_t* slots);

} // namespace flyrt::launch::kernel_output

extern "C" void flyrt_print(const char* format, std::int32_t count, const std::int64_t* slots);
