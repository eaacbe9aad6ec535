#!/usr/bin/env python3
"""The kernels one call of gdn's fp8 (e4m3) and bf16 pool decode launches
through the Python entry point (FlashInfer's gated_delta_rule_decode_pretranspose
signature), with their grid, block, registers and duration (torch.profiler,
eager calls over the input sets), beside the CUDA-graph replay time of the
same calls (bench_gdn.py's time_graph): whether an entry point's time is its
kernel's, and which schedule the cost model gave it. Cases: the cost model's
e4m3 decode, the mma form (reductions = mma) at 4 and 2 tiles a warp, the
bf16 pool. Qwen3-Next shapes (H = 16, HV = 32, K = V = 128), T = 1, vk pools
in place through state_indices. Needs CUDA.

Usage: python3 bench/profile/entry_kernels.py [--Ns 64,8]
"""
import argparse
import json
import os
import sys
import tempfile

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import bench_gdn as bg  # noqa: E402
import gdn.ops as ops  # noqa: E402
from fp8_decode_floor import gdn_decode as decode  # noqa: E402

H, HV, K, V = 16, 32, 128, 128
CASES = [("fp8, the cost model's schedule", {}, "state_vk"),
         ("fp8, reductions = mma, 4 tiles a warp", dict(reductions="mma", columns_per_lane=8),
          "state_vk"),
         ("fp8, reductions = mma, 2 tiles a warp", dict(reductions="mma", columns_per_lane=4),
          "state_vk"),
         ("bf16, the cost model's schedule", {}, "state_vk_bf16")]


def kernels(fn, sets):
    """The GPU events (kernels, copies, memsets) of one eager call a set."""
    for s in sets:
        fn(s)
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                            torch.profiler.ProfilerActivity.CUDA]) as p:
        for s in sets:
            fn(s)
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as d:
        trace = os.path.join(d, "trace.json")
        p.export_chrome_trace(trace)
        events = json.load(open(trace))["traceEvents"]
    return [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--Ns", default="64,8")
    a = p.parse_args()
    dev = torch.device("cuda")
    print(f"# {torch.cuda.get_device_name()}")
    for N in [int(n) for n in a.Ns.split(",")]:
        sets = [bg.make_set(N, 1, H, HV, K, V, dev, i, torch.float8_e4m3fn) for i in range(4)]
        for name, schedule, pool in CASES:
            ops.set_schedule(**schedule)
            fn = lambda s, pool=pool: decode(s, pool)  # noqa: E731
            us = bg.time_graph(fn, sets)
            ev = kernels(fn, sets)
            ops.set_schedule()
            print(f"N={N} {name}: graph {us:.2f} us; {len(ev)} GPU events for {len(sets)} calls")
            for e in ev:
                x = e.get("args", {})
                print(f"   {e['cat']} {e['name'][:60]} grid {x.get('grid')} block "
                      f"{x.get('block')} registers {x.get('registers per thread')} "
                      f"shared {x.get('shared memory')} {e.get('dur')} us")
        del sets
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
