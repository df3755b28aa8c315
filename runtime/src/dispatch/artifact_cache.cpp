#include "artifact_cache.hpp"

namespace flyrt::dispatch
{

void artifact_cache::add(const key_type& key, std::shared_ptr<artifact> found, bool compiled)
{
    if (compiled)
    {
        ++m_counters.compiles;
    }
    m_entries.emplace(key, std::move(found));
}

std::size_t artifact_cache::clear()
{
    const std::size_t dropped = m_entries.size();
    m_counters.evictions += dropped;
    m_last = nullptr;
    m_entries.clear();
    return dropped;
}

bool artifact_cache::evict(const key_type& key)
{
    if (m_last != nullptr && m_last->first == key)
    {
        m_last = nullptr;
    }
    if (m_entries.erase(key) == 0)
    {
        return false;
    }
    ++m_counters.evictions;
    return true;
}

std::vector<std::pair<key_type, std::shared_ptr<artifact>>> artifact_cache::entries() const
{
    return {m_entries.begin(), m_entries.end()};
}

std::vector<key_type> artifact_cache::keys() const
{
    std::vector<key_type> out;
    for (const auto& entry : m_entries)
    {
        out.push_back(entry.first);
    }
    return out;
}

} // namespace flyrt::dispatch
