"""One gdn call of a bench_gdn.py workload under Nsight Compute: the call is
compiled and warmed up, then launched once inside the profiled range. Run on
the GPU machine as

    ncu --clock-control none --profile-from-start off --section SpeedOfLight \\
        python3 bench/profile/profile_workload.py --only "fp8 pool" --N 256

(--only: a substring of the workload's name, as bench_gdn.py --only)."""
import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import bench_gdn as bg  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--only", required=True)
    p.add_argument("--N", type=int, default=256)
    p.add_argument("--T", type=int, default=None)
    p.add_argument("--H", type=int, default=16)
    p.add_argument("--HV", type=int, default=32)
    a = p.parse_args()
    w = next(w for w in bg.WORKLOADS if a.only in w.name)
    T = a.T or w.Ts[0]
    steps = T if w.passes == "verify" else 0
    s = bg.make_set(a.N, T, a.H, a.HV, 128, 128, torch.device("cuda"), 0, w.sdt, steps,
                    w.kda == "sglang", w.kda == "fla")
    for _ in range(3):
        w.gdn(s)
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    w.gdn(s)
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
    print(f"profiled: {w.name}, N = {a.N}, T = {T}")


if __name__ == "__main__":
    main()
