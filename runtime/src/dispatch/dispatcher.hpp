// The launcher's call path: bind arguments, build the specialization key,
// find the compiled artifact and run it, all in C++. Python runs only on a
// cache miss (to trace and compile), for arguments numpy cannot describe
// (e.g. torch tensors, converted once per call), or while tracing (a
// launcher called inside another trace is inlined by Python).
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <pybind11/pybind11.h>

#include "../jit/jit_engine.hpp"
#include "../launch/device_kernel.hpp"
#include "dependency_guard.hpp"
#include "tensor_view.hpp"

namespace flyrt::dispatch
{

enum class param_kind : std::uint8_t
{
    tensor,
    scalar,
    constexpr_,
    stream,
};

// How a value of a scalar parameter is passed; `automatic` follows the
// Python type (bool -> Boolean, int -> Int32 or Int64, float -> Float32).
enum class scalar_class : std::uint8_t
{
    automatic,
    boolean,
    int32,
    int64,
    float32,
    float64,
};

struct param_spec
{
    std::string name;
    param_kind kind = param_kind::scalar;
    scalar_class scalar_type = scalar_class::automatic;
    pybind11::object default_value; // null handle: required
};

// Where a launcher's kernels run; key codes (flyrt/targets.py), also the
// values of FLYDSL_TARGET after "auto".
enum class target_choice : std::int8_t
{
    automatic = -1, // by the tensors: CUDA tensors run on CUDA, ROCm ones on HIP, else the CPU
    cpu = 0,
    cuda = 1,
    hip = 2,
};

// The target every launcher without its own choice runs on.
void set_default_target(target_choice choice);
target_choice default_target();

// Whether kernels compile with bounds checks: this process's choice (1 on,
// 0 off), or with -1 (the start) what FLYDSL_DEBUG_BOUNDS says (on when it
// is unset), read on every call since the user may flip it between calls.
// Part of the key.
void set_bounds_checks(int choice);
bool bounds_checks();

// Compiled code for one specialization, and what it was compiled from.
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

struct cache_counters
{
    std::uint64_t hits = 0;
    std::uint64_t misses = 0;
    std::uint64_t compiles = 0;
    std::uint64_t evictions = 0;
};

using key_type = std::vector<std::int64_t>;

struct key_hash
{
    std::size_t operator()(const key_type& key) const noexcept;
};

// True while a Python trace runs; launchers then inline instead of launching.
void set_tracing(bool tracing);
bool tracing();

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
    // (bound arguments, key) of a call for `target` without running it, for
    // compiling ahead (host arrays stand for device tensors).
    pybind11::tuple specialize_for(PyObject* args, PyObject* kwargs, target_choice target);

    const cache_counters& counters() const { return m_counters; }
    std::size_t size() const { return m_cache.size(); }
    // Drops every artifact (counted as evictions); returns how many.
    std::size_t clear();
    // Drops the artifact of one key; returns whether it existed.
    bool evict(const key_type& key);
    std::vector<key_type> keys() const;
    std::vector<std::pair<key_type, std::shared_ptr<artifact>>> entries() const;
    const std::vector<param_spec>& params() const { return m_params; }
    // This launcher's own target, over the default one.
    void set_target(target_choice choice) { m_target = choice; }
    target_choice target() const { return m_target; }

private:
    struct call_state;
    class scratch;

    // Binds a call's arguments and describes them into `state`: key and slots.
    void specialize(PyObject* args, PyObject* kwargs, call_state& state);
    // Raises when the artifact stores into an argument that is read-only.
    void refuse_read_only_outputs(const artifact& found, const call_state& state) const;
    // Fills `state` from one bound argument; false: not representable here.
    void describe(std::size_t index, PyObject* value, call_state& state);
    void describe_tensor(std::size_t index, PyObject* value, call_state& state);
    void describe_scalar(std::size_t index, PyObject* value, call_state& state);
    void describe_constexpr(PyObject* value, call_state& state);
    void describe_stream(std::size_t index, PyObject* value, call_state& state);
    // Picks the call's target and device from its tensors; fills the key's prefix.
    void choose_target(call_state& state);

    std::string m_name;
    target_choice m_target = target_choice::automatic;
    std::vector<param_spec> m_params;
    pybind11::object m_compile;
    pybind11::object m_inline;
    pybind11::object m_adapt;
    pybind11::object m_revalidate;
    pybind11::dict m_constexpr_ids; // non-integer Constexpr values -> small ids
    std::unordered_map<key_type, std::shared_ptr<artifact>, key_hash> m_cache;
    cache_counters m_counters;
};

} // namespace flyrt::dispatch
