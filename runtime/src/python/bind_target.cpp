// Targets code is generated for: this CPU, NVIDIA and AMD GPUs.
#include <string>

#include "bind.hpp"
#include "flyrt/target.hpp"

namespace py = pybind11;

namespace flyrt::python
{

void bind_target(py::module_& m)
{
    py::enum_<target_kind>(m, "TargetKind")
        .value("cpu", target_kind::cpu)
        .value("nvptx", target_kind::nvptx)
        .value("amdgpu", target_kind::amdgpu);
    py::class_<target>(m, "Target")
        .def_readonly("kind", &target::kind)
        .def_readonly("triple", &target::triple)
        .def_readonly("cpu", &target::cpu)
        .def_readonly("features", &target::features)
        .def_readonly("warp_size", &target::warp_size)
        .def_readonly("max_threads_per_block", &target::max_threads_per_block)
        .def_readonly("max_shared_bytes", &target::max_shared_bytes)
        .def_readonly("sync_in_while", &target::sync_in_while)
        .def_readonly("matrix_multiply", &target::matrix_multiply)
        .def_property_readonly("is_gpu", &target::is_gpu)
        .def_property_readonly("name", &target::name)
        .def_property_readonly("id", &target::id)
        .def("__repr__", [](const target& t) { return "<flyrt target " + t.id() + ">"; });
    m.def("cpu_target", &cpu_target, py::arg("warp_size"));
    m.def("nvptx_target", &nvptx_target, py::arg("major"), py::arg("minor"));
    m.def("amdgpu_target", &amdgpu_target, py::arg("arch"));
}

} // namespace flyrt::python
