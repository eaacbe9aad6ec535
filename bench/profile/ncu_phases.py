#!/usr/bin/env python3
"""A kernel's Nsight Compute source counters by barrier phase.

Reads the CSV that `ncu -i REPORT --page source --csv --print-source sass`
writes for one kernel (one row per SASS instruction) and prints, for each
stretch of code between two BAR.SYNC instructions (a phase of a kernel
whose warps meet at CTA barriers), its share of the warp stall samples,
the instructions it executed, its excess global sectors (uncoalesced
accesses) and its shared-memory wavefronts, excess and all (bank
conflicts); then the instructions with the most stall samples and the
most excess global sectors. Phases are numbered from 0 in address order.

    python3 bench/profile/ncu_phases.py src.csv [--top 20]

The columns it reads are ncu's: "Source", "Address", "Warp Stall Sampling
(All Samples)", "Instructions Executed", "L2 Theoretical Sectors Global
Excessive", "L1 Wavefronts Shared Excessive" and "L1 Wavefronts Shared";
a missing one is an error naming it.
"""
import argparse
import csv
import lzma
import sys

COLUMNS = {
    "stall": "Warp Stall Sampling (All Samples)",
    "inst": "Instructions Executed",
    "global_excess": "L2 Theoretical Sectors Global Excessive",
    "shared_excess": "L1 Wavefronts Shared Excessive",
    "shared": "L1 Wavefronts Shared",
}


def read(path):
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rt", newline="") as f:
        rows = list(csv.reader(f))
    # The first row names the kernel; the second holds the column names.
    header_at = next(i for i, r in enumerate(rows) if "Source" in r)
    header = rows[header_at]
    missing = [c for c in ["Source", "Address", *COLUMNS.values()]
               if c not in header]
    if missing:
        sys.exit(f"ncu_phases: {path} has no column {missing[0]!r}")
    return header, rows[header_at + 1:]


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:  # "-" where a counter does not apply
        return 0.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", help="ncu --page source --csv output (.xz ok)")
    parser.add_argument("--top", type=int, default=15,
                        help="instructions listed by stall samples")
    args = parser.parse_args()
    header, rows = read(args.csv)
    at = {name: i for i, name in enumerate(header)}
    phases, phase = [], {k: 0.0 for k in COLUMNS}
    for r in rows:
        for k, col in COLUMNS.items():
            phase[k] += number(r[at[col]])
        if "BAR.SYNC" in r[at["Source"]]:
            phases.append(phase)
            phase = {k: 0.0 for k in COLUMNS}
    phases.append(phase)
    stalls = sum(p["stall"] for p in phases) or 1.0
    print("| phase | stall samples | instructions (M) | excess global "
          "sectors (M) | shared wavefronts, excess / all (M) |")
    print("|---|---|---|---|---|")
    for i, p in enumerate(phases):
        print(f"| {i} | {100 * p['stall'] / stalls:.1f} % | "
              f"{p['inst'] / 1e6:.2f} | {p['global_excess'] / 1e6:.1f} | "
              f"{p['shared_excess'] / 1e6:.1f} / {p['shared'] / 1e6:.1f} |")
    total = {k: sum(p[k] for p in phases) for k in COLUMNS}
    print(f"| all | {int(stalls)} samples | {total['inst'] / 1e6:.2f} | "
          f"{total['global_excess'] / 1e6:.1f} | "
          f"{total['shared_excess'] / 1e6:.1f} / {total['shared'] / 1e6:.1f} |")
    for title, key, count in (("stall samples", "stall", args.top),
                              ("excess global sectors", "global_excess", 6)):
        print(f"\nMost {title}:")
        ranked = sorted(rows, key=lambda r: -number(r[at[COLUMNS[key]]]))
        for r in ranked[:count]:
            print(f"  {int(number(r[at[COLUMNS[key]]])):>9}  "
                  f"{r[at['Address']][-5:]}  {r[at['Source']].strip()[:72]}")


if __name__ == "__main__":
    main()
