// Compiled code for one specialization, loaded, and what it was compiled from.
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/pybind11.h>

#include "../jit/jit_engine.hpp"
#include "../launch/device_kernel.hpp"
#include "dependency_guard.hpp"
#include "flyrt/target.hpp"

namespace flyrt::dispatch
{

struct artifact
{
    pybind11::object record() const { return record_ref ? record_ref() : pybind11::none(); }

    std::vector<std::unique_ptr<launch::device_kernel>> kernels; // loaded on the key's device
    std::vector<launch::device_kernel*> kernel_table;            // what the entry gets
    std::shared_ptr<jit::loaded_object> code;
    std::int32_t (*entry)(const std::uint64_t* slots, launch::device_kernel* const* kernels) = nullptr;
    std::uint64_t hits = 0;
    std::shared_ptr<dependency_guard> guard; // null: depends on nothing watched
    // Python's account of the dependencies, weakly: it holds this artifact
    // (for A -> B -> A), and a cycle through C++ is one Python's collector
    // cannot see, so evicted code would never be freed.
    pybind11::object record_ref;
    std::vector<std::size_t> written_params; // tensor parameters its kernels store into
    // (kernel name, PTX or AMD code object) of its kernels, for inspection
    std::vector<std::pair<std::string, std::string>> device_code;
};

// Loads a compile's payload: its device images on `device` (GPU targets,
// compiled for `kernels`), its host code into the JIT, whose `entry` the
// launcher calls. Runs no Python, so callers may release the GIL.
std::shared_ptr<artifact>
load_artifact(const std::string& payload, const std::string& entry, const target& kernels, int device);

} // namespace flyrt::dispatch
