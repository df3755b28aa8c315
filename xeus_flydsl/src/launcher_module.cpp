// `xflydsl._launcher`: the kernel as an extension module, for the wheel.
// `python -m xflydsl -f FILE` (xflydsl/__main__.py) calls launch() in the
// interpreter pip installed it into: no second CPython is embedded, and the
// wheel needs no libpython (manylinux forbids linking one).
#include <pybind11/pybind11.h>

#include "kernel_main.hpp"
#include "native_module.hpp"
#include "sigint_window.hpp"

PYBIND11_MODULE(_launcher, m)
{
    xflydsl::define_native_module(m);
    m.def(
        "launch",
        [](const std::string& connection_file)
        {
            // The launcher starts no thread before this; xeus's inherit the mask.
            xflydsl::block_sigint();
            return xflydsl::run_kernel(connection_file, "xflydsl._launcher");
        },
        pybind11::arg("connection_file"),
        "Serves the kernel of `connection_file` until it shuts down; the exit status.");
}
