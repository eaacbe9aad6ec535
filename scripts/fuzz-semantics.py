#!/usr/bin/env python3
"""Random valid gdn.recurrent ops through the CPU lowering against gdn-run's
fp64 reference: a differential test of the lowering's semantics.

Each case draws a combination of the op's features (GQA, log-space or fused
gating, per-key decay, beta or its logits per head or per value channel, qk
L2 norm, scale, negative eigenvalues, kv/vk layouts, initial/final/in-place
states, pools of either index type, varlen including N = 0, per-token states
with indices, EAGLE trees with explicit parent tables, checkpoints, replay
windows, strided and pitched operands, bf16/f16/f32/f8E4M3FN states with
stochastic rounding) at small shapes, writes it as one function, and runs
`gdn-run --target=cpu --check --seed=S` on it. A case gdn-opt refuses is
counted, not run (the draws stay within what the op's description allows,
so a refusal is worth reading: --show-refused prints them). Prints each
failing case (its command and the end of its output) and a last line
"N cases, R refused, F failed"; exits 1 when F > 0.

  scripts/fuzz-semantics.py --gdn-run build/bin/gdn-run \
      --gdn-opt build/bin/gdn-opt [--seed S] [--count N] [--odd] [--out DIR]

A case is a pure function of (seed, index): rerun one with --seed S
--first I --count 1 --out DIR to keep its file.
"""
import argparse
import os
import random
import subprocess
import sys
import tempfile

ESIZE = {"bf16": 2, "f16": 2, "f32": 4, "f8E4M3FN": 1, "i32": 4, "i64": 8}


def pow2div(x):
    d = 1
    while x % (d * 2) == 0:
        d *= 2
    return d


def mtype(shape, et, strides=None, offset=0):
    s = "x".join(str(d) for d in shape) + "x" + et
    if strides is not None:
        st = ", ".join(str(x) for x in strides)
        if offset:
            return f"memref<{s}, strided<[{st}], offset: {offset}>>"
        return f"memref<{s}, strided<[{st}]>>"
    return f"memref<{s}>"


def token_strides(r, shape, et):
    """Random strides for a read-only token operand (innermost 1)."""
    m = min(16 // ESIZE[et], pow2div(shape[-1]))
    strides = [1] * len(shape)
    acc = shape[-1]
    for i in range(len(shape) - 2, -1, -1):
        pad = m * r.choice([0, 0, 1, 2, 4])
        strides[i] = acc + pad
        acc = strides[i] * shape[i]
    # occasionally broadcast a leading dim (stride 0), as torch expand()
    if r.random() < 0.2:
        strides[0] = 0
    offset = m * r.choice([0, 0, 1, 3])
    return strides, offset


def slot_strides(r, shape, et):
    """A pitch on the leading (slot/row) dimension, others dense."""
    m = min(16 // ESIZE[et], pow2div(shape[-1]))
    strides = [1] * len(shape)
    acc = 1
    for i in range(len(shape) - 1, 0, -1):
        strides[i] = acc
        acc *= shape[i]
    strides[0] = acc + m * r.choice([1, 2, 8])
    return strides, 0


def draw(r, odd=False):
    """One valid feature combination (a dict), drawn with `r`."""
    c = {}
    c["in"] = r.choice(["bf16", "f16", "f32"])
    c["varlen"] = r.random() < 0.3
    c["N"] = r.randint(1, 4)
    c["T"] = r.randint(1, 40)
    if r.random() < 0.4:
        c["T"] = r.randint(1, 6)
    if c["varlen"] and r.random() < 0.05:
        c["N"] = 0
    c["H"] = r.randint(1, 2)
    c["HV"] = c["H"] * r.choice([m for m in (1, 2, 3, 4) if c["H"] * m <= 4])
    c["K"] = r.choice([8, 16, 32])
    c["V"] = r.choice([8, 16])
    if odd:  # sizes no real model has, past every vector width
        c["K"] = r.choice([1, 2, 3, 4, 5, 7, 12, 24, 40, 64, 100])
        c["V"] = r.choice([1, 2, 3, 4, 5, 7, 12, 24, 33, 64])
    c["layout"] = r.choice(["kv", "vk"])
    c["decay"] = r.choice(["none", "g", "g", "fused", "fused"])
    c["perkey"] = c["decay"] != "none" and r.random() < 0.35
    c["gdt"] = r.choice(["bf16", "f16", "f32", c["in"]])
    c["beta"] = r.choice(["none", "beta", "beta", "b", "b"])
    c["perch"] = c["beta"] != "none" and r.random() < 0.3
    c["bdt"] = r.choice(["bf16", "f16", "f32", c["in"]])
    c["neg"] = c["beta"] == "b" and r.random() < 0.4
    c["l2"] = r.random() < 0.6
    if not c["l2"]:  # unnormalized k makes I - b k k^T explosive: keep T tiny
        c["T"] = min(c["T"], r.randint(1, 3))
    c["scale"] = r.choice([None, None, None, 0.5, 1.0, 0.125, -0.3, 0.0, 2.0])
    # states
    c["state"] = r.choice(["none", "init", "final", "both", "inplace", "inplace"])
    c["sdt"] = r.choice(["f32", "f32", "bf16", "f16", "f8E4M3FN"])
    if c["sdt"] == "f8E4M3FN" and c["state"] == "both":
        c["state"] = "inplace"
    if c["state"] == "none":
        c["sdt"] = None
    c["pool"] = c["state"] != "none" and r.random() < 0.45
    c["slots"] = r.randint(1, 6)
    c["idxdt"] = r.choice(["i32", "i64"])
    # per-token states
    c["inter"] = r.random() < 0.35
    c["inter_indexed"] = c["inter"] and r.random() < 0.5
    c["R"] = r.randint(1, c["N"] + 2)
    c["steps"] = r.randint(1, min(c["T"] + 2, 42)) if c["varlen"] else c["T"]
    c["idt"] = r.choice(["f32", "bf16", "f16", "f8E4M3FN"])
    c["tree"] = c["inter"] and r.random() < 0.5
    c["parents"] = None
    if c["tree"] and r.random() < 0.5:
        # explicit table with roots (<0) and non-tree entries (>= s)
        n = c["N"] * c["steps"] if r.random() < 0.5 else c["steps"]
        ent = []
        for i in range(n):
            s = i % c["steps"]
            ent.append(r.choice([-1, -3, s, s + 2, r.randint(0, max(0, s - 1)),
                                 s - 1, r.randint(0, max(0, s - 1))]))
        c["parents"] = ",".join(str(x) for x in ent)
    # checkpoints (not with a tree or windows)
    c["ckpt"] = not c["tree"] and r.random() < 0.3
    c["C"] = r.randint(1, 12)
    c["interval"] = r.choice([1, 2, 3, 4, 5, 8, 16])
    c["cdt"] = r.choice(["f32", "bf16", "f16", "f8E4M3FN"])
    # replay windows (per-head gates only)
    c["win"] = (not c["ckpt"] and not c["perkey"] and not c["perch"]
                and r.random() < 0.25)
    c["L"] = r.randint(1, c["T"] + 2)
    # strided operands
    c["strided"] = r.random() < 0.25
    c["pitch"] = r.random() < 0.2
    c["sr"] = r.random() < 0.5
    return c


def build(c, r):
    """The .mlir text of combination `c`: one function, one gdn.recurrent."""
    ins = c["in"]
    N, T, H, HV, K, V = c["N"], c["T"], c["H"], c["HV"], c["K"], c["V"]
    B = 1 if c["varlen"] else N
    vk = c["layout"] == "vk"
    args = []  # (name, type)
    ops = []   # (keyword, name, type)

    def add(kw, name, shape, et, kind=None):
        strides = None
        offset = 0
        if kind == "tok" and c["strided"] and r.random() < 0.7:
            strides, offset = token_strides(r, shape, et)
        if kind == "slot" and c["pitch"] and r.random() < 0.7:
            strides, offset = slot_strides(r, shape, et)
        t = mtype(shape, et, strides, offset)
        if name not in [a[0] for a in args]:
            args.append((name, t))
        else:
            t = [a[1] for a in args if a[0] == name][0]
        ops.append((kw, name, t))

    add("q", "q", [B, T, H, K], ins, "tok")
    add("k", "k", [B, T, H, K], ins, "tok")
    add("v", "v", [B, T, HV, V], ins, "tok")
    gshape = [B, T, HV] + ([K] if c["perkey"] else [])
    if c["decay"] == "g":
        add("g", "g", gshape, c["gdt"], "tok")
    elif c["decay"] == "fused":
        add("a", "a", gshape, c["gdt"], "tok")
        add("A_log", "A_log", [HV], "f32")
        add("dt_bias", "dt_bias", [HV * K if c["perkey"] else HV], "f32")
    bshape = [B, T, HV] + ([V] if c["perch"] else [])
    if c["beta"] in ("beta", "b"):
        add(c["beta"], c["beta"], bshape, c["bdt"], "tok")
    S = c["slots"] if c["pool"] else N
    if c["pool"]:
        add("state_indices", "idx", [N], c["idxdt"])
    if c["varlen"]:
        add("cu_seqlens", "cu", [N + 1], r.choice(["i32", "i64"]))
    steps = c["steps"]
    R = c["R"] if c["inter_indexed"] else N
    if c["inter_indexed"]:
        add("intermediate_state_indices", "iidx", [N], r.choice(["i32", "i64"]))
    if c["tree"]:
        add("retrieve_parent_token", "parents", [N, steps], r.choice(["i32", "i64"]))
    if c["ckpt"]:
        add("checkpoint_offsets", "offsets", [N + 1], r.choice(["i32", "i64"]))
    sshape = [S, HV, V, K] if vk else [S, HV, K, V]
    st = c["state"]
    sdt = c["sdt"]
    fp8s = sdt == "f8E4M3FN"
    if st in ("init", "both"):
        add("initial_state", "h0", sshape, sdt, "slot")
    if st == "inplace":
        add("initial_state", "s", sshape, sdt, "slot")
    if c["inter"]:
        ishape = [R, steps, HV, V, K] if vk else [R, steps, HV, K, V]
        add("intermediate_states", "inter", ishape, c["idt"], "slot")
        if c["idt"] == "f8E4M3FN":
            add("intermediate_state_scale", "isc", [R, steps, HV, V], "f32")
    if c["win"]:
        L = c["L"]
        add("k_window", "kw", [S, H, L, K], ins)
        add("v_window", "vw", [S, HV, L, V], ins)
        add("g_window", "gw", [S, HV, L], "f32")
        add("beta_window", "bw", [S, HV, L], "f32")
    if c["ckpt"]:
        C = c["C"]
        cshape = [C, HV, V, K] if vk else [C, HV, K, V]
        add("state_checkpoints", "ck", cshape, c["cdt"])
        if c["cdt"] == "f8E4M3FN":
            add("checkpoint_scale", "cksc", [C, HV, V], "f32")
    if fp8s and st != "none":
        add("state_scale", "ssc", [S, HV, V], "f32")
    if st in ("final", "both"):
        add("final_state", "ht", sshape, sdt, "slot")
    if st == "inplace":
        add("final_state", "s", sshape, sdt, "slot")
    add("o", "o", [B, T, HV, V], ins)

    attrs = []
    if c["l2"]:
        attrs.append("qk_l2norm")
    if c["neg"]:
        attrs.append("allow_neg_eigval")
    if c["scale"] is not None:
        attrs.append(f"scale = {c['scale']!r} : f32")
    if c["ckpt"]:
        attrs.append(f"checkpoint_interval = {c['interval']} : i64")
    attrs.append(f"state_layout = #gdn.layout<{c['layout']}>")
    fp8_store = ((fp8s and st in ("final", "inplace"))
                 or (c["inter"] and c["idt"] == "f8E4M3FN")
                 or (c["ckpt"] and c["cdt"] == "f8E4M3FN"))
    if c["sr"] and fp8_store and not (c["tree"] and c["inter"] and c["idt"] == "f8E4M3FN"):
        attrs.append("stochastic_rounding")
    c["sr_on"] = "stochastic_rounding" in attrs

    sig = ",\n    ".join(f"%{n}: {t}" for n, t in args)
    body = "\n      ".join(f"{kw}(%{n} : {t})" for kw, n, t in ops)
    return (f"func.func @f(\n    {sig}) {{\n  gdn.recurrent {body}\n"
            f"      {{{', '.join(attrs)}}}\n  return\n}}\n")


def run_case(path, c, r, gdn_run, gdn_opt):
    """(status, command, output): status "refused" (gdn-opt's error),
    "ok", "fail" (a FAILED check or a non-zero exit) or "timeout"."""
    p = subprocess.run([gdn_opt, path], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        return "refused", f"{gdn_opt} {path}", p.stderr.strip()
    cmd = [gdn_run, "--target=cpu", "--check", f"--seed={r.randint(0, 10**6)}"]
    if c["parents"]:
        cmd.append(f"--parents={c['parents']}")
    cmd.append(path)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return "timeout", " ".join(cmd), ""
    out = p.stdout + p.stderr
    ok = p.returncode == 0 and "FAILED" not in out
    return ("ok" if ok else "fail"), " ".join(cmd), out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gdn-run", default="gdn-run")
    ap.add_argument("--gdn-opt", default="gdn-opt")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--first", type=int, default=0, help="index of the first case")
    ap.add_argument("--count", type=int, default=50)
    ap.add_argument("--odd", action="store_true", help="K and V past every vector width")
    ap.add_argument("--out", help="keep the cases' .mlir files here (default: a temporary "
                                  "directory, removed)")
    ap.add_argument("--show-refused", action="store_true")
    a = ap.parse_args()
    tmp = None if a.out else tempfile.TemporaryDirectory()
    out = a.out or tmp.name
    os.makedirs(out, exist_ok=True)
    counts = {"ok": 0, "refused": 0, "fail": 0, "timeout": 0}
    for i in range(a.first, a.first + a.count):
        r = random.Random(a.seed * 1_000_003 + i)
        c = draw(r, a.odd)
        path = os.path.join(out, f"case_{i}.mlir")
        with open(path, "w") as f:
            f.write(build(c, r))
        status, cmd, text = run_case(path, c, r, a.gdn_run, a.gdn_opt)
        counts[status] += 1
        if status in ("fail", "timeout") or (status == "refused" and a.show_refused):
            print(f"{status.upper()} case {i}: {cmd}\n{text[-1500:]}", flush=True)
    bad = counts["fail"] + counts["timeout"]
    print(f"{a.count} cases, {counts['refused']} refused, {bad} failed")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
