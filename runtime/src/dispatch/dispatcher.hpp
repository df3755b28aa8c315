// The launcher's call path: bind arguments, build the specialization key,
// find the compiled artifact and run it, all in C++. Python runs only on a
// cache miss (to trace and compile), for arguments numpy cannot describe
// (e.g. torch tensors, converted once per call), or while tracing (a
// launcher called inside another trace is inlined by Python).
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <string>
#include <vector>

#include <pybind11/pybind11.h>

#include "argument_binding.hpp"
#include "artifact_cache.hpp"
#include "specialization_key.hpp"
#include "target_choice.hpp"

namespace flyrt::dispatch
{

class dispatcher
{
public:
    // `compile(bound_args: tuple, key: tuple) -> (Artifact, compiled: bool)`
    // `inline(*args, **kwargs)`: the launcher called during a trace
    // `adapt(value) -> numpy.ndarray`: a tensor numpy cannot see directly
    // `revalidate(record) -> bool`: after the guard saw a change, whether
    //     the artifact still holds (else it is evicted and recompiled)
    dispatcher(std::string name,
               std::vector<param_spec> params,
               pybind11::object compile,
               pybind11::object inline_call,
               pybind11::object adapt,
               pybind11::object revalidate);

    // The launcher's tp_call: `args` a tuple, `kwargs` a dict or null.
    pybind11::object call(PyObject* args, PyObject* kwargs);
    // What a call with these arguments finds, compiled (and loaded) now if
    // it is not yet, without running it: the autotuner compiles its configs
    // on threads at once this way.
    void warmup(PyObject* args, PyObject* kwargs);
    // (bound arguments, key) of a call for `target` without running it, for
    // compiling ahead (host arrays stand for device tensors).
    pybind11::tuple specialize_for(PyObject* args, PyObject* kwargs, target_choice target);
    // The key a call with these arguments looks its artifact up by (its
    // target and device chosen as the call chooses them).
    pybind11::tuple key_of_call(PyObject* args, PyObject* kwargs);

    artifact_cache& cache() { return m_cache; }
    const artifact_cache& cache() const { return m_cache; }
    // This launcher's own target, over the default one.
    void set_target(target_choice choice) { m_target = choice; }
    target_choice target() const { return m_target; }

private:
    class scratch;
    // Chooses where the call runs and writes it into the key.
    placement place(call_state& state) const;
    // The cached artifact for the call's key, compiled on a miss.
    std::shared_ptr<artifact> artifact_for(call_state& state);

    std::string m_name;
    target_choice m_target = target_choice::automatic;
    specializer m_specializer;
    pybind11::object m_compile;
    pybind11::object m_inline;
    pybind11::object m_revalidate;
    artifact_cache m_cache;
};

} // namespace flyrt::dispatch
