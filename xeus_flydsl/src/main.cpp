// xflydsl: the Jupyter kernel executable.
#include <iostream>
#include <memory>
#include <string>
#include <utility>

#include <pybind11/embed.h>
#include <xeus/xkernel.hpp>
#include <xeus/xkernel_configuration.hpp>
#include <xeus/xserver_shell_main.hpp>
#include <zmq_addon.hpp>

#include "debugger.hpp"
#include "embedded_python.hpp"
#include "interpreter.hpp"
#include "ipython_history.hpp"
#include "parent_watch.hpp"
#include "sigint_window.hpp"

#ifndef XFLYDSL_PYTHON_EXECUTABLE
#error "XFLYDSL_PYTHON_EXECUTABLE must name the environment's python"
#endif

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

    try
    {
        auto python_runtime = xflydsl::start_python(XFLYDSL_PYTHON_EXECUTABLE, argv[0]);

        const xeus::xconfiguration config = xeus::load_configuration(file);
        auto history = std::make_unique<xflydsl::ipython_history>();
        auto interp = std::make_unique<xflydsl::interpreter>(
            *history, std::make_unique<xflydsl::iopub_readiness>(config.m_transport, config.m_iopub_port));
        xeus::register_interpreter(interp.get());

        xeus::xkernel kernel(config,
                             xeus::get_user_name(),
                             xeus::make_context<zmq::context_t>(),
                             std::move(interp),
                             xeus::make_xserver_shell_main,
                             std::move(history),
                             nullptr,
                             xflydsl::make_debugger);

        xflydsl::parent_watch orphan_guard;

        // xeus announces itself on std::clog, which reaches the user's
        // terminal under `jupyter console`; it logs nothing else there.
        std::clog.rdbuf(nullptr);
        // The shell thread serves requests; each one takes the GIL it needs.
        pybind11::gil_scoped_release release;
        kernel.start();
    }
    catch (pybind11::error_already_set& error)
    {
        std::cerr << "xflydsl: cannot start the Python side:\n" << error.what() << std::endl;
        return 1;
    }
    catch (std::exception& error)
    {
        std::cerr << "xflydsl: " << error.what() << std::endl;
        return 1;
    }
    return 0;
}
