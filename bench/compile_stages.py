#!/usr/bin/env python3
"""Cold compile time by stage, for one or more gdn-opt builds side by side.

Runs `gdn-opt --gdn-lower-to-ptx=chip=sm_90a -mlir-timing FILE -o /dev/null`
for every FILE and build, the builds interleaved run by run (the machine's
noise hits them alike), and prints a markdown table of the minimum of each
stage over the runs, in ms: the whole pipeline, convert-gdn-to-gpu, the
conversions of the gpu.module to the LLVM dialect, and the serialization
(LLVM IR, LLVM's optimizer and the NVPTX back end).

  python3 bench/compile_stages.py --gdn-opt before=/tmp/base/build/bin/gdn-opt \\
      --gdn-opt 'after=build/bin/gdn-opt --verify-each=false' --runs 20 \\
      examples/sglang_varlen_extend.mlir

(--verify-each=false is how the JIT runs the pipeline since gdn-verify:
lib/JIT/Compiler.cpp.)

A FILE given as `prefill:N:T` is bench/profile/prefill_sweep.py's
recurrent(N, T), written to a temporary file. docs/compile-time.md reads the
tables this prints.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
STAGES = [("total", r"Total$"),
          ("convert-gdn-to-gpu", r"ConvertGDNToGPUPass$"),
          ("gpu.module conversions", r"'gpu.module' Pipeline$"),
          ("serialization", r"(GpuModuleToBinaryPass|GDNGPUModuleToPTXPass)$")]


def stage_times(gdn_opt, path):
    # One thread: -mlir-timing then prints wall times only (with threads it
    # adds user-time columns).
    out = subprocess.run([*gdn_opt.split(), "--gdn-lower-to-ptx=chip=sm_90a", "-mlir-timing",
                          "--mlir-disable-threading", path,
                          "-o", os.devnull], capture_output=True, text=True, check=True).stderr
    times = {}
    for line in out.splitlines():
        m = re.match(r"\s*([\d.]+) \(\s*[\d.]+%\)\s+(.*?)\s*$", line)
        if not m:
            continue
        for name, pattern in STAGES:
            if re.search(pattern, m.group(2)) and name not in times:
                times[name] = float(m.group(1)) * 1e3
    return times


def materialize(spec, tmp):
    if not spec.startswith("prefill:"):
        return spec, os.path.relpath(spec, ROOT) if os.path.isabs(spec) else spec
    _, n, t = spec.split(":")
    sys.path.insert(0, os.path.join(ROOT, "bench", "profile"))
    import prefill_sweep
    path = os.path.join(tmp, f"prefill_{n}_{t}.mlir")
    with open(path, "w") as f:
        f.write(prefill_sweep.recurrent(int(n), int(t)))
    return path, f"prefill_sweep.recurrent({n}, {t})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gdn-opt", action="append", required=True,
                    help="NAME=PATH [FLAGS] of a gdn-opt build and flags of its own, "
                    "e.g. 'after=build/bin/gdn-opt --verify-each=false' (repeat for several)")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    builds = [b.split("=", 1) for b in a.gdn_opt]
    if any(len(b) != 2 for b in builds):
        ap.error("--gdn-opt takes NAME=PATH [FLAGS]")
    with tempfile.TemporaryDirectory() as tmp:
        files = [materialize(f, tmp) for f in a.files]
        best = {}
        for _ in range(a.runs):
            for path, label in files:
                for name, exe in builds:
                    for stage, ms in stage_times(exe, path).items():
                        key = (label, name, stage)
                        best[key] = min(best.get(key, float("inf")), ms)
    print("| kernel | build | " + " | ".join(s for s, _ in STAGES) + " |")
    print("|---|---|" + "---|" * len(STAGES))
    for _, label in files:
        for name, _ in builds:
            cells = [f"{best.get((label, name, s), float('nan')):.0f}" for s, _ in STAGES]
            print(f"| {label} | {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
