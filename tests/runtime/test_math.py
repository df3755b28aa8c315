"""sin, cos, tanh, erf and pow come from each target's math library (libm on
the CPU, CUDA's libdevice on NVIDIA, ROCm's ocml on AMD); sigmoid is
1 / (1 + exp(-x)) on flyrt's exp. On the CPU each is measured here against
an exact reference (long double, mpmath for erf) over its range: within the
ulp bounds the docs state, IEEE results at the edges, the same bits in
interpreter mode. The GPU forms are compiled here and assembled (ptxas) or
disassembled (llvm-objdump); their accuracy is measured on the GPU
(tests/gpu/test_cuda_ops.py)."""

import math
import sys
from pathlib import Path

import mpmath
import numpy as np
import pytest

import code_objects
import flyrt
import flyrt.expr as fx
import ptxas
from flyrt import _core
from flyrt.drivers import device_libraries
from kernels_for_tests import binary, unary

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "notebooks"))

from kernels.activations import activation, gelu, gelu_tanh, rotary, silu  # noqa: E402

RNG = np.random.default_rng(11)
L = np.longdouble  # 64 significant bits: exact enough to count Float64 ulps

# The CPU target's bounds, in ulps of the result's type (glibc's libm; the
# docs state them).
CPU_ULPS = {"sin": 1, "cos": 1, "tanh": 3, "erf": 1, "pow": 1, "sigmoid": 3}
UNARY = ["sin", "cos", "tanh", "erf", "sigmoid"]


def _erf(x):
    mpmath.mp.prec = 80
    return np.array([L(mpmath.nstr(mpmath.erf(mpmath.mpf(float(v))), 25)) for v in x], L)


@np.errstate(all="ignore")  # the casts to Float16 overflow, sin(inf) is NaN: as meant
def inputs(name, dtype, n=20_000):
    """Arguments over each function's interesting range, and its exact results."""
    if name in ("sin", "cos"):
        x = np.concatenate([RNG.uniform(-np.pi, np.pi, n), RNG.uniform(-1e4, 1e4, n), np.geomspace(1e-30, 1e30, 500),
                            -np.geomspace(1e-30, 1e30, 500)]).astype(dtype)
        return (x,), getattr(np, name)(x.astype(L))
    if name == "tanh":
        x = np.concatenate([RNG.uniform(-20, 20, n), np.geomspace(1e-30, 1, 500)]).astype(dtype)
        return (x,), np.tanh(x.astype(L))
    if name == "erf":
        x = np.concatenate([RNG.uniform(-6, 6, n // 4), np.geomspace(1e-30, 1, 200)]).astype(dtype)
        return (x,), _erf(x)
    if name == "sigmoid":
        x = np.concatenate([RNG.uniform(-80, 80, n), RNG.uniform(-4, 4, n)]).astype(dtype)
        return (x,), 1 / (1 + np.exp(-x.astype(L)))
    x = np.geomspace(1e-3, 1e3, n).astype(dtype)
    y = RNG.uniform(-12, 12, n).astype(dtype)
    return (x, y), np.power(x.astype(L), y.astype(L))


def run(name, *arguments):
    out = np.zeros(len(arguments[0]), arguments[0].dtype)
    if len(arguments) == 2:
        binary(*arguments, out, len(out), getattr(fx, name))
    else:
        unary(arguments[0], out, len(out), getattr(fx, name))
    return out


def ulp_error(got, exact, dtype):
    """The largest |got - exact| in ulps of the exactly rounded result, where that is finite."""
    rounded = exact.astype(dtype)
    finite = np.isfinite(rounded)
    assert np.all(np.isfinite(got[finite]))
    spacing = np.spacing(np.abs(rounded[finite])).astype(L)
    return float(np.max(np.abs(got[finite].astype(L) - exact[finite]) / spacing))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(CPU_ULPS))
def test_each_function_is_within_its_stated_ulps_over_its_range(name, dtype):
    arguments, exact = inputs(name, dtype)
    assert ulp_error(run(name, *arguments), exact, dtype) <= CPU_ULPS[name]


INF, NAN = math.inf, math.nan
EDGES = [
    ("sin", (0.0,), 0.0), ("sin", (-0.0,), -0.0), ("sin", (INF,), NAN), ("sin", (NAN,), NAN),
    ("cos", (0.0,), 1.0), ("cos", (-INF,), NAN),
    ("tanh", (INF,), 1.0), ("tanh", (-INF,), -1.0), ("tanh", (-0.0,), -0.0), ("tanh", (30.0,), 1.0),
    ("erf", (INF,), 1.0), ("erf", (-INF,), -1.0), ("erf", (-0.0,), -0.0), ("erf", (NAN,), NAN),
    ("pow", (NAN, 0.0), 1.0), ("pow", (1.0, NAN), 1.0), ("pow", (-2.0, 3.0), -8.0), ("pow", (-2.0, 0.5), NAN),
    ("pow", (0.0, -1.0), INF), ("pow", (-0.0, -1.0), -INF), ("pow", (INF, -1.0), 0.0),
    ("sigmoid", (INF,), 1.0), ("sigmoid", (-INF,), 0.0), ("sigmoid", (NAN,), NAN), ("sigmoid", (0.0,), 0.5),
    ("sigmoid", (-800.0,), 0.0), ("sigmoid", (40.0,), 1.0),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ieee_results_at_the_edges(dtype):
    for name, arguments, expected in EDGES:
        got = run(name, *(np.array([a], dtype) for a in arguments))[0]
        expected = dtype(expected)
        assert (np.isnan(got) and np.isnan(expected)) or (got == expected and np.signbit(got) == np.signbit(expected)), \
            (name, arguments, got)


@pytest.mark.parametrize("name", ["sin", "cos", "tanh", "erf", "pow"])
@np.errstate(over="ignore")
def test_float16_and_bfloat16_compute_in_float32(name):
    """As LLVM promotes them: the Float32 function of the value, rounded once."""
    arguments, _ = inputs(name, np.float16, 2000)
    arguments = tuple(np.nan_to_num(a, posinf=100, neginf=-100) for a in arguments)
    in_float32 = run(name, *(a.astype(np.float32) for a in arguments))
    np.testing.assert_array_equal(run(name, *arguments), in_float32.astype(np.float16))
    to_bf16 = getattr(fx, name)
    if len(arguments) == 1:
        got = np.zeros(len(arguments[0]), np.float32)
        unary(arguments[0].astype(np.float32), got, len(got), lambda v: to_bf16(v.to(fx.BFloat16)).to(fx.Float32))
        rounded_in = bfloat16(arguments[0].astype(np.float32))
        np.testing.assert_array_equal(got, bfloat16(run(name, rounded_in)))


def bfloat16(x):
    """float32 -> bfloat16 (round to nearest even), as float32."""
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return rounded.astype(np.uint32).view(np.float32)


def test_integers_become_float32_and_python_numbers_mix_in():
    n = np.arange(-50, 50, dtype=np.int32)
    out = np.zeros(len(n), np.float32)
    unary(n, out, len(n), lambda v: fx.sin(v) + fx.pow(2, v.to(fx.Float32) / 10))
    expected = run("sin", n.astype(np.float32)) + run("pow", np.full(len(n), 2, np.float32), n.astype(np.float32) / 10)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_interpreter_mode_gives_the_compiled_bits(dtype):
    # Float64 sigmoid is on Float64 exp, inlined in the CPU's code and libm's in the interpreter
    for name in sorted(set(CPU_ULPS) - ({"sigmoid"} if dtype == np.float64 else set())):
        arguments, _ = inputs(name, dtype, 300)
        results = []
        for interpret in (False, True):
            flyrt.set_interpret(interpret)
            try:
                results.append(run(name, *arguments))
            finally:
                flyrt.set_interpret(None)
        compiled, interpreted = results
        numbers = ~np.isnan(compiled)
        np.testing.assert_array_equal(np.isnan(compiled), np.isnan(interpreted))
        assert compiled[numbers].tobytes() == interpreted[numbers].tobytes(), name


# -- the GPU targets, compiled here -----------------------------------------------------------


def lowered(name, dtype, target, arch):
    x = np.ones(8, dtype)
    if name == "pow":
        return binary.lower(x, x, x, 8, fx.pow, target=target, arch=arch).device_code["_binary_kernel"]
    return unary.lower(x, x, 8, getattr(fx, name), target=target, arch=arch).device_code["_unary_kernel"]


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_nvidia_kernels_take_them_from_libdevice_and_assemble(dtype):
    for name in sorted(CPU_ULPS):
        ptx = lowered(name, dtype, "cuda", "sm_90")
        assert ".extern" not in ptx and "__nv_" not in ptx, name  # libdevice's code, inlined
        ptxas.assemble(ptx, name)


@pytest.mark.parametrize("arch", ["gfx942", "gfx90a"])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_amd_kernels_take_them_from_ocml_inlined(dtype, arch):
    for name in sorted(CPU_ULPS):
        code = lowered(name, dtype, "hip", arch)
        listed = code_objects.kernel_notes(code, "_binary_kernel" if name == "pow" else "_unary_kernel")
        assert listed[".private_segment_fixed_size"] == 0, name  # no calls, no stack
        assert "s_swappc" not in code_objects.disassembly(code), name


@pytest.mark.parametrize("target,arch,setter,library,pattern", [
    ("cuda", "sm_90", _core.set_libdevice_path, device_libraries.libdevice, "libdevice.10.bc.*FLYDSL_LIBDEVICE"),
    ("hip", "gfx942", _core.set_ocml_path, device_libraries.ocml, "ocml.bc.*FLYDSL_OCML.*rocm-device-libs"),
])
def test_a_missing_device_library_is_a_clear_error(target, arch, setter, library, pattern):
    found = library()  # found first: the first target would hand it over again
    setter("")
    try:
        lowered("exp", np.float32, target, arch)  # needs no library
        with pytest.raises(RuntimeError, match="uses .*sin.* which comes from .*" + pattern):
            lowered("sin", np.float32, target, arch)
    finally:
        setter(found)
    lowered("sin", np.float32, target, arch)


# -- the example: activations and rotary embeddings ----------------------------------------------


@pytest.mark.parametrize("f,reference", [
    (gelu, lambda v: 0.5 * v * (1 + np.vectorize(math.erf)(v / math.sqrt(2)))),
    (gelu_tanh, lambda v: 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3)))),
    (silu, lambda v: v / (1 + np.exp(-v))),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_activations(f, reference, dtype):
    x = np.concatenate([np.linspace(-10, 10, 4001), [np.inf]]).astype(dtype)
    out = np.zeros_like(x)
    activation(x, out, f)
    expected = reference(x[:-1].astype(np.float64))
    np.testing.assert_allclose(out[:-1], expected, rtol=1e-5 if dtype == np.float32 else 1e-3, atol=1e-6)
    assert out[-1] == np.inf


@pytest.mark.parametrize("tokens,width", [(1, 2), (37, 128), (5, 6)])
def test_rotary_embedding(tokens, width):
    x = RNG.standard_normal((tokens, width)).astype(np.float32)
    positions = (np.arange(tokens) * 50).astype(np.int32)
    out = np.full_like(x, np.nan)
    rotary(x, positions, out)
    angle = positions[:, None] * 10000.0 ** (-2 * np.arange(width // 2) / width)
    a, b = x[:, 0::2].astype(np.float64), x[:, 1::2].astype(np.float64)
    expected = np.empty((tokens, width))
    expected[:, 0::2] = a * np.cos(angle) - b * np.sin(angle)
    expected[:, 1::2] = a * np.sin(angle) + b * np.cos(angle)
    np.testing.assert_allclose(out, expected, atol=1e-3 * np.abs(positions).max() / 1000 + 1e-5)


def test_the_examples_compile_for_nvidia_and_amd():
    x = np.ones(300, np.float32)
    positions = np.arange(3, dtype=np.int32)
    for f in (gelu, gelu_tanh, silu):
        ptxas.assemble(activation.lower(x, x, f, target="cuda", arch="sm_90").device_code["activation_kernel"])
        code_objects.check_code_object(activation.lower(x, x, f, target="hip", arch="gfx942")
                                       .device_code["activation_kernel"], "activation_kernel", 3)
    m = x.reshape(3, 100)
    ptxas.assemble(rotary.lower(m, positions, m, target="cuda", arch="sm_90").device_code["rotary_kernel"])
    code_objects.check_code_object(rotary.lower(m, positions, m, target="hip", arch="gfx942")
                                   .device_code["rotary_kernel"], "rotary_kernel", 4)


def approximate_exp2(x):
    return fx.exp2(x, approx=True)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_approximate_exp2_is_one_gpu_instruction_and_the_cpus_exact_exp2(dtype):
    x = np.linspace(-160, 140, 3001).astype(dtype)
    for interpret in (False, True):
        flyrt.set_interpret(interpret)
        try:
            exact, approximate = np.zeros_like(x), np.zeros_like(x)
            unary(x, exact, len(x), fx.exp2)
            unary(x, approximate, len(x), approximate_exp2)
        finally:
            flyrt.set_interpret(None)
        assert approximate.tobytes() == exact.tobytes(), interpret
    ptx = unary.lower(x, x, 8, approximate_exp2, target="cuda", arch="sm_90").device_code["_unary_kernel"]
    # Float64 has no faster form: its exp2 is the exact one
    assert ("ex2.approx.ftz.f32" in ptx) == (dtype != np.float64)
    ptxas.assemble(ptx, "approximate exp2")
    code = unary.lower(x, x, 8, approximate_exp2, target="hip", arch="gfx942").device_code["_unary_kernel"]
    exp_instructions = {i for i in code_objects.instructions(code) if i.startswith("v_exp_f32")}
    assert bool(exp_instructions) == (dtype != np.float64)
