"""One prefill through gdn's FLA chunk entry (gdn.ops.chunk_gated_delta_rule),
between cudaProfilerStart / Stop, for Nsight Compute: a varlen mix of
bench/bench_prefill.py or a fixed batch, the scan's warps pinned or the cost
model's. Qwen3-Next's shapes (H = 16, HV = 32, K = V = 128), bench_prefill's
inputs (make_set). Run on the GPU machine as

    ncu --profile-from-start off -k regex:gdn [--metrics ...|--set full] \\
        python3 bench/profile/prefill_once.py WORKLOAD [WARPS]

WORKLOAD: long (1 x 16384 + 31 x 64), uniform (64 x 256) or NxT (a fixed
batch, e.g. 4x4096); WARPS: the scan's warps (0 or none: the cost model's).
Prints the median of 5 timed calls (CUDA events, after the profiled one)."""
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import bench_prefill as bp  # noqa: E402
from gdn import ops  # noqa: E402


def main():
    which = sys.argv[1]
    warps = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    shapes = (16, 32, 128, 128)
    if which == "long":
        s = bp.make_set([16384] + [64] * 31, None, *shapes, "cuda")
    elif which == "uniform":
        s = bp.make_set([256] * 64, None, *shapes, "cuda")
    else:
        N, T = map(int, which.split("x"))
        s = bp.make_set(None, (N, T), *shapes, "cuda")
    pins = {"warps": warps} if warps else {}
    call = (lambda: bp._pinned(pins, s)) if pins else (
        lambda: bp._fla_signature(ops.chunk_gated_delta_rule, s))
    call()  # compiles
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    call()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(5):
        start.record()
        call()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    print(f"{which} warps={warps or 'cost model'}: {sorted(times)[2]:.1f} us (median of 5, events)")


if __name__ == "__main__":
    main()
