"""How fast an fp32 verify (MTP) can run: the floor of its memory traffic
beside gdn's.

A verify of T draft tokens on an fp32 pool (FlashInfer's
gated_delta_rule_mtp buffers, disable_state_update) reads each sequence's
state once through its slot index and writes the state after every token:
T + 1 state-sized transfers, T of them writes. bench_gdn.py's table divides
every row by a copy of the same bytes, half read and half written; this
script measures the verify's own pattern without its math, in one process
on the same rotating cold input sets as bench_gdn.py (CUDA-graph replay
medians, µs):

  copy             the table's copy of the row's bytes (bench_gdn.time_copy)
  step-state copy  a Triton kernel that loads each sequence's slot index,
                   reads that slot's state once and writes it to each of
                   the T per-token states: the verify's bytes and its one
                   dependent index load, no recurrence
  gdn              gdn's verify (the table's row:
                   gdn.ops.gated_delta_rule_mtp, the cost model's schedule)
  gdn, W warps     the same with warps = W pinned (ops.set_schedule)

H = 16, HV = 32, K = V = 128, bf16 q/k/v, fused gating, qk L2 norm. Run on
the GPU machine with the Python package on the path:

    python3 bench/profile/verify_floor.py --Ts 4,12 --Ns 1,8,64,256 --out DIR
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

H, HV, K, V = 16, 32, 128, 128
_kernel = None


def step_state_copy(state, idx, inter):
    """inter[n, t] <- state[idx[n]] for every n and t < T: one program per
    4096 elements of a slot, each loading idx[n], then its block of the
    slot once, then storing it T times."""
    global _kernel
    import triton
    import triton.language as tl
    if _kernel is None:
        @triton.jit
        def _k(s, idx, out, slot_elems, T: tl.constexpr, BLOCK: tl.constexpr):
            n = tl.program_id(1)
            slot = tl.load(idx + n).to(tl.int64)
            offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
            m = offs < slot_elems
            x = tl.load(s + slot * slot_elems + offs, mask=m)
            for t in tl.static_range(T):
                tl.store(out + (n.to(tl.int64) * T + t) * slot_elems + offs, x, mask=m)
        _kernel = _k
    slot_elems = state[0].numel()
    T = inter.shape[1]
    block = 4096
    grid = (triton.cdiv(slot_elems, block), idx.numel())
    _kernel[grid](state, idx, inter, slot_elems, T=T, BLOCK=block, num_warps=4)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--Ts", default="4,12")
    p.add_argument("--Ns", default="1,8,64,256")
    p.add_argument("--warps", default="2", help="pinned warps a CTA, one column each")
    p.add_argument("--out", type=Path, default=None, help="writes verify_floor.md there")
    a = p.parse_args()
    dev = torch.device("cuda")
    w = bg.Workload("verify", (4, 12), torch.float32, "verify", None, {})
    warps = [int(x) for x in a.warps.split(",") if x]
    cols = ["copy", "step-state copy", "gdn"] + [f"gdn, {x} warps" for x in warps]
    rows = []
    for T in [int(t) for t in a.Ts.split(",")]:
        for N in [int(n) for n in a.Ns.split(",")]:
            nbytes = w.nbytes(N, T, H, HV, K, V)
            R = max(2, min(64, math.ceil(4 * bg.L2_BYTES / nbytes)))
            sets = [bg.make_set(N, T, H, HV, K, V, dev, i, torch.float32, steps=T)
                    for i in range(R)]
            verify = lambda s: bg._fi_mtp(ops.gated_delta_rule_mtp, s)  # noqa: E731
            t = {"copy": bg.time_copy(nbytes, dev),
                 "step-state copy": bg.time_graph(
                     lambda s: step_state_copy(s["state_vk"], s["idx"], s["inter"]), sets),
                 "gdn": bg.time_graph(verify, sets)}
            for x in warps:
                ops.set_schedule(warps=x)
                try:
                    t[f"gdn, {x} warps"] = bg.time_graph(verify, sets)
                finally:
                    ops.set_schedule()
            rows.append((T, N, nbytes, t))
            print(f"# {rows[-1]}", flush=True)
            del sets
    lines = [f"# fp32 verify floors on {torch.cuda.get_device_name()}", "",
             "CUDA-graph replay medians over rotating cold input sets (bench_gdn.py's), "
             "µs; in brackets: the time over the copy's. H = 16, HV = 32, K = V = 128, "
             "bf16 q/k/v, an fp32 pool read through state_indices and an fp32 state "
             "written after every token. gdn / floor: gdn's time over the step-state "
             "copy's.", "",
             "| T | N | MB | " + " | ".join(cols) + " | gdn / floor |",
             "|---|---|---|" + "---|" * (len(cols) + 1)]
    for T, N, nbytes, t in rows:
        ratio = (f"{t['gdn'] / t['step-state copy']:.2f}"
                 if t["gdn"] and t["step-state copy"] else "—")
        lines.append(f"| {T} | {N} | {nbytes / 1e6:.1f} | " + " | ".join(over_copy(t, cols))
                     + f" | {ratio} |")
    emit(lines, a.out, "verify_floor.md")


if __name__ == "__main__":
    main()
