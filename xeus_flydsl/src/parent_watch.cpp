#include "parent_watch.hpp"

#include <cerrno>
#include <cstdlib>
#include <string>

#include <signal.h>
#include <unistd.h>

namespace xflydsl
{
namespace
{

pid_t named_parent()
{
    const char* text = std::getenv("JPY_PARENT_PID");
    if (text == nullptr)
    {
        return 0;
    }
    char* end = nullptr;
    const long pid = std::strtol(text, &end, 10);
    return (end != text && *end == '\0' && pid > 1) ? static_cast<pid_t>(pid) : 0;
}

} // namespace

parent_watch::parent_watch(std::chrono::milliseconds interval)
    : m_log_fd(::dup(STDERR_FILENO)), m_interval(interval), m_named_parent(named_parent()),
      m_parent(::getppid())
{
    m_thread = std::thread([this] { poll(); });
}

parent_watch::~parent_watch()
{
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_stop = true;
    }
    m_stop_requested.notify_one();
    m_thread.join();
    if (m_log_fd >= 0)
    {
        ::close(m_log_fd);
    }
}

bool parent_watch::parent_alive() const
{
    if (::getppid() != m_parent)
    {
        return false; // re-parented: whoever started us has exited
    }
    // A named parent is checked by signal 0 (EPERM: alive, another user's).
    return m_named_parent == 0 || ::kill(m_named_parent, 0) == 0 || errno == EPERM;
}

void parent_watch::poll()
{
    std::unique_lock<std::mutex> lock(m_mutex);
    while (!m_stop_requested.wait_for(lock, m_interval, [this] { return m_stop; }))
    {
        if (!parent_alive())
        {
            const std::string why = "xflydsl: the process that started this kernel is gone; exiting\n";
            [[maybe_unused]] const ssize_t written = ::write(m_log_fd, why.data(), why.size()); // best effort
            std::_Exit(1); // as ipykernel: no clean-up that could hang an orphan
        }
    }
}

} // namespace xflydsl
