#include "launch_call.hpp"

#include <cstdio>
#include <optional>
#include <stdexcept>

#include "../launch/cuda/cuda_driver.hpp"
#include "../launch/cuda/report_channel.hpp"
#include "../launch/launch_status.hpp"
#include "../launch/python_hooks.hpp"

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

void deliver_kernel_output()
{
    const std::string text = launch::kernel_output::take();
    pybind11::object out = pybind11::module_::import("sys").attr("stdout");
    if (out.is_none())
    {
        return; // no stdout (pythonw, a closed one): nowhere to print, as for print()
    }
    if (!text.empty())
    {
        out.attr("write")(text);
    }
    out.attr("flush")();
}

void cuda_synchronize(int ordinal, const pybind11::object& stream)
{
    launch::cuda::use_device(ordinal); // no driver or no such device: says so before torch is asked
    const std::optional<std::int64_t> handle = stream_handle(stream.ptr(), "stream");
    const std::int64_t raw = handle ? *handle : torch_current_stream(ordinal);
    bool finished = false;
    {
        pybind11::gil_scoped_release unlocked;
        finished = launch::cuda::synchronize(ordinal, raw, &launch::python_interrupted);
    }
    if (!finished)
    {
        throw pybind11::error_already_set();
    }
    // printf of work that ran unwaited for (a replayed CUDA graph) reaches C's stdout now.
    std::fflush(stdout);
    deliver_kernel_output();
    // What checked launches reported, without waiting for them then (report_channel.hpp).
    const std::int32_t reported = launch::cuda::report_channel::take_all(ordinal);
    if (reported != 0)
    {
        raise_launch_status(reported, "");
    }
}

} // namespace flyrt::dispatch
