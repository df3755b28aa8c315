#include "tensor_view.hpp"

#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "dlpack_exchange.hpp"

namespace py = pybind11;

namespace flyrt::dispatch
{
namespace
{

// Borrowed for the process's life: torch is never unloaded once imported.
PyTypeObject* g_torch_tensor = nullptr;
PyTypeObject* g_torch_parameter = nullptr; // torch.nn.Parameter, found with torch.Tensor
PyObject* g_current_raw_stream = nullptr;
PyObject* g_is_neg = nullptr; // torch.Tensor.is_neg, unbound
dlpack_exchange g_exchange;   // torch's own C description of a tensor (torch 2.10 on)
std::vector<std::pair<PyObject*, std::int64_t>> g_torch_dtypes; // dtype object -> key code
// DLPack's (code, bits, lanes) of each of those dtypes, as torch describes an
// empty tensor of it -> key code: torch's own mapping, not a table kept here.
std::vector<std::pair<std::uint32_t, std::int64_t>> g_dlpack_dtypes;
device_type g_torch_gpu = device_type::cuda; // where torch's "cuda" tensors are

PyObject* interned(const char* text)
{
    PyObject* s = PyUnicode_InternFromString(text);
    if (s == nullptr)
    {
        throw py::error_already_set();
    }
    return s;
}

py::object call_method(PyObject* self, PyObject* name)
{
    PyObject* result = PyObject_CallMethodNoArgs(self, name);
    if (result == nullptr)
    {
        throw py::error_already_set();
    }
    return py::reinterpret_steal<py::object>(result);
}

py::object attribute(PyObject* self, PyObject* name)
{
    PyObject* result = PyObject_GetAttr(self, name);
    if (result == nullptr)
    {
        throw py::error_already_set();
    }
    return py::reinterpret_steal<py::object>(result);
}

std::int64_t as_int64(PyObject* value)
{
    const long long v = PyLong_AsLongLong(value);
    if (v == -1 && PyErr_Occurred())
    {
        throw py::error_already_set();
    }
    return v;
}

void read_sizes(PyObject* sequence, std::int64_t* out, int count, const std::string& name, const char* what)
{
    if (!PyTuple_Check(sequence) || PyTuple_GET_SIZE(sequence) != count)
    {
        throw py::type_error("argument '" + name + "': the tensor's " + what + " are not a tuple of " +
                             std::to_string(count));
    }
    for (int d = 0; d < count; ++d)
    {
        out[d] = as_int64(PyTuple_GET_ITEM(sequence, d));
    }
}

void set_contiguity(tensor_view& view)
{
    std::int64_t expected = 1;
    view.contiguous = true;
    for (int d = view.ndim - 1; d >= 0; --d)
    {
        if (view.shape[d] != 1 && view.strides[d] != expected)
        {
            view.contiguous = false;
        }
        expected *= view.shape[d];
    }
}

bool torch_imported()
{
    if (g_torch_tensor != nullptr)
    {
        return true;
    }
    PyObject* torch = PyImport_GetModule(interned("torch"));
    if (torch == nullptr)
    {
        PyErr_Clear();
        return false;
    }
    PyObject* tensor = PyObject_GetAttrString(torch, "Tensor");
    PyObject* c_module = PyObject_GetAttrString(torch, "_C");
    Py_DECREF(torch);
    PyObject* is_neg = tensor != nullptr ? PyObject_GetAttrString(tensor, "is_neg") : nullptr;
    if (tensor == nullptr || c_module == nullptr || is_neg == nullptr || !PyType_Check(tensor))
    {
        PyErr_Clear();
        Py_XDECREF(tensor);
        Py_XDECREF(c_module);
        Py_XDECREF(is_neg);
        return false; // a torch still being imported
    }
    g_torch_tensor = reinterpret_cast<PyTypeObject*>(tensor);
    g_is_neg = is_neg;
    g_current_raw_stream = PyObject_GetAttrString(c_module, "_cuda_getCurrentRawStream");
    Py_DECREF(c_module);
    PyErr_Clear(); // a CPU-only torch has no CUDA streams
    g_exchange = dlpack_exchange::of(g_torch_tensor);
    PyObject* nn = PyImport_GetModule(interned("torch.nn")); // imported by torch's own import
    PyObject* parameter = nn != nullptr ? PyObject_GetAttrString(nn, "Parameter") : nullptr;
    Py_XDECREF(nn);
    PyErr_Clear();
    if (parameter != nullptr && PyType_Check(parameter))
    {
        g_torch_parameter = reinterpret_cast<PyTypeObject*>(parameter);
    }
    else
    {
        Py_XDECREF(parameter);
    }
    return true;
}

std::uint32_t dlpack_dtype_key(DLDataType dtype)
{
    return static_cast<std::uint32_t>(dtype.code) | static_cast<std::uint32_t>(dtype.bits) << 8 |
           static_cast<std::uint32_t>(dtype.lanes) << 16;
}

std::vector<std::pair<std::uint32_t, std::int64_t>>::const_iterator find_dlpack_dtype(std::uint32_t key)
{
    return std::find_if(g_dlpack_dtypes.begin(),
                        g_dlpack_dtypes.end(),
                        [key](const auto& pair) { return pair.first == key; });
}

// Which DLPack dtype torch gives each registered dtype; one that two torch
// dtypes share (none in torch 2.13) is left to the attribute path.
void map_dlpack_dtypes()
{
    g_dlpack_dtypes.clear();
    if (!g_exchange)
    {
        return;
    }
    py::object empty = py::module_::import("torch").attr("empty");
    std::vector<std::uint32_t> shared;
    for (const auto& [object, code] : g_torch_dtypes)
    {
        py::object tensor = empty(0, py::arg("dtype") = py::handle(object));
        DLTensor described;
        if (!g_exchange.describe(tensor.ptr(), described))
        {
            continue; // a dtype DLPack has no code for
        }
        const std::uint32_t key = dlpack_dtype_key(described.dtype);
        if (find_dlpack_dtype(key) == g_dlpack_dtypes.end())
        {
            g_dlpack_dtypes.emplace_back(key, code);
        }
        else
        {
            shared.push_back(key);
        }
    }
    g_dlpack_dtypes.erase(
        std::remove_if(g_dlpack_dtypes.begin(),
                       g_dlpack_dtypes.end(),
                       [&shared](const auto& pair)
                       { return std::find(shared.begin(), shared.end(), pair.first) != shared.end(); }),
        g_dlpack_dtypes.end());
}

bool is_plain_tensor(PyTypeObject* type)
{
    return type == g_torch_tensor || type == g_torch_parameter; // (a type is never null)
}

bool is_negated(PyObject* tensor)
{
    PyObject* answer = PyObject_Vectorcall(g_is_neg, &tensor, 1, nullptr);
    if (answer == nullptr)
    {
        throw py::error_already_set();
    }
    Py_DECREF(answer);
    return answer == Py_True;
}

// A plain tensor through torch's exchange table: one C call and one method
// call (`is_neg`) where the attribute path makes seven. False leaves it to that
// path: a subclass (whose attributes may answer otherwise), a device or dtype
// the table does not name as flyrt does, a lazy negation.
bool describe_by_exchange(PyObject* value, const std::string& name, tensor_view& out)
{
    if (!g_exchange || !is_plain_tensor(Py_TYPE(value)))
    {
        return false;
    }
    DLTensor described;
    if (!g_exchange.describe(value, described))
    {
        return false;
    }
    switch (described.device.device_type)
    {
    case kDLCPU:
        out.device = device_type::host;
        break;
    case kDLCUDA:
        out.device = device_type::cuda;
        break;
    case kDLROCM:
        out.device = device_type::rocm;
        break;
    default:
        return false;
    }
    const auto found = find_dlpack_dtype(dlpack_dtype_key(described.dtype));
    if (found == g_dlpack_dtypes.end())
    {
        return false;
    }
    if (described.ndim > tensor_view::max_dims)
    {
        raise_too_many_dimensions(name);
    }
    if (is_negated(value))
    {
        return false;
    }
    out.dtype = found->second;
    out.ndim = described.ndim;
    std::int64_t step = 1; // strides left out mean a compact row-major tensor
    for (int d = out.ndim - 1; d >= 0; --d)
    {
        out.shape[d] = described.shape[d];
        out.strides[d] = described.strides != nullptr ? described.strides[d] : step;
        step *= out.shape[d];
    }
    out.data = reinterpret_cast<std::uintptr_t>(described.data) + described.byte_offset;
    out.device_index = out.device == device_type::host ? 0 : described.device.device_id;
    set_contiguity(out);
    return true;
}

} // namespace

void raise_unsupported_dtype(const std::string& name, PyObject* dtype)
{
    throw py::type_error("argument '" + name + "': unsupported tensor dtype " +
                         py::str(py::handle(dtype)).cast<std::string>());
}

void raise_too_many_dimensions(const std::string& name)
{
    throw py::type_error("argument '" + name + "': tensors have at most " +
                         std::to_string(tensor_view::max_dims) + " dimensions");
}

void register_torch_dtypes(py::dict codes, device_type gpu)
{
    g_torch_gpu = gpu;
    std::vector<std::pair<PyObject*, std::int64_t>> pairs;
    for (auto item : codes)
    {
        pairs.emplace_back(item.first.ptr(), item.second.cast<std::int64_t>());
    }
    if (pairs == g_torch_dtypes)
    {
        return; // the adapter registers on each of its calls: the same dtypes
    }
    for (auto& pair : pairs)
    {
        Py_INCREF(pair.first);
    }
    g_torch_dtypes = std::move(pairs);
    if (torch_imported())
    {
        map_dlpack_dtypes();
    }
}

bool describe_torch(PyObject* value, const std::string& name, tensor_view& out)
{
    if (g_torch_dtypes.empty() || !torch_imported() || !PyObject_TypeCheck(value, g_torch_tensor))
    {
        return false;
    }
    if (describe_by_exchange(value, name, out))
    {
        return true;
    }
    static PyObject* is_cuda = interned("is_cuda");
    static PyObject* is_cpu = interned("is_cpu");
    static PyObject* is_neg = interned("is_neg");
    static PyObject* get_device = interned("get_device");
    static PyObject* data_ptr = interned("data_ptr");
    static PyObject* dtype = interned("dtype");
    static PyObject* shape = interned("shape");
    static PyObject* stride = interned("stride");
    const bool on_gpu = attribute(value, is_cuda).ptr() == Py_True;
    // Another device (the adapter names it), or a lazy negation (`.imag` of a
    // conjugate view: its bytes are not its values; the adapter says so).
    if ((!on_gpu && attribute(value, is_cpu).ptr() != Py_True) || call_method(value, is_neg).ptr() == Py_True)
    {
        return false;
    }
    const py::object type = attribute(value, dtype);
    out.dtype = -1;
    for (const auto& [object, code] : g_torch_dtypes)
    {
        if (object == type.ptr())
        {
            out.dtype = code;
        }
    }
    if (out.dtype < 0)
    {
        raise_unsupported_dtype(name, type.ptr());
    }
    const py::object sizes = attribute(value, shape);
    out.ndim = static_cast<int>(PyTuple_GET_SIZE(sizes.ptr()));
    if (out.ndim > tensor_view::max_dims)
    {
        raise_too_many_dimensions(name);
    }
    read_sizes(sizes.ptr(), out.shape, out.ndim, name, "sizes");
    read_sizes(call_method(value, stride).ptr(), out.strides, out.ndim, name, "strides");
    out.data = static_cast<std::uint64_t>(as_int64(call_method(value, data_ptr).ptr()));
    out.device = on_gpu ? g_torch_gpu : device_type::host;
    out.device_index = on_gpu ? static_cast<int>(as_int64(call_method(value, get_device).ptr())) : 0;
    set_contiguity(out);
    return true;
}

void describe_device_tuple(PyObject* value, const std::string& name, tensor_view& out)
{
    if (!PyTuple_Check(value) || PyTuple_GET_SIZE(value) != 6)
    {
        throw py::type_error("argument '" + name + "': the tensor adapter returned " +
                             std::string(Py_TYPE(value)->tp_name) + ", not a numpy array or a device tensor");
    }
    const std::int64_t type = as_int64(PyTuple_GET_ITEM(value, 0));
    if (type != static_cast<std::int64_t>(device_type::cuda) &&
        type != static_cast<std::int64_t>(device_type::rocm))
    {
        throw py::type_error("argument '" + name + "': tensors on DLPack device type " +
                             std::to_string(type) + " are not supported");
    }
    out.device = static_cast<device_type>(type);
    out.device_index = static_cast<int>(as_int64(PyTuple_GET_ITEM(value, 1)));
    out.data = static_cast<std::uint64_t>(as_int64(PyTuple_GET_ITEM(value, 2)));
    PyObject* sizes = PyTuple_GET_ITEM(value, 3);
    if (!PyTuple_Check(sizes) || PyTuple_GET_SIZE(sizes) > tensor_view::max_dims)
    {
        raise_too_many_dimensions(name);
    }
    out.ndim = static_cast<int>(PyTuple_GET_SIZE(sizes));
    read_sizes(sizes, out.shape, out.ndim, name, "sizes");
    read_sizes(PyTuple_GET_ITEM(value, 4), out.strides, out.ndim, name, "strides");
    out.dtype = as_int64(PyTuple_GET_ITEM(value, 5));
    set_contiguity(out);
}

bool fits_int32(const tensor_view& view)
{
    for (int d = 0; d < view.ndim; ++d)
    {
        if (view.shape[d] > INT32_MAX || view.strides[d] > INT32_MAX || view.strides[d] < INT32_MIN)
        {
            return false;
        }
    }
    return true;
}

std::int64_t torch_current_stream(int device)
{
    if (!torch_imported() || g_current_raw_stream == nullptr)
    {
        return 0;
    }
    if (g_exchange)
    {
        if (const auto stream = g_exchange.current_stream(static_cast<DLDeviceType>(g_torch_gpu), device))
        {
            return *stream;
        }
    }
    PyObject* index = PyLong_FromLong(device);
    PyObject* stream = PyObject_CallOneArg(g_current_raw_stream, index);
    Py_DECREF(index);
    if (stream == nullptr)
    {
        throw py::error_already_set();
    }
    const std::int64_t handle = as_int64(stream);
    Py_DECREF(stream);
    return handle;
}

std::optional<std::int64_t> stream_handle(PyObject* value, const std::string& name)
{
    static PyObject* cuda_stream = PyUnicode_InternFromString("cuda_stream");
    static PyObject* handle = PyUnicode_InternFromString("handle");
    pybind11::object held = pybind11::reinterpret_borrow<pybind11::object>(value);
    for (int depth = 0; depth < 4; ++depth)
    {
        if (held.is_none())
        {
            return std::nullopt;
        }
        if (PyLong_Check(held.ptr()))
        {
            return held.cast<std::int64_t>();
        }
        // fx.Stream(handle) first, then torch's and cupy's streams
        PyObject* inner = PyObject_HasAttr(held.ptr(), handle) ? PyObject_GetAttr(held.ptr(), handle)
                          : PyObject_HasAttr(held.ptr(), cuda_stream)
                              ? PyObject_GetAttr(held.ptr(), cuda_stream)
                              : nullptr;
        if (inner == nullptr)
        {
            break;
        }
        held = pybind11::reinterpret_steal<pybind11::object>(inner);
    }
    throw pybind11::type_error(
        "argument '" + name +
        "' must be a stream: None, an int handle, fx.Stream or a torch.cuda.Stream, not " +
        std::string(Py_TYPE(value)->tp_name));
}

} // namespace flyrt::dispatch
