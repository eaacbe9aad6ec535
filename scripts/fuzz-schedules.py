#!/usr/bin/env python3
"""Random GPU schedules on the examples: every one either compiles to PTX that
ptxas assembles for the chip (no C7508 "setmaxnreg ignored" warning) or is
refused with an MLIR diagnostic (exit 1, "error:"), never a crash, an LLVM
abort or a silent pass. A schedule is gdn-run's --schedule='#gdn.schedule<...>'
of parameters drawn from PARAMETERS (and --chip from FLAGS). Prints the bad
cases and a last line "N combinations, B bad"; exits 1 when B > 0.

  scripts/fuzz-schedules.py --gdn-run build/bin/gdn-run \\
      --ptxas /usr/local/cuda/bin/ptxas [--seed S] [--count N]
"""
import argparse
import glob
import os
import random
import subprocess
import sys

# The parameters of #gdn.schedule: per parameter, values the attribute takes
# (the cost model's choice where a parameter is not drawn; some past what a
# given kernel takes, refused by the passes) and the edges past the
# attribute's own ranges and cases (refused by its verifier or parser).
PARAMETERS = [
    ("columns_per_lane", [1, 2, 3, 4, 8, 16, 32], [0, -1, (1 << 20) + 1]),
    ("lanes_along_v", [1, 2, 3, 4, 8, 16], [0]),
    ("warps", [1, 2, 3, 4, 8, 33], [0, -2]),
    ("staged_tokens", [0, 1, 2, 3, 4, 12, 16, 33, 64], [-1]),
    ("unroll_tokens", [1, 2, 4, 65], [0]),
    ("reductions", ["in_turn", "side_by_side", "token_pairs", "mma"], ["sideways", 1]),
    ("solve", ["token_by_token", "cuda_cores", "tensor_cores",
               "chunk_parallel"], ["wy", 4]),
    ("precision", ["tf32x3", "tf32", "bf16"], ["tf16", 3]),
    ("producer_stages", [0, 1, 2, 3, 9], [-1]),
    ("consumer_registers", [0, 0, 0, 24, 128, 130, 256, 264], [-8]),
    ("state_prefetch_distance", [0, 0, 1, 132, 924], [-1, (1 << 20) + 1]),
    ("input_prefetch_distance", [0, 0, 1, 132], [-1]),
    ("chunk_prefetch_distance", [0, 0, 1, 2], [-1]),
    ("max_registers", [0, 0, 0, 16, 24, 128, 168, 255, 256], [-1]),
    ("launch", ["ordinary", "programmatic", "programmatic_at_start",
                "programmatic_after_recurrence"], ["later", 3]),
]
# gdn-run's flags beside --schedule.
FLAGS = [
    ("chip", ["sm_90a", "sm_90a", "sm_90", "sm_80", "sm_89"]),
]


def schedule_attr(params):
    """The #gdn.schedule<...> text of [(parameter, value)] ("" for none)."""
    if not params:
        return ""
    return "#gdn.schedule<" + ", ".join(f"{n} = {v}" for n, v in params) + ">"


def draw(rng, p=0.35, past=0.05):
    """gdn-run arguments of a random schedule: each flag and each parameter
    drawn with probability p, a parameter past the attribute's edges with
    probability `past`; ["--chip=...", "--schedule=#gdn.schedule<...>"]."""
    args = [f"--{name}={rng.choice(values)}" for name, values in FLAGS
            if rng.random() < p]
    params = [(name, rng.choice(edges if rng.random() < past else values))
              for name, values, edges in PARAMETERS if rng.random() < p]
    if params:
        args.append("--schedule=" + schedule_attr(params))
    return args


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
        opts = draw(rng)
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
            shown = " ".join(o if " " not in o else "'" + o + "'" for o in opts)
            print(f"BAD {os.path.basename(f)} {shown}: {what}: "
                  f"{r.stderr.strip()[:300]}")
    print(f"{a.count} combinations, {bad} bad")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
