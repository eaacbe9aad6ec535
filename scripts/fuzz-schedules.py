#!/usr/bin/env python3
"""Random GPU schedules on the examples: every one either compiles to PTX that
ptxas assembles for the chip (no C7508 "setmaxnreg ignored" warning) or is
refused with an MLIR diagnostic (exit 1, "error:"), never a crash, an LLVM
abort or a silent pass. Prints the bad cases and a last line
"N combinations, B bad"; exits 1 when B > 0.

  scripts/fuzz-schedules.py --gdn-run build/bin/gdn-run \\
      --ptxas /usr/local/cuda/bin/ptxas [--seed S] [--count N]
"""
import argparse
import glob
import os
import random
import subprocess
import sys

# Option values: the valid ones and the edges past them.
OPTIONS = [
    ("rows-per-warp", [0, 1, 2, 3, 4, 8, 16, 32]),
    ("warps-per-block", [0, 1, 2, 3, 4, 8, 33]),
    ("v-lanes", [0, 1, 2, 3, 4, 8, 16]),
    ("stage-tokens", [0, -1, 1, 2, 3, 4, 12, 16, 33, 64]),
    ("unroll-tokens", [0, -1, 1, 2, 4, 65]),
    ("overlap-reductions", [0, 1, -1]),
    ("chunked-solve", [0, 1, 2, -1]),
    ("pipeline-stages", [0, -1, 1, 2, 3, 9]),
    ("consumer-registers", [0, 0, 0, 24, 128, 130, 256, 264]),
    ("chip", ["sm_90a", "sm_90a", "sm_90", "sm_80", "sm_89"]),
]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gdn-run", required=True)
    p.add_argument("--ptxas", required=True)
    p.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--count", type=int, default=100)
    a = p.parse_args()
    rng = random.Random(a.seed)
    files = sorted(glob.glob(os.path.join(a.root, "examples", "*.mlir")))
    bad = 0
    for _ in range(a.count):
        f = rng.choice(files)
        opts = [f"--{name}={rng.choice(vals)}" for name, vals in OPTIONS if rng.random() < 0.35]
        r = subprocess.run([a.gdn_run, "--emit=ptx"] + opts + [f],
                           capture_output=True, text=True, timeout=300)
        what = None
        if r.returncode not in (0, 1) or "LLVM ERROR" in r.stderr:
            what = f"crashed (exit {r.returncode})"
        elif r.returncode == 1 and "error:" not in r.stderr:
            what = "failed without a diagnostic"
        elif r.returncode == 0:
            chip = next((o.split("=")[1] for o in opts if o.startswith("--chip=")), "sm_90a")
            s = subprocess.run([a.ptxas, f"-arch={chip}", "-", "-o", os.devnull],
                               input=r.stdout, capture_output=True, text=True)
            if s.returncode != 0 or "C7508" in s.stderr:
                what = "PTX ptxas rejects or warns about: " + s.stderr.strip()[:200]
        if what:
            bad += 1
            print(f"BAD {os.path.basename(f)} {' '.join(opts)}: {what}: "
                  f"{r.stderr.strip()[:300]}")
    print(f"{a.count} combinations, {bad} bad")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
