// Holds the kernel's first kernel_info reply until a client is connected to
// IOPub.
//
// xeus 2.4.1 publishes on a plain PUB socket: a status published before a
// client's subscription reaches it is lost. jupyter_client's readiness check
// waits 0.2 s for any IOPub message after the kernel_info reply and asks
// again when none came, and at start-up the client's sockets connect each on
// its own ZeroMQ reconnect timer (100-200 ms): when the shell got there
// first, 0.2 s of the start went to that wait. Newer xeus says when a client
// subscribes (an XPUB welcome, JEP 65); here the first reply waits, at most
// `limit`, until the IOPub port has an established TCP connection, read from
// the kernel's socket table (Linux), and then briefly for its subscription.
#pragma once

#include <chrono>
#include <mutex>
#include <string>

namespace xflydsl
{

class iopub_readiness
{
public:
    iopub_readiness(const std::string& transport, const std::string& port);

    // The first call waits as above; later ones return at once.
    void wait_once(std::chrono::milliseconds limit = std::chrono::milliseconds(300));

private:
    bool connected() const;

    int m_port = 0; // 0: not TCP, nothing to wait for
    std::once_flag m_once;
};

} // namespace xflydsl
