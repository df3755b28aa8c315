// Whether a dict changed since it started being watched, told without
// running Python. CPython 3.11 keeps a version in every dict (PEP 509's
// ma_version_tag); 3.12 deprecates it (PEP 699) for dict watchers, so there
// a watcher counts each watched dict's mutations. 3.13.0 alone does not
// notify watchers of attribute stores into an object's inline values
// (CPython gh-125608, fixed in 3.13.1): there such dicts are also compared
// item by item.
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <pybind11/pybind11.h>

namespace flyrt::dispatch
{

class dict_watch
{
public:
    // Starts watching `dict`; keeps it alive.
    explicit dict_watch(const pybind11::handle& dict);

    bool changed() const;

private:
    pybind11::object m_dict;
#if PY_VERSION_HEX >= 0x030C0000
    std::shared_ptr<const std::uint64_t> m_mutations;
#endif
    std::uint64_t m_seen;
#if PY_VERSION_HEX >= 0x030D0000 && PY_VERSION_HEX < 0x030D0100
    // Set when the dict used inline values at the start.
    std::optional<std::vector<std::pair<pybind11::object, pybind11::object>>> m_items;
#endif
};

} // namespace flyrt::dispatch
