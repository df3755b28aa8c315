// A launcher's compiled artifacts by specialization key, with its counts.
// The lookup runs on every call, so inline.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include <pybind11/pybind11.h>

#include "artifact.hpp"
#include "specialization_key.hpp"

namespace flyrt::dispatch
{

struct cache_counters
{
    std::uint64_t hits = 0;
    std::uint64_t misses = 0;
    std::uint64_t compiles = 0;
    std::uint64_t evictions = 0;
};

class artifact_cache
{
public:
    // The artifact of `key`, counted as a hit; null, counted as a miss, when
    // there is none or it is stale: its guard saw a change and
    // `revalidate(record) -> bool` says it no longer holds (it is evicted
    // then, to be recompiled now). The caller copies what it gets, to hold
    // it while it runs: another thread may evict it meanwhile.
    const std::shared_ptr<artifact>* find(const key_type& key, const pybind11::object& revalidate)
    {
        auto it = m_entries.find(key);
        if (it != m_entries.end() && it->second->guard && !it->second->guard->holds())
        {
            // Python may clear or fill this cache meanwhile (a compile
            // factory's check evicts): nothing here survives the call but
            // the artifact held, and the key to look up again.
            const std::shared_ptr<artifact> held = it->second;
            const bool holds = revalidate(held->record()).cast<bool>();
            it = m_entries.find(key);
            if (!holds && it != m_entries.end() && it->second == held)
            {
                m_entries.erase(it);
                ++m_counters.evictions;
            }
            if (!holds || (it != m_entries.end() && it->second != held))
            {
                it = m_entries.end(); // stale, or replaced by an artifact not checked yet
            }
        }
        if (it == m_entries.end())
        {
            ++m_counters.misses;
            return nullptr;
        }
        ++m_counters.hits;
        return &it->second;
    }

    // Caches what a miss of `key` got (`compiled`: compiled now, not found
    // compiled elsewhere); one cached for it meanwhile is kept.
    void add(const key_type& key, std::shared_ptr<artifact> found, bool compiled);

    const cache_counters& counters() const { return m_counters; }
    std::size_t size() const { return m_entries.size(); }
    // Drops every artifact (counted as evictions); returns how many.
    std::size_t clear();
    // Drops the artifact of one key; returns whether it existed.
    bool evict(const key_type& key);
    std::vector<key_type> keys() const;
    std::vector<std::pair<key_type, std::shared_ptr<artifact>>> entries() const;

private:
    std::unordered_map<key_type, std::shared_ptr<artifact>, key_hash> m_entries;
    cache_counters m_counters;
};

} // namespace flyrt::dispatch
