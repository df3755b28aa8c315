// What a compiled artifact depends on, checked on every launcher call:
// namespace dicts by their mutations (dict_watch), functions by the identity
// of their code, defaults and closure cell contents, lists by the identity of
// their items, __slots__ members by the identity of what they hold, small
// buffers (arrays a trace read) by content, all without running Python;
// attributes library code computes, and sets, by value (that runs their
// getter or __eq__). Any difference sends the call to Python's slower
// re-check (flyrt/dependencies.py), which decides whether the artifact is stale.
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
    // The object a __slots__ member (a member descriptor) holds in `object`.
    void watch_slot(const pybind11::handle& object, const pybind11::handle& member);
    // `getattr(object, name)`, which the trace saw as `value`: the same
    // object, or (`by_value`) an equal one.
    void watch_attribute(const pybind11::handle& object,
                         const pybind11::str& name,
                         const pybind11::handle& value,
                         bool by_value);
    // `object == snapshot` (a set or deque and its copy when traced).
    void watch_equal(const pybind11::handle& object, const pybind11::handle& snapshot);
    // Makes holds() false from now on: the artifact was stale when installed.
    void invalidate() { m_invalid = true; }

    // True while nothing watched changed; no Python code runs.
    bool holds() const;
    std::size_t size() const
    {
        return m_dicts.size() + m_functions.size() + m_lists.size() + m_buffers.size() + m_slots.size() +
               m_attributes.size() + m_equals.size();
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

    struct slot_watch
    {
        pybind11::object object;
        Py_ssize_t offset;
        pybind11::object held; // what the member held (may be null: unset)
    };

    struct attribute_watch
    {
        pybind11::object object;
        pybind11::str name;
        pybind11::object value;
        bool by_value;
    };

    struct equal_watch
    {
        pybind11::object object;
        pybind11::object snapshot;
    };

    std::vector<namespace_watch> m_dicts;
    std::vector<slot_watch> m_slots;
    std::vector<attribute_watch> m_attributes;
    std::vector<equal_watch> m_equals;
    std::vector<function_watch> m_functions;
    std::vector<list_watch> m_lists;
    std::vector<buffer_watch> m_buffers;
    bool m_invalid = false;
};

} // namespace flyrt::dispatch
