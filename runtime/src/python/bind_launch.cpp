// Launching: what loaded kernels hold, the CPU's workers and launch limits,
// compile-only mode, the CUDA and HIP drivers.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <pybind11/stl.h>

#include "../dispatch/launch_call.hpp"
#include "../launch/compile_only.hpp"
#include "../launch/cpu/cpu_launch.hpp"
#include "../launch/cuda/cuda_driver.hpp"
#include "../launch/device_kernel.hpp"
#include "../launch/hip/hip_driver.hpp"
#include "../launch/hip/kernel_arguments.hpp"
#include "../launch/launch_status.hpp"
#include "bind.hpp"

namespace py = pybind11;

namespace flyrt::python
{
namespace
{

py::dict device_description(int ordinal)
{
    const launch::cuda::device_info info = launch::cuda::device(ordinal);
    py::dict out;
    out["name"] = info.name;
    out["major"] = info.major;
    out["minor"] = info.minor;
    out["multiprocessors"] = info.multiprocessors;
    out["max_threads_per_block"] = info.max_threads_per_block;
    out["max_shared_per_block"] = info.max_shared_per_block;
    out["l2_bytes"] = info.l2_bytes;
    return out;
}

} // namespace

void bind_launch(py::module_& m)
{
    py::class_<launch::kernel_resources>(
        m, "KernelResources", "What a loaded GPU kernel holds on its device.")
        .def_readonly("kernel", &launch::kernel_resources::kernel)
        .def_readonly("device", &launch::kernel_resources::device)
        .def_readonly("registers", &launch::kernel_resources::registers)
        .def_readonly("static_shared_bytes", &launch::kernel_resources::static_shared_bytes)
        .def_readonly("local_bytes", &launch::kernel_resources::local_bytes)
        .def_readonly("constant_bytes", &launch::kernel_resources::constant_bytes)
        .def_readonly("image_kind", &launch::kernel_resources::image_kind)
        .def_readonly("image_bytes", &launch::kernel_resources::image_bytes)
        .def_readonly("device_bytes", &launch::kernel_resources::device_bytes);
    m.def("set_worker_count", &launch::set_worker_count);
    m.def("worker_count", &launch::worker_count);
    m.def(
        "geometry_problem",
        [](const std::array<std::int32_t, 3>& grid,
           const std::array<std::int32_t, 3>& block,
           std::int32_t smem,
           const std::array<std::int32_t, 3>& known_block)
        {
            launch::geometry g{};
            for (int d = 0; d < 3; ++d)
            {
                g.grid[d] = static_cast<std::uint32_t>(grid[d]);
                g.block[d] = static_cast<std::uint32_t>(block[d]);
            }
            g.smem_bytes = static_cast<std::uint32_t>(smem);
            const bool known = known_block[0] > 0;
            return launch::geometry_problem(g, known ? known_block.data() : nullptr, launch::cpu_limits());
        },
        py::arg("grid"),
        py::arg("block"),
        py::arg("smem"),
        py::arg("known_block"),
        "Why the CPU launcher refuses a launch of this geometry, in its words (\"\" when it does not).");
    m.def("hip_problem", &launch::hip::problem, "Why HIP cannot launch here (\"\" when it can).");
    m.def("set_compile_only", &launch::set_compile_only);
    m.def(
        "pack_kernel_arguments",
        [](const py::bytes& code_object, const std::string& kernel, const std::vector<std::uint64_t>& slots)
        { return py::bytes(launch::hip::packed_kernel_arguments(std::string(code_object), kernel, slots)); },
        py::arg("code_object"),
        py::arg("kernel"),
        py::arg("slots"),
        "The argument buffer a launch of `kernel` packs from `slots`, as the AMD code object places them.");
    m.def("cuda_available", &launch::cuda::available, "Whether a CUDA driver with a device answers.");
    m.def("cuda_device", &device_description, py::arg("ordinal"));
    m.def("cuda_synchronize",
          &dispatch::cuda_synchronize,
          py::arg("ordinal"),
          py::arg("stream") = py::none(),
          "Waits for a CUDA stream's work; an interrupt ends the wait (KeyboardInterrupt).");
}

} // namespace flyrt::python
