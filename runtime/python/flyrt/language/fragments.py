"""``fx.a_fragment`` and ``fx.b_fragment``: a lane's ``fx.mma`` fragments of a
block of a 2-D array, read the way the tensor cores want them.

- ``fx.a_fragment(tile, row, col)``: this lane's ``a`` of the 16 x K block of
  A whose top left element is ``tile[row, col]`` (K = 16 for Float16 and
  BFloat16, 32 for FP8): the elements ``fx.a_position`` names, offset by
  (row, col).
- ``fx.b_fragment(tile, row, col)``: this lane's ``b`` of the K x 8 block of
  B at ``tile[row, col]``; with ``transposed=True`` the tile holds B's
  transpose (N rows of K: a K cache's [token, head dimension], say) and
  (row, col) is the block's (n, k) corner there.

``row`` and ``col`` are the same in every lane of the warp, and every lane
reaches the call (as ``fx.mma``). The result is what gathering those
elements one by one would give, on every target, bounds-checked as
``tile[i, j]``.

On NVIDIA GPUs, from a shared array (``fx.shared``) whose rows are a multiple
of 16 bytes, with ``col`` a Python int at a 16-byte boundary, a fragment is
one ``ldmatrix`` of the warp: a (16-bit or FP8) ``.x4``, b ``.x2.trans``
(16-bit) or ``.x2`` (``transposed``; 16-bit or FP8). An FP8 B that is not
transposed is gathered (ldmatrix transposes 16-bit words, not bytes), as is
everything on other targets: there each lane's loads are its own.
"""

from ..core import dtypes
from ..core.errors import KernelError
from ..core.user_code import user_line
from .block import lane_id
from .matrix import a_position, b_position
from .tensor import TensorValue, _checks_bounds
from .tracing import current, line
from .values import Value, constant
from .vector import Vector

ROW_BYTES = 16  # an ldmatrix row: eight 16-bit words, at a multiple of 16 bytes


def a_fragment(tile, row, col):
    """This lane's fx.mma ``a`` fragment of the 16 x K block at tile[row, col]."""
    k = _fragment_k("a_fragment", tile)
    if _ldmatrix_reads(tile, col):
        lane = lane_id() % 32
        per_row = ROW_BYTES // _itemsize(tile)
        return _matrix_load(tile, row + lane % 8 + 8 * ((lane // 8) % 2), col + per_row * (lane // 16), 4, False)
    return _gather(tile, row, col, [a_position(i, k=k) for i in range(k // 2)])


def b_fragment(tile, row, col, transposed=False):
    """This lane's fx.mma ``b`` fragment of the K x 8 block at tile[row, col]
    (``transposed``: the 8 x K block of B's transpose at tile[row, col])."""
    k = _fragment_k("b_fragment", tile)
    positions = [b_position(i, k=k) for i in range(k // 4)]
    if transposed:
        if _ldmatrix_reads(tile, col):
            lane = lane_id() % 32
            per_row = ROW_BYTES // _itemsize(tile)
            return _matrix_load(tile, row + lane % 8, col + per_row * ((lane // 8) % 2), 2, False)
        return _gather(tile, row, col, [(j, i) for i, j in positions])
    if k == 16 and _ldmatrix_reads(tile, col):
        return _matrix_load(tile, row + lane_id() % 16, col, 2, True)
    return _gather(tile, row, col, positions)


def _fragment_k(name, tile):
    if not isinstance(tile, TensorValue) or tile.ndim != 2:
        raise KernelError(f"fx.{name} reads a 2-D tensor or shared array, not {tile!r}", *user_line())
    if tile.dtype in (dtypes.Float16, dtypes.BFloat16):
        return 16
    if getattr(tile.dtype, "is_fp8", False):
        return 32
    raise KernelError(f"fx.{name} of a {tile.dtype.name} array: fx.mma takes Float16, BFloat16 and FP8 fragments",
                      *user_line())


def _itemsize(tile):
    return tile.dtype.bits // 8


def _ldmatrix_reads(tile, col):
    """Whether an ldmatrix can read this tile at column `col`: every row
    address a lane names is then a multiple of 16 bytes (shared arrays start
    at 64-byte boundaries)."""
    if current().target.name != "nvptx" or tile.shared_shape is None or isinstance(col, Value):
        return False
    return (tile.shared_shape[1] * _itemsize(tile)) % ROW_BYTES == 0 and (col * _itemsize(tile)) % ROW_BYTES == 0


def _matrix_load(tile, row, col, matrices, transposed):
    indices = tile._indices((row, col))
    if _checks_bounds():
        # A row outside the tile reads row 0 instead (and the launch records the IndexError): the warp's
        # lanes must all reach the ldmatrix.
        offset = tile._checked(indices, lambda: tile._offset(indices), lambda: constant(0, dtypes.Int64),
                               ROW_BYTES // _itemsize(tile))
    else:
        offset = tile._offset(indices)
    return Value(current().builder.matrix_load(tile.pointer, offset.id, matrices, transposed, line()), tile.dtype)


def _gather(tile, row, col, positions):
    return Vector.from_elements([tile[row + r, col + c] for r, c in positions])
