#!/usr/bin/env python3
"""The SASS of a kernel's innermost hot loop by opcode: what one warp issues
for one trip (for chunk_parallel's scan, one 16-token chunk), a GPU-free look
at a latency- or issue-bound loop (docs/cost-model.md#scan-throughput).

Each FILE.mlir is compiled by gdn-run (--emit=ptx --launch=I, the cost
model's schedule unless --schedule), assembled for sm_90a by ptxas and
disassembled by nvdisasm; the loop is the longest span from a label to a
branch back to it. With several gdn-run binaries (e.g. two builds) the
columns are side by side, one a binary and file.

    python3 bench/profile/loop_mix.py FILE.mlir [FILE.mlir ...] --launch 1
        [--gdn-run build/bin/gdn-run ...] [--schedule '#gdn.schedule<...>']
        [--ptxas PATH] [--nvdisasm PATH] [--top 20]

Prefill files: bench/profile/prefill_sweep.py's recurrent(N, T), e.g.
    python3 -c "import sys; sys.path.insert(0, 'bench/profile');
    from prefill_sweep import recurrent; print(recurrent(4, 8192))" > n4.mlir"""
import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from sass_mix import assemble, count_opcodes  # noqa: E402


def hot_loop(lines):
    """The lines of the longest label-to-backward-branch span."""
    labels = {}
    best = (0, 0)
    for i, line in enumerate(lines):
        m = re.match(r"(\.L_x_\d+):", line.strip())
        if m:
            labels[m.group(1)] = i
            continue
        m = re.search(r"BRA\s+`?\(?(\.L_x_\d+)\)?", line)
        if m and m.group(1) in labels and i - labels[m.group(1)] > best[1] - best[0]:
            best = (labels[m.group(1)], i + 1)
    return lines[best[0]:best[1]]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("files", nargs="+")
    p.add_argument("--launch", type=int, default=0)
    p.add_argument("--gdn-run", action="append",
                   help="a gdn-run binary (repeat for builds side by side)")
    p.add_argument("--schedule", default="")
    p.add_argument("--ptxas", default="ptxas")
    p.add_argument("--nvdisasm", default="nvdisasm")
    p.add_argument("--top", type=int, default=20)
    a = p.parse_args()
    runs = a.gdn_run or [os.path.join(HERE, "..", "..", "build", "bin", "gdn-run")]
    columns = []
    with tempfile.TemporaryDirectory() as tmp:
        for b, binary in enumerate(runs):
            for f in a.files:
                cmd = [binary, "--target=cuda", "--emit=ptx", f"--launch={a.launch}", f]
                if a.schedule:
                    cmd.append(f"--schedule={a.schedule}")
                ptx = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
                stem = os.path.join(tmp, f"{b}-{os.path.basename(f)}")
                lines, registers, spilled = assemble(ptx, stem, a.ptxas, a.nvdisasm)
                loop = count_opcodes(hot_loop(lines))
                name = os.path.basename(f) + (f" ({binary})" if len(runs) > 1 else "")
                columns.append((name, loop, registers, spilled))
    total = collections.Counter()
    for _, loop, _, _ in columns:
        total.update(loop)
    print("| opcode | " + " | ".join(c[0] for c in columns) + " |")
    print("|---" * (len(columns) + 1) + "|")
    print("| all | " + " | ".join(str(sum(c[1].values())) for c in columns) + " |")
    for op, _ in total.most_common(a.top):
        print(f"| {op} | " + " | ".join(str(c[1][op]) for c in columns) + " |")
    print("| registers (spilled bytes) | "
          + " | ".join(f"{c[2]} ({c[3]})" for c in columns) + " |")


if __name__ == "__main__":
    main()
