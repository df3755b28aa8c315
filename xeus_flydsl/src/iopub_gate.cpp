#include "iopub_gate.hpp"

#include <utility>

namespace xflydsl
{

iopub_gate::iopub_gate(std::thread::id owner) : m_owner(owner) {}

void iopub_gate::open()
{
    std::lock_guard<std::mutex> lock(m_mutex);
    m_open = true;
    std::vector<action> deferred;
    deferred.swap(m_deferred);
    for (auto& publish : deferred)
    {
        publish();
    }
}

void iopub_gate::close()
{
    std::lock_guard<std::mutex> lock(m_mutex);
    m_open = false;
}

bool iopub_gate::allowed_locked() const
{
    return m_open || std::this_thread::get_id() == m_owner;
}

bool iopub_gate::run_if_allowed(const action& publish)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    if (!allowed_locked())
    {
        return false;
    }
    publish();
    return true;
}

void iopub_gate::run_or_defer(action publish)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    if (allowed_locked())
    {
        publish();
    }
    else
    {
        m_deferred.push_back(std::move(publish));
    }
}

} // namespace xflydsl
