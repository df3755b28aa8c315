// The specialization key of a call, and the slots its compiled entry reads,
// made from the bound arguments: compile mode, target and device, then one
// part per parameter, led by its tag (Python decodes it:
// flyrt/specialization.py). Runs on every call, so inline, its errors out
// of line (specialization_key.cpp) to keep it small enough to be inlined.
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <climits>
#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/pybind11.h>

#include "argument_binding.hpp"
#include "dispatch_settings.hpp"
#include "dtype_codes.hpp"
#include "target_choice.hpp"
#include "tensor_view.hpp"

namespace flyrt::dispatch
{

using key_type = std::vector<std::int64_t>;

struct key_hash
{
    // Each part times its own odd multiplier, summed: the multiplies do not
    // wait on each other (a chained hash of a ~24-part key cost 30 ns a
    // call), and the final mix spreads the sum's bits over the buckets.
    std::size_t operator()(const key_type& key) const noexcept
    {
        std::uint64_t h = key.size();
        for (std::size_t i = 0; i < key.size(); ++i)
        {
            h += (static_cast<std::uint64_t>(key[i]) + i) * (0x9E3779B97F4A7C15ull + 2 * i);
        }
        h ^= h >> 31;
        h *= 0xBF58476D1CE4E5B9ull;
        return static_cast<std::size_t>(h ^ (h >> 29));
    }
};

// Leading entry of each parameter's part of the key (exported as
// _core.codes.key_tags).
enum key_tag : std::int64_t
{
    tag_tensor = 1,
    tag_scalar = 2,
    tag_const_int = 3,
    tag_const_object = 4,
    tag_const_bool = 5,
    tag_stream = 6,
};

// What one call is made of; reused across calls (the dispatcher's scratch).
struct call_state
{
    std::vector<PyObject*> bound; // borrowed: one argument per parameter
    key_type key;
    std::vector<std::uint64_t> slots;
    std::vector<pybind11::object> keep_alive; // arrays made by the adapter
    std::vector<tensor_device> devices;       // where each tensor argument lives
    std::vector<std::size_t> read_only;       // parameters whose array is not writeable
    std::size_t key_written = 0;              // parts of `key` (sized for all of them first) filled

    void clear()
    {
        bound.clear();
        key.clear();
        key_written = 0;
        slots.clear();
        keep_alive.clear();
        read_only.clear();
        devices.clear();
    }

    pybind11::tuple bound_tuple() const
    {
        pybind11::tuple out(bound.size());
        for (std::size_t i = 0; i < bound.size(); ++i)
        {
            out[i] = pybind11::handle(bound[i]);
        }
        return out;
    }

    pybind11::tuple key_tuple() const
    {
        pybind11::tuple out(key.size());
        for (std::size_t i = 0; i < key.size(); ++i)
        {
            out[i] = pybind11::int_(key[i]);
        }
        return out;
    }
};

// Writes `parts` into the call's key, sized for all of them beforehand:
// growing it part by part, or inserting an initializer list (copied through
// the stack in loads that stall on its stores), cost a tenth of a call.
template <typename... Parts> inline void append_to_key(call_state& state, Parts... parts)
{
    std::int64_t* out = state.key.data() + state.key_written;
    ((*out++ = static_cast<std::int64_t>(parts)), ...);
    state.key_written += sizeof...(Parts);
}

// How many entries of the key a parameter of `kind` fills (describe_*).
constexpr std::size_t key_parts(param_kind kind)
{
    switch (kind)
    {
    case param_kind::tensor:
        return 7;
    case param_kind::scalar:
    case param_kind::constexpr_:
        return 2;
    case param_kind::stream:
        return 1;
    }
    return 0;
}

// compile mode, target, device
constexpr std::size_t key_header_parts = 3;

// The errors of arguments the key cannot describe (specialization_key.cpp).
// ValueError: an array not in this machine's byte order, or whose strides
// are not whole elements.
[[noreturn]] void raise_foreign_byte_order(const std::string& name, bool big_endian);
[[noreturn]] void raise_partial_element_strides(const std::string& name);
// TypeError: a scalar argument of another type, a float for an integer
// parameter; ValueError: an integer outside the parameter's type.
[[noreturn]] void raise_not_a_scalar(const std::string& name, PyObject* value);
[[noreturn]] void raise_float_for_integer(const std::string& name);
[[noreturn]] void raise_does_not_fit(const std::string& name, PyObject* value, bool int32);

// Makes the key and slots of calls to one launcher, from their arguments.
class specializer
{
public:
    // `adapt(value, name) -> numpy.ndarray or a device tuple`: a tensor
    // argument neither numpy nor torch's CUDA tensors describe directly
    specializer(std::vector<param_spec> params, pybind11::object adapt)
        : m_params(std::move(params)), m_adapt(std::move(adapt))
    {
        for (const param_spec& p : m_params)
        {
            m_key_length += key_parts(p.kind);
        }
    }

    const std::vector<param_spec>& params() const { return m_params; }

    // Binds a call's arguments and describes them into `state`: the key,
    // its target and device left 0 for the caller, and the slots.
    void specialize(PyObject* args, PyObject* kwargs, call_state& state);

private:
    // Fills `state` from one bound argument, as its parameter's kind says.
    void describe(std::size_t index, PyObject* value, call_state& state);
    // A numpy array, a torch CUDA tensor, else what m_adapt makes of it. Its
    // part: dtype, rank, contiguity, index width, alignment, the strides'
    // common power of two; its slots: data pointer, shape, strides.
    void describe_tensor(std::size_t index, PyObject* value, call_state& state);
    // Its part: the class it is passed as; its slot: the value's bits.
    void describe_scalar(std::size_t index, PyObject* value, call_state& state);
    // All of it is in the key (m_constexpr_ids numbers the values that are
    // no bool or int); no slot.
    void describe_constexpr(PyObject* value, call_state& state);
    // Its slot: the driver handle (ir::default_stream: the call's stream).
    void describe_stream(std::size_t index, PyObject* value, call_state& state);

    std::vector<param_spec> m_params;
    pybind11::object m_adapt;
    pybind11::dict m_constexpr_ids; // non-integer Constexpr values -> small ids
    std::size_t m_key_length = key_header_parts;
};

inline void specializer::specialize(PyObject* args, PyObject* kwargs, call_state& state)
{
    bind_arguments(args, kwargs, m_params, state.bound);
    // Key: compile mode, target, device, then each parameter's part.
    state.key.resize(m_key_length);
    append_to_key(state, bounds_checks() ? 1 : 0, 0, 0);
    // Read once: the calls below could change it, for all the compiler knows.
    const std::size_t count = m_params.size();
    for (std::size_t i = 0; i < count; ++i)
    {
        describe(i, state.bound[i], state);
    }
    if (state.key_written != m_key_length)
    {
        throw std::logic_error("flyrt: a parameter's key part has a length key_parts does not know");
    }
}

inline void specializer::describe(std::size_t index, PyObject* value, call_state& state)
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

inline void specializer::describe_tensor(std::size_t index, PyObject* value, call_state& state)
{
    const std::string& name = m_params[index].name;
    tensor_view view;
    if (!PyArray_Check(value) && !describe_torch(value, name, view))
    {
        pybind11::object adapted = m_adapt(pybind11::handle(value), name);
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
            raise_unsupported_dtype(name, reinterpret_cast<PyObject*>(PyArray_DESCR(array)));
        }
        if (!PyArray_ISNOTSWAPPED(array) && PyArray_ITEMSIZE(array) > 1)
        {
            // Kernels read elements as this machine stores them; converting
            // would copy behind the user's back (and lose stores).
            raise_foreign_byte_order(name, PyArray_DESCR(array)->byteorder == '>');
        }
        view.ndim = PyArray_NDIM(array);
        if (view.ndim > tensor_view::max_dims)
        {
            raise_too_many_dimensions(name);
        }
        const npy_intp itemsize = PyArray_ITEMSIZE(array);
        // Element sizes are powers of two but for structured dtypes: a shift
        // and a mask then, not a 64-bit division per dimension (40 cycles).
        const bool power_of_two = (itemsize & (itemsize - 1)) == 0;
        const int shift = power_of_two ? __builtin_ctzll(static_cast<unsigned long long>(itemsize)) : 0;
        for (int d = 0; d < view.ndim; ++d)
        {
            const npy_intp stride = PyArray_STRIDES(array)[d];
            if (power_of_two ? (stride & (itemsize - 1)) != 0 : stride % itemsize != 0)
            {
                raise_partial_element_strides(name);
            }
            view.shape[d] = PyArray_DIMS(array)[d];
            view.strides[d] = power_of_two ? stride >> shift : stride / itemsize;
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
    // The largest power of two, up to 16, that divides every stride (in
    // elements) but a contiguous tensor's last, which kernels know is 1: with
    // it they prove `align=` promises and vector accesses' alignment (as
    // Triton specializes on divisibility by 16).
    std::uint64_t strides_or = 16;
    for (int d = 0; d < view.ndim - (view.contiguous ? 1 : 0); ++d)
    {
        strides_or |= static_cast<std::uint64_t>(view.strides[d]);
    }
    const auto stride_multiple = static_cast<std::int64_t>(strides_or & (~strides_or + 1));
    append_to_key(state,
                  tag_tensor,
                  view.dtype,
                  view.ndim,
                  view.contiguous ? 1 : 0,
                  index_bits,
                  alignment,
                  stride_multiple);
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

inline std::uint64_t bits_of_float(float value)
{
    std::uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    return bits;
}

inline std::uint64_t bits_of_double(double value)
{
    std::uint64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    return bits;
}

inline void specializer::describe_scalar(std::size_t index, PyObject* value, call_state& state)
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
            raise_not_a_scalar(p.name, value);
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
            throw pybind11::error_already_set();
        }
        slot = static_cast<std::uint64_t>(truth);
        break;
    }
    case scalar_class::int32:
    case scalar_class::int64:
    {
        if (PyFloat_Check(value))
        {
            raise_float_for_integer(p.name);
        }
        int overflow = 0;
        const long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
        if (v == -1 && PyErr_Occurred())
        {
            throw pybind11::error_already_set();
        }
        const bool int32 = cls == scalar_class::int32;
        if (overflow != 0 || (int32 && (v < INT32_MIN || v > INT32_MAX)))
        {
            raise_does_not_fit(p.name, value, int32);
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
            throw pybind11::error_already_set();
        }
        slot = cls == scalar_class::float32 ? bits_of_float(static_cast<float>(v)) : bits_of_double(v);
        break;
    }
    case scalar_class::automatic:
        break;
    }
    append_to_key(state, tag_scalar, cls);
    state.slots.push_back(slot);
}

inline void specializer::describe_constexpr(PyObject* value, call_state& state)
{
    if (PyBool_Check(value))
    {
        append_to_key(state, tag_const_bool, value == Py_True ? 1 : 0);
        return;
    }
    if (PyLong_CheckExact(value))
    {
        int overflow = 0;
        const long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
        if (overflow == 0)
        {
            append_to_key(state, tag_const_int, v);
            return;
        }
    }
    // Anything else hashable: identified by (type, value), so 1 and 1.0 differ.
    pybind11::tuple identity = pybind11::make_tuple(
        pybind11::handle(reinterpret_cast<PyObject*>(Py_TYPE(value))), pybind11::handle(value));
    pybind11::object id = m_constexpr_ids.attr("get")(identity);
    if (id.is_none())
    {
        id = pybind11::int_(pybind11::len(m_constexpr_ids));
        m_constexpr_ids[identity] = id;
    }
    append_to_key(state, tag_const_object, id.cast<std::int64_t>());
}

inline void specializer::describe_stream(std::size_t index, PyObject* value, call_state& state)
{
    const std::optional<std::int64_t> handle = stream_handle(value, m_params[index].name);
    append_to_key(state, tag_stream);
    state.slots.push_back(static_cast<std::uint64_t>(handle ? *handle : ir::default_stream));
}

} // namespace flyrt::dispatch
