// Serializes everything this kernel publishes on iopub.
//
// xeus 2.4.1 publishes through one ZeroMQ socket that is not thread-safe,
// and xeus itself uses it from the shell (main) thread between requests.
// So other threads may publish only while a request runs on the main thread
// (xeus is then inside our code and publishes nothing itself); anything they
// publish outside a request is deferred to the start of the next one.
#pragma once

#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace xflydsl
{

class iopub_gate
{
public:
    using action = std::function<void()>;

    // `owner` is the thread on which xeus publishes: the shell's main thread.
    explicit iopub_gate(std::thread::id owner = std::this_thread::get_id());

    // Owner thread only: a request starts (runs deferred actions) or ends.
    void open();
    void close();

    // Runs `publish` now when this thread may publish; returns false otherwise.
    bool run_if_allowed(const action& publish);
    // Runs `publish` now when allowed, else keeps it for the next request.
    void run_or_defer(action publish);

private:
    bool allowed_locked() const;

    std::mutex m_mutex;
    std::thread::id m_owner;
    bool m_open = false;
    std::vector<action> m_deferred;
};

} // namespace xflydsl
