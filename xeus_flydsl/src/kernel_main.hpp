// The kernel's life, shared by its two entry points: the `xflydsl`
// executable (source build; it embeds the environment's CPython) and the
// launcher extension `xflydsl._launcher` (wheel; `python -m xflydsl` runs the
// kernel inside the interpreter that imported it, as xeus-python's wheel does).
#pragma once

#include <string>

namespace xflydsl
{

// Serves the kernel described by `connection_file` until it is shut down;
// the exit status. Call with the GIL held and SIGINT blocked (block_sigint)
// before any other thread exists; `native_module` names the importable
// module that carries define_native_module's callbacks. Failures are told on
// stderr.
int run_kernel(const std::string& connection_file, const char* native_module);

} // namespace xflydsl
