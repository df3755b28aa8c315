// What a compiled artifact depends on, checked on every launcher call
// without running Python: namespace dicts by their mutations (dict_watch),
// functions by the identity of
// their code, defaults and closure cell contents, lists by the identity of
// their items, small buffers (arrays a trace read elements of) by content. Any difference sends the call to
// Python's slower re-check (flyrt/dependencies.py), which decides whether the artifact is stale.
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cstdint>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>

#include "dict_watch.hpp"

namespace flyrt::dispatch
{

class dependency_guard
{
public:
    // A namespace: a dict, or a class (its type dict), by version.
    void watch_namespace(const pybind11::handle& dict_or_class);
    void watch_function(const pybind11::handle& function);
    void watch_list(const pybind11::handle& list);
    // A buffer (numpy array, bytearray, array.array, memoryview) whose bytes
    // the trace saw as `contents`.
    void watch_buffer(const pybind11::handle& buffer, const pybind11::bytes& contents);
    // Makes holds() false from now on: the artifact was stale when installed.
    void invalidate() { m_invalid = true; }

    // True while nothing watched changed; no Python code runs.
    bool holds() const;
    std::size_t size() const
    {
        return m_dicts.size() + m_functions.size() + m_lists.size() + m_buffers.size();
    }

private:
    struct namespace_watch
    {
        pybind11::object owner; // the dict, or the class whose dict it is
        dict_watch dict;
    };
    struct function_watch
    {
        pybind11::object function;
        pybind11::object code;
        pybind11::object defaults;
        pybind11::object kwdefaults;
        std::vector<pybind11::object> cells; // contents, in closure order
    };
    struct list_watch
    {
        pybind11::object list;
        std::vector<pybind11::object> items;
    };

    struct buffer_watch
    {
        pybind11::object buffer;
        std::string contents;
    };

    std::vector<namespace_watch> m_dicts;
    std::vector<function_watch> m_functions;
    std::vector<list_watch> m_lists;
    std::vector<buffer_watch> m_buffers;
    bool m_invalid = false;
};

} // namespace flyrt::dispatch
