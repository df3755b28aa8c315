#include "sigint_window.hpp"

#include <Python.h>
#include <pthread.h>
#include <signal.h>

#include <ctime>
#include <mutex>

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

// What the watch and the windows share: signals are the process's.
struct interrupt_state
{
    std::mutex mutex;
    bool window_open = false;
    pthread_t window_thread{};
    std::optional<double> arrived_between_windows; // seconds since the epoch
    bool stopping = false;
};

interrupt_state& state()
{
    static interrupt_state shared;
    return shared;
}

double seconds_since_epoch()
{
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now); // the clock the client's header dates come from
    return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

// Marks the SIGINTs the watch passes on to a window's thread.
constexpr int forwarded = 1;

// Takes the SIGINTs pending while blocked; true when one of them came from
// outside (a client's, not yet taken by the watch: it has just arrived).
// One the watch passed to a window that was closing belongs to no request.
bool take_pending_sigint()
{
    const sigset_t set = sigint_set();
    const timespec no_wait{0, 0};
    siginfo_t info{};
    bool from_outside = false;
    while (sigtimedwait(&set, &info, &no_wait) == SIGINT) // this thread's, then the process's
    {
        from_outside = from_outside || info.si_code != SI_QUEUE || info.si_value.sival_int != forwarded;
    }
    return from_outside;
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

void watch()
{
    const sigset_t set = sigint_set();
    for (;;)
    {
        if (sigwaitinfo(&set, nullptr) != SIGINT)
        {
            continue; // EINTR
        }
        interrupt_state& shared = state();
        std::lock_guard<std::mutex> lock(shared.mutex);
        if (shared.stopping)
        {
            return;
        }
        if (shared.window_open)
        {
            pthread_sigqueue(shared.window_thread, SIGINT, sigval{forwarded});
        }
        else
        {
            shared.arrived_between_windows = seconds_since_epoch();
        }
    }
}

} // namespace

void block_sigint()
{
    const sigset_t set = sigint_set();
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

sigint_watch::sigint_watch() : m_thread(watch) {}

sigint_watch::~sigint_watch()
{
    {
        std::lock_guard<std::mutex> lock(state().mutex);
        state().stopping = true;
    }
    pthread_kill(m_thread.native_handle(), SIGINT);
    m_thread.join();
}

sigint_window::sigint_window(std::optional<double> request_sent)
{
    const bool just_arrived = take_pending_sigint();
    discard_recorded_signals();
    interrupt_state& shared = state();
    bool for_this_request = false;
    {
        std::lock_guard<std::mutex> lock(shared.mutex);
        if (just_arrived)
        {
            shared.arrived_between_windows = seconds_since_epoch();
        }
        for_this_request = request_sent && shared.arrived_between_windows &&
                           *shared.arrived_between_windows >= *request_sent;
        shared.arrived_between_windows.reset();
        shared.window_open = true;
        shared.window_thread = pthread_self();
    }
    if (for_this_request)
    {
        pthread_kill(pthread_self(), SIGINT); // pending until the unblock below delivers it
    }
    const sigset_t set = sigint_set();
    pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

sigint_window::~sigint_window()
{
    const sigset_t set = sigint_set();
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    {
        std::lock_guard<std::mutex> lock(state().mutex);
        state().window_open = false;
    }
    discard_recorded_signals();
}

} // namespace xflydsl
