#!/usr/bin/env python3
"""Compile-time benchmark of the gdn compiler (no GPU needed: CUDA kernels are
compiled to PTX in-process).

Prints, for the Qwen3-Next decode kernel (N=8, T=1, H=16, HV=32, K=V=128) and
a few other shapes (a long prefill among them, two kernels):
  cold compile   .mlir description -> PTX, fresh compiler, no disk cache: the
                 minimum over --cold-runs fresh compilers in this process
                 (process-wide first-use costs not included)
  disk hit       a fresh compiler finding the PTX in the on-disk cache
  warm hit       gdnCompileDesc of an already compiled kernel (C API, ctypes)
Usage: python3 bench/bench_compile.py [--out FILE]
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
# The repository's package needs a libGDNCAPI.so: the build tree's unless named.
_built = os.path.join(os.path.dirname(__file__), "..", "build", "lib", "libGDNCAPI.so")
if "GDN_LIBRARY" not in os.environ and os.path.exists(_built):
    os.environ["GDN_LIBRARY"] = os.path.abspath(_built)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", default=None)
    p.add_argument("--cold-runs", type=int, default=5,
                   help="fresh compilers per shape; the cold column is their minimum")
    args = p.parse_args()
    cache = tempfile.mkdtemp(prefix="gdn-cache-")
    os.environ["GDN_CACHE_DIR"] = cache
    import gdn

    common = dict(input_dtype="bfloat16", gate_dtype="bfloat16", decay="fused_gating",
                  beta="logits", qk_l2norm=True, layout="vk", initial_state=True,
                  final_state=True, state_in_place=True, target="cuda", chip="sm_90a")
    # FLA-style final state only (kv, log-space g, given beta, separate
    # initial and final states): the heaviest kernels, T = 12 on tensor cores
    # (N = 8) and the token loop fed by a producer warp (N = 1).
    fla = dict(common, gate_dtype="float32", decay="log_space", beta="given",
               layout="kv", state_in_place=False)
    shapes = {
        "qwen3-next decode N=8": dict(common, N=8, T=1, H=16, HV=32, K=128, V=128),
        "qwen3-next MTP N=8 T=4": dict(common, N=8, T=4, H=16, HV=32, K=128, V=128),
        "qwen3.5-27b N=64": dict(common, N=64, T=1, H=16, HV=48, K=128, V=128),
        "K=128 V=64 N=4 T=2": dict(common, N=4, T=2, H=4, HV=8, K=128, V=64),
        "FLA-style T=12 N=8 (tensor cores)": dict(fla, N=8, T=12, H=16, HV=32, K=128, V=128),
        "FLA-style T=12 N=1 (token loop, producer)": dict(fla, N=1, T=12, H=16, HV=32, K=128,
                                                          V=128),
        # Two kernels (the chunks' solves, then the scan), compiled side by
        # side on two threads (gdn-split-kernel-modules).
        "FLA-style prefill T=4096 N=1 (chunk_parallel)": dict(fla, N=1, T=4096, H=16, HV=32,
                                                              K=128, V=128),
    }
    lines = ["| kernel | cold compile ms | disk hit ms | warm hit us (C API via ctypes) |",
             "|---|---|---|---|"]
    for name, shape in shapes.items():
        cold = float("inf")
        os.environ["GDN_CACHE_DIR"] = "off"  # read when a compiler is made
        try:
            for _ in range(max(1, args.cold_runs)):
                t0 = time.perf_counter()
                gdn.Compiler().compile(**shape)
                cold = min(cold, (time.perf_counter() - t0) * 1e3)
        finally:
            os.environ["GDN_CACHE_DIR"] = cache
        c = gdn.Compiler()
        c.compile(**shape)  # into the disk cache
        warm = []
        for _ in range(2000):
            t0 = time.perf_counter()
            c.compile(**shape)
            warm.append((time.perf_counter() - t0) * 1e6)
        c2 = gdn.Compiler()
        t0 = time.perf_counter()
        c2.compile(**shape)
        disk = (time.perf_counter() - t0) * 1e3
        lines.append(f"| {name} | {cold:.1f} | {disk:.2f} | {statistics.median(warm):.2f} |")
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(f"# gdn compile times ({os.uname().nodename}, {os.cpu_count()} CPUs)\n\n"
                    + text + "\n\nTargets (issue 3): warm hit < 50 us, cold compile < 300 ms; "
                    "(issue 20): cold compile of any one kernel <= 120 ms.\n")


if __name__ == "__main__":
    main()
