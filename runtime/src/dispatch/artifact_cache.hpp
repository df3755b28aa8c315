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
    artifact_cache() = default;
    // It points at one of its own entries (the last hit): a copy would point into the original.
    artifact_cache(const artifact_cache&) = delete;
    artifact_cache& operator=(const artifact_cache&) = delete;

    // The artifact of `key`, counted as a hit; null, counted as a miss, when
    // there is none or it is stale: its guard saw a change and
    // `revalidate(record) -> bool` says it no longer holds (it is evicted
    // then, to be recompiled now). The caller copies what it gets, to hold
    // it while it runs: another thread may evict it meanwhile.
    const std::shared_ptr<artifact>* find(const key_type& key, const pybind11::object& revalidate)
    {
        // Calls repeat their key: the last hit's entry is compared before
        // the key is hashed (a node outlives rehashes; erasing forgets it).
        entry* found = m_last != nullptr && m_last->first == key ? m_last : lookup(key);
        if (found != nullptr && found->second->guard && !found->second->guard->holds())
        {
            // Python may clear or fill this cache meanwhile (a compile
            // factory's check evicts): nothing here survives the call but
            // the artifact held, and the key to look up again.
            const std::shared_ptr<artifact> held = found->second;
            const bool holds = revalidate(held->record()).cast<bool>();
            found = lookup(key);
            if (!holds && found != nullptr && found->second == held)
            {
                evict(key);
            }
            if (!holds || (found != nullptr && found->second != held))
            {
                found = nullptr; // stale, or replaced by an artifact not checked yet
            }
        }
        if (found == nullptr)
        {
            ++m_counters.misses;
            return nullptr;
        }
        ++m_counters.hits;
        m_last = found;
        return &found->second;
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
    using entry = std::pair<const key_type, std::shared_ptr<artifact>>;

    entry* lookup(const key_type& key)
    {
        auto it = m_entries.find(key);
        return it == m_entries.end() ? nullptr : &*it;
    }

    std::unordered_map<key_type, std::shared_ptr<artifact>, key_hash> m_entries;
    entry* m_last = nullptr; // the last hit's entry, or null
    cache_counters m_counters;
};

} // namespace flyrt::dispatch
