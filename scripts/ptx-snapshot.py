#!/usr/bin/env python3
"""Fingerprints of the PTX every kernel of the repository's inputs compiles
to, so that a refactoring of the lowering can show it changed no kernel
(issue 21: byte-identical PTX before and after, or the H200 shows why).

Cases: every function of every .mlir file in examples/, bench/sweeps/ and
bench/profile/ under the default schedule, plus --count seeded random
schedules over the same files drawn from scripts/fuzz-schedules.py's table
of #gdn.schedule parameters and gdn-run flags (read from there, drawn by its
draw(): one definition). Each case runs
`gdn-run --emit=ptx [--chip=C] [--schedule='#gdn.schedule<...>'] --function=F
FILE`; its fingerprint is the
sha256 of the PTX, or "error: <first diagnostic line>" when gdn-run refuses
the schedule (a refusal must stay a refusal).

  scripts/ptx-snapshot.py --gdn-run build/bin/gdn-run --out before.json
  ... change the compiler, rebuild ...
  scripts/ptx-snapshot.py --gdn-run build/bin/gdn-run --compare before.json

--compare prints every case whose fingerprint differs (or that is missing)
and exits 1 when there is one; the last line is "N cases, D differ".
"""
import argparse
import concurrent.futures
import glob
import hashlib
import importlib.util
import json
import os
import random
import re
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def fuzz_schedules():
    """scripts/fuzz-schedules.py: its PARAMETERS and FLAGS tables and draw()."""
    spec = importlib.util.spec_from_file_location(
        "fuzz_schedules", os.path.join(ROOT, "scripts", "fuzz-schedules.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cases(count, seed):
    files = sorted(f for d in ("examples", "bench/sweeps", "bench/profile")
                   for f in glob.glob(os.path.join(ROOT, d, "*.mlir")))
    out = []
    for f in files:
        rel = os.path.relpath(f, ROOT)
        for fn in re.findall(r"func\.func @([\w$.]+)", open(f).read()):
            out.append((rel, fn, ()))
    rng = random.Random(seed)
    schedules = fuzz_schedules()
    base = list(out)
    for _ in range(count):
        rel, fn, _ = rng.choice(base)
        out.append((rel, fn, tuple(schedules.draw(rng, p=0.4))))
    return out


def fingerprint(gdn_run, case):
    rel, fn, flags = case
    p = subprocess.run([gdn_run, "--emit=ptx", *flags, f"--function={fn}",
                        os.path.join(ROOT, rel)], capture_output=True, timeout=300)
    if p.returncode != 0:
        lines = [l for l in p.stderr.decode(errors="replace").splitlines() if "error" in l]
        first = lines[0] if lines else f"exit {p.returncode}"
        return "error: " + re.sub(r"^.*?error: ", "", first)
    return hashlib.sha256(p.stdout).hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gdn-run", default=os.path.join(ROOT, "build", "bin", "gdn-run"))
    ap.add_argument("--out", help="write the fingerprints to this JSON file")
    ap.add_argument("--compare", help="compare with fingerprints written before")
    ap.add_argument("--count", type=int, default=60, help="random schedules")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    a = ap.parse_args()
    todo = cases(a.count, a.seed)
    key = lambda c: " ".join([c[0], "@" + c[1], *c[2]])
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        prints = dict(zip(map(key, todo), pool.map(lambda c: fingerprint(a.gdn_run, c), todo)))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(prints, f, indent=1, sort_keys=True)
    differ = 0
    if a.compare:
        before = json.load(open(a.compare))
        for k in sorted(set(before) | set(prints)):
            if before.get(k) != prints.get(k):
                differ += 1
                print(f"differs: {k}\n  before: {before.get(k)}\n  now:    {prints.get(k)}")
    errors = sum(v.startswith("error:") for v in prints.values())
    print(f"{len(prints)} cases ({errors} refused), {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
