"""FP8 conversions, bit-exact: all 256 codes of each format, rounding ties,
saturation, subnormals, signed zero and NaN; kernels and host helpers agree
with each other and with torch's float8 types."""

import numpy as np
import pytest

import flyrt.compiler as flyc
import flyrt.expr as fx
from flyrt import fp8

torch = pytest.importorskip("torch")
TORCH = {"e4m3fnuz": torch.float8_e4m3fnuz, "e4m3fn": torch.float8_e4m3fn}
FORMATS = ["e4m3fnuz", "e4m3fn"]


@flyc.kernel
def _decode(codes: fx.Tensor, f32: fx.Tensor, f16: fx.Tensor, bf16_bits: fx.Tensor):
    i = fx.block_idx.x * fx.block_dim.x + fx.thread_idx.x
    if i < codes.shape[0]:
        c = codes[i]
        f32[i] = c.to(fx.Float32)
        f16[i] = c.to(fx.Float16)
        bf16_bits[i] = c.to(fx.BFloat16).bitcast(fx.Int16)


@flyc.jit
def decode(codes: fx.Tensor, f32: fx.Tensor, f16: fx.Tensor, bf16_bits: fx.Tensor):
    _decode(codes, f32, f16, bf16_bits).launch(grid=((codes.shape[0] + 63) // 64,), block=(64,))


@flyc.kernel
def _encode(x: fx.Tensor, from_f32: fx.Tensor, from_f16: fx.Tensor, from_bf16: fx.Tensor):
    i = fx.block_idx.x * fx.block_dim.x + fx.thread_idx.x
    if i < x.shape[0]:
        v = x[i]
        from_f32[i] = v
        from_f16[i] = v.to(fx.Float16)
        from_bf16[i] = v.to(fx.BFloat16)


@flyc.jit
def encode(x: fx.Tensor, from_f32: fx.Tensor, from_f16: fx.Tensor, from_bf16: fx.Tensor):
    _encode(x, from_f32, from_f16, from_bf16).launch(grid=((x.shape[0] + 63) // 64,), block=(64,))


def torch_decode(codes, fmt):
    return torch.from_numpy(codes.view(np.uint8).copy()).view(TORCH[fmt]).float().numpy()


@pytest.mark.parametrize("fmt", FORMATS)
def test_all_256_codes_decode_exactly(fmt):
    codes = fp8.as_fp8(np.arange(256, dtype=np.uint8), fmt)
    expected = torch_decode(codes, fmt)
    f32, f16, bf16 = np.zeros(256, np.float32), np.zeros(256, np.float16), np.zeros(256, np.int16)
    decode(codes, f32, f16, bf16)
    np.testing.assert_array_equal(f32, expected)
    np.testing.assert_array_equal(fp8.dequantize(codes), expected)
    np.testing.assert_array_equal(f16.astype(np.float32), expected)  # exact in f16
    bf16_values = (bf16.astype(np.int32) << 16).astype(np.uint32).view(np.float32)
    np.testing.assert_array_equal(bf16_values, expected)  # and in bf16
    assert np.isnan(expected).sum() == (1 if fmt == "e4m3fnuz" else 2)
    assert np.nanmax(expected) == (240.0 if fmt == "e4m3fnuz" else 448.0)


def edge_values(fmt):
    grid = fp8.dequantize(fp8.as_fp8(np.arange(256, dtype=np.uint8), fmt))
    finite = np.unique(grid[np.isfinite(grid)])
    midpoints = (finite[:-1] + finite[1:]) / 2  # exact ties between neighbours
    nudged = np.concatenate([np.nextafter(midpoints, np.inf), np.nextafter(midpoints, -np.inf)]).astype(np.float32)
    top = finite.max()
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, top, -top, top * 1.03, top * 1.1, 1e30, -1e30,
                        2.0 ** -12, -(2.0 ** -12), 2.0 ** -30, 1e-45], dtype=np.float32)
    return np.concatenate([finite, midpoints.astype(np.float32), nudged, special]).astype(np.float32)


@pytest.mark.parametrize("fmt", FORMATS)
def test_encoding_rounds_to_nearest_even_and_saturates(fmt):
    x = edge_values(fmt)
    outs = [fp8.as_fp8(np.zeros(len(x), np.uint8), fmt) for _ in range(3)]
    encode(x, *outs)
    host = fp8.quantize(x, fmt)
    for out in outs[:1]:
        np.testing.assert_array_equal(out.view(np.uint8), host.view(np.uint8))
    # through f16 and bf16: the f32 value rounded there first, then to FP8
    with np.errstate(over="ignore"):  # 1e30 is inf in f16, as in the kernel
        as_f16 = x.astype(np.float16)
    np.testing.assert_array_equal(outs[1].view(np.uint8), fp8.quantize(as_f16, fmt).view(np.uint8))
    bf16 = (x.view(np.uint32) + 0x7FFF + ((x.view(np.uint32) >> 16) & 1)) & 0xFFFF0000
    bf16 = np.where(np.isnan(x), np.float32(np.nan), bf16.view(np.float32))
    np.testing.assert_array_equal(outs[2].view(np.uint8), fp8.quantize(bf16, fmt).view(np.uint8))

    # against torch where torch saturates the same way (in range: round to nearest even)
    top = 240.0 if fmt == "e4m3fnuz" else 448.0
    in_range = np.isfinite(x) & (np.abs(x) <= top)
    reference = torch.from_numpy(x[in_range]).to(TORCH[fmt]).view(torch.uint8).numpy()
    got = host.view(np.uint8)[in_range]
    if fmt == "e4m3fnuz":
        got = np.where(got == 0x80, 0, got)  # torch keeps no -0 either; its code for -0.0 is 0
    np.testing.assert_array_equal(got, reference)

    decoded = fp8.dequantize(host)
    assert np.all(np.abs(decoded[np.isfinite(x)]) <= top)  # saturated, never inf
    assert np.isnan(decoded[np.isnan(x)]).all()
    assert np.array_equal(decoded[np.isinf(x)], np.sign(x[np.isinf(x)]) * top)
    neg_zero = host.view(np.uint8)[(x == 0) & np.signbit(x)]
    assert (neg_zero == (0x80 if fmt == "e4m3fn" else 0)).all()


@flyc.kernel
def _scale(x: fx.Tensor, scale: fx.Float32, out: fx.Tensor):
    i = fx.thread_idx.x
    out[i] = x[i].to(fx.Float32) * scale


@flyc.jit
def scale(x: fx.Tensor, scale: fx.Float32, out: fx.Tensor):
    _scale(x, scale, out).launch(block=(x.shape[0],))


def test_torch_float8_tensors_and_fp8_arithmetic_errors():
    x = torch.tensor([0.5, -1.25, 3.0, 100.0]).to(torch.float8_e4m3fn)
    out = np.zeros(4, np.float32)
    scale(x, 2.0, out)
    np.testing.assert_array_equal(out, x.float().numpy() * 2)

    @flyc.kernel
    def bad(x: fx.Tensor, out: fx.Tensor):
        out[0] = x[0] + 1.0

    @flyc.jit
    def run_bad(x: fx.Tensor, out: fx.Tensor):
        bad(x, out).launch()

    with pytest.raises(TypeError, match=r"convert them with \.to\(fx\.Float32\)"):
        run_bad(fp8.quantize([1.0], "e4m3fnuz"), out)
