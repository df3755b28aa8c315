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
    forward_event(std::move(message));
}

} // namespace xflydsl
