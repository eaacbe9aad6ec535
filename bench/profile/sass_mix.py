#!/usr/bin/env python3
"""The SASS instruction mix of gdn's pool-decode kernel, per state element a
thread holds, for several pool dtypes side by side: a GPU-free look at why a
kernel is issue-bound (docs/cost-model.md, "Decode 16-byte slices").

Compiles the Qwen3-Next pool decode (H = 16, HV = 32, K = V = 128, fused
gating, qk L2 norm, vk pool updated in place) for sm_90a under the cost
model's schedule, assembles it with ptxas and disassembles it with nvdisasm,
then counts the instructions of the kernel by opcode (a straight count of
the code, not of executed instructions: the decode kernel has no loop over
state elements, so the count is what every thread issues once). A thread
holds columns_per_lane x K / (32 / lanes_along_v) state elements (the
schedule, read with gdn-opt --gdn-select-schedule).

    python3 bench/profile/sass_mix.py [--N 64] [--dtypes bfloat16,float8_e4m3fn]
        [--schedules 'float8_e4m3fn:#gdn.schedule<reductions = mma>;...']
        [--ptxas PATH] [--nvdisasm PATH] [--gdn-opt build/bin/gdn-opt]

--schedules adds kernels of a dtype under a pinned schedule (the rest the
cost model's), each a column beside the dtypes' default kernels."""
import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

H, HV, K, V = 16, 32, 128, 128
MLIR = {"bfloat16": "bf16", "float8_e4m3fn": "f8E4M3FN", "float32": "f32"}


def op_text(N, dtype):
    """The same kernel as a .mlir function (for the schedule gdn-opt picks)."""
    S = f"memref<{N}x{HV}x{V}x{K}x{MLIR[dtype]}>"
    tok = lambda w, d: f"memref<{N}x1x{w}x{d}>"  # noqa: E731
    args = [("q", tok(H, f"{K}xbf16")), ("k", tok(H, f"{K}xbf16")), ("v", tok(HV, f"{V}xbf16")),
            ("a", tok(HV, "bf16")), ("A_log", f"memref<{HV}xf32>"),
            ("dt_bias", f"memref<{HV}xf32>"), ("b", tok(HV, "bf16")),
            ("state_indices", f"memref<{N}xi32>"), ("initial_state", S)]
    if dtype == "float8_e4m3fn":
        args.append(("state_scale", f"memref<{N}x{HV}x{V}xf32>"))
    args += [("final_state", S), ("o", tok(HV, f"{V}xbf16"))]
    params = ", ".join(f"%{n}: {t}" for n, t in args if n != "final_state")
    ops = " ".join(f"{n}(%{'initial_state' if n == 'final_state' else n} : {t})"
                   for n, t in args)
    return (f"func.func @decode({params}) {{\n  gdn.recurrent {ops} "
            "{qk_l2norm, state_layout = #gdn.layout<vk>}\n  return\n}\n")


def elements_a_thread(gdn_opt, N, dtype, tmp, schedule=None):
    path = os.path.join(tmp, f"{dtype}.mlir")
    with open(path, "w") as f:
        f.write(op_text(N, dtype))
    option = "--gdn-select-schedule=chip=sm_90a" + (f" schedule={{{schedule}}}" if schedule else "")
    out = subprocess.run([gdn_opt, option, path],
                         capture_output=True, text=True, check=True).stdout
    s = dict(re.findall(r"(columns_per_lane|lanes_along_v) = (\d+)", out))
    cpl, lav = int(s["columns_per_lane"]), int(s["lanes_along_v"])
    return cpl * K // (32 // lav), f"columns_per_lane = {cpl}, lanes_along_v = {lav}"


def assemble(ptx_text, stem, ptxas, nvdisasm):
    """(SASS text lines of PTX `ptx_text` for sm_90a, registers a thread,
    spilled bytes); files at `stem`.ptx / .cubin."""
    ptx, cubin = stem + ".ptx", stem + ".cubin"
    with open(ptx, "w") as f:
        f.write(ptx_text)
    report = subprocess.run([ptxas, "-arch=sm_90a", "-v", ptx, "-o", cubin], check=True,
                            capture_output=True, text=True).stderr
    registers = int(re.search(r"Used (\d+) registers", report).group(1))
    spilled = int(re.search(r"(\d+) bytes spill stores", report).group(1))
    text = subprocess.run([nvdisasm, "-c", cubin], capture_output=True, text=True,
                          check=True).stdout
    return text.splitlines(), registers, spilled


def opcode(line):
    """The opcode (without its modifiers) of a SASS line, else None."""
    m = re.match(r"\s*/\*[0-9a-f]+\*/\s+(.*?);", line)
    if not m:
        return None
    ins = m.group(1)
    if ins.startswith("@"):  # a predicate
        ins = ins.split(None, 1)[1]
    return ins.split()[0].split(".")[0]


def count_opcodes(lines):
    return collections.Counter(op for op in map(opcode, lines) if op)


def mix(compiler, N, dtype, tmp, ptxas, nvdisasm, schedule=None):
    """(opcode counts of the kernel's SASS, registers a thread, spilled bytes)."""
    kern = compiler.compile(N=N, T=1, H=H, HV=HV, K=K, V=V, decay="fused_gating",
                            beta="logits", qk_l2norm=True, layout="vk", initial_state=True,
                            final_state=True, state_in_place=True, num_slots=N,
                            state_dtype=dtype, target="cuda",
                            **({"schedule": schedule} if schedule else {}))
    lines, registers, spilled = assemble(kern.ptx, os.path.join(tmp, dtype), ptxas, nvdisasm)
    return count_opcodes(lines), registers, spilled


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--N", type=int, default=64)
    p.add_argument("--dtypes", default="bfloat16,float8_e4m3fn")
    p.add_argument("--schedules", default="",
                   help="';'-separated DTYPE:SCHEDULE kernels beside the dtypes' defaults")
    p.add_argument("--ptxas", default="ptxas")
    p.add_argument("--nvdisasm", default="nvdisasm")
    p.add_argument("--gdn-opt", default=os.path.join(HERE, "..", "..", "build", "bin", "gdn-opt"))
    a = p.parse_args()
    sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
    import gdn  # only here: assemble() and count_opcodes() need no library
    c = gdn.Compiler()
    kernels = [(d, None) for d in a.dtypes.split(",") if d]
    kernels += [tuple(x.split(":", 1)) for x in a.schedules.split(";") if x.strip()]
    res = {}
    with tempfile.TemporaryDirectory() as tmp:
        for d, sched in kernels:
            name = d if not sched else f"{d}, {sched}"
            ops, registers, spilled = mix(c, a.N, d, tmp, a.ptxas, a.nvdisasm, sched)
            res[name] = (ops, *elements_a_thread(a.gdn_opt, a.N, d, tmp, sched), registers,
                         spilled)
    print(f"SASS of the pool decode, N = {a.N}, sm_90a (ptxas + nvdisasm): instructions in "
          "the kernel, and per state element a thread holds\n")
    for d, (ops, n, sched, registers, spilled) in res.items():
        print(f"- {d}: {sched}, {n} elements a thread, {sum(ops.values())} instructions, "
              f"{sum(ops.values()) / n:.1f} an element, {registers} registers, "
              f"{spilled} bytes spilled")
    print("\n| opcode | " + " | ".join(f"{d} (an element)" for d in res) + " |")
    print("|---|" + "---|" * len(res))
    keys = sorted({k for ops, *_ in res.values() for k in ops},
                  key=lambda k: -sum(ops[k] for ops, *_ in res.values()))
    for k in keys:
        print(f"| {k} | " + " | ".join(f"{ops[k]} ({ops[k] / n:.2f})"
                                       for ops, n, *_ in res.values()) + " |")
