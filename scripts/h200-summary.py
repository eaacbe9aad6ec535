#!/usr/bin/env python3
"""Prints a markdown table of the `gdn-run --json` lines of a h200-check log."""
import json
import sys

print("| example | o rms-rel | state rms-rel | us | GB/s | of cuMemcpy |")
print("|---|---|---|---|---|---|")
for line in open(sys.argv[1]):
    if not line.startswith("{"):
        continue
    r = json.loads(line)
    print(f"| {r['file']} | {r.get('o_rms_rel', 0):.2e} | "
          f"{r.get('final_state_rms_rel', 0):.2e} | {r['us']:.2f} | "
          f"{r['gb_per_s']:.0f} | {r['of_copy']:.2f} |")
