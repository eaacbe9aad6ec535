"""The L2 state prefetch (docs/cost-model.md#l2-state-prefetch) on pool
decodes: gdn's e4m3 and bf16 pool decodes with state_prefetch_distance
pinned to each of DISTANCES (0: none) beside the cost model's schedule and a
copy of the same bytes, in one process on bench_gdn.py's rotating cold input
sets (CUDA-graph replay medians, µs).

The cost model prefetches the state tile of the CTA a device's worth of CTAs
later on the full grid of a bandwidth-bound decode; this sweep measures
whether the e4m3 pool (issue 24: latency-bound at 1.31 x its copy on the
H100) gains from it, and at which distance. H = 16, HV = 32, K = V = 128,
T = 1, bf16 q/k/v, vk pools updated in place through state_indices.

    python3 bench/profile/pool_prefetch_sweep.py --Ns 64,256 --out DIR
"""
import argparse
import math
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_gdn as bg  # noqa: E402
from floor_table import emit, over_copy  # noqa: E402
from fp8_decode_floor import H, HV, K, V, gdn_decode  # noqa: E402
from gdn import ops  # noqa: E402

DISTANCES = (0, 264, 528, 924, 1848)


def timed(fn, sets, distance):
    """µs of fn over sets with state_prefetch_distance pinned (None: the
    cost model's schedule); None where the schedule is refused."""
    if distance is not None:
        ops.set_schedule(state_prefetch_distance=distance)
    try:
        return bg.time_graph(fn, sets)
    finally:
        ops.set_schedule()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--Ns", default="64,256")
    p.add_argument("--out", type=Path, default=None,
                   help="writes pool_prefetch_sweep.md there")
    a = p.parse_args()
    dev = torch.device("cuda")
    fp8_w = bg.Workload("decode fp8", (1,), torch.float8_e4m3fn, "rw", None, {})
    bf16_w = bg.Workload("decode bf16", (1,), torch.bfloat16, "rw", None, {})
    cols = ["cost model"] + [f"d={d}" for d in DISTANCES]
    rows = []
    for N in [int(n) for n in a.Ns.split(",")]:
        nbytes = fp8_w.nbytes(N, 1, H, HV, K, V)
        R = max(2, min(64, math.ceil(4 * bg.L2_BYTES / nbytes)))
        sets = [bg.make_set(N, 1, H, HV, K, V, dev, i, torch.float8_e4m3fn) for i in range(R)]
        for pool, w in (("state_vk", fp8_w), ("state_vk_bf16", bf16_w)):
            t = {"copy": bg.time_copy(w.nbytes(N, 1, H, HV, K, V), dev)}
            fn = lambda s, pool=pool: gdn_decode(s, pool)  # noqa: E731
            t["cost model"] = timed(fn, sets, None)
            for d in DISTANCES:
                t[f"d={d}"] = timed(fn, sets, d)
            print(f"# N={N} {pool}: {t}", flush=True)
            rows.append((N, "e4m3" if pool == "state_vk" else "bf16", t))
        del sets
    lines = [f"# L2 state prefetch on pool decodes, {torch.cuda.get_device_name()}", "",
             "CUDA-graph replay medians over rotating cold input sets (bench_gdn.py's), µs; "
             "in brackets: the time over a copy of the same bytes (the pool's state, scales, "
             "q, k, v, o, gates). d = state_prefetch_distance pinned (CTAs ahead; 0: none). "
             "H = 16, HV = 32, K = V = 128, T = 1, bf16 q/k/v, vk pools in place through "
             "state_indices.", "",
             "| N | pool | copy | " + " | ".join(cols) + " |",
             "|---|---|---|" + "---|" * len(cols)]
    for N, pool, t in rows:
        lines.append(f"| {N} | {pool} | {t['copy']:.2f} | " + " | ".join(over_copy(t, cols)) + " |")
    emit(lines, a.out, "pool_prefetch_sweep.md")


if __name__ == "__main__":
    main()
