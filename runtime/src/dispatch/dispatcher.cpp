#include "dispatcher.hpp"

#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL flyrt_numpy_api
#define NPY_NO_DEPRECATED_API NPY_2_0_API_VERSION
#include <numpy/arrayobject.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "../launch/compile_only.hpp"
#include "../launch/hip/hip_driver.hpp"
#include "../launch/launch_status.hpp"
#include "flyrt/ir.hpp"

namespace py = pybind11;

namespace flyrt::dispatch
{
namespace
{

thread_local bool t_tracing = false;
target_choice g_default_target = target_choice::automatic;

// Leading entry of each parameter's part of the key (decoded by Python:
// flyrt/specialization.py).
enum key_tag : std::int64_t
{
    tag_tensor = 1,
    tag_scalar = 2,
    tag_const_int = 3,
    tag_const_object = 4,
    tag_const_bool = 5,
    tag_stream = 6,
};

// FP8 tensors are uint8 arrays whose dtype carries metadata {"fp8": format}
// (flyrt/fp8.py); their key codes follow the IR's scalar kinds.
constexpr std::int64_t fp8_code_base = 100;

std::int64_t fp8_code(const PyArray_Descr* d)
{
    PyObject* metadata = PyDataType_METADATA(d);
    if (metadata == nullptr || !PyDict_Check(metadata))
    {
        return -1;
    }
    PyObject* format = PyDict_GetItemString(metadata, "fp8");
    if (format == nullptr || !PyUnicode_Check(format))
    {
        return -1;
    }
    if (PyUnicode_CompareWithASCIIString(format, "e4m3fnuz") == 0)
    {
        return fp8_code_base;
    }
    if (PyUnicode_CompareWithASCIIString(format, "e4m3fn") == 0)
    {
        return fp8_code_base + 1;
    }
    return -1;
}

// numpy has no bfloat16: bf16 tensors are uint16 arrays whose dtype carries
// {"flyrt_dtype": "bfloat16"} (torch bfloat16 tensors are viewed that way).
bool is_bfloat16(const PyArray_Descr* d)
{
    PyObject* metadata = PyDataType_METADATA(d);
    if (metadata == nullptr || !PyDict_Check(metadata))
    {
        return false;
    }
    PyObject* name = PyDict_GetItemString(metadata, "flyrt_dtype");
    return name != nullptr && PyUnicode_Check(name) &&
           PyUnicode_CompareWithASCIIString(name, "bfloat16") == 0;
}

std::int64_t dtype_code(PyArrayObject* array)
{
    const PyArray_Descr* d = PyArray_DESCR(array);
    const auto size = PyDataType_ELSIZE(d);
    if (d->kind == 'u' && size == 1)
    {
        const std::int64_t fp8 = fp8_code(d);
        if (fp8 >= 0)
        {
            return fp8;
        }
    }
    if (d->kind == 'u' && size == 2 && is_bfloat16(d))
    {
        return static_cast<std::int64_t>(ir::scalar::bf16);
    }
    using ir::scalar;
    scalar s;
    switch (d->kind)
    {
    case 'b':
        s = scalar::i1;
        break;
    case 'i':
        s = size == 1 ? scalar::i8 : size == 2 ? scalar::i16 : size == 4 ? scalar::i32 : scalar::i64;
        break;
    case 'u':
        s = size == 1 ? scalar::u8 : size == 2 ? scalar::u16 : size == 4 ? scalar::u32 : scalar::u64;
        break;
    case 'f':
        if (size == 2)
        {
            s = scalar::f16;
        }
        else if (size == 4)
        {
            s = scalar::f32;
        }
        else if (size == 8)
        {
            s = scalar::f64;
        }
        else
        {
            return -1;
        }
        break;
    default:
        return -1;
    }
    return static_cast<std::int64_t>(s);
}

std::atomic<int> g_bounds_choice{-1};

std::uint64_t bits_of_float(float value)
{
    std::uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    return bits;
}

std::uint64_t bits_of_double(double value)
{
    std::uint64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    return bits;
}

} // namespace

void set_bounds_checks(int choice)
{
    g_bounds_choice = choice;
}

bool bounds_checks()
{
    const int choice = g_bounds_choice;
    if (choice >= 0)
    {
        return choice != 0;
    }
    // On unless the variable says off ("0", "off", "false", "no"): an index
    // out of bounds is an IndexError at its line in every process, scripts
    // and pytest too, as Julia checks bounds unless told not to.
    const char* bounds = std::getenv("FLYDSL_DEBUG_BOUNDS");
    if (bounds == nullptr)
    {
        return true;
    }
    const std::string said(bounds);
    return !(said == "0" || said == "off" || said == "false" || said == "no" || said == "OFF" ||
             said == "False");
}

void set_default_target(target_choice choice)
{
    g_default_target = choice;
}

target_choice default_target()
{
    return g_default_target;
}

void set_tracing(bool tracing)
{
    t_tracing = tracing;
}

bool tracing()
{
    return t_tracing;
}

std::size_t key_hash::operator()(const key_type& key) const noexcept
{
    std::uint64_t h = 1469598103934665603ull;
    for (std::int64_t part : key)
    {
        h = (h ^ static_cast<std::uint64_t>(part)) * 1099511628211ull;
    }
    return static_cast<std::size_t>(h);
}

struct dispatcher::call_state
{
    struct tensor_device
    {
        std::size_t param;
        device_type type;
        int index;
    };

    std::vector<PyObject*> bound; // borrowed: one argument per parameter
    key_type key;
    std::vector<std::uint64_t> slots;
    std::vector<py::object> keep_alive; // arrays made by the adapter
    std::vector<tensor_device> devices; // where each tensor argument lives
    std::vector<std::size_t> read_only; // parameters whose array is not writeable

    void clear()
    {
        bound.clear();
        key.clear();
        slots.clear();
        keep_alive.clear();
        read_only.clear();
        devices.clear();
    }

    py::tuple bound_tuple() const
    {
        py::tuple out(bound.size());
        for (std::size_t i = 0; i < bound.size(); ++i)
        {
            out[i] = py::handle(bound[i]);
        }
        return out;
    }

    py::tuple key_tuple() const
    {
        py::tuple out(key.size());
        for (std::size_t i = 0; i < key.size(); ++i)
        {
            out[i] = py::int_(key[i]);
        }
        return out;
    }
};

// Per-thread call states reused across calls, so the hit path allocates
// nothing; nested calls (a launcher called from a compile) take the next one.
class dispatcher::scratch
{
public:
    scratch()
    {
        if (t_depth == t_states.size())
        {
            t_states.push_back(std::make_unique<call_state>());
        }
        m_state = t_states[t_depth++].get();
    }
    ~scratch()
    {
        m_state->clear();
        --t_depth;
    }
    call_state& operator*() { return *m_state; }

private:
    call_state* m_state;
    static thread_local std::vector<std::unique_ptr<call_state>> t_states;
    static thread_local std::size_t t_depth;
};

thread_local std::vector<std::unique_ptr<dispatcher::call_state>> dispatcher::scratch::t_states;
thread_local std::size_t dispatcher::scratch::t_depth = 0;

dispatcher::dispatcher(std::string name,
                       std::vector<param_spec> params,
                       py::object compile,
                       py::object inline_call,
                       py::object adapt,
                       py::object revalidate)
    : m_name(std::move(name)), m_params(std::move(params)), m_compile(std::move(compile)),
      m_inline(std::move(inline_call)), m_adapt(std::move(adapt)), m_revalidate(std::move(revalidate))
{
}

void dispatcher::describe_tensor(std::size_t index, PyObject* value, call_state& state)
{
    const std::string& name = m_params[index].name;
    tensor_view view;
    if (!PyArray_Check(value) && !describe_torch_cuda(value, name, view))
    {
        py::object adapted = m_adapt(py::handle(value), name);
        state.keep_alive.push_back(adapted);
        value = adapted.ptr();
        if (!PyArray_Check(value))
        {
            describe_device_tuple(value, name, view);
        }
    }
    if (PyArray_Check(value))
    {
        auto* array = reinterpret_cast<PyArrayObject*>(value);
        view.dtype = dtype_code(array);
        if (view.dtype < 0)
        {
            throw py::type_error(
                "argument '" + name + "': unsupported tensor dtype " +
                py::str(py::handle(reinterpret_cast<PyObject*>(PyArray_DESCR(array)))).cast<std::string>());
        }
        if (!PyArray_ISNOTSWAPPED(array) && PyArray_ITEMSIZE(array) > 1)
        {
            // Kernels read elements as this machine stores them; converting
            // would copy behind the user's back (and lose stores).
            throw py::value_error("argument '" + name + "': its bytes are " +
                                  (PyArray_DESCR(array)->byteorder == '>' ? "big" : "little") +
                                  "-endian, not this machine's order: pass " + name + ".astype(" + name +
                                  ".dtype.newbyteorder('='))");
        }
        view.ndim = PyArray_NDIM(array);
        if (view.ndim > tensor_view::max_dims)
        {
            throw py::type_error("argument '" + name + "': tensors have at most " +
                                 std::to_string(tensor_view::max_dims) + " dimensions");
        }
        const npy_intp itemsize = PyArray_ITEMSIZE(array);
        for (int d = 0; d < view.ndim; ++d)
        {
            if (PyArray_STRIDES(array)[d] % itemsize != 0)
            {
                throw py::value_error(
                    "argument '" + name +
                    "': strides that are not a multiple of the element size are not supported");
            }
            view.shape[d] = PyArray_DIMS(array)[d];
            view.strides[d] = PyArray_STRIDES(array)[d] / itemsize;
        }
        view.data = reinterpret_cast<std::uint64_t>(PyArray_DATA(array));
        view.contiguous = PyArray_IS_C_CONTIGUOUS(array) != 0;
        if (!PyArray_ISWRITEABLE(array))
        {
            state.read_only.push_back(index);
        }
    }
    state.devices.push_back({index, view.device, view.device_index});
    const std::int64_t index_bits = fits_int32(view) ? 32 : 64;
    // The data's alignment, up to 16 bytes (a vector access's widest): the
    // kernels know it instead of trusting `align=` promises.
    const std::uint64_t lowest_bit = view.data & (~view.data + 1);
    const auto alignment = static_cast<std::int64_t>(lowest_bit == 0 || lowest_bit > 16 ? 16 : lowest_bit);
    state.key.insert(state.key.end(),
                     {tag_tensor, view.dtype, view.ndim, view.contiguous ? 1 : 0, index_bits, alignment});
    state.slots.push_back(view.data);
    for (int d = 0; d < view.ndim; ++d)
    {
        state.slots.push_back(static_cast<std::uint64_t>(view.shape[d]));
    }
    for (int d = 0; d < view.ndim; ++d)
    {
        state.slots.push_back(static_cast<std::uint64_t>(view.strides[d]));
    }
}

void dispatcher::describe_stream(std::size_t index, PyObject* value, call_state& state)
{
    const std::optional<std::int64_t> handle = stream_handle(value, m_params[index].name);
    state.key.push_back(tag_stream);
    state.slots.push_back(static_cast<std::uint64_t>(handle ? *handle : ir::default_stream));
}

void dispatcher::choose_target(call_state& state)
{
    const target_choice asked = m_target != target_choice::automatic ? m_target : default_target();
    const call_state::tensor_device* gpu = nullptr;
    const call_state::tensor_device* host = nullptr;
    for (const auto& d : state.devices)
    {
        const call_state::tensor_device*& first = d.type == device_type::host ? host : gpu;
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
            throw std::runtime_error("launcher " + m_name + " runs on the hip target, but " + problem +
                                     ": the hip target is compile-only here (FLYDSL_COMPILE_ONLY=1 "
                                     "FLYDSL_ARCH=gfx942, or launcher.lower(..., target=\"hip\", arch=...))");
        }
    }
    if (chosen != target_choice::cpu)
    {
        if (host != nullptr && !launch::compile_only())
        {
            throw py::value_error("argument '" + m_params[host->param].name +
                                  "' is a host array, but launcher " + m_name + " runs on " + runs_on +
                                  (gpu != nullptr ? "" : " (as chosen)") + ": pass a " + runs_on +
                                  " tensor (flyrt makes no copies)");
        }
        for (const auto& d : state.devices)
        {
            if (d.type != device_type::host && d.type != gpu->type)
            {
                throw py::value_error(
                    "argument '" + m_params[d.param].name + "' and '" + m_params[gpu->param].name +
                    "' are on GPUs of two kinds (CUDA and ROCm): a launch runs on one device");
            }
            if (d.type != device_type::host && d.index != gpu->index)
            {
                const std::string kind = gpu->type == device_type::rocm ? "rocm:" : "cuda:";
                throw py::value_error("argument '" + m_params[d.param].name + "' is on " + kind +
                                      std::to_string(d.index) + " but '" + m_params[gpu->param].name +
                                      "' is on " + kind + std::to_string(gpu->index) +
                                      ": a launch runs on one device");
            }
        }
        if (gpu != nullptr &&
            gpu->type != (chosen == target_choice::hip ? device_type::rocm : device_type::cuda))
        {
            throw py::value_error("argument '" + m_params[gpu->param].name + "' is on a GPU that launcher " +
                                  m_name + " does not run on (it runs on " + runs_on + ", as chosen)");
        }
        device = gpu != nullptr ? gpu->index : 0;
    }
    else if (gpu != nullptr)
    {
        throw py::value_error("argument '" + m_params[gpu->param].name + "' is on " +
                              (gpu->type == device_type::rocm ? "rocm:" : "cuda:") +
                              std::to_string(gpu->index) + ", but launcher " + m_name +
                              " runs on the CPU (as chosen): pass host arrays, or choose a GPU target");
    }
    state.key[1] = static_cast<std::int64_t>(chosen);
    state.key[2] = device;
}

void dispatcher::describe_scalar(std::size_t index, PyObject* value, call_state& state)
{
    const param_spec& p = m_params[index];
    scalar_class cls = p.scalar_type;
    if (cls == scalar_class::automatic)
    {
        if (PyBool_Check(value))
        {
            cls = scalar_class::boolean;
        }
        else if (PyLong_Check(value))
        {
            int overflow = 0;
            const long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
            cls = (overflow == 0 && v >= INT32_MIN && v <= INT32_MAX) ? scalar_class::int32
                                                                      : scalar_class::int64;
        }
        else if (PyFloat_Check(value))
        {
            cls = scalar_class::float32;
        }
        else
        {
            throw py::type_error("argument '" + p.name + "' must be a bool, int or float, not " +
                                 std::string(Py_TYPE(value)->tp_name));
        }
    }
    std::uint64_t slot = 0;
    switch (cls)
    {
    case scalar_class::boolean:
    {
        const int truth = PyObject_IsTrue(value);
        if (truth < 0)
        {
            throw py::error_already_set();
        }
        slot = static_cast<std::uint64_t>(truth);
        break;
    }
    case scalar_class::int32:
    case scalar_class::int64:
    {
        if (PyFloat_Check(value))
        {
            throw py::type_error("argument '" + p.name + "' is an integer parameter; got a float");
        }
        int overflow = 0;
        const long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
        if (v == -1 && PyErr_Occurred())
        {
            throw py::error_already_set();
        }
        const bool int32 = cls == scalar_class::int32;
        if (overflow != 0 || (int32 && (v < INT32_MIN || v > INT32_MAX)))
        {
            throw py::value_error("argument '" + p.name + "' = " + py::str(value).cast<std::string>() +
                                  " does not fit in " + (int32 ? "Int32" : "Int64"));
        }
        slot = static_cast<std::uint64_t>(v);
        break;
    }
    case scalar_class::float32:
    case scalar_class::float64:
    {
        const double v = PyFloat_AsDouble(value);
        if (v == -1.0 && PyErr_Occurred())
        {
            throw py::error_already_set();
        }
        slot = cls == scalar_class::float32 ? bits_of_float(static_cast<float>(v)) : bits_of_double(v);
        break;
    }
    case scalar_class::automatic:
        break;
    }
    state.key.insert(state.key.end(), {tag_scalar, static_cast<std::int64_t>(cls)});
    state.slots.push_back(slot);
}

void dispatcher::describe_constexpr(PyObject* value, call_state& state)
{
    if (PyBool_Check(value))
    {
        state.key.insert(state.key.end(), {tag_const_bool, value == Py_True ? 1 : 0});
        return;
    }
    if (PyLong_CheckExact(value))
    {
        int overflow = 0;
        const long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
        if (overflow == 0)
        {
            state.key.insert(state.key.end(), {tag_const_int, v});
            return;
        }
    }
    // Anything else hashable: identified by (type, value), so 1 and 1.0 differ.
    py::tuple identity =
        py::make_tuple(py::handle(reinterpret_cast<PyObject*>(Py_TYPE(value))), py::handle(value));
    py::object id = m_constexpr_ids.attr("get")(identity);
    if (id.is_none())
    {
        id = py::int_(py::len(m_constexpr_ids));
        m_constexpr_ids[identity] = id;
    }
    state.key.insert(state.key.end(), {tag_const_object, id.cast<std::int64_t>()});
}

void dispatcher::describe(std::size_t index, PyObject* value, call_state& state)
{
    switch (m_params[index].kind)
    {
    case param_kind::tensor:
        describe_tensor(index, value, state);
        break;
    case param_kind::scalar:
        describe_scalar(index, value, state);
        break;
    case param_kind::constexpr_:
        describe_constexpr(value, state);
        break;
    case param_kind::stream:
        describe_stream(index, value, state);
        break;
    }
}

void dispatcher::specialize(PyObject* args, PyObject* kwargs, call_state& state)
{
    const std::size_t count = m_params.size();
    const auto given = static_cast<std::size_t>(PyTuple_GET_SIZE(args));
    if (given > count)
    {
        throw py::type_error("the launcher takes " + std::to_string(count) + " arguments but " +
                             std::to_string(given) + " were given");
    }
    state.bound.assign(count, nullptr);
    for (std::size_t i = 0; i < given; ++i)
    {
        state.bound[i] = PyTuple_GET_ITEM(args, static_cast<Py_ssize_t>(i));
    }
    if (kwargs != nullptr && PyDict_GET_SIZE(kwargs) > 0)
    {
        Py_ssize_t position = 0;
        PyObject* name_object;
        PyObject* value;
        while (PyDict_Next(kwargs, &position, &name_object, &value))
        {
            const char* name = PyUnicode_AsUTF8(name_object);
            std::size_t i = 0;
            while (i < count && m_params[i].name != name)
            {
                ++i;
            }
            if (i == count)
            {
                throw py::type_error("the launcher got an unexpected keyword argument '" + std::string(name) +
                                     "'");
            }
            if (state.bound[i] != nullptr)
            {
                throw py::type_error("the launcher got multiple values for argument '" + std::string(name) +
                                     "'");
            }
            state.bound[i] = value;
        }
    }
    for (std::size_t i = 0; i < count; ++i)
    {
        if (state.bound[i] == nullptr)
        {
            if (!m_params[i].default_value)
            {
                throw py::type_error("the launcher is missing the required argument '" + m_params[i].name +
                                     "'");
            }
            state.bound[i] = m_params[i].default_value.ptr();
        }
    }

    // Key: compile mode, target, device, then each parameter's part.
    state.key.insert(state.key.end(), {bounds_checks() ? 1 : 0, 0, 0});
    for (std::size_t i = 0; i < count; ++i)
    {
        describe(i, state.bound[i], state);
    }
}

py::tuple dispatcher::specialize_for(PyObject* args, PyObject* kwargs, target_choice target)
{
    scratch held;
    call_state& state = *held;
    specialize(args, kwargs, state);
    state.key[1] = static_cast<std::int64_t>(target);
    return py::make_tuple(state.bound_tuple(), state.key_tuple());
}

py::object dispatcher::call(PyObject* args, PyObject* kwargs)
{
    if (t_tracing)
    {
        return py::reinterpret_steal<py::object>(PyObject_Call(m_inline.ptr(), args, kwargs));
    }
    scratch held;
    call_state& state = *held;
    specialize(args, kwargs, state);
    choose_target(state);

    artifact* found = nullptr;
    std::shared_ptr<artifact> keep; // another thread may evict the entry while this one launches
    auto it = m_cache.find(state.key);
    if (it != m_cache.end() && it->second->guard && !it->second->guard->holds() &&
        !m_revalidate(it->second->record()).cast<bool>())
    {
        // Stale: something it was compiled from changed. Recompile (lazily: now).
        m_cache.erase(it);
        ++m_counters.evictions;
        it = m_cache.end();
    }
    if (it != m_cache.end())
    {
        keep = it->second;
        found = keep.get();
        ++m_counters.hits;
    }
    else
    {
        ++m_counters.misses;
        py::tuple made = m_compile(state.bound_tuple(), state.key_tuple());
        keep = made[0].cast<std::shared_ptr<artifact>>();
        found = keep.get();
        if (made[1].cast<bool>())
        {
            ++m_counters.compiles;
        }
        m_cache.emplace(state.key, keep);
    }
    refuse_read_only_outputs(*found, state);
    ++found->hits;
    if (state.key[1] != static_cast<std::int64_t>(target_choice::cpu) && !launch::compile_only())
    {
        // a ROCm torch's current stream is a HIP stream
        launch::set_call_stream(torch_current_stream(static_cast<int>(state.key[2])));
    }
    // A long CPU launch lets other Python threads run (cpu_launch.hpp):
    // `keep` holds the artifact should one of them evict it meanwhile.
    const std::int32_t status = found->entry(state.slots.data(), found->kernel_table.data());
    if (status == launch::status_interrupted)
    {
        if (PyErr_Occurred() == nullptr)
        {
            PyErr_SetNone(PyExc_KeyboardInterrupt);
        }
        throw py::error_already_set();
    }
    if (status == launch::status_reported)
    {
        throw py::index_error(launch::last_error());
    }
    if (status != 0)
    {
        throw std::runtime_error("launcher " + m_name + ": " + launch::last_error());
    }
    return py::none();
}

void dispatcher::refuse_read_only_outputs(const artifact& found, const call_state& state) const
{
    for (const std::size_t param : state.read_only)
    {
        if (std::find(found.written_params.begin(), found.written_params.end(), param) !=
            found.written_params.end())
        {
            throw py::value_error("argument '" + m_params[param].name + "': launcher " + m_name +
                                  " stores into it, and the array is read-only (its WRITEABLE flag is off)");
        }
    }
}

std::size_t dispatcher::clear()
{
    const std::size_t dropped = m_cache.size();
    m_counters.evictions += dropped;
    m_cache.clear();
    return dropped;
}

bool dispatcher::evict(const key_type& key)
{
    if (m_cache.erase(key) == 0)
    {
        return false;
    }
    ++m_counters.evictions;
    return true;
}

std::vector<std::pair<key_type, std::shared_ptr<artifact>>> dispatcher::entries() const
{
    return {m_cache.begin(), m_cache.end()};
}

std::vector<key_type> dispatcher::keys() const
{
    std::vector<key_type> out;
    for (const auto& entry : m_cache)
    {
        out.push_back(entry.first);
    }
    return out;
}

} // namespace flyrt::dispatch
