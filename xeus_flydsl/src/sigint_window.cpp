#include "sigint_window.hpp"

#include <Python.h>
#include <signal.h>

#include <ctime>

namespace xflydsl
{
namespace
{

sigset_t sigint_set()
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    return set;
}

// Python's handler may have recorded a SIGINT (delivered to a thread that
// Python code started while a window was open, so it inherited the open
// mask) that it has not acted on yet: it belongs to no request.
void discard_recorded_signals()
{
    if (PyErr_CheckSignals() != 0)
    {
        PyErr_Clear();
    }
}

} // namespace

void block_sigint()
{
    const sigset_t set = sigint_set();
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

bool drop_pending_sigint()
{
    const sigset_t set = sigint_set();
    sigset_t pending;
    sigpending(&pending);
    if (!sigismember(&pending, SIGINT))
    {
        return false;
    }
    const timespec no_wait{0, 0};
    sigtimedwait(&set, nullptr, &no_wait);
    return true;
}

sigint_window::sigint_window()
{
    drop_pending_sigint();
    discard_recorded_signals();
    const sigset_t set = sigint_set();
    pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

sigint_window::~sigint_window()
{
    const sigset_t set = sigint_set();
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    discard_recorded_signals();
}

} // namespace xflydsl
