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
    const sigset_t set = sigint_set();
    pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

sigint_window::~sigint_window()
{
    const sigset_t set = sigint_set();
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    // Python's handler may have recorded a signal it has not acted on yet.
    if (PyErr_CheckSignals() != 0)
    {
        PyErr_Clear();
    }
}

} // namespace xflydsl
