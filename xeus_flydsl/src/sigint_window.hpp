// SIGINT, Jupyter's interrupt in "signal" mode, may only reach Python code.
//
// A SIGINT that lands in xeus's zmq::poll makes it throw (EINTR) and kills
// the kernel, and CPython wants signals on its main thread. So SIGINT stays
// blocked in every thread (block before any thread exists, threads inherit
// the mask) and the main thread opens a window only while Python runs a
// request.
#pragma once

namespace xflydsl
{

// Blocks SIGINT for the calling thread and every thread it starts later.
void block_sigint();

// Unblocks SIGINT on this thread for its lifetime. An interrupt that
// arrived while the kernel was idle is dropped first (interrupting an idle
// kernel is harmless), and one that arrives after Python returned is
// consumed, so it never leaks into the next request. Needs the GIL.
class sigint_window
{
public:
    sigint_window();
    ~sigint_window();

    sigint_window(const sigint_window&) = delete;
    sigint_window& operator=(const sigint_window&) = delete;
};

// Discards a SIGINT pending while blocked; true when one was pending.
bool drop_pending_sigint();

} // namespace xflydsl
