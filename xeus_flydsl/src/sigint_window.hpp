// SIGINT, Jupyter's interrupt in "signal" mode, may only reach Python code.
//
// A SIGINT that lands in xeus's zmq::poll makes it throw (EINTR) and kills
// the kernel, and CPython wants signals on its main thread. So SIGINT stays
// blocked in every thread (block before any thread exists, threads inherit
// the mask) and the main thread opens a window only while Python runs a
// request.
#pragma once

#include <optional>
#include <thread>

namespace xflydsl
{

// Blocks SIGINT for the calling thread and every thread it starts later.
void block_sigint();

// Takes, on a thread of its own, each SIGINT that no open window takes.
// One that arrives while a window is open goes to the window's thread; one
// that arrives between windows is kept with its time, for the next window to
// judge: a client's interrupt sent just after its execute request lands
// before the request's window opens, and belongs to that request. Needs
// SIGINT blocked (block_sigint) and handled (not ignored) before it starts.
class sigint_watch
{
public:
    sigint_watch();
    ~sigint_watch();

    sigint_watch(const sigint_watch&) = delete;
    sigint_watch& operator=(const sigint_watch&) = delete;

private:
    std::thread m_thread;
};

// Unblocks SIGINT on this thread for its lifetime. An interrupt that arrived
// since `request_sent` (when the client sent the request, in seconds since
// the epoch, where its header says) is delivered as the window opens; older
// ones arrived while the kernel was idle and are dropped (interrupting an
// idle kernel is harmless). One that arrives after Python returned is
// consumed, so it never leaks into the next request. Needs the GIL.
class sigint_window
{
public:
    explicit sigint_window(std::optional<double> request_sent);
    ~sigint_window();

    sigint_window(const sigint_window&) = delete;
    sigint_window& operator=(const sigint_window&) = delete;
};

} // namespace xflydsl
