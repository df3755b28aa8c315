// The xeus interpreter of xflydsl: a thin C++ layer that owns the kernel's
// plumbing (iopub gate, output capture, comms, SIGINT window) and delegates
// every request to the Python facade `xflydsl_shell.kernel.KernelFacade`.
#pragma once

#include <memory>
#include <string>

#include <pybind11/pybind11.h>
#include <xeus/xinterpreter.hpp>

#include "comm_bridge.hpp"
#include "fd_streambuf.hpp"
#include "iopub_gate.hpp"
#include "iopub_readiness.hpp"
#include "ipython_history.hpp"
#include "output_channel.hpp"

namespace xflydsl
{

class interpreter final : public xeus::xinterpreter
{
public:
    // `history` is owned by the kernel; it answers through our facade.
    // `readiness` holds the first kernel_info reply until IOPub has a client.
    // `native` is the module the facade calls back into (native_module.hpp).
    interpreter(ipython_history& history,
                std::unique_ptr<iopub_readiness> readiness,
                pybind11::module_ native);
    ~interpreter() override;

    // The registered interpreter, for the native module's callbacks.
    static interpreter& current();

    iopub_gate& gate() noexcept { return m_gate; }
    output_channel& output() noexcept { return *m_output; }
    comm_bridge& comms() noexcept { return *m_comms; }
    // The Python facade (`KernelFacade`); use it with the GIL held.
    const pybind11::object& facade() const noexcept { return m_facade; }

    // Publishing entry points for Python, all through the gate; stream text
    // written before them is flushed first so the client sees it in order.
    void publish_display(nl::json data, nl::json metadata, nl::json transient, bool update);
    void publish_result(int execution_count, nl::json data, nl::json metadata);
    void publish_error(const std::string& ename,
                       const std::string& evalue,
                       const std::vector<std::string>& traceback);
    void publish_clear_output(bool wait);

    // Asks the client for a line on stdin; releases the GIL while waiting.
    std::string read_stdin(const std::string& prompt, bool password);

private:
    void configure_impl() override;
    nl::json execute_request_impl(int execution_counter,
                                  const std::string& code,
                                  bool silent,
                                  bool store_history,
                                  nl::json user_expressions,
                                  bool allow_stdin) override;
    nl::json complete_request_impl(const std::string& code, int cursor_pos) override;
    nl::json inspect_request_impl(const std::string& code, int cursor_pos, int detail_level) override;
    nl::json is_complete_request_impl(const std::string& code) override;
    nl::json kernel_info_request_impl() override;
    void shutdown_request_impl() override;
    // From the control thread, through xeus (the debugger starting debugpy).
    nl::json internal_request_impl(const nl::json& message) override;

    // Runs a facade method; a Python exception becomes an error reply.
    nl::json call_facade(const char* method, const pybind11::tuple& args);

    ipython_history& m_history;
    std::unique_ptr<iopub_readiness> m_readiness;
    iopub_gate m_gate;
    std::unique_ptr<output_channel> m_output;
    std::unique_ptr<comm_bridge> m_comms;
    bool m_fds_captured = false;
    std::unique_ptr<fd_streambuf> m_log; // std::cerr while fds 1 and 2 lead to cells
    std::streambuf* m_cerr_before = nullptr;
    pybind11::module_ m_native;
    pybind11::object m_facade;
};

} // namespace xflydsl
