#include "debugpy_client.hpp"

#include <utility>

#include <xeus/xmiddleware.hpp>

namespace xflydsl
{

debugpy_client::debugpy_client(zmq::context_t& context,
                               const xeus::xconfiguration& config,
                               const xeus::xdap_tcp_configuration& dap_config,
                               const event_callback& on_event)
    : xeus::xdap_tcp_client(context, config, xeus::get_socket_linger(), dap_config, on_event)
{
}

void debugpy_client::handle_event(nl::json message)
{
    // xeus 2.4.1 answers a stopped event of all threads by asking debugpy for
    // its threads, and picks the reply out of what comes back with a test that
    // reads "command" from a const message: an event that comes first (a
    // module loaded, some output) has none, and reading it is undefined
    // behaviour that killed the kernel under load. The event is handed on as
    // the stop of the thread it names (the one debugpy traces: the cells'),
    // which takes xeus's other path.
    const auto body = message.find("body");
    if (message.value("event", "") == "stopped" && body != message.end() && body->is_object() &&
        body->value("allThreadsStopped", nl::json(false)) == true)
    {
        (*body)["allThreadsStopped"] = false;
    }
    forward_event(std::move(message));
}

} // namespace xflydsl
