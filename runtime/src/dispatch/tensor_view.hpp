// What a launcher needs of a tensor argument, wherever it lives: its data
// pointer, element type, shape and strides (in elements) and its device.
// numpy arrays are read directly, and torch tensors through torch's DLPack
// exchange table (dlpack_exchange.hpp) or, before torch 2.10 and for
// subclasses, their attributes; anything else goes through the Python
// adapter once per call.
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cstdint>
#include <optional>
#include <string>

#include <pybind11/pybind11.h>

namespace flyrt::dispatch
{

enum class device_type : std::uint8_t
{
    host = 1,  // DLPack's kDLCPU
    cuda = 2,  // kDLCUDA
    rocm = 10, // kDLROCM
};

struct tensor_view
{
    static constexpr int max_dims = 16;

    std::uint64_t data = 0;
    std::int64_t dtype = -1; // key code: ir::scalar, or an FP8 code (dtype_codes.hpp)
    int ndim = 0;
    // Only the first `ndim` entries are written and read: left uninitialized,
    // since zeroing 256 bytes per tensor was a tenth of a cache-hit call.
    std::int64_t shape[max_dims];
    std::int64_t strides[max_dims]; // in elements
    device_type device = device_type::host;
    int device_index = 0;
    bool contiguous = false;
};

// Reads a torch tensor on the CPU or the GPU; false when `value` is not one
// (or torch is not imported, or its dtypes are not registered yet), or is one
// the adapter explains (another device, a lazy negation). Throws for one
// flyrt cannot pass (a dtype it does not know, too many dimensions).
bool describe_torch(PyObject* value, const std::string& name, tensor_view& out);

// The torch dtypes flyrt knows, with their key codes (the Python driver
// registers them on its first use of torch), and where torch's "cuda"
// tensors are: cuda, or rocm for a ROCm build of torch.
void register_torch_dtypes(pybind11::dict codes, device_type gpu);

// Reads the adapter's answer for a device tensor: (device type, device
// index, data pointer, shape, strides in elements, dtype code).
void describe_device_tuple(PyObject* value, const std::string& name, tensor_view& out);

// TypeError for a tensor argument flyrt cannot pass: one of `dtype` (a
// numpy or torch dtype), or of more than tensor_view::max_dims dimensions.
[[noreturn]] void raise_unsupported_dtype(const std::string& name, PyObject* dtype);
[[noreturn]] void raise_too_many_dimensions(const std::string& name);

// Whether a view's shapes and strides all fit in Int32 (else the launcher
// is specialized on 64-bit indexing for it).
bool fits_int32(const tensor_view& view);

// The CUDA stream torch calls current on `device`, or 0 (the default stream)
// when torch is not imported.
std::int64_t torch_current_stream(int device);

// A stream argument's driver handle: an int, fx.Stream(handle), a torch or
// cupy stream (`cuda_stream`), nested up to 4 deep; nullopt for None or
// fx.Stream(None) (the call's stream). Throws TypeError naming `name` for
// anything else.
std::optional<std::int64_t> stream_handle(PyObject* value, const std::string& name);

} // namespace flyrt::dispatch
