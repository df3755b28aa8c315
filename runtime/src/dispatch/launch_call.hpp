// Running a call's artifact, and the Python exception a launch's status
// stands for; waiting for launched CUDA work, which reports the same way.
// The launch runs on every call, so inline.
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>

#include "../launch/compile_only.hpp"
#include "../launch/device_kernel.hpp"
#include "../launch/kernel_output.hpp"
#include "argument_binding.hpp"
#include "artifact.hpp"
#include "specialization_key.hpp"
#include "target_choice.hpp"
#include "tensor_view.hpp"

namespace flyrt::dispatch
{

// Raises a non-zero launch status as KeyboardInterrupt (an interrupt,
// already set by the signal handler or set here), IndexError (a kernel's
// report) or RuntimeError (a failure, its message after `failure_prefix`).
[[noreturn]] void raise_launch_status(std::int32_t status, const std::string& failure_prefix);

// Writes what kernels printed to Python's sys.stdout and flushes it
// (launch/kernel_output.hpp).
void deliver_kernel_output();

// ValueError when `found` stores into an argument whose array is read-only.
inline void refuse_read_only_outputs(const artifact& found,
                                     const call_state& state,
                                     const std::vector<param_spec>& params,
                                     const std::string& launcher)
{
    for (const std::size_t param : state.read_only)
    {
        if (std::find(found.written_params.begin(), found.written_params.end(), param) !=
            found.written_params.end())
        {
            throw pybind11::value_error(
                "argument '" + params[param].name + "': launcher " + launcher +
                " stores into it, and the array is read-only (its WRITEABLE flag is off)");
        }
    }
}

// Runs `found`'s entry on the call's slots: on a GPU, on the stream torch
// calls current there (a ROCm torch's is a HIP stream).
inline void launch_call(const artifact& found,
                        const call_state& state,
                        const placement& where,
                        const std::string& launcher)
{
    if (where.target != target_choice::cpu && !launch::compile_only())
    {
        launch::set_call_stream(torch_current_stream(where.device));
    }
    const std::int32_t status = found.entry(state.slots.data(), found.kernel_table.data());
    if (launch::kernel_output::pending())
    {
        deliver_kernel_output(); // before an error the launch raises: what led to it
    }
    if (status != 0)
    {
        raise_launch_status(status, "launcher " + launcher + ": ");
    }
}

// Waits for `stream` (a stream argument as launchers take one; None:
// torch's current stream) on CUDA device `ordinal` with the GIL released,
// flushes what kernels printed, then raises what checked launches reported
// meanwhile; Ctrl-C
// (KeyboardInterrupt) ends the wait, the GPU's work going on.
void cuda_synchronize(int ordinal, const pybind11::object& stream);

} // namespace flyrt::dispatch
