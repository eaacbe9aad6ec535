"""The K-major fp8 decode (FlashInfer's gated_delta_rule_decode on a
float8_e4m3fn [N, HV, K, V] state with row scales) under the cost model's
schedule and the other register-tile mappings, timed as bench_gdn.py times
(CUDA-graph medians over rotating input sets, cold state). Mappings over
the 64-value register budget print the checks' refusal. Run on the GPU
machine as

    python3 bench/profile/sweep_kmajor_fp8.py

(bench/results/quantized/kmajor/kv-sweep.log)."""
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import bench_gdn as bg  # noqa: E402
import gdn.ops as ops  # noqa: E402

SCHEDULES = [{}] + [dict(columns_per_lane=c, lanes_along_v=l, warps=w)
                    for c, l, w in [(4, 4, 1), (8, 2, 1), (8, 2, 4), (16, 1, 1), (16, 1, 4),
                                    (8, 4, 1), (8, 4, 2), (4, 8, 1)]]


def main():
    for N in (8, 64, 256):
        sets = [bg.make_set(N, 1, 16, 32, 128, 128, "cuda", i, torch.float8_e4m3fn)
                for i in range(4 if N >= 64 else 16)]
        for schedule in SCHEDULES:
            ops.set_schedule(**schedule)
            t, err = bg.time_graph_err(
                lambda s: bg._fi_decode_kv(ops.gated_delta_rule_decode, s), sets)
            print(f"N={N} {schedule or 'cost model'}: {t if t is None else round(t, 2)} "
                  f"{err or ''}", flush=True)
        ops.set_schedule()


if __name__ == "__main__":
    main()
