// The Jupyter debugger of xflydsl (DAP over `debug_request` / `debug_reply`
// on the control channel, `debug_event` on IOPub), backed by debugpy.
//
// xeus's `xdebugger_base` answers what needs no debuggee (debugInfo,
// dumpCell, source, breakpoint bookkeeping) and forwards the rest to
// debugpy's adapter through `debugpy_client`, which runs on its own thread.
// What needs Python (starting debugpy in the shell's thread, listing the
// user's variables while nothing is stopped) goes to
// `xflydsl_shell.debugger.DebugSession`.
#pragma once

#include <memory>
#include <set>
#include <string>

#include <xeus/xdebugger_base.hpp>

#include "debugpy_client.hpp"

namespace xflydsl
{

class debugger final : public xeus::xdebugger_base
{
public:
    debugger(zmq::context_t& context,
             const xeus::xconfiguration& config,
             const std::string& user_name,
             const std::string& session_id);
    ~debugger() override;

private:
    nl::json initialize_request(const nl::json& message);
    nl::json attach_request(const nl::json& message);
    nl::json set_breakpoints_request(const nl::json& message);
    nl::json disconnect_request(const nl::json& message);
    nl::json configuration_done_request(const nl::json& message);
    nl::json inspect_variables_request(const nl::json& message);
    nl::json rich_inspect_variables_request(const nl::json& message);
    nl::json copy_to_globals_request(const nl::json& message);
    nl::json modules_request(const nl::json& message);
    nl::json variables_request_impl(const nl::json& message) override;

    bool start(zmq::socket_t& header_socket, zmq::socket_t& request_socket) override;
    void stop(zmq::socket_t& header_socket, zmq::socket_t& request_socket) override;
    xeus::xdebugger_info get_debugger_info() const override;
    std::string get_cell_temporary_file(const std::string& code) const override;

    // debugpy listens once per process; later sessions reconnect to it.
    bool listen_once();
    // A method of the Python side (created in the shell's thread by
    // `listen_once`), called with the GIL on JSON arguments.
    template <class... Json> nl::json ask_session(const char* method, const Json&... arguments);

    // Lives as long as the process: its thread (detached) keeps using it.
    std::unique_ptr<debugpy_client> m_client;
    std::string m_host;
    std::string m_port;
    bool m_listening = false;
    bool m_connected = false;
    // xeus 2.4.1's client cannot reconnect, so one debugpy session serves
    // every debugger session of the client: a later session's initialize
    // and attach get the first session's answers, and a disconnect only
    // clears what the session set.
    nl::json m_initialize_reply;
    nl::json m_attach_reply;
    std::set<std::string> m_breakpoint_sources;
};

std::unique_ptr<xeus::xdebugger> make_debugger(xeus::xcontext& context,
                                               const xeus::xconfiguration& config,
                                               const std::string& user_name,
                                               const std::string& session_id,
                                               const nl::json& debugger_config);

} // namespace xflydsl
