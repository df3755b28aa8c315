// A launcher's parameters, and a call's arguments bound to them as Python
// binds them: positional, then by keyword, then the defaults. Runs on every
// call, so inline, its errors out of line (argument_binding.cpp) to keep it
// small enough to be inlined.
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cstdint>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>

namespace flyrt::dispatch
{

// Exported as _core.codes.param_kinds.
enum class param_kind : std::uint8_t
{
    tensor,
    scalar,
    constexpr_,
    stream,
};

// How a value of a scalar parameter is passed; `automatic` follows the
// Python type (bool -> Boolean, int -> Int32 or Int64, float -> Float32).
// Part of the key; exported as _core.codes.scalar_classes.
enum class scalar_class : std::uint8_t
{
    automatic,
    boolean,
    int32,
    int64,
    float32,
    float64,
};

struct param_spec
{
    std::string name;
    param_kind kind = param_kind::scalar;
    scalar_class scalar_type = scalar_class::automatic;
    pybind11::object default_value; // null handle: required
};

// TypeError for a call its signature refuses, as Python words it: the
// launcher `problem` (e.g. "is missing the required argument") 'name'.
[[noreturn]] void raise_argument_error(const char* problem, const std::string& name);
[[noreturn]] void raise_too_many_arguments(std::size_t count, std::size_t given);

// Fills `bound` with one argument per parameter (borrowed: `args`,
// `kwargs` or the defaults hold them).
inline void bind_arguments(PyObject* args,
                           PyObject* kwargs,
                           const std::vector<param_spec>& params,
                           std::vector<PyObject*>& bound)
{
    const std::size_t count = params.size();
    const auto given = static_cast<std::size_t>(PyTuple_GET_SIZE(args));
    if (given > count)
    {
        raise_too_many_arguments(count, given);
    }
    bound.assign(count, nullptr);
    for (std::size_t i = 0; i < given; ++i)
    {
        bound[i] = PyTuple_GET_ITEM(args, static_cast<Py_ssize_t>(i));
    }
    if (kwargs != nullptr && PyDict_GET_SIZE(kwargs) > 0)
    {
        Py_ssize_t position = 0;
        PyObject* name_object;
        PyObject* value;
        while (PyDict_Next(kwargs, &position, &name_object, &value))
        {
            const char* name = PyUnicode_AsUTF8(name_object);
            std::size_t i = 0;
            while (i < count && params[i].name != name)
            {
                ++i;
            }
            if (i == count)
            {
                raise_argument_error("got an unexpected keyword argument", name);
            }
            if (bound[i] != nullptr)
            {
                raise_argument_error("got multiple values for argument", name);
            }
            bound[i] = value;
        }
    }
    for (std::size_t i = 0; i < count; ++i)
    {
        if (bound[i] == nullptr)
        {
            if (!params[i].default_value)
            {
                raise_argument_error("is missing the required argument", params[i].name);
            }
            bound[i] = params[i].default_value.ptr();
        }
    }
}

} // namespace flyrt::dispatch
