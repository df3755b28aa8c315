// A launcher's parameters, and a call's arguments bound to them as Python
// binds them: positional, then by keyword, then the defaults. Runs on every
// call, so inline.
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

// Fills `bound` with one argument per parameter (borrowed: `args`,
// `kwargs` or the defaults hold them); TypeError as Python words it for a
// call its signature refuses.
inline void bind_arguments(PyObject* args,
                           PyObject* kwargs,
                           const std::vector<param_spec>& params,
                           std::vector<PyObject*>& bound)
{
    const std::size_t count = params.size();
    const auto given = static_cast<std::size_t>(PyTuple_GET_SIZE(args));
    if (given > count)
    {
        throw pybind11::type_error("the launcher takes " + std::to_string(count) + " arguments but " +
                                   std::to_string(given) + " were given");
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
                throw pybind11::type_error("the launcher got an unexpected keyword argument '" +
                                           std::string(name) + "'");
            }
            if (bound[i] != nullptr)
            {
                throw pybind11::type_error("the launcher got multiple values for argument '" +
                                           std::string(name) + "'");
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
                throw pybind11::type_error("the launcher is missing the required argument '" +
                                           params[i].name + "'");
            }
            bound[i] = params[i].default_value.ptr();
        }
    }
}

} // namespace flyrt::dispatch
