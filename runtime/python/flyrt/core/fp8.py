"""FP8: Float8E4M3FNUZ and Float8E4M3FN, stored as bytes.

    format        bias  max   NaN           -0
    E4M3FNUZ      8     240   0x80 only     none
    E4M3FN        7     448   0x7F, 0xFF    0x80

Tensors of FP8 are numpy ``uint8`` arrays whose dtype carries the format
(``quantize`` makes them, ``as_fp8`` tags existing bytes; torch float8
tensors are accepted too). In kernels an FP8 value converts with ``.to()``;
conversions to FP8 round to nearest even and saturate to the format's
maximum (infinities too); NaN stays NaN. The same rules, in numpy, make the
host helpers, so references and kernels agree bit for bit.
"""

from dataclasses import dataclass

import numpy as np

from .. import _core
from . import dtypes


@dataclass(frozen=True)
class Format:
    name: str
    bias: int
    max_value: float
    max_code: int  # largest finite magnitude code (sign bit clear)
    has_negative_zero: bool

    @property
    def numpy_dtype(self):
        return np.dtype(np.uint8, metadata={"fp8": self.name})


E4M3FNUZ = Format("e4m3fnuz", 8, 240.0, 0x7F, False)
E4M3FN = Format("e4m3fn", 7, 448.0, 0x7E, True)
FORMATS = {f.name: f for f in (E4M3FNUZ, E4M3FN)}


class FP8DType(dtypes.DType):
    """An FP8 storage type: loads give bytes that convert with ``.to()``."""

    def __init__(self, name, fmt):
        super().__init__(name, _core.Scalar.u8, None, float)
        self.format = fmt
        self.numpy_dtype = fmt.numpy_dtype

    @property
    def is_float(self):
        return False

    @property
    def is_fp8(self):
        return True

    @property
    def bits(self):
        return 8


Float8E4M3FNUZ = FP8DType("Float8E4M3FNUZ", E4M3FNUZ)
Float8E4M3FN = FP8DType("Float8E4M3FN", E4M3FN)
BY_FORMAT = {"e4m3fnuz": Float8E4M3FNUZ, "e4m3fn": Float8E4M3FN}
BY_KEY_CODE = {_core.codes.fp8_dtypes[name]: dtype for name, dtype in BY_FORMAT.items()}


def dtype_of(fmt):
    """The DSL dtype of a format name ("e4m3fnuz", "e4m3fn") or Format."""
    return BY_FORMAT[fmt.name if isinstance(fmt, Format) else fmt]


# -- host helpers (numpy) ------------------------------------------------------


def _format(fmt):
    if isinstance(fmt, FP8DType):
        return fmt.format
    return fmt if isinstance(fmt, Format) else FORMATS[fmt]


def as_fp8(data, fmt):
    """Tags uint8 `data` (a view, no copy) as FP8 of `fmt`."""
    data = np.asarray(data)
    if data.dtype.kind != "u" or data.dtype.itemsize != 1:
        raise TypeError(f"FP8 data must be uint8 bytes, got {data.dtype}")
    return data.view(_format(fmt).numpy_dtype)


def format_of(array):
    """The FP8 format an array is tagged with, or None."""
    metadata = getattr(getattr(array, "dtype", None), "metadata", None)
    return FORMATS.get(metadata.get("fp8")) if metadata else None


def dequantize(codes, fmt=None):
    """FP8 codes -> float32, exactly."""
    codes = np.asarray(codes)
    f = _format(fmt) if fmt is not None else format_of(codes)
    if f is None:
        raise TypeError("dequantize needs FP8-tagged data or a format")
    c = codes.astype(np.uint32)
    sign = (c >> 7) & 1
    exponent = (c >> 3) & 0xF
    mantissa = c & 7
    normal = ((sign << 31) | ((exponent + 127 - f.bias) << 23) | (mantissa << 20)).astype(np.uint32).view(np.float32)
    subnormal = (mantissa.astype(np.float32) * np.float32(2.0 ** (1 - f.bias - 3)))
    subnormal = np.where(sign == 1, -subnormal, subnormal).astype(np.float32)
    values = np.where(exponent == 0, subnormal, normal)
    nan = (c == 0x80) if not f.has_negative_zero else ((c & 0x7F) == 0x7F)
    return np.where(nan, np.float32(np.nan), values).astype(np.float32)


def quantize(values, fmt):
    """float values -> FP8 codes of `fmt` (round to nearest even, saturating),
    tagged with the format."""
    f = _format(fmt)
    x = np.asarray(values, dtype=np.float32)
    bits = x.view(np.uint32)
    sign = (bits >> 31).astype(np.uint32)
    magnitude = np.abs(x)
    is_nan = np.isnan(x)
    # normal range: round the 23-bit mantissa to 3 bits, nearest even
    exponent = ((bits >> 23) & 0xFF).astype(np.int64) - 127
    mantissa = (bits & 0x7FFFFF).astype(np.int64)
    kept = mantissa >> 20
    rest = mantissa & ((1 << 20) - 1)
    round_up = (rest > (1 << 19)) | ((rest == (1 << 19)) & ((kept & 1) == 1))
    kept = kept + round_up
    exponent = exponent + (kept >> 3)
    kept = kept & 7
    normal_code = ((exponent + f.bias) << 3) | kept
    # subnormal range (exponent field 0): multiples of 2^(1 - bias - 3), nearest even
    quantum = np.float32(2.0 ** (1 - f.bias - 3))
    with np.errstate(invalid="ignore", over="ignore"):  # NaN and huge lanes are overwritten below
        subnormal_code = np.rint(np.minimum(magnitude, 1e9) / quantum)  # rint: ties to even
    subnormal_code = np.nan_to_num(subnormal_code).astype(np.int64)
    code = np.where(exponent + f.bias >= 1, normal_code, subnormal_code)
    code = np.where(magnitude > f.max_value, f.max_code, code)
    code = np.minimum(code, f.max_code)
    negative = (sign == 1) & ((code != 0) | f.has_negative_zero)
    code = np.where(negative, code | 0x80, code)
    nan_code = 0x80 if not f.has_negative_zero else 0x7F
    code = np.where(is_nan, nan_code, code)
    return code.astype(np.uint8).view(f.numpy_dtype)
