"""One replayed-verify round of bench_replay.py's (one layer) under Nsight
Compute: the verify writing the windows, the commit of a round that
accepted nothing and of one that accepted all T, each launched once inside
the profiled range (compiled and warmed up before it). Run on the GPU
machine as

    ncu --clock-control none --profile-from-start off -k regex:gdn \\
        --section SpeedOfLight --section Occupancy --section LaunchStats \\
        --section WarpStateStats --section MemoryWorkloadAnalysis \\
        python3 bench/profile/profile_replay.py --state float32 --T 4 --N 64

(docs/GPU.md; bench/results/replay/README.md reads the result)."""
import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import bench_replay as br  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--state", default="float32", choices=["float32", "bfloat16"])
    p.add_argument("--T", type=int, default=4)
    p.add_argument("--N", type=int, default=64)
    a = p.parse_args()
    s = br.make_set(getattr(torch, a.state), a.T, a.N, 1, 0, torch.device("cuda"))
    verify = lambda: br.replay_verify(br.ops.fused_sigmoid_gating_delta_rule_update, s)  # noqa: E731

    def commit(accepted):
        s["accepted"].fill_(accepted)
        br.gdn_replay_commit(s)

    for _ in range(3):  # compile and warm up
        verify(), commit(0), commit(a.T)
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    verify()
    commit(0)
    commit(a.T)
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
    print(f"profiled: verify, commit(accepted 0), commit(accepted {a.T}); "
          f"{a.state} T = {a.T} N = {a.N}")


if __name__ == "__main__":
    main()
