"""Activations and rotary position embeddings: the math functions at work.

``activation(x, out, f)`` applies ``f`` to every element (``gelu``, the erf
form; ``gelu_tanh``, the tanh approximation; ``silu``, x times sigmoid(x);
or any function of a traced value or vector), computing in Float32 whatever
the tensors hold, four elements a thread. ``rotary(x, positions, out)`` rotates each pair
(x[t, 2i], x[t, 2i + 1]) of token t's row by positions[t] * base^(-2i/d),
the angle computed in the kernel (no cos/sin tables)."""

import math

import flyrt.compiler as flyc
import flyrt.expr as fx

BLOCK = 256
LANES = 4  # consecutive elements a thread moves as one vector


def gelu(v):
    return 0.5 * v * (1 + fx.erf(v * (1 / math.sqrt(2))))


def gelu_tanh(v):
    return 0.5 * v * (1 + fx.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v * v * v)))


def silu(v):
    return v * fx.sigmoid(v)


@flyc.kernel(known_block_size=(BLOCK, 1, 1))
def activation_kernel(x: fx.Tensor, out: fx.Tensor, n: fx.Int32, f: fx.Constexpr):
    i = (fx.block_idx.x * BLOCK + fx.thread_idx.x) * LANES
    if i + LANES <= n:
        v = f(fx.Vector.load(x, (i,), LANES, align=LANES * x.dtype.bits // 8).to(fx.Float32))
        v.to(out.dtype).store(out, (i,), align=LANES * out.dtype.bits // 8)
    else:
        for j in range(i, n):
            out[j] = f(x[j].to(fx.Float32))


@flyc.jit
def activation(x: fx.Tensor, out: fx.Tensor, f: fx.Constexpr = gelu):
    n = x.shape[0]
    activation_kernel(x, out, n, f).launch(grid=((n + BLOCK * LANES - 1) // (BLOCK * LANES),), block=(BLOCK,))


@flyc.kernel(known_block_size=(BLOCK, 1, 1))
def rotary_kernel(x: fx.Tensor, positions: fx.Tensor, out: fx.Tensor, base: fx.Float32):
    token = fx.block_idx.x
    width = x.shape[1]
    position = positions[token].to(fx.Float32)
    for i in range(fx.thread_idx.x, width // 2, BLOCK):
        angle = position * fx.pow(base, fx.Float32(-2 * i) / width)
        c, s = fx.cos(angle), fx.sin(angle)
        a, b = x[token, 2 * i].to(fx.Float32), x[token, 2 * i + 1].to(fx.Float32)
        out[token, 2 * i] = a * c - b * s
        out[token, 2 * i + 1] = a * s + b * c


@flyc.jit
def rotary(x: fx.Tensor, positions: fx.Tensor, out: fx.Tensor, base: fx.Float32 = 10000.0):
    rotary_kernel(x, positions, out, base).launch(grid=(x.shape[0],), block=(BLOCK,))
