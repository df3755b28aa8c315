#include "launch_call.hpp"

#include <stdexcept>

#include "../launch/launch_status.hpp"

namespace flyrt::dispatch
{

void raise_launch_status(std::int32_t status, const std::string& failure_prefix)
{
    if (status == launch::status_interrupted)
    {
        if (PyErr_Occurred() == nullptr)
        {
            PyErr_SetNone(PyExc_KeyboardInterrupt);
        }
        throw pybind11::error_already_set();
    }
    if (status == launch::status_reported)
    {
        throw pybind11::index_error(launch::last_error());
    }
    throw std::runtime_error(failure_prefix + launch::last_error());
}

} // namespace flyrt::dispatch
