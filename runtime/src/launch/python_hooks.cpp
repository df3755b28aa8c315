#include "python_hooks.hpp"

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <pybind11/pybind11.h>

#include "blocking.hpp"

namespace flyrt::launch
{
namespace
{

// Around a long CPU launch: the GIL, when this thread holds it, goes to the
// other Python threads (comm handlers, the user's) until the launch returns.
void* release_gil()
{
    return PyGILState_Check() ? PyEval_SaveThread() : nullptr;
}

void reacquire_gil(void* released)
{
    if (released != nullptr)
    {
        PyEval_RestoreThread(static_cast<PyThreadState*>(released));
    }
}

} // namespace

// Asked between pieces of a long CPU launch, or while a GPU launch's report
// is awaited, the thread perhaps without the GIL.
bool python_interrupted()
{
    pybind11::gil_scoped_acquire gil;
    return PyErr_CheckSignals() != 0;
}

void install_python_hooks()
{
    set_interrupt_check(&python_interrupted);
    set_blocking_section_hooks({&release_gil, &reacquire_gil});
}

} // namespace flyrt::launch
