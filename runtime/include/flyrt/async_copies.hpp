// The ordering rule of async copies (fx.async_copy): a shared array that an
// async copy writes is not read or written until an fx.async_wait has
// retired that copy. Checked on the kernel's structured control flow before
// codegen, so a read that could see the array half-filled is a compile error
// at the user's line on every target, the CPU's included (whose copies land
// at once and would hide the bug).
#pragma once

#include "flyrt/ir.hpp"

namespace flyrt::ir
{

// Throws verify_error at the first access that may come before its wait.
void check_async_copies(const function& kernel);

} // namespace flyrt::ir
