#include "embedded_python.hpp"

#include <stdexcept>

namespace xflydsl
{
namespace
{

void check(PyStatus status)
{
    if (PyStatus_Exception(status))
    {
        throw std::runtime_error(std::string("cannot configure Python: ") +
                                 (status.err_msg ? status.err_msg : "unknown error"));
    }
}

} // namespace

std::unique_ptr<pybind11::scoped_interpreter> start_python(const std::string& python_executable,
                                                           const std::string& argv0)
{
    PyConfig config;
    PyConfig_InitPythonConfig(&config);
    // Jupyter interrupts reach Python through its SIGINT handler.
    config.install_signal_handlers = 1;
    config.parse_argv = 0;
    check(PyConfig_SetBytesString(&config, &config.executable, python_executable.c_str()));
    check(PyConfig_SetBytesString(&config, &config.program_name, python_executable.c_str()));
    const char* argv[] = {argv0.c_str()};
    // Takes and clears the config; the kernel's folder stays off sys.path.
    return std::make_unique<pybind11::scoped_interpreter>(&config, 1, argv, false);
}

} // namespace xflydsl
