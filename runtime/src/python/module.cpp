// flyrt._core: the IR builder, verifier, compiler, loader and launcher
// dispatch, as the Python side of flyrt sees them; each area binds itself.
// This file imports numpy's C API (the table dispatch/dtype_codes.hpp uses).
#define PY_ARRAY_UNIQUE_SYMBOL flyrt_numpy_api
#define NPY_NO_DEPRECATED_API NPY_2_0_API_VERSION
#include <numpy/arrayobject.h>

#include <pybind11/pybind11.h>

#include "../launch/python_hooks.hpp"
#include "bind.hpp"

namespace py = pybind11;

PYBIND11_MODULE(_core, m)
{
    if (_import_array() < 0)
    {
        throw py::error_already_set();
    }
    m.doc() = "flyrt's native core: IR, LLVM compilation, JIT loading and launch dispatch.";
    flyrt::launch::install_python_hooks();

    flyrt::python::bind_codes(m);
    flyrt::python::bind_ir(m);
    flyrt::python::bind_target(m);
    flyrt::python::bind_launch(m);
    flyrt::python::bind_jit(m);
    flyrt::python::bind_dispatch(m);
}
