#include "kernel_main.hpp"

#include <iostream>
#include <memory>
#include <utility>

#include <xeus/xkernel.hpp>
#include <xeus/xkernel_configuration.hpp>
#include <xeus/xserver_shell_main.hpp>
#include <zmq_addon.hpp>

#include "debugger.hpp"
#include "interpreter.hpp"
#include "ipython_history.hpp"
#include "parent_watch.hpp"
#include "sigint_window.hpp"

namespace xflydsl
{

int run_kernel(const std::string& connection_file, const char* native_module)
{
    try
    {
        // Python keeps SIGINT ignored when it starts ignored (a kernel of a
        // `jupyter lab &` or of a CI job's background shell): interrupts must
        // reach its handler whatever the client's shell did.
        pybind11::module_ signal_module = pybind11::module_::import("signal");
        signal_module.attr("signal")(signal_module.attr("SIGINT"), signal_module.attr("default_int_handler"));
        pybind11::module_ native = pybind11::module_::import(native_module);
        const xeus::xconfiguration config = xeus::load_configuration(connection_file);
        auto history = std::make_unique<ipython_history>();
        auto interp = std::make_unique<interpreter>(
            *history,
            std::make_unique<iopub_readiness>(config.m_transport, config.m_iopub_port),
            std::move(native));
        xeus::register_interpreter(interp.get());

        xeus::xkernel kernel(config,
                             xeus::get_user_name(),
                             xeus::make_context<zmq::context_t>(),
                             std::move(interp),
                             xeus::make_xserver_shell_main,
                             std::move(history),
                             nullptr,
                             make_debugger);

        parent_watch orphan_guard;
        sigint_watch interrupts; // after the handler above: an ignored SIGINT never reaches it

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

} // namespace xflydsl
