"""FP8 data on the host, as kernels and their references use it:
``flyrt.fp8.quantize``, ``dequantize``, ``as_fp8`` and ``format_of``
(core/fp8.py holds the formats and their rounding rules)."""

from .core.fp8 import (E4M3FN, E4M3FNUZ, FORMATS, Float8E4M3FN, Float8E4M3FNUZ, Format, as_fp8, dequantize,
                       dtype_of, format_of, quantize)

__all__ = ["E4M3FN", "E4M3FNUZ", "FORMATS", "Float8E4M3FN", "Float8E4M3FNUZ", "Format", "as_fp8", "dequantize",
           "dtype_of", "format_of", "quantize"]
