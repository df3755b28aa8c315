"""PA decode's matrix-unit kernel compiled for gfx942 (compile-only, no GPU
needed): head 128, 16 query heads on 1 KV head, pages of 16, both FP8
formats, fast mode and bounds checks; registers, LDS, scratch, spills and the
instruction mix read from each code object by llvm-readelf / llvm-objdump.
Given a checkout of FlyDSL's sources, FlyDSL's own tile PA decode kernel
(kernels/attention/pa_decode_tile.py; PyPI's wheels carry no kernels) is
compiled beside it by the pinned flydsl for the same shape, and read the same
way: its ISA assembled and linked by LLVM 19 into a code object.
Run: .venv/bin/python tests/bench/bench_amdgpu_pa_decode.py [FLYDSL_CHECKOUT]
(prints; never fails)."""

import collections
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ["FLYDSL_RUNTIME_ENABLE_CACHE"] = "0"  # compile every time: a cached object hides a change
here = Path(__file__).resolve()
sys.path[:0] = [str(here.parents[2] / "notebooks"), str(here.parents[1] / "runtime")]

import code_objects  # noqa: E402
import flyrt  # noqa: E402
import kernels.pa_decode_fp8 as pa  # noqa: E402
from kernels.pa_reference import make_case  # noqa: E402

COLUMNS = ("VGPR", "SGPR", "LDS B", "scratch B", "VGPR spills", "instructions", "v_mfma", "ds_bpermute",
           "v_cndmask")

# Run in a child process (FlyDSL reads its compile-only switches at import):
# the checkout's tile kernel for argv[2] partitions, its ISA dumped into argv[3].
FLYDSL_TILE_COMPILE = """
import os, sys
sys.path.insert(0, sys.argv[1])
from flyrt.flydsl_adapter import toolchain
toolchain.use_compile_only("gfx942")
os.environ.update(FLYDSL_DEBUG_DUMP_ASM="1", FLYDSL_DUMP_DIR=sys.argv[3])
import torch
import flydsl.compiler as flyc
from kernels.attention.pa_decode_tile import compile_pa_decode_tile
head, group, page, seqs, blocks_per_seq = 128, 16, 16, 2, 4
launch = compile_pa_decode_tile(head_dim=head, query_group_size=group, block_size=page,
                                num_partitions=int(sys.argv[2]), query_dtype="bf16")["launch"]
query = torch.zeros(seqs, group, head, dtype=torch.bfloat16)
fp8 = torch.float8_e4m3fnuz  # gfx942's FP8
key_cache = torch.zeros(seqs * blocks_per_seq, 1, head // 16, page, 16, dtype=fp8)
value_cache = torch.zeros(seqs * blocks_per_seq, 1, page // 16, head, 16, dtype=fp8)
block_tables = torch.arange(seqs * blocks_per_seq, dtype=torch.int32).reshape(seqs, -1)
lengths = torch.full((seqs,), blocks_per_seq * page, dtype=torch.int32)
partials, scale = torch.empty(1), torch.ones(1)
flyc.compile(launch, torch.empty_like(query), partials, partials, partials, query, key_cache, value_cache,
             block_tables, lengths, scale, scale, blocks_per_seq, seqs, 1, 0, 0, query.stride(0),
             query.stride(1), None)
"""


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


def flydsl_tile_kernel(checkout, partitions):
    """FlyDSL's tile kernel's code object, linked from the ISA its compile dumped."""
    with tempfile.TemporaryDirectory() as dump:
        done = subprocess.run([sys.executable, "-c", FLYDSL_TILE_COMPILE, str(checkout), str(partitions), dump],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"FlyDSL's tile kernel did not compile from {checkout}:\n{done.stderr[-3000:]}")
        isa = next(Path(dump).glob("pa_decode_tile_kernel_*/*_final_isa.s"))
        # FlyDSL's ISA names its target with an explicit "unknown" environment.
        subprocess.run([code_objects.tool("llvm-mc"), "-triple=amdgcn-amd-amdhsa-unknown", "-mcpu=gfx942",
                        "-filetype=obj", str(isa), "-o", f"{dump}/kernel.o"], check=True)
        subprocess.run([code_objects.tool("ld.lld"), "-shared", f"{dump}/kernel.o", "-o", f"{dump}/kernel.hsaco"],
                       check=True)
        return isa.parent.name, Path(f"{dump}/kernel.hsaco").read_bytes()


def row(image, name):
    notes = code_objects.kernel_notes(image, name)
    mnemonics = re.findall(r"^\s+([a-z][a-z0-9_]*)", code_objects.disassembly(image), re.M)
    count = collections.Counter(m for m in mnemonics if m != "s_nop")  # padding left out
    return (notes[".vgpr_count"], notes[".sgpr_count"], notes[".group_segment_fixed_size"],
            notes[".private_segment_fixed_size"], notes[".vgpr_spill_count"], sum(count.values()),
            sum(n for m, n in count.items() if m.startswith("v_mfma")), count["ds_bpermute_b32"],
            sum(n for m, n in count.items() if m.startswith("v_cndmask")))


def show(label, values):
    print(f"{label:44s}" + "".join(f"{v:>13}" for v in values))


def main():
    checkout = Path(sys.argv[1]) if len(sys.argv) > 1 else None
    print("PA decode's matrix-unit kernel on gfx942 (head 128, 16/1 heads, page 16), compile-only; "
          "instructions counted without s_nop padding")
    print(f"{'kernel':44s}" + "".join(f"{c:>13s}" for c in COLUMNS))
    for fmt in ("e4m3fnuz", "e4m3fn"):
        for checked in (False, True):
            name = "pa_decode_wave_kernel"
            show(f"flyrt, {fmt}, {'bounds checks' if checked else 'fast'}",
                 row(compile_kernel(fmt, checked)[name], name))
    if checkout is None:
        print("(FlyDSL's own kernel: give a checkout of its sources as the argument)")
        return
    commit = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "not a git checkout"
    import flydsl
    for partitions in (1, 4):
        name, image = flydsl_tile_kernel(checkout, partitions)
        show(f"FlyDSL {flydsl.__version__} tile ({commit}), {partitions} part.", row(image, name))
    print("FlyDSL's tile kernel quantizes the query and the probabilities to FP8 (fp8 x fp8 MFMA, K = 32);"
          " with more than one partition it is combined by a second kernel")


if __name__ == "__main__":
    main()
