#include "debugger.hpp"

#include <functional>
#include <iostream>
#include <thread>

#include <pybind11_json/pybind11_json.hpp>
#include <xeus/xmiddleware.hpp>
#include <xeus/xsystem.hpp>

#include "cell_files.hpp"
#include "interpreter.hpp"

namespace py = pybind11;
using namespace std::placeholders;

namespace xflydsl
{

debugger::debugger(zmq::context_t& context,
                   const xeus::xconfiguration& config,
                   const std::string& user_name,
                   const std::string& session_id)
    : xeus::xdebugger_base(context),
      m_client(std::make_unique<debugpy_client>(
          context,
          config,
          xeus::xdap_tcp_configuration(
              xeus::dap_tcp_type::client, xeus::dap_init_type::parallel, user_name, session_id),
          get_event_callback())),
      m_host("127.0.0.1"), m_port(xeus::find_free_port(100, 5678, 5900))
{
    register_request_handler(
        "inspectVariables", std::bind(&debugger::inspect_variables_request, this, _1), false);
    register_request_handler(
        "richInspectVariables", std::bind(&debugger::rich_inspect_variables_request, this, _1), false);
    register_request_handler("initialize", std::bind(&debugger::initialize_request, this, _1), false);
    register_request_handler("attach", std::bind(&debugger::attach_request, this, _1), true);
    register_request_handler("setBreakpoints", std::bind(&debugger::set_breakpoints_request, this, _1), true);
    register_request_handler("disconnect", std::bind(&debugger::disconnect_request, this, _1), true);
    register_request_handler("copyToGlobals", std::bind(&debugger::copy_to_globals_request, this, _1), true);
    register_request_handler("modules", std::bind(&debugger::modules_request, this, _1), true);
    register_request_handler(
        "configurationDone", std::bind(&debugger::configuration_done_request, this, _1), true);
}

debugger::~debugger() = default;

template <class... Json> nl::json debugger::ask_session(const char* method, const Json&... arguments)
{
    py::gil_scoped_acquire gil;
    return interpreter::current().facade().attr("debugger").attr(method)(pyjson::from_json(arguments)...);
}

namespace
{

// A remembered reply, answering a later request of the same command.
nl::json replayed(nl::json reply, const nl::json& request)
{
    reply["request_seq"] = request["seq"];
    return reply;
}

nl::json success(const nl::json& request)
{
    return {{"seq", request["seq"]},
            {"type", "response"},
            {"request_seq", request["seq"]},
            {"success", true},
            {"command", request["command"]}};
}

} // namespace

nl::json debugger::initialize_request(const nl::json& message)
{
    if (!is_started())
    {
        nl::json reply = success(message);
        reply["success"] = false;
        reply["message"] = "debugpy could not start (the kernel's log says why)";
        return reply;
    }
    if (m_initialize_reply.is_null())
    {
        m_initialize_reply = forward_message(message);
        return m_initialize_reply;
    }
    return replayed(m_initialize_reply, message);
}

nl::json debugger::set_breakpoints_request(const nl::json& message)
{
    m_breakpoint_sources.insert(message["arguments"]["source"]["path"].get<std::string>());
    return xeus::xdebugger_base::set_breakpoints_request(message);
}

nl::json debugger::disconnect_request(const nl::json& message)
{
    int seq = message["seq"].get<int>();
    auto request = [&seq](const std::string& command, nl::json arguments)
    { return nl::json{{"type", "request"}, {"seq", ++seq}, {"command", command}, {"arguments", arguments}}; };
    for (const std::string& source : m_breakpoint_sources)
    {
        forward_message(
            request("setBreakpoints", {{"source", {{"path", source}}}, {"breakpoints", nl::json::array()}}));
    }
    m_breakpoint_sources.clear();
    forward_message(request("setExceptionBreakpoints", {{"filters", nl::json::array()}}));
    if (!get_stopped_threads().empty())
    {
        forward_message(request("continue", {{"threadId", *get_stopped_threads().begin()}}));
    }
    return success(message);
}

nl::json debugger::attach_request(const nl::json& message)
{
    if (!m_attach_reply.is_null())
    {
        return replayed(m_attach_reply, message);
    }
    nl::json request = message;
    request["arguments"]["connect"] = {{"host", m_host}, {"port", std::stoi(m_port)}};
    // Stepping stays in the user's code: the kernel's shell, IPython and
    // flyrt's own frames are skipped (debugpy's "rules").
    request["arguments"]["rules"] = ask_session("skip_rules");
    m_attach_reply = forward_message(request);
    return m_attach_reply;
}

nl::json debugger::configuration_done_request(const nl::json& message)
{
    // debugpy got its configurationDone from the client's init sequence.
    return success(message);
}

nl::json debugger::inspect_variables_request(const nl::json& message)
{
    return ask_session("inspect_variables", message);
}

nl::json debugger::rich_inspect_variables_request(const nl::json& message)
{
    if (get_stopped_threads().empty())
    {
        return ask_session("rich_inspect", message);
    }
    // Stopped: the variable lives in a frame only debugpy can evaluate in.
    const nl::json evaluate = ask_session("rich_evaluate_request", message);
    const nl::json evaluated = evaluate.is_null() ? nl::json() : forward_message(evaluate);
    return ask_session("rich_inspect_reply", message, evaluated);
}

nl::json debugger::copy_to_globals_request(const nl::json& message)
{
    const nl::json request = ask_session("copy_to_globals_request", message);
    if (request.is_null())
    {
        nl::json reply = success(message);
        reply["success"] = false;
        reply["message"] = "dstVariableName and srcVariableName must be Python identifiers";
        return reply;
    }
    nl::json reply = forward_message(request);
    reply["request_seq"] = message["seq"];
    reply["command"] = message["command"];
    return reply;
}

nl::json debugger::modules_request(const nl::json& message)
{
    // debugpy answers an empty list: the kernel knows what it imported.
    return ask_session("modules", message);
}

nl::json debugger::variables_request_impl(const nl::json& message)
{
    if (get_stopped_threads().empty())
    {
        return ask_session("variables", message);
    }
    return ask_session("filter_variables", message, xeus::xdebugger_base::variables_request_impl(message));
}

bool debugger::listen_once()
{
    if (!m_listening)
    {
        // In the shell's thread, which runs the cells: debugpy traces the
        // thread that calls listen.
        const nl::json reply = get_control_messenger().send_to_shell(
            {{"debugger", "listen"}, {"host", m_host}, {"port", std::stoi(m_port)}});
        m_listening = reply.value("status", "error") == "ok";
        if (!m_listening)
        {
            std::cerr << "xflydsl: cannot start debugpy: " << reply.value("evalue", "") << std::endl;
        }
    }
    return m_listening;
}

bool debugger::start(zmq::socket_t& header_socket, zmq::socket_t& request_socket)
{
    xeus::create_directory(cell_file_folder());
    if (!listen_once())
    {
        return false;
    }
    if (m_connected)
    {
        return true;
    }
    const std::string controller = xeus::get_controller_end_point("debugger");
    const std::string controller_header = xeus::get_controller_end_point("debugger_header");
    request_socket.bind(controller);
    header_socket.bind(controller_header);

    // The client's loop ends when `stop` unbinds its controller; it is
    // detached because it may still be unwinding when the process ends.
    std::thread(&xeus::xdap_tcp_client::start_debugger,
                m_client.get(),
                "tcp://" + m_host + ':' + m_port,
                xeus::get_publisher_end_point(),
                controller,
                controller_header)
        .detach();

    // The client answers once it is connected to debugpy.
    request_socket.send(zmq::message_t("REQ", 3), zmq::send_flags::none);
    zmq::message_t ack;
    (void)request_socket.recv(ack);
    m_connected = true;
    return true;
}

void debugger::stop(zmq::socket_t&, zmq::socket_t&) {}

xeus::xdebugger_info debugger::get_debugger_info() const
{
    return xeus::xdebugger_info(
        xeus::get_tmp_hash_seed(), cell_file_folder(), ".py", true, {"Python Exceptions"});
}

std::string debugger::get_cell_temporary_file(const std::string& code) const
{
    return cell_file(code);
}

std::unique_ptr<xeus::xdebugger> make_debugger(xeus::xcontext& context,
                                               const xeus::xconfiguration& config,
                                               const std::string& user_name,
                                               const std::string& session_id,
                                               const nl::json& /*debugger_config*/)
{
    return std::make_unique<debugger>(
        context.get_wrapped_context<zmq::context_t>(), config, user_name, session_id);
}

} // namespace xflydsl
