"""GPU tensors, and NVIDIA GPUs through the CUDA driver (flyrt._core opens libcuda.so.1 at
run time): device architectures, CUDA tensors from torch (read in C++ once
their dtypes are registered here), cupy and any ``__cuda_array_interface__``
or DLPack exporter."""

import functools
import sys

from .. import _core
from ..core import dtypes, fp8
from . import device_libraries, hip

DEVICE_TYPE = _core.codes.device_types["cuda"]  # DLPack's kDLCUDA


@functools.lru_cache(maxsize=None)
def device(ordinal):
    """Properties of GPU `ordinal`: name, major, minor, multiprocessors, ..."""
    return _core.cuda_device(ordinal)


@functools.lru_cache(maxsize=None)
def target(ordinal):
    """The NVPTX target for GPU `ordinal`. Its kernels' PTX is assembled in
    this process where nvJitLink is found (compile-only targets skip it: no
    GPU loads their code)."""
    info = device(ordinal)
    device_libraries.libdevice()
    device_libraries.ptx_assembler()
    return _core.nvptx_target(info["major"], info["minor"])


def arch_target(arch):
    """The NVPTX target of an architecture named like ``sm_90``, for compiling
    without a GPU."""
    digits = arch.removeprefix("sm_").removeprefix("compute_")
    if not digits.isdigit() or len(digits) < 2:
        raise ValueError(f"an NVIDIA architecture is named like 'sm_90', not {arch!r}")
    device_libraries.libdevice()
    return _core.nvptx_target(int(digits[:-1]), int(digits[-1]))


def synchronize(stream=None, device=None):
    """Waits for the GPU work queued on `stream` (a stream as launchers take
    one: an int handle, fx.Stream, a torch or cupy stream; by default torch's
    current stream on `device`, where launchers run without `stream=`).
    Unlike torch's synchronize, an interrupt (Ctrl-C, the notebook's stop
    button) ends the wait with KeyboardInterrupt; the work already queued
    goes on on the GPU."""
    if device is None:
        torch = sys.modules.get("torch")
        device = torch.cuda.current_device() if torch is not None and torch.cuda.is_available() else 0
    _core.cuda_synchronize(int(device), stream)


# -- tensors ---------------------------------------------------------------------

_TYPESTR = {"f2": dtypes.Float16, "f4": dtypes.Float32, "f8": dtypes.Float64, "i1": dtypes.Int8,
            "i2": dtypes.Int16, "i4": dtypes.Int32, "i8": dtypes.Int64, "u1": dtypes.UInt8,
            "u2": dtypes.UInt16, "u4": dtypes.UInt32, "u8": dtypes.UInt64, "b1": dtypes.Boolean}


def _code(dtype):
    """The dispatcher's key code of a DSL dtype (dtype_codes.hpp)."""
    return next(code for code, d in fp8.BY_KEY_CODE.items() if d is dtype) if dtype.is_fp8 else int(dtype.scalar)


def register_torch(torch):
    """Tells the C++ dispatcher which torch dtypes it may read itself."""
    pairs = {torch.float16: dtypes.Float16, torch.bfloat16: dtypes.BFloat16, torch.float32: dtypes.Float32,
             torch.float64: dtypes.Float64, torch.int8: dtypes.Int8, torch.int16: dtypes.Int16,
             torch.int32: dtypes.Int32, torch.int64: dtypes.Int64, torch.uint8: dtypes.UInt8,
             torch.bool: dtypes.Boolean, torch.float8_e4m3fn: fp8.Float8E4M3FN,
             torch.float8_e4m3fnuz: fp8.Float8E4M3FNUZ}
    for name, dtype in (("uint16", dtypes.UInt16), ("uint32", dtypes.UInt32), ("uint64", dtypes.UInt64)):
        if hasattr(torch, name):
            pairs[getattr(torch, name)] = dtype
    codes = {t: _code(d) for t, d in pairs.items()}
    _core.register_torch_dtypes(codes, torch_gpu_device_type(torch))
    return codes


def torch_gpu_device_type(torch):
    """Where torch's "cuda" tensors are: on NVIDIA GPUs, or on AMD ones (a
    ROCm build of torch), as DLPack numbers them."""
    return hip.DEVICE_TYPE if hip.is_rocm_torch(torch) else DEVICE_TYPE


def device_tensor(value, name):
    """(device type, index, pointer, shape, strides in elements, dtype code)
    of a CUDA tensor, or None if `value` is not one."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        if not value.is_cuda:
            return None
        codes = register_torch(torch)
        if value.dtype not in codes:
            raise TypeError(f"argument '{name}': unsupported tensor dtype {value.dtype}")
        return (torch_gpu_device_type(torch), value.get_device(), value.data_ptr(), tuple(value.shape),
                tuple(value.stride()), codes[value.dtype])
    interface = getattr(value, "__cuda_array_interface__", None)
    if interface is not None:
        return _from_interface(value, interface, name)
    if hasattr(value, "__dlpack_device__") and value.__dlpack_device__()[0] in (DEVICE_TYPE, hip.DEVICE_TYPE):
        raise TypeError(f"argument '{name}': a DLPack GPU tensor of {type(value).__name__} without "
                        "__cuda_array_interface__; pass a torch or cupy tensor")
    return None


def _from_interface(value, interface, name):
    typestr = interface["typestr"]
    if typestr[0] == ">" or typestr[1:] not in _TYPESTR:
        raise TypeError(f"argument '{name}': unsupported tensor dtype {typestr}")
    dtype = _TYPESTR[typestr[1:]]
    itemsize = int(typestr[2:])
    shape = tuple(interface["shape"])
    strides = interface.get("strides")
    if strides is None:
        strides, step = [], 1
        for size in reversed(shape):
            strides.append(step)
            step *= size
        strides = tuple(reversed(strides))
    else:
        if any(s % itemsize for s in strides):
            raise ValueError(f"argument '{name}': strides that are not a multiple of the element size are "
                             "not supported")
        strides = tuple(s // itemsize for s in strides)
    device_id = getattr(getattr(value, "device", None), "id", 0)
    return (DEVICE_TYPE, device_id, interface["data"][0], shape, strides, _code(dtype))
