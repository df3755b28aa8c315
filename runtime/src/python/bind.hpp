// The areas of flyrt._core, each bound by its own file (module.cpp calls
// them in this order), and the one conversion two areas share.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <pybind11/pybind11.h>

namespace flyrt::python
{

// Codes C++ and Python share, as _core.codes (bind_codes.cpp).
void bind_codes(pybind11::module_& m);
// IR types, builders and modules (bind_ir.cpp).
void bind_ir(pybind11::module_& m);
// Targets code is generated for (bind_target.cpp).
void bind_target(pybind11::module_& m);
// Launch limits, workers, drivers (bind_launch.cpp).
void bind_launch(pybind11::module_& m);
// Compiled payloads and AMD code objects (bind_jit.cpp).
void bind_jit(pybind11::module_& m);
// Dispatchers, artifacts, dependency guards and the call's settings (bind_dispatch.cpp).
void bind_dispatch(pybind11::module_& m);

// (kernel name, PTX text or AMD code object bytes) of each device image.
pybind11::list device_code_list(const std::vector<std::pair<std::string, std::string>>& images);

} // namespace flyrt::python
