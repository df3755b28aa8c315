// A tensor's element type as its key code: the IR's scalar kind, or an FP8
// code after them. Read on every call, so inline. Includes numpy's C API as
// a user of the table python/module.cpp imports (NO_IMPORT_ARRAY).
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL flyrt_numpy_api
#define NPY_NO_DEPRECATED_API NPY_2_0_API_VERSION
#include <numpy/arrayobject.h>

#include <cstdint>

#include "flyrt/ir.hpp"

namespace flyrt::dispatch
{

// FP8 tensors' key codes follow the IR's scalar kinds, one per format
// (exported as _core.codes.fp8_dtypes).
constexpr std::int64_t fp8_code_base = 100;

constexpr std::int64_t fp8_dtype_code(ir::fp8_format format)
{
    return fp8_code_base + static_cast<std::int64_t>(format) -
           static_cast<std::int64_t>(ir::fp8_format::e4m3fnuz);
}

// FP8 tensors are uint8 arrays whose dtype carries metadata {"fp8": format}
// (flyrt/fp8.py); -1 for any other dtype.
inline std::int64_t fp8_code(const PyArray_Descr* d)
{
    PyObject* metadata = PyDataType_METADATA(d);
    if (metadata == nullptr || !PyDict_Check(metadata))
    {
        return -1;
    }
    PyObject* format = PyDict_GetItemString(metadata, "fp8");
    if (format == nullptr || !PyUnicode_Check(format))
    {
        return -1;
    }
    if (PyUnicode_CompareWithASCIIString(format, "e4m3fnuz") == 0)
    {
        return fp8_dtype_code(ir::fp8_format::e4m3fnuz);
    }
    if (PyUnicode_CompareWithASCIIString(format, "e4m3fn") == 0)
    {
        return fp8_dtype_code(ir::fp8_format::e4m3fn);
    }
    return -1;
}

// numpy has no bfloat16: bf16 tensors are uint16 arrays whose dtype carries
// {"flyrt_dtype": "bfloat16"} (torch bfloat16 tensors are viewed that way).
inline bool is_bfloat16(const PyArray_Descr* d)
{
    PyObject* metadata = PyDataType_METADATA(d);
    if (metadata == nullptr || !PyDict_Check(metadata))
    {
        return false;
    }
    PyObject* name = PyDict_GetItemString(metadata, "flyrt_dtype");
    return name != nullptr && PyUnicode_Check(name) &&
           PyUnicode_CompareWithASCIIString(name, "bfloat16") == 0;
}

// The key code of an array's dtype; -1 for one kernels cannot take.
inline std::int64_t dtype_code(PyArrayObject* array)
{
    const PyArray_Descr* d = PyArray_DESCR(array);
    const auto size = PyDataType_ELSIZE(d);
    if (d->kind == 'u' && size == 1)
    {
        const std::int64_t fp8 = fp8_code(d);
        if (fp8 >= 0)
        {
            return fp8;
        }
    }
    if (d->kind == 'u' && size == 2 && is_bfloat16(d))
    {
        return static_cast<std::int64_t>(ir::scalar::bf16);
    }
    using ir::scalar;
    scalar s;
    switch (d->kind)
    {
    case 'b':
        s = scalar::i1;
        break;
    case 'i':
        s = size == 1 ? scalar::i8 : size == 2 ? scalar::i16 : size == 4 ? scalar::i32 : scalar::i64;
        break;
    case 'u':
        s = size == 1 ? scalar::u8 : size == 2 ? scalar::u16 : size == 4 ? scalar::u32 : scalar::u64;
        break;
    case 'f':
        if (size == 2)
        {
            s = scalar::f16;
        }
        else if (size == 4)
        {
            s = scalar::f32;
        }
        else if (size == 8)
        {
            s = scalar::f64;
        }
        else
        {
            return -1;
        }
        break;
    default:
        return -1;
    }
    return static_cast<std::int64_t>(s);
}

} // namespace flyrt::dispatch
