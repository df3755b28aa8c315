#include "dependency_guard.hpp"

#include <structmember.h>

#include <cstring>

namespace py = pybind11;

namespace flyrt::dispatch
{
namespace
{

py::object borrowed(PyObject* object)
{
    return object ? py::reinterpret_borrow<py::object>(object) : py::object();
}

std::vector<py::object> cell_contents(PyObject* function)
{
    std::vector<py::object> contents;
    PyObject* closure = PyFunction_GET_CLOSURE(function);
    if (closure != nullptr)
    {
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(closure); ++i)
        {
            contents.push_back(borrowed(PyCell_GET(PyTuple_GET_ITEM(closure, i))));
        }
    }
    return contents;
}

} // namespace

void dependency_guard::watch_namespace(const py::handle& dict_or_class)
{
    PyObject* object = dict_or_class.ptr();
    PyObject* dict = PyType_Check(object) ? reinterpret_cast<PyTypeObject*>(object)->tp_dict : object;
    if (dict == nullptr || !PyDict_Check(dict))
    {
        throw py::type_error("watch_namespace needs a dict or a class");
    }
    m_dicts.push_back({py::reinterpret_borrow<py::object>(object), dict_watch(dict)});
}

void dependency_guard::watch_function(const py::handle& function)
{
    PyObject* f = function.ptr();
    if (!PyFunction_Check(f))
    {
        throw py::type_error("watch_function needs a Python function");
    }
    m_functions.push_back({py::reinterpret_borrow<py::object>(f),
                           borrowed(PyFunction_GET_CODE(f)),
                           borrowed(PyFunction_GET_DEFAULTS(f)),
                           borrowed(PyFunction_GET_KW_DEFAULTS(f)),
                           cell_contents(f)});
}

void dependency_guard::watch_list(const py::handle& list)
{
    if (!PyList_Check(list.ptr()))
    {
        throw py::type_error("watch_list needs a list");
    }
    list_watch w{py::reinterpret_borrow<py::object>(list), {}};
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list.ptr()); ++i)
    {
        w.items.push_back(borrowed(PyList_GET_ITEM(list.ptr(), i)));
    }
    m_lists.push_back(std::move(w));
}

void dependency_guard::watch_buffer(const py::handle& buffer, const py::bytes& contents)
{
    m_buffers.push_back({py::reinterpret_borrow<py::object>(buffer), std::string(contents)});
}

void dependency_guard::watch_slot(const py::handle& object, const py::handle& member)
{
    if (!PyObject_TypeCheck(member.ptr(), &PyMemberDescr_Type))
    {
        throw py::type_error("watch_slot needs a member descriptor");
    }
    const PyMemberDef* definition = reinterpret_cast<PyMemberDescrObject*>(member.ptr())->d_member;
    PyTypeObject* owner = PyDescr_TYPE(member.ptr());
    if (definition->type != T_OBJECT_EX || !PyObject_TypeCheck(object.ptr(), owner))
    {
        throw py::type_error("watch_slot needs an object slot of the object's class");
    }
    PyObject* held =
        *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(object.ptr()) + definition->offset);
    m_slots.push_back({py::reinterpret_borrow<py::object>(object), definition->offset, borrowed(held)});
}

void dependency_guard::watch_attribute(const py::handle& object,
                                       const py::str& name,
                                       const py::handle& value,
                                       bool by_value)
{
    m_attributes.push_back({py::reinterpret_borrow<py::object>(object),
                            name,
                            py::reinterpret_borrow<py::object>(value),
                            by_value});
}

void dependency_guard::watch_equal(const py::handle& object, const py::handle& snapshot)
{
    m_equals.push_back(
        {py::reinterpret_borrow<py::object>(object), py::reinterpret_borrow<py::object>(snapshot)});
}

namespace
{

// Whether `getattr(object, name)` is still `value` (or equal to it); an
// error reading it counts as a change, and is cleared.
bool same_attribute(PyObject* object, PyObject* name, PyObject* value, bool by_value)
{
    PyObject* current = PyObject_GetAttr(object, name);
    if (current == nullptr)
    {
        PyErr_Clear();
        return false;
    }
    int same = current == value ? 1 : 0;
    if (same == 0 && by_value && Py_TYPE(current) == Py_TYPE(value))
    {
        same = PyObject_RichCompareBool(current, value, Py_EQ);
    }
    Py_DECREF(current);
    if (same < 0)
    {
        PyErr_Clear();
    }
    return same == 1;
}

// Whether `buffer`'s bytes, in C order, are `contents` (false if it is no
// longer a readable buffer).
bool same_contents(PyObject* buffer, const std::string& contents)
{
    Py_buffer view;
    if (PyObject_GetBuffer(buffer, &view, PyBUF_RECORDS_RO) != 0)
    {
        PyErr_Clear();
        return false;
    }
    bool same = static_cast<std::size_t>(view.len) == contents.size();
    if (same && PyBuffer_IsContiguous(&view, 'C'))
    {
        same = std::memcmp(view.buf, contents.data(), contents.size()) == 0;
    }
    else if (same)
    {
        std::string copy(contents.size(), '\0');
        same = PyBuffer_ToContiguous(copy.data(), &view, view.len, 'C') == 0 && copy == contents;
        PyErr_Clear();
    }
    PyBuffer_Release(&view);
    return same;
}

} // namespace

bool dependency_guard::holds() const
{
    if (m_invalid)
    {
        return false;
    }
    for (const auto& w : m_buffers)
    {
        if (!same_contents(w.buffer.ptr(), w.contents))
        {
            return false;
        }
    }
    for (const auto& w : m_dicts)
    {
        if (w.dict.changed())
        {
            return false;
        }
    }
    for (const auto& w : m_functions)
    {
        PyObject* f = w.function.ptr();
        if (PyFunction_GET_CODE(f) != w.code.ptr() || PyFunction_GET_DEFAULTS(f) != w.defaults.ptr() ||
            PyFunction_GET_KW_DEFAULTS(f) != w.kwdefaults.ptr())
        {
            return false;
        }
        PyObject* closure = PyFunction_GET_CLOSURE(f);
        const Py_ssize_t cells = closure ? PyTuple_GET_SIZE(closure) : 0;
        if (static_cast<std::size_t>(cells) != w.cells.size())
        {
            return false;
        }
        for (Py_ssize_t i = 0; i < cells; ++i)
        {
            if (PyCell_GET(PyTuple_GET_ITEM(closure, i)) != w.cells[static_cast<std::size_t>(i)].ptr())
            {
                return false;
            }
        }
    }
    for (const auto& w : m_slots)
    {
        PyObject* held = *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(w.object.ptr()) + w.offset);
        if (held != w.held.ptr())
        {
            return false;
        }
    }
    for (const auto& w : m_attributes)
    {
        if (!same_attribute(w.object.ptr(), w.name.ptr(), w.value.ptr(), w.by_value))
        {
            return false;
        }
    }
    for (const auto& w : m_equals)
    {
        const int same = PyObject_RichCompareBool(w.object.ptr(), w.snapshot.ptr(), Py_EQ);
        if (same != 1)
        {
            PyErr_Clear();
            return false;
        }
    }
    for (const auto& w : m_lists)
    {
        PyObject* list = w.list.ptr();
        if (static_cast<std::size_t>(PyList_GET_SIZE(list)) != w.items.size())
        {
            return false;
        }
        for (std::size_t i = 0; i < w.items.size(); ++i)
        {
            if (PyList_GET_ITEM(list, static_cast<Py_ssize_t>(i)) != w.items[i].ptr())
            {
                return false;
            }
        }
    }
    return true;
}

} // namespace flyrt::dispatch
