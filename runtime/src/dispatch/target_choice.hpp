// Where a call runs: the target asked for, or the one its tensors are on,
// and the device, checked against where its tensors are. Runs on every
// call, so inline.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>

#include "../launch/compile_only.hpp"
#include "../launch/hip/hip_driver.hpp"
#include "argument_binding.hpp"
#include "tensor_view.hpp"

namespace flyrt::dispatch
{

// Where a launcher's kernels run; key codes (exported as
// _core.codes.targets), also the values of FLYDSL_TARGET after "auto".
enum class target_choice : std::int8_t
{
    automatic = -1, // by the tensors: CUDA tensors run on CUDA, ROCm ones on HIP, else the CPU
    cpu = 0,
    cuda = 1,
    hip = 2,
};

// Where one tensor argument of a call lives.
struct tensor_device
{
    std::size_t param;
    device_type type;
    int index;
};

struct placement
{
    target_choice target;
    int device;
};

// The target `asked` (automatic: by the tensors) and the device of a call to
// `launcher` whose tensor arguments are on `devices`; ValueError when they
// cannot all be passed there (flyrt makes no copies).
inline placement choose_target(target_choice asked,
                               const std::vector<tensor_device>& devices,
                               const std::vector<param_spec>& params,
                               const std::string& launcher)
{
    const tensor_device* gpu = nullptr;
    const tensor_device* host = nullptr;
    for (const auto& d : devices)
    {
        const tensor_device*& first = d.type == device_type::host ? host : gpu;
        first = first != nullptr ? first : &d;
    }
    const target_choice by_tensors = gpu == nullptr                   ? target_choice::cpu
                                     : gpu->type == device_type::rocm ? target_choice::hip
                                                                      : target_choice::cuda;
    const target_choice chosen = asked != target_choice::automatic ? asked : by_tensors;
    const char* runs_on = chosen == target_choice::hip ? "HIP" : "CUDA";
    int device = 0;
    if (chosen == target_choice::hip && !launch::compile_only())
    {
        if (const std::string problem = launch::hip::problem(); !problem.empty())
        {
            throw std::runtime_error("launcher " + launcher + " runs on the hip target, but " + problem +
                                     ": the hip target is compile-only here (FLYDSL_COMPILE_ONLY=1 "
                                     "FLYDSL_ARCH=gfx942, or launcher.lower(..., target=\"hip\", arch=...))");
        }
    }
    if (chosen != target_choice::cpu)
    {
        if (host != nullptr && !launch::compile_only())
        {
            throw pybind11::value_error("argument '" + params[host->param].name +
                                        "' is a host array, but launcher " + launcher + " runs on " +
                                        runs_on + (gpu != nullptr ? "" : " (as chosen)") + ": pass a " +
                                        runs_on + " tensor (flyrt makes no copies)");
        }
        for (const auto& d : devices)
        {
            if (d.type != device_type::host && d.type != gpu->type)
            {
                throw pybind11::value_error(
                    "argument '" + params[d.param].name + "' and '" + params[gpu->param].name +
                    "' are on GPUs of two kinds (CUDA and ROCm): a launch runs on one device");
            }
            if (d.type != device_type::host && d.index != gpu->index)
            {
                const std::string kind = gpu->type == device_type::rocm ? "rocm:" : "cuda:";
                throw pybind11::value_error("argument '" + params[d.param].name + "' is on " + kind +
                                            std::to_string(d.index) + " but '" + params[gpu->param].name +
                                            "' is on " + kind + std::to_string(gpu->index) +
                                            ": a launch runs on one device");
            }
        }
        if (gpu != nullptr &&
            gpu->type != (chosen == target_choice::hip ? device_type::rocm : device_type::cuda))
        {
            throw pybind11::value_error("argument '" + params[gpu->param].name +
                                        "' is on a GPU that launcher " + launcher +
                                        " does not run on (it runs on " + runs_on + ", as chosen)");
        }
        device = gpu != nullptr ? gpu->index : 0;
    }
    else if (gpu != nullptr)
    {
        throw pybind11::value_error("argument '" + params[gpu->param].name + "' is on " +
                                    (gpu->type == device_type::rocm ? "rocm:" : "cuda:") +
                                    std::to_string(gpu->index) + ", but launcher " + launcher +
                                    " runs on the CPU (as chosen): pass host arrays, or choose a GPU target");
    }
    return {chosen, device};
}

} // namespace flyrt::dispatch
