// What the Python facade calls back into: publishing, stdin and comms of the
// running kernel. The executable embeds it as `_xflydsl_kernel`; the launcher
// extension (`python -m xflydsl`) carries it in its own module.
#pragma once

#include <pybind11/pybind11.h>

namespace xflydsl
{

void define_native_module(pybind11::module_& m);

} // namespace xflydsl
