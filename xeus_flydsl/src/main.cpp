// xflydsl: the Jupyter kernel executable of the source build, embedding the
// environment's CPython.
#include <iostream>
#include <string>

#include <pybind11/embed.h>

#include "embedded_python.hpp"
#include "kernel_main.hpp"
#include "native_module.hpp"
#include "sigint_window.hpp"

#ifndef XFLYDSL_PYTHON_EXECUTABLE
#error "XFLYDSL_PYTHON_EXECUTABLE must name the environment's python"
#endif

PYBIND11_EMBEDDED_MODULE(_xflydsl_kernel, m)
{
    xflydsl::define_native_module(m);
}

namespace
{

constexpr const char* usage = "usage: xflydsl -f CONNECTION_FILE\n";

std::string connection_file(int argc, char* argv[])
{
    for (int i = 1; i + 1 < argc; ++i)
    {
        const std::string arg = argv[i];
        if (arg == "-f" || arg == "--connection-file")
        {
            return argv[i + 1];
        }
    }
    return {};
}

} // namespace

int main(int argc, char* argv[])
{
    // Before any thread exists, so that every thread inherits the mask.
    xflydsl::block_sigint();

    const std::string file = connection_file(argc, argv);
    if (file.empty())
    {
        std::cerr << usage;
        return 2;
    }

    std::unique_ptr<pybind11::scoped_interpreter> python_runtime;
    try
    {
        python_runtime = xflydsl::start_python(XFLYDSL_PYTHON_EXECUTABLE, argv[0]);
    }
    catch (std::exception& error)
    {
        std::cerr << "xflydsl: " << error.what() << std::endl;
        return 1;
    }
    return xflydsl::run_kernel(file, "_xflydsl_kernel");
}
