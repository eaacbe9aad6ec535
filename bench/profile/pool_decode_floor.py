"""What a pool costs a decode at small N: floors beside gdn's decode.

A pool decode reads its slot index first and only then knows where the state
is, so its state loads wait for one more memory round trip than a decode of a
state in place, or than the plain device copy bench_gdn.py's table compares
every row with. This script times, in one process on the same rotating cold
input sets as bench_gdn.py (CUDA-graph replay medians):

  copy          the table's copy of the row's bytes (bench_gdn.time_copy)
  indexed copy  a Triton kernel that loads each sequence's slot index and then
                reads and writes that slot's state in place: the state's bytes
                behind the same dependent index load, and no math
  gdn in place  gdn's decode of the same state without indices (FlashInfer's
                pretranspose entry point, initial_state given)
  gdn pool      gdn's decode through the slot indices (the table's row)

for the bf16 and fp32 pools (H = 16, HV = 32, K = V = 128), and prints a
markdown table. Run on the GPU machine with the Python package on the path:

    python3 bench/profile/pool_decode_floor.py --Ns 1,8 --out DIR
"""
import argparse
import math
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import bench_gdn as bg  # noqa: E402
from floor_table import emit, over_copy  # noqa: E402
from gdn import ops  # noqa: E402

_indexed_copy_kernel = None


def indexed_copy(state, idx):
    """state[idx[n]] <- state[idx[n]] for every n, one program per 4096
    elements of a slot, each program loading idx[n] before its state."""
    global _indexed_copy_kernel
    import triton
    import triton.language as tl
    if _indexed_copy_kernel is None:
        @triton.jit
        def _kernel(s, idx, slot_elems, BLOCK: tl.constexpr):
            n = tl.program_id(1)
            slot = tl.load(idx + n).to(tl.int64)
            offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
            m = offs < slot_elems
            p = s + slot * slot_elems + offs
            tl.store(p, tl.load(p, mask=m), mask=m)
        _indexed_copy_kernel = _kernel
    slot_elems = state[0].numel()
    block = 4096
    grid = (triton.cdiv(slot_elems, block), idx.numel())
    _indexed_copy_kernel[grid](state, idx, slot_elems, BLOCK=block, num_warps=4)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--Ns", default="1,8")
    p.add_argument("--out", type=Path, default=None, help="writes pool_decode_floor.md there")
    a = p.parse_args()
    dev = torch.device("cuda")
    H, HV, K, V, T = 16, 32, 128, 128, 1
    rows = []
    for sdt in (torch.bfloat16, torch.float32):
        w = bg.Workload("decode", (1,), sdt, "rw", None, {})
        for N in [int(n) for n in a.Ns.split(",")]:
            nbytes = w.nbytes(N, T, H, HV, K, V)
            R = max(2, min(64, math.ceil(4 * bg.L2_BYTES / nbytes)))
            sets = [bg.make_set(N, T, H, HV, K, V, dev, i, sdt) for i in range(R)]
            f = ops.gated_delta_rule_decode_pretranspose
            t = {
                "copy": bg.time_copy(nbytes, dev),
                "indexed copy": bg.time_graph(lambda s: indexed_copy(s["state_vk"], s["idx"]),
                                              sets),
                "gdn in place": bg.time_graph(lambda s: bg._fi_pretranspose(f, s, pool=False),
                                              sets),
                "gdn pool": bg.time_graph(lambda s: bg._fi_pretranspose(f, s, pool=True), sets),
            }
            rows.append((str(sdt).split(".")[-1], N, nbytes, t))
            print(f"# {rows[-1]}", flush=True)
            del sets
    cols = ["copy", "indexed copy", "gdn in place", "gdn pool"]
    lines = [f"# Pool decode floors on {torch.cuda.get_device_name()}", "",
             "CUDA-graph replay medians over rotating cold input sets (bench_gdn.py's), "
             "µs; in brackets: the time over the copy's. "
             "H = 16, HV = 32, K = V = 128, T = 1, bf16 q/k/v.", "",
             "| state | N | MB | " + " | ".join(cols) + " | pool - in place | "
             "indexed copy - copy |",
             "|---|---|---|" + "---|" * (len(cols) + 2)]
    for dt, N, nbytes, t in rows:
        cells = over_copy(t, cols)
        d1 = t["gdn pool"] - t["gdn in place"] if t["gdn pool"] and t["gdn in place"] else None
        d2 = t["indexed copy"] - t["copy"] if t["indexed copy"] else None
        diffs = [f"{d:+.2f}" if d is not None else "—" for d in (d1, d2)]
        lines.append(f"| {dt} | {N} | {nbytes / 1e6:.1f} | " + " | ".join(cells + diffs) + " |")
    emit(lines, a.out, "pool_decode_floor.md")


if __name__ == "__main__":
    main()
