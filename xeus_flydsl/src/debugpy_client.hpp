// The debugger's link to debugpy: xeus's DAP client over TCP, publishing
// every debugpy event on IOPub as a `debug_event`.
#pragma once

#include <xeus/xdap_tcp_client.hpp>

namespace xflydsl
{

class debugpy_client final : public xeus::xdap_tcp_client
{
public:
    debugpy_client(zmq::context_t& context,
                   const xeus::xconfiguration& config,
                   const xeus::xdap_tcp_configuration& dap_config,
                   const event_callback& on_event);

private:
    void handle_event(nl::json message) override;
};

} // namespace xflydsl
