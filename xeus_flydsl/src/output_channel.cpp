#include "output_channel.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "utf8_text.hpp"

namespace xflydsl
{
namespace
{

std::system_error os_error(const char* what)
{
    return std::system_error(errno, std::generic_category(), what);
}

void set_flags(int fd, int status_flags)
{
    if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | status_flags) == -1 || fcntl(fd, F_SETFD, FD_CLOEXEC) == -1)
    {
        throw os_error("fcntl");
    }
}

} // namespace

output_channel::output_channel(iopub_gate& gate,
                               publisher publish,
                               std::chrono::milliseconds interval,
                               std::size_t max_buffered)
    : m_gate(gate), m_publish(std::move(publish)), m_interval(interval), m_max_buffered(max_buffered)
{
    if (pipe(m_wake_pipe) == -1)
    {
        throw os_error("pipe");
    }
    set_flags(m_wake_pipe[0], O_NONBLOCK);
    set_flags(m_wake_pipe[1], O_NONBLOCK);
    m_pump = std::thread([this] { pump(); });
}

output_channel::~output_channel()
{
    m_stopping = true;
    wake_pump();
    m_pump.join();
    flush();
    std::lock_guard<std::mutex> lock(m_capture_mutex);
    for (auto& c : m_captures)
    {
        dup2(c.saved_fd, c.fd);
        close(c.saved_fd);
        close(c.read_end);
    }
    close(m_wake_pipe[0]);
    close(m_wake_pipe[1]);
}

void output_channel::capture_fd(int fd, const std::string& name)
{
    int ends[2];
    if (pipe(ends) == -1)
    {
        throw os_error("pipe");
    }
    const int saved = dup(fd);
    if (saved == -1 || dup2(ends[1], fd) == -1)
    {
        throw os_error("dup");
    }
    close(ends[1]);
    set_flags(ends[0], O_NONBLOCK);
    set_flags(saved, 0);
    {
        std::lock_guard<std::mutex> lock(m_capture_mutex);
        m_captures.push_back(capture{fd, saved, ends[0], name, {}});
    }
    wake_pump();
}

void output_channel::wake_pump()
{
    const char wake = 1;
    [[maybe_unused]] const ssize_t written = ::write(m_wake_pipe[1], &wake, 1);
}

int output_channel::original_stderr() const
{
    for (const auto& c : m_captures)
    {
        if (c.fd == STDERR_FILENO)
        {
            return c.saved_fd;
        }
    }
    return -1;
}

void output_channel::write(const std::string& name, std::string_view text)
{
    bool over = false;
    {
        std::lock_guard<std::mutex> lock(m_buffer_mutex);
        auto [it, inserted] = m_buffers.try_emplace(name);
        if (inserted)
        {
            m_order.push_back(name);
        }
        it->second.append(text);
        over = it->second.size() > m_max_buffered;
    }
    if (over)
    {
        std::lock_guard<std::mutex> lock(m_flush_mutex);
        publish_buffers();
    }
}

void output_channel::flush()
{
    std::fflush(nullptr); // C stdio buffers fully when fd 1 is a pipe
    std::lock_guard<std::mutex> lock(m_flush_mutex);
    drain_pipes();
    publish_buffers();
}

void output_channel::pump()
{
    while (!m_stopping)
    {
        std::vector<pollfd> fds{{m_wake_pipe[0], POLLIN, 0}};
        {
            std::lock_guard<std::mutex> lock(m_capture_mutex);
            for (const auto& c : m_captures)
            {
                fds.push_back({c.read_end, POLLIN, 0});
            }
        }
        const int ready = poll(fds.data(), fds.size(), static_cast<int>(m_interval.count()));
        if (ready < 0 && errno != EINTR)
        {
            return;
        }
        char discard[64];
        while (::read(m_wake_pipe[0], discard, sizeof discard) > 0)
        {
        }
        std::lock_guard<std::mutex> lock(m_flush_mutex);
        drain_pipes();
        publish_buffers();
        if (ready > 0)
        {
            // Let output accumulate rather than publish every small write.
            std::this_thread::sleep_for(m_interval / 5);
        }
    }
}

void output_channel::drain_pipes()
{
    std::lock_guard<std::mutex> lock(m_capture_mutex);
    char chunk[65536];
    for (auto& c : m_captures)
    {
        std::string bytes = std::move(c.pending);
        c.pending.clear();
        ssize_t n;
        while ((n = ::read(c.read_end, chunk, sizeof chunk)) > 0 || (n == -1 && errno == EINTR))
        {
            if (n > 0)
            {
                bytes.append(chunk, static_cast<std::size_t>(n));
            }
        }
        const std::size_t complete = complete_utf8_prefix(bytes);
        c.pending = bytes.substr(complete);
        if (complete > 0)
        {
            std::lock_guard<std::mutex> buffers(m_buffer_mutex);
            auto [it, inserted] = m_buffers.try_emplace(c.name);
            if (inserted)
            {
                m_order.push_back(c.name);
            }
            it->second += sanitize_utf8(std::string_view(bytes).substr(0, complete));
        }
    }
}

void output_channel::publish_buffers()
{
    std::vector<std::pair<std::string, std::string>> chunks;
    {
        std::lock_guard<std::mutex> lock(m_buffer_mutex);
        for (const auto& name : m_order)
        {
            auto& text = m_buffers[name];
            if (!text.empty())
            {
                chunks.emplace_back(name, std::move(text));
                text.clear();
            }
        }
    }
    if (chunks.empty())
    {
        return;
    }
    const bool published = m_gate.run_if_allowed(
        [&]
        {
            for (const auto& [name, text] : chunks)
            {
                m_publish(name, text);
            }
        });
    if (!published)
    {
        // Keep the text, in front of anything written meanwhile.
        std::lock_guard<std::mutex> lock(m_buffer_mutex);
        for (auto& [name, text] : chunks)
        {
            m_buffers[name].insert(0, text);
        }
    }
}

} // namespace xflydsl
