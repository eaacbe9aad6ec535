#!/usr/bin/env python3
"""Side-by-side GPU benchmark of gdn kernels and the anchors (docs/math.md §4).

Runs on the GPU machine, in one process, on the same inputs:
  - gdn (this project, through gdn.ops),
  - FLA `fused_recurrent_gated_delta_rule` (fla-core wheel),
  - SGLang `fused_sigmoid_gating_delta_rule_update` (loaded from the sglang
    wheel's file, which needs only torch and triton),
  - a device-to-device copy of the same number of bytes: the faster of a
    Triton copy kernel and torch copy_.
Timing: CUDA-graph replays, median; each graph calls the kernel on R rotating
input sets so the bytes touched between two runs of one set exceed the L2
(60 MB) four times: the state is cold, as in a model with 30-60 layers.
Bytes: state read + state written (or, for verify, each intermediate state
written) + q, k, v, o and the gates.
Workloads: decode (fp32 state in place, bf16 pool), verify (bf16 pool +
per-token states, T = 4, 12), KDA decode and EAGLE-tree verify (T = 4)
against SGLang; final-state-only T = 1, 4, 12 against FLA. For T > 1 at
HV = 32 and N in QUICK_NS also the kernel forms (FORMS).

Usage: python3 bench/bench_gdn.py [--quick] [--sweep] [--forms] [--only 'TEXT;...']
           [--Ns 1,8] [--Ts 4,12] [--hv 8,32,64] [--out DIR] [--sglang PATH]
           [--profile]   (untimed calls, for ncu)
       python3 bench/bench_gdn.py --from-json A.json,B.log [--device-name NAME]
           [--out DIR]   (no GPU: redraws the table and plot)
"""
import argparse
import importlib.util
import json
import math
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
# The repository's package needs a libGDNCAPI.so: the build tree's unless named.
_built = os.path.join(os.path.dirname(__file__), "..", "build", "lib", "libGDNCAPI.so")
if "GDN_LIBRARY" not in os.environ and os.path.exists(_built):
    os.environ["GDN_LIBRARY"] = os.path.abspath(_built)
import gdn.ops as ops  # noqa: E402

L2_BYTES = 60 << 20
# (rows-per-warp, warps-per-block, v-lanes) tried with --sweep.
# Schedules tried with --sweep, as set_schedule keywords; named
# r<rows-per-warp>w<warps-per-block>l<v-lanes>s<stage-tokens>u<unroll-tokens>.
SCHEDULES_T1 = [dict(rows_per_warp=r, warps_per_block=w, v_lanes=l) for r, w, l in
                [(1, 4, 0), (2, 4, 0), (4, 4, 0), (8, 4, 0), (16, 4, 0), (16, 2, 0), (16, 1, 0),
                 (8, 2, 0), (8, 1, 0), (4, 2, 0), (8, 4, 2), (4, 4, 2), (8, 2, 2)]]
SCHEDULES_TN = [dict(stage_tokens=-1), dict(unroll_tokens=4), dict(unroll_tokens=16),
                dict(stage_tokens=4), dict(rows_per_warp=4), dict(warps_per_block=1),
                dict(warps_per_block=2), dict(rows_per_warp=16), dict(rows_per_warp=16, warps_per_block=1),
                dict(rows_per_warp=8, warps_per_block=1), dict(rows_per_warp=4, warps_per_block=1)]


# Other kernel forms timed for T > 1 workloads at HV = 32 and N in QUICK_NS
# (None where the form does not apply, e.g. the chunked solve with per-token
# states): the chunked (WY) solve of a staged chunk on CUDA cores and on
# tensor cores, the token loop (no chunked solve), a producer warp feeding a
# 2-slot ring (cp.async.bulk, mbarriers) or none, and one lane along V (the
# cost model's choice before 2026-11-29-s3) without a producer.
FORMS = {"chunked": dict(chunked_solve=1),
         "tensor_cores": dict(chunked_solve=2),
         "token_loop": dict(chunked_solve=-1),
         "producer": dict(pipeline_stages=2),
         "no_producer": dict(pipeline_stages=-1),
         "one_v_lane": dict(v_lanes=1, pipeline_stages=-1)}


QUICK_NS = (1, 8, 64, 256)


def schedule_name(sched):
    """A column name for a pinned schedule: one letter a keyword set_schedule
    takes (o = overlap_reductions, c = chunked_solve, q = pipeline_stages, x =
    consumer_registers) and its value, so no two schedules share a column."""
    letters = dict(rows_per_warp="r", warps_per_block="w", v_lanes="l", stage_tokens="s",
                   unroll_tokens="u", l2_prefetch_distance="p", programmatic_launch="g",
                   overlap_reductions="o", chunked_solve="c", pipeline_stages="q",
                   consumer_registers="x")
    return "sched_" + "".join(f"{letters.get(k, k)}{v}" for k, v in sched.items())


def load_sglang(path):
    """SGLang's kernel module, loaded from its file (no sglang import)."""
    if not path:
        return None
    f = os.path.join(path, "sglang/srt/layers/attention/fla/fused_sigmoid_gating_recurrent.py")
    if not os.path.exists(f):
        return None
    spec = importlib.util.spec_from_file_location("sglang_fused_sigmoid_gating", f)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.fused_sigmoid_gating_delta_rule_update


def make_set(N, T, H, HV, K, V, dev, seed, state_dtype=torch.float32, steps=0, kda=False):
    g = torch.Generator(device="cpu").manual_seed(seed)
    bf = torch.bfloat16
    r = lambda *s: torch.randn(*s, generator=g)
    s = dict(
        q=r(N, T, H, K).to(bf).to(dev), k=r(N, T, H, K).to(bf).to(dev),
        v=r(N, T, HV, V).to(bf).to(dev),
        a=r(N, T, HV).to(bf).to(dev), b=r(N, T, HV).to(bf).to(dev),
        A_log=torch.log(torch.rand(HV, generator=g) * 15 + 1).to(dev),
        dt_bias=r(HV).to(dev),
        state_vk=r(N, HV, V, K).to(state_dtype).to(dev),  # pools of SGLang / FlashInfer / vLLM
        o=torch.empty(N, T, HV, V, dtype=bf, device=dev),
        idx=torch.arange(N, dtype=torch.int32, device=dev),
        g=torch.nn.functional.logsigmoid(r(N, T, HV)).to(dev),
        beta=torch.sigmoid(r(N, T, HV)).to(bf).to(dev),
    )
    if state_dtype == torch.float32:
        s["state_kv"] = r(N, HV, K, V).to(dev)  # FLA's initial state
    if kda:  # Kimi Delta Attention: a per key channel, dt_bias [HV * K]
        s["a_kda"] = r(N, T, HV, K).to(bf).to(dev)
        s["dt_bias_kda"] = r(HV * K).to(dev)
    if steps:  # SGLang's verify buffer [slots, cache_steps, HV, V, K]
        # An EAGLE tree per row: token t's parent step (step 0 starts from the
        # pool); two branches off step 0, one off step 1, then chains.
        tree = [-1, 0, 0, 1] + list(range(3, steps - 1))
        s["parents"] = torch.tensor([tree[:steps]] * N, dtype=torch.int64, device=dev)
        s["inter"] = torch.empty(N, steps, HV, V, K, dtype=state_dtype, device=dev)
    return s


_copy_kernel = None


def triton_copy(src, dst):
    """dst <- src with 16-byte accesses, 8 per thread: a kernel copy that runs
    near the DRAM rate (torch's copy_ of one buffer is a memcpy node, which
    reaches only 2.3-2.9 TB/s at 10-100 MB)."""
    global _copy_kernel
    import triton
    import triton.language as tl
    if _copy_kernel is None:
        @triton.jit
        def _copy(s, d, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
            m = offs < n
            tl.store(d + offs, tl.load(s + offs, mask=m), mask=m)
        _copy_kernel = _copy
    n = src.numel()
    block = 4096
    _copy_kernel[(triton.cdiv(n, block),)](src, dst, n, BLOCK=block, num_warps=4)


def time_graph(fn, sets, reps=20):
    """Median microseconds of one call, from CUDA-graph replays over the sets;
    None when the kernel refuses the shape (an anchor's own limit)."""
    try:
        return _time_graph(fn, sets, reps)
    except Exception as e:  # noqa: BLE001 - reported in the table as missing
        print(f"# kernel failed: {type(e).__name__}: {str(e).splitlines()[0][:120]}", flush=True)
        torch.cuda.synchronize()
        return None


def _time_graph(fn, sets, reps):
    for s in sets:  # warm up: compile / autotune outside the graph
        fn(s)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        with torch.cuda.graph(graph, stream=stream):
            for s in sets:
                fn(s)
    torch.cuda.synchronize()
    graph.replay()
    torch.cuda.synchronize()
    times = []
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(reps):
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000.0 / len(sets))
    times.sort()
    return times[len(times) // 2]


def time_copy(nbytes, dev):
    """The faster of two cold copies of nbytes / 2 bytes each way: a kernel
    (Triton) and torch copy_ (a memcpy node)."""
    R = max(2, min(64, math.ceil(4 * L2_BYTES / nbytes)))
    half = -(-nbytes // 8)  # float32 elements
    pairs = [(torch.empty(half, dtype=torch.float32, device=dev),
              torch.empty(half, dtype=torch.float32, device=dev)) for _ in range(R)]
    times = [time_graph(lambda p: p[1].copy_(p[0]), pairs),
             time_graph(lambda p: triton_copy(p[0], p[1]), pairs)]
    return min(t for t in times if t is not None)


# Workloads: (name, what gdn runs, what the anchor runs). Bytes count the state
# read and written (+ each intermediate state written) + q, k, v, o and gates.
def workloads(args, sglang, fla_fr):
    decode = lambda s: ops.gated_delta_rule_decode_pretranspose(
        s["q"], s["k"], s["v"], s["state_vk"], s["A_log"], s["a"], s["dt_bias"], s["b"],
        output=s["o"])
    decode_pool = lambda s: ops.gated_delta_rule_decode_pretranspose(
        s["q"], s["k"], s["v"], None, s["A_log"], s["a"], s["dt_bias"], s["b"], output=s["o"],
        initial_state=s["state_vk"], initial_state_indices=s["idx"])
    sgl = None if sglang is None else lambda s: sglang(
        s["A_log"], s["a"], s["dt_bias"], 1.0, 20.0, s["q"], s["k"], s["v"], s["b"],
        s["state_vk"], s["idx"], use_qk_l2norm_in_kernel=True)
    verify = lambda s: ops.fused_sigmoid_gating_delta_rule_update(
        s["A_log"], s["a"], s["dt_bias"], 1.0, 20.0, s["q"], s["k"], s["v"], s["b"],
        s["state_vk"], s["idx"], use_qk_l2norm_in_kernel=True, disable_state_update=True,
        intermediate_states_buffer=s["inter"], intermediate_state_indices=s["idx"],
        cache_steps=s["inter"].shape[1])
    sgl_verify = None if sglang is None else lambda s: sglang(
        s["A_log"], s["a"], s["dt_bias"], 1.0, 20.0, s["q"], s["k"], s["v"], s["b"],
        s["state_vk"], s["idx"], use_qk_l2norm_in_kernel=True, disable_state_update=True,
        intermediate_states_buffer=s["inter"], intermediate_state_indices=s["idx"],
        cache_steps=s["inter"].shape[1])
    kda = lambda s: ops.fused_sigmoid_gating_delta_rule_update(
        s["A_log"], s["a_kda"], s["dt_bias_kda"], 1.0, 20.0, s["q"], s["k"], s["v"], s["b"],
        s["state_vk"], s["idx"], use_qk_l2norm_in_kernel=True, is_kda=True)
    sgl_kda = None if sglang is None else lambda s: sglang(
        s["A_log"], s["a_kda"], s["dt_bias_kda"], 1.0, 20.0, s["q"], s["k"], s["v"], s["b"],
        s["state_vk"], s["idx"], use_qk_l2norm_in_kernel=True, is_kda=True)
    tree = lambda s: ops.fused_sigmoid_gating_delta_rule_update(
        s["A_log"], s["a"], s["dt_bias"], 1.0, 20.0, s["q"], s["k"], s["v"], s["b"],
        s["state_vk"], s["idx"], use_qk_l2norm_in_kernel=True, disable_state_update=True,
        intermediate_states_buffer=s["inter"], intermediate_state_indices=s["idx"],
        cache_steps=s["inter"].shape[1], retrieve_parent_token=s["parents"])
    sgl_tree = None if sglang is None else lambda s: sglang(
        s["A_log"], s["a"], s["dt_bias"], 1.0, 20.0, s["q"], s["k"], s["v"], s["b"],
        s["state_vk"], s["idx"], use_qk_l2norm_in_kernel=True, disable_state_update=True,
        intermediate_states_buffer=s["inter"], intermediate_state_indices=s["idx"],
        cache_steps=s["inter"].shape[1], retrieve_parent_token=s["parents"])
    fla_style = lambda s: ops.fused_recurrent_gated_delta_rule(
        s["q"], s["k"], s["v"], g=s["g"], beta=s["beta"], initial_state=s["state_kv"],
        output_final_state=True, use_qk_l2norm_in_kernel=True)
    fla = lambda s: fla_fr(
        s["q"], s["k"], s["v"], g=s["g"], beta=s["beta"], initial_state=s["state_kv"],
        output_final_state=True, use_qk_l2norm_in_kernel=True)
    f32, bf = torch.float32, torch.bfloat16
    # name, T values, state dtype, state passes (reads + writes, per T if verify), gdn, anchor
    return [
        ("decode, state in place", (1,), f32, "rw", decode, ("SGLang", sgl)),
        ("decode, bf16 pool", (1,), bf, "rw", decode_pool, ("SGLang", sgl)),
        ("verify, bf16 pool + per-token states", (4, 12), bf, "verify", verify,
         ("SGLang", sgl_verify)),
        ("final state only (FLA-style)", (1, 4, 12), f32, "rw", fla_style, ("FLA", fla)),
        ("KDA decode, bf16 pool", (1,), bf, "rw", kda, ("SGLang", sgl_kda)),
        ("verify with an EAGLE tree, bf16 pool + per-token states", (4,), bf, "verify", tree,
         ("SGLang", sgl_tree)),
    ]


def run(args):
    dev = torch.device("cuda")
    sglang = load_sglang(args.sglang)
    from fla.ops.gated_delta_rule import fused_recurrent_gated_delta_rule as fla_fr
    K, V = 128, 128
    Ns = QUICK_NS if args.quick else [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
    if args.Ns:
        Ns = [int(x) for x in args.Ns.split(",")]
    # (H, HV): Qwen3-Next one rank (16, 32); Qwen3.5-122B at TP1 (16, 64) and TP8 (2, 8).
    heads = [(16, 32)] if args.quick else [(2, 8), (16, 32), (16, 64)]
    if args.hv:
        heads = [(h, hv) for h, hv in [(2, 8), (16, 32), (16, 64)] if str(hv) in args.hv.split(",")]
    rows = []
    for name, Ts, sdt, passes, gdn_fn, (anchor, anchor_fn) in workloads(args, sglang, fla_fr):
        if args.only and not any(o in name for o in args.only.split(";")):
            continue
        # The issue-4 sweep (N, T, state dtype, HV) covers decode, verify and
        # the final-state form; KDA and trees stay at the quick points.
        extra = name.startswith(("KDA", "verify with an EAGLE"))
        for H, HV in heads if not extra else [(16, 32)]:
            for T in Ts:
                if args.Ts and str(T) not in args.Ts.split(","):
                    continue
                if HV != 32 and T != Ts[0]:
                    continue  # other head counts: the first T only
                for N in Ns if not extra else [n for n in Ns if n in QUICK_NS]:
                    esz = torch.finfo(sdt).bits // 8
                    state = N * HV * K * V * esz
                    io = (2 * N * T * H * K + 2 * N * T * HV * V) * 2 + 2 * N * T * HV * 2
                    if name.startswith("KDA"):  # a per key channel
                        io += N * T * HV * (K - 1) * 2
                    nbytes = (state * (1 + T) if passes == "verify" else 2 * state) + io
                    R = 1 if args.profile else max(2, min(64, math.ceil(4 * L2_BYTES / nbytes)))
                    steps = T if passes == "verify" else 0
                    sets = [make_set(N, T, H, HV, K, V, dev, i, sdt, steps, name.startswith("KDA"))
                            for i in range(R)]
                    if args.profile:  # one untimed call each, for Nsight Compute
                        gdn_fn(sets[0])
                        if anchor_fn:
                            anchor_fn(sets[0])
                        torch.cuda.synchronize()
                        print(f"# profiled {name} T={T} HV={HV} N={N}", flush=True)
                        continue
                    res = {"workload": name, "T": T, "H": H, "HV": HV, "N": N,
                           "state_dtype": str(sdt).split(".")[-1], "bytes": nbytes, "sets": R,
                           "anchor": anchor}
                    res["copy"] = time_copy(nbytes, dev)
                    res["gdn"] = time_graph(gdn_fn, sets)
                    # SGLang's kernel offsets the intermediate buffer by
                    # cache_idx * cache_steps * HV * K * V in int32 (its
                    # fused_sigmoid_gating_recurrent.py): past 2^31 elements it
                    # reads and writes out of bounds (an illegal address, which
                    # ends the process), so it is not run there.
                    overflows = anchor == "SGLang" and steps and N * steps * HV * K * V >= 2**31
                    res["anchor_us"] = time_graph(anchor_fn, sets) if anchor_fn and not overflows else None
                    if T > 1 and (args.forms or (HV == 32 and N in QUICK_NS)):  # what staging buys
                        ops.set_schedule(stage_tokens=-1)
                        res["gdn_unstaged"] = time_graph(gdn_fn, sets)
                        for form, sched in FORMS.items():
                            ops.set_schedule(**sched)  # None: the form does not apply
                            res["gdn_" + form] = time_graph(gdn_fn, sets)
                        ops.set_schedule()
                    if args.sweep and HV == 32 and N in (1, 8, 64, 256, 1024) and (
                            T > 1 or (name.startswith("decode") and N != 1024)):
                        for sched in args.schedules or (SCHEDULES_TN if T > 1 else
                                                        SCHEDULES_T1):
                            ops.set_schedule(**sched)
                            res[schedule_name(sched)] = time_graph(gdn_fn, sets)
                        ops.set_schedule()
                    rows.append(res)
                    print(json.dumps(res), flush=True)
                    del sets
                    torch.cuda.empty_cache()
        report(rows, args.out, quiet=True)  # a time limit keeps what is done
    return rows


def report(rows, out, quiet=False, device=None):
    if not rows:  # nothing timed (--profile, or a time limit before the first point)
        return
    os.makedirs(out, exist_ok=True)
    lines = ["| workload | T | H | HV | N | MB | copy us | gdn us (of copy) | anchor | anchor us (of copy) | anchor / gdn |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        def cell(t):
            return "—" if t is None else f"{t:.2f} ({r['copy'] / t:.2f})"
        ratio = "—" if not (r["gdn"] and r["anchor_us"]) else f"{r['anchor_us'] / r['gdn']:.2f}"
        lines.append(f"| {r['workload']} | {r['T']} | {r['H']} | {r['HV']} | {r['N']} | "
                     f"{r['bytes'] / 1e6:.1f} | {r['copy']:.2f} | {cell(r['gdn'])} | {r['anchor']} | "
                     f"{cell(r['anchor_us'])} | {ratio} |")
    formed = [r for r in rows if "gdn_unstaged" in r]
    if formed:
        names = ["unstaged"] + list(FORMS)
        lines += ["", "Other kernel forms at T > 1 (us): unstaged = no shared-memory "
                  "staging; chunked / tensor_cores = the WY solve of a staged chunk on CUDA "
                  "cores (chunked_solve=1) or tensor cores (2); token_loop = no chunked solve "
                  "(-1); "
                  "producer / no_producer = a producer warp feeding a 2-slot ring with "
                  "cp.async.bulk and mbarriers (pipeline_stages=2) or none (-1); one_v_lane = "
                  "no producer and one lane along V (v_lanes=1, the columns a lane chosen "
                  "again); — = does not apply.", "",
                  "| workload | T | HV | N | default | " + " | ".join(names) + " |",
                  "|---|---|---|---|---|" + "---|" * len(names)]
        for r in formed:
            lines.append(f"| {r['workload']} | {r['T']} | {r['HV']} | {r['N']} | {r['gdn']:.2f} | " +
                         " | ".join("—" if r.get("gdn_" + n) is None else f"{r['gdn_' + n]:.2f}"
                                    for n in names) + " |")
    sweep = [r for r in rows if any(k.startswith("sched_") for k in r)]
    if sweep:
        lines += ["", "Schedule sweep (HV=32; us; sched_ names: r rows-per-warp, w warps-per-block, "
                  "l v-lanes, s stage-tokens, u unroll-tokens, p l2-prefetch-distance, "
                  "g programmatic-launch, o overlap-reductions, c chunked-solve, "
                  "q pipeline-stages, x consumer-registers; -1 = off; unset = "
                  "automatic):", ""]
        for key in sorted({(r["workload"], r["T"]) for r in sweep}):
            sub = [r for r in sweep if (r["workload"], r["T"]) == key]
            cols = [k for k in sub[0] if k.startswith("sched_")]
            lines += [f"{key[0]}, T={key[1]}:", "",
                      "| N | default | " + " | ".join(c[6:] for c in cols) + " |",
                      "|---|---|" + "---|" * len(cols)]
            for r in sub:
                lines.append(f"| {r['N']} | {r['gdn']:.2f} | " + " | ".join(
                    "—" if r.get(c) is None else f"{r[c]:.2f}" for c in cols) + " |")
            lines.append("")
    table = "\n".join(lines)
    with open(os.path.join(out, "bench_gdn.md"), "w") as f:
        f.write(f"# gdn vs anchors on {device or torch.cuda.get_device_name()}\n\n"
                "CUDA-graph replay medians, cold state (rotating input sets); "
                "'of copy' = copy time / kernel time for the same bytes, the copy being "
                "the faster of a Triton copy kernel and torch copy_.\n"
                "K=V=128, bf16 q/k/v. Decode updates a vk state (fp32, or a bf16 pool) in place; "
                "verify reads a bf16 pool and writes the state after every token to a bf16 buffer "
                "(disable_state_update); FLA-style reads a kv fp32 initial state and writes a "
                "final state. anchor / gdn > 1: gdn is faster.\n\n" + table + "\n")
    with open(os.path.join(out, "bench_gdn.json"), "w") as f:
        json.dump(rows, f, indent=1)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        panels = sorted({(r["workload"], r["T"], r["HV"]) for r in rows})
        cols = 4
        nrow = -(-len(panels) // cols)
        fig, axes = plt.subplots(nrow, cols, figsize=(5 * cols, 4 * nrow), squeeze=False)
        for ax, (w, T, HV) in zip(axes.flat, panels):
            sub = [r for r in rows if (r["workload"], r["T"], r["HV"]) == (w, T, HV)]
            for key, label in (("gdn", "gdn"), ("anchor_us", sub[0]["anchor"]), ("copy", "copy")):
                pts = [(r["N"], r["bytes"] / r[key] / 1e3) for r in sub if r.get(key)]
                if pts:
                    ax.plot(*zip(*pts), marker="o", label=label)
            ax.set_xscale("log", base=2)
            ax.set_xlabel("N (sequences)")
            ax.set_ylabel("GB/s")
            ax.set_title(f"{w}\nT={T}, HV={HV}", fontsize=9)
            ax.legend(fontsize=7)
        for ax in list(axes.flat)[len(panels):]:
            ax.axis("off")
        fig.tight_layout()
        fig.savefig(os.path.join(out, "bench_gdn.png"), dpi=90)
    except Exception as e:  # the table is the result; the plot is a convenience
        print("plot skipped:", e)
    if not quiet:
        print(table)


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--quick", action="store_true")
    p.add_argument("--sweep", action="store_true", help="also time gdn under several schedules")
    p.add_argument("--schedules", default=None,
                   help="with --sweep, these schedules instead of the built-in lists: "
                        "';'-separated, each ','-separated set_schedule keywords, e.g. "
                        "'l2_prefetch_distance=-1;rows_per_warp=4,v_lanes=2'")
    p.add_argument("--only", default=None,
                   help="run only the workloads whose name contains one of these "
                        "semicolon-separated texts (names hold commas), e.g. "
                        "'decode, bf16 pool;KDA'")
    p.add_argument("--Ns", default=None, help="comma-separated N values (default: by --quick)")
    p.add_argument("--hv", default=None, help="comma-separated HV values of 8, 32, 64 "
                   "(default: 32 with --quick, else all)")
    p.add_argument("--Ts", default=None, help="comma-separated T values (default: each workload's)")
    p.add_argument("--forms", action="store_true",
                   help="time the kernel forms (FORMS) at every N and HV, not only HV = 32 and "
                        "N in QUICK_NS")
    p.add_argument("--profile", action="store_true",
                   help="no timing: one call of gdn and of the anchor a point, for Nsight "
                        "Compute (ncu -k regex:'recurrent|fused' --set full python3 "
                        "bench/bench_gdn.py --profile --only verify --Ts 4 --hv 32 --Ns 16)")
    p.add_argument("--out", default=os.environ.get("OUT", "bench/results"))
    p.add_argument("--sglang", default=None, help="directory holding the unpacked sglang wheel")
    p.add_argument("--from-json", default=None,
                   help="no GPU: redraw the table and plot from comma-separated "
                        "bench_gdn.json files or bench.log files (their JSON lines), "
                        "e.g. to join the parts of a sweep run in several calls; a later "
                        "file's row replaces an earlier one of the same workload, T, HV, N")
    p.add_argument("--device-name", default="NVIDIA H200", help="with --from-json")
    a = p.parse_args()
    a.schedules = [{k: int(v) for k, v in (kv.split("=") for kv in item.split(","))}
                   for item in a.schedules.split(";")] if a.schedules else None
    if a.from_json:
        # A later file's row replaces an earlier one of the same workload, T,
        # HV and N (a re-run of some points), keeping the earlier order.
        joined = {}
        for path in a.from_json.split(","):
            text = open(path).read()
            for r in json.loads(text) if path.endswith(".json") else [
                    json.loads(line) for line in text.splitlines() if line.startswith("{")]:
                joined[(r["workload"], r["T"], r["HV"], r["N"])] = r
        report(list(joined.values()), a.out, quiet=True, device=a.device_name)
    else:
        report(run(a), a.out)
