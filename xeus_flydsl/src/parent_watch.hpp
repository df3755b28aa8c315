// Ends the kernel when the process that started it is gone, as ipykernel
// does: a client killed with SIGKILL cannot ask for a shutdown, and an
// orphaned kernel would keep its memory (on a GPU machine, device memory)
// forever. The parent is the one jupyter_client names in JPY_PARENT_PID, else
// the process's parent at start; it is polled, since no signal reliably
// tells a process that its parent died (PR_SET_PDEATHSIG follows the
// parent's thread, not its process).
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <sys/types.h>

namespace xflydsl
{

class parent_watch
{
public:
    // Says why the kernel ends on the stderr it has now (later, fd 2 leads to cells).
    explicit parent_watch(std::chrono::milliseconds interval = std::chrono::milliseconds(500));
    ~parent_watch();

    parent_watch(const parent_watch&) = delete;
    parent_watch& operator=(const parent_watch&) = delete;

private:
    bool parent_alive() const;
    void poll();

    int m_log_fd; // a duplicate of the stderr at start
    std::chrono::milliseconds m_interval;
    pid_t m_named_parent; // JPY_PARENT_PID, or 0
    pid_t m_parent;       // getppid() at start
    std::mutex m_mutex;
    std::condition_variable m_stop_requested;
    bool m_stop = false;
    std::thread m_thread;
};

} // namespace xflydsl
