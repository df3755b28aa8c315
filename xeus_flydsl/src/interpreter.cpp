#include "interpreter.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <iostream>
#include <optional>
#include <string>
#include <utility>

#include <pybind11_json/pybind11_json.hpp>
#include <xeus/xinput.hpp>

#include "sigint_window.hpp"

namespace py = pybind11;

namespace xflydsl
{
namespace
{

nl::json error_reply(const std::string& ename, const std::string& evalue)
{
    return nl::json{{"status", "error"},
                    {"ename", ename},
                    {"evalue", evalue},
                    {"traceback", nl::json::array({ename + ": " + evalue})}};
}

// Keeps SIGINT blocked on this thread while it waits inside xeus for stdin:
// EINTR there would make xeus throw mid-protocol. A pending interrupt is
// delivered to Python when the window reopens.
class sigint_blocked
{
public:
    sigint_blocked()
    {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGINT);
        pthread_sigmask(SIG_BLOCK, &set, &m_previous);
    }
    ~sigint_blocked() { pthread_sigmask(SIG_SETMASK, &m_previous, nullptr); }

private:
    sigset_t m_previous;
};

// When the client sent the request being served (its header's "date", an ISO
// 8601 time with its zone), in seconds since the epoch; none if it did not say.
std::optional<double> request_sent(const nl::json& header)
{
    const auto date = header.find("date");
    if (date == header.end() || !date->is_string())
    {
        return std::nullopt;
    }
    try
    {
        // Python 3.10's fromisoformat reads no "Z"
        std::string text = date->get<std::string>();
        if (!text.empty() && text.back() == 'Z')
        {
            text.replace(text.size() - 1, 1, "+00:00");
        }
        const py::object when = py::module_::import("datetime").attr("datetime").attr("fromisoformat")(text);
        if (when.attr("tzinfo").is_none())
        {
            return std::nullopt; // a local time of an unknown zone
        }
        return when.attr("timestamp")().cast<double>();
    }
    catch (py::error_already_set&)
    {
        return std::nullopt;
    }
}

} // namespace

interpreter::interpreter(ipython_history& history,
                         std::unique_ptr<iopub_readiness> readiness,
                         py::module_ native)
    : m_history(history), m_readiness(std::move(readiness)), m_native(std::move(native))
{
}

interpreter::~interpreter()
{
    if (m_log)
    {
        std::cerr.rdbuf(m_cerr_before);
    }
}

interpreter& interpreter::current()
{
    return static_cast<interpreter&>(xeus::get_interpreter());
}

void interpreter::configure_impl()
{
    m_output = std::make_unique<output_channel>(
        m_gate, [this](const std::string& name, const std::string& text) { publish_stream(name, text); });
    m_comms = std::make_unique<comm_bridge>(comm_manager(), m_gate);

    m_facade = py::module_::import("xflydsl_shell.kernel").attr("KernelFacade")(m_native);
    m_history.attach(m_facade);
}

nl::json interpreter::call_facade(const char* method, const py::tuple& args)
{
    try
    {
        return m_facade.attr(method)(*args);
    }
    catch (py::error_already_set& error)
    {
        return error_reply(py::str(error.type().attr("__name__")), py::str(error.value()));
    }
}

nl::json interpreter::execute_request_impl(int execution_counter,
                                           const std::string& code,
                                           bool silent,
                                           bool store_history,
                                           nl::json user_expressions,
                                           bool allow_stdin)
{
    py::gil_scoped_acquire gil;
    if (!m_fds_captured)
    {
        // Not earlier: xeus's start-up banner and a failing start must reach
        // the terminal, not the first cell.
        m_output->capture_fd(STDOUT_FILENO, "stdout");
        m_output->capture_fd(STDERR_FILENO, "stderr");
        // xeus reports what it drops (a forged message) on std::cerr: that
        // belongs in the kernel's log, not in the user's next cell.
        m_log = std::make_unique<fd_streambuf>(m_output->original_stderr());
        m_cerr_before = std::cerr.rdbuf(m_log.get());
        m_fds_captured = true;
    }
    m_gate.open();
    nl::json reply;
    // Raised outside the user's code (an interrupt in the kernel's own hooks or
    // between two statements of the shell), so IPython did not report it.
    const auto stopped_by = [&](const py::error_already_set& error)
    {
        reply = error_reply(py::str(error.type().attr("__name__")), py::str(error.value()));
        publish_error(reply["ename"], reply["evalue"], reply["traceback"]);
    };
    {
        sigint_window interruptible(request_sent(parent_header()));
        try
        {
            m_facade.attr("run_before_cell_hooks")(code);
            reply = m_facade.attr("execute")(code,
                                             execution_counter,
                                             silent,
                                             store_history,
                                             pyjson::from_json(user_expressions),
                                             allow_stdin);
        }
        catch (py::error_already_set& error)
        {
            stopped_by(error);
        }
        const bool succeeded = reply.value("status", "error") == "ok";
        try
        {
            m_facade.attr("run_after_cell_hooks")(code, succeeded);
        }
        catch (py::error_already_set& error)
        {
            // Only an interrupt leaves the hooks (they report their own errors):
            // it came while this request was served, so the request stops, and
            // a client's queue of cells with it. The next cell's hooks redo the work.
            if (succeeded)
            {
                stopped_by(error);
            }
        }
    }
    m_output->flush();
    m_gate.close();
    return reply;
}

nl::json interpreter::complete_request_impl(const std::string& code, int cursor_pos)
{
    py::gil_scoped_acquire gil;
    return call_facade("complete", py::make_tuple(code, cursor_pos));
}

nl::json interpreter::inspect_request_impl(const std::string& code, int cursor_pos, int detail_level)
{
    py::gil_scoped_acquire gil;
    return call_facade("inspect", py::make_tuple(code, cursor_pos, detail_level));
}

nl::json interpreter::is_complete_request_impl(const std::string& code)
{
    py::gil_scoped_acquire gil;
    return call_facade("is_complete", py::make_tuple(code));
}

nl::json interpreter::kernel_info_request_impl()
{
    m_readiness->wait_once();
    py::gil_scoped_acquire gil;
    return call_facade("kernel_info", py::make_tuple());
}

void interpreter::shutdown_request_impl()
{
    // On the control thread; xeus ends the process with std::exit right
    // after, so Python is never finalized: run the user's atexit handlers.
    py::gil_scoped_acquire gil;
    m_gate.open();
    call_facade("shutdown", py::make_tuple());
    m_output->flush();
    m_gate.close();
}

nl::json interpreter::internal_request_impl(const nl::json& message)
{
    py::gil_scoped_acquire gil;
    return call_facade("internal_request", py::make_tuple(pyjson::from_json(message)));
}

void interpreter::publish_display(nl::json data, nl::json metadata, nl::json transient, bool update)
{
    m_output->flush();
    m_gate.run_or_defer(
        [this,
         data = std::move(data),
         metadata = std::move(metadata),
         transient = std::move(transient),
         update]
        {
            if (update)
            {
                update_display_data(data, metadata, transient);
            }
            else
            {
                display_data(data, metadata, transient);
            }
        });
}

void interpreter::publish_result(int execution_count, nl::json data, nl::json metadata)
{
    m_output->flush();
    m_gate.run_or_defer([this, execution_count, data = std::move(data), metadata = std::move(metadata)]
                        { publish_execution_result(execution_count, data, metadata); });
}

void interpreter::publish_error(const std::string& ename,
                                const std::string& evalue,
                                const std::vector<std::string>& traceback)
{
    m_output->flush();
    m_gate.run_or_defer([this, ename, evalue, traceback]
                        { publish_execution_error(ename, evalue, traceback); });
}

void interpreter::publish_clear_output(bool wait)
{
    m_output->flush();
    m_gate.run_or_defer([this, wait] { clear_output(wait); });
}

std::string interpreter::read_stdin(const std::string& prompt, bool password)
{
    m_output->flush();
    sigint_blocked blocked;
    py::gil_scoped_release no_gil;
    return xeus::blocking_input_request(prompt, password);
}

} // namespace xflydsl
