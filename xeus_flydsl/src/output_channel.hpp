// The kernel's stdout and stderr: text written by Python, and bytes written
// to file descriptors 1 and 2 by C code and subprocesses, buffered per stream
// and published as `stream` messages.
//
// One message per write() would flood the client, so a pump thread publishes
// what accumulated every `interval`, a buffer over `max_buffered` bytes is
// published at once, and the owner flushes everything at the end of a cell.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "iopub_gate.hpp"

namespace xflydsl
{

class output_channel
{
public:
    using publisher = std::function<void(const std::string& name, const std::string& text)>;

    output_channel(iopub_gate& gate,
                   publisher publish,
                   std::chrono::milliseconds interval = std::chrono::milliseconds(50),
                   std::size_t max_buffered = 64 * 1024);
    ~output_channel();

    output_channel(const output_channel&) = delete;
    output_channel& operator=(const output_channel&) = delete;

    // Redirects `fd` into a pipe whose bytes become stream `name`. The
    // original descriptor is kept and restored when the channel dies.
    void capture_fd(int fd, const std::string& name);

    // Appends text (UTF-8) to stream `name`.
    void write(const std::string& name, std::string_view text);

    // Drains C stdio and the captured pipes, then publishes all that this
    // thread may publish now.
    void flush();

    // A descriptor that still reaches the terminal the kernel started on,
    // for the kernel's own diagnostics; -1 when fd 2 is not captured.
    int original_stderr() const;

private:
    // Wakes the pump thread (a full pipe already holds a wake-up: nothing lost).
    void wake_pump();
    struct capture
    {
        int fd;
        int saved_fd;
        int read_end;
        std::string name;
        std::string pending; // bytes of an unfinished UTF-8 character
    };

    void pump();
    void drain_pipes();
    void publish_buffers();

    iopub_gate& m_gate;
    publisher m_publish;
    std::chrono::milliseconds m_interval;
    std::size_t m_max_buffered;

    std::mutex m_flush_mutex;  // one flush at a time keeps chunks in order
    std::mutex m_buffer_mutex; // guards m_buffers and m_order
    std::map<std::string, std::string> m_buffers;
    std::vector<std::string> m_order; // streams in first-write order

    std::mutex m_capture_mutex; // guards m_captures (reads and setup)
    std::vector<capture> m_captures;
    int m_wake_pipe[2] = {-1, -1};
    std::atomic<bool> m_stopping{false};
    std::thread m_pump;
};

} // namespace xflydsl
