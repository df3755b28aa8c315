"""PA decode's matrix-unit kernel compiled for gfx942 (compile-only, no GPU
needed): head 128, 16 query heads on 1 KV head, pages of 16, both FP8
formats, fast mode and bounds checks; registers, LDS, scratch, spills and the
instruction mix read from each code object by llvm-readelf / llvm-objdump.
Run: .venv/bin/python tests/bench/bench_amdgpu_pa_decode.py (prints; never
fails)."""

import collections
import os
import re
import sys
from pathlib import Path

os.environ["FLYDSL_RUNTIME_ENABLE_CACHE"] = "0"  # compile every time: a cached object hides a change
here = Path(__file__).resolve()
sys.path[:0] = [str(here.parents[2] / "notebooks"), str(here.parents[1] / "runtime")]

import code_objects  # noqa: E402
import flyrt  # noqa: E402
import kernels.pa_decode_fp8 as pa  # noqa: E402
from kernels.pa_reference import make_case  # noqa: E402


def compile_kernel(fmt, checked):
    flyrt.set_compile_only("gfx942")
    flyrt.set_bounds_checks(checked)
    wanted, pa.USE_MMA_KERNEL = pa.USE_MMA_KERNEL, True
    try:
        pa.pa_decode_ps_launch(**make_case(num_seqs=2, num_q_heads=16, num_kv_heads=1, head_size=128,
                                           fmt=fmt, seed=1))
        return pa.compile_pa_decode_ps(None, False, True, 16, False, 1, fmt)["launch"].device_code()
    finally:
        pa.USE_MMA_KERNEL = wanted
        flyrt.set_compile_only(None)
        flyrt.set_bounds_checks(None)


def main():
    name = "pa_decode_mma_kernel"
    columns = ("VGPR", "SGPR", "LDS B", "scratch B", "VGPR spills", "instructions", "v_mfma", "ds_bpermute",
               "v_cndmask")
    print("PA decode's matrix-unit kernel on gfx942 (head 128, 16/1 heads, page 16), compile-only")
    print(f"{'format, mode':28s}" + "".join(f"{c:>13s}" for c in columns))
    for fmt in ("e4m3fnuz", "e4m3fn"):
        for checked in (False, True):
            image = compile_kernel(fmt, checked)[name]
            notes = code_objects.kernel_notes(image, name)
            mnemonics = re.findall(r"^\s+([a-z][a-z0-9_]*)", code_objects.disassembly(image), re.M)
            count = collections.Counter(m for m in mnemonics if m != "s_nop")  # padding left out
            row = (notes[".vgpr_count"], notes[".sgpr_count"], notes[".group_segment_fixed_size"],
                   notes[".private_segment_fixed_size"],
                   notes[".vgpr_spill_count"], sum(count.values()),
                   sum(n for m, n in count.items() if m.startswith("v_mfma")), count["ds_bpermute_b32"],
                   sum(n for m, n in count.items() if m.startswith("v_cndmask")))
            label = f"{fmt}, {'bounds checks' if checked else 'fast'}"
            print(f"{label:28s}" + "".join(f"{v:>13}" for v in row))


if __name__ == "__main__":
    main()
