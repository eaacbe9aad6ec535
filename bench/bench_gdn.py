#!/usr/bin/env python3
"""Side-by-side GPU benchmark of gdn kernels and the anchors (REFERENCE.md §5).

Runs on the GPU machine, in one process, on the same inputs:
  - gdn (this project, through gdn.ops),
  - FLA `fused_recurrent_gated_delta_rule` (fla-core wheel),
  - SGLang `fused_sigmoid_gating_delta_rule_update` (loaded from the sglang
    wheel's file, which needs only torch and triton),
  - a device-to-device copy of the same number of bytes (torch copy_).
Timing: CUDA-graph replays, median; each graph calls the kernel on R rotating
input sets so the bytes touched between two runs of one set exceed the L2
(60 MB) four times: the state is cold, as in a model with 30-60 layers.
Bytes: state read + state written + q, k, v, o and the gates.

Usage: python3 bench/bench_gdn.py [--quick] [--out DIR] [--sglang PATH]
"""
import argparse
import importlib.util
import json
import math
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import gdn.ops as ops  # noqa: E402

L2_BYTES = 60 << 20
# (rows-per-warp, warps-per-block, v-lanes) tried with --sweep.
SCHEDULES = [(1, 4, 0), (2, 4, 0), (4, 4, 0), (8, 4, 0), (2, 8, 0), (4, 8, 0), (8, 2, 0),
             (4, 2, 0), (2, 2, 0), (1, 8, 0)]


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


def make_set(N, T, H, HV, K, V, dev, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    bf = torch.bfloat16
    r = lambda *s: torch.randn(*s, generator=g)
    return dict(
        q=r(N, T, H, K).to(bf).to(dev), k=r(N, T, H, K).to(bf).to(dev),
        v=r(N, T, HV, V).to(bf).to(dev),
        a=r(N, T, HV).to(bf).to(dev), b=r(N, T, HV).to(bf).to(dev),
        A_log=torch.log(torch.rand(HV, generator=g) * 15 + 1).to(dev),
        dt_bias=r(HV).to(dev),
        state_vk=r(N, HV, V, K).to(dev),      # pools of SGLang / FlashInfer / vLLM
        state_kv=r(N, HV, K, V).to(dev),      # FLA's initial state
        o=torch.empty(N, T, HV, V, dtype=bf, device=dev),
        idx=torch.arange(N, dtype=torch.int32, device=dev),
        g=torch.nn.functional.logsigmoid(r(N, T, HV)).to(dev),
        beta=torch.sigmoid(r(N, T, HV)).to(bf).to(dev),
    )


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


def run(args):
    dev = torch.device("cuda")
    sglang = load_sglang(args.sglang)
    from fla.ops.gated_delta_rule import fused_recurrent_gated_delta_rule as fla_fr
    K, V = 128, 128
    Ns = [1, 8, 64, 256] if args.quick else [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
    # (T, H, HV): Qwen3-Next one rank (16, 32); Qwen3.5-122B at TP1 (16, 64) and
    # TP8 (2, 8); MTP T=4 and DFlash T=12.
    configs = [(1, 16, 32), (4, 16, 32), (12, 16, 32)] if args.quick else \
        [(1, 2, 8), (1, 16, 32), (1, 16, 64), (4, 16, 32), (12, 16, 32)]
    rows = []
    for T, H, HV in configs:
        for N in Ns:
            state = N * HV * K * V * 4
            io = (2 * N * T * H * K + 2 * N * T * HV * V) * 2 + 2 * N * T * HV * 2
            nbytes = 2 * state + io
            R = max(2, min(64, math.ceil(4 * L2_BYTES / nbytes)))
            sets = [make_set(N, T, H, HV, K, V, dev, i) for i in range(R)]
            res = {"T": T, "H": H, "HV": HV, "N": N, "bytes": nbytes, "sets": R}
            half = nbytes // 8  # float32 elements: bytes / 2 each way
            src = [torch.empty(half, dtype=torch.float32, device=dev) for _ in range(R)]
            dst = [torch.empty(half, dtype=torch.float32, device=dev) for _ in range(R)]
            pairs = list(zip(src, dst))
            res["copy"] = time_graph(lambda p: p[1].copy_(p[0]), pairs)
            del src, dst, pairs
            if T == 1:
                # In-place fp32 vk state: gdn (FlashInfer entry) vs SGLang.
                res["gdn"] = time_graph(lambda s: ops.gated_delta_rule_decode_pretranspose(
                    s["q"], s["k"], s["v"], s["state_vk"], s["A_log"], s["a"], s["dt_bias"],
                    s["b"], output=s["o"]), sets)
                if args.sweep and HV == 32 and N in (1, 8, 64, 256, 1024):
                    for sched in SCHEDULES:
                        ops.set_schedule(*sched)
                        res["gdn_%d_%d_%d" % sched] = time_graph(lambda s: ops.gated_delta_rule_decode_pretranspose(
                            s["q"], s["k"], s["v"], s["state_vk"], s["A_log"], s["a"],
                            s["dt_bias"], s["b"], output=s["o"]), sets)
                    ops.set_schedule()
                if sglang:
                    res["sglang"] = time_graph(lambda s: sglang(
                        s["A_log"], s["a"], s["dt_bias"], 1.0, 20.0, s["q"], s["k"], s["v"],
                        s["b"], s["state_vk"], s["idx"], use_qk_l2norm_in_kernel=True), sets)
            # FLA style: read an initial kv state, write a final state.
            res["gdn_fla"] = time_graph(lambda s: ops.fused_recurrent_gated_delta_rule(
                s["q"], s["k"], s["v"], g=s["g"], beta=s["beta"], initial_state=s["state_kv"],
                output_final_state=True, use_qk_l2norm_in_kernel=True), sets)
            res["fla"] = time_graph(lambda s: fla_fr(
                s["q"], s["k"], s["v"], g=s["g"], beta=s["beta"], initial_state=s["state_kv"],
                output_final_state=True, use_qk_l2norm_in_kernel=True), sets)
            rows.append(res)
            print(json.dumps(res), flush=True)
            del sets
            torch.cuda.empty_cache()
    return rows


def report(rows, out):
    os.makedirs(out, exist_ok=True)
    lines = ["| T | H | HV | N | copy us | gdn us (of copy) | SGLang us (of copy) | "
             "gdn FLA-style us (of copy) | FLA us (of copy) |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        def cell(key):
            if r.get(key) is None:
                return "—"
            return f"{r[key]:.2f} ({r['copy'] / r[key]:.2f})"
        lines.append(f"| {r['T']} | {r['H']} | {r['HV']} | {r['N']} | {r['copy']:.2f} | {cell('gdn')} | "
                     f"{cell('sglang')} | {cell('gdn_fla')} | {cell('fla')} |")
    sweep = [r for r in rows if any(k.startswith("gdn_") and k[4].isdigit() for k in r)]
    if sweep:
        keys = [k for k in sweep[0] if k.startswith("gdn_") and k[4].isdigit()]
        lines += ["", "Schedule sweep (T=1, HV=32, in-place vk; us; rows-per-warp_warps_v-lanes):", "",
                  "| N | default | " + " | ".join(keys) + " |",
                  "|---|---|" + "---|" * len(keys)]
        for r in sweep:
            lines.append(f"| {r['N']} | {r['gdn']:.2f} | " + " | ".join(
                "—" if r[k] is None else f"{r[k]:.2f}" for k in keys) + " |")
    table = "\n".join(lines)
    with open(os.path.join(out, "bench_gdn.md"), "w") as f:
        f.write(f"# gdn vs anchors on {torch.cuda.get_device_name()}\n\n"
                "CUDA-graph replay medians, cold state (rotating input sets); "
                "'of copy' = copy time / kernel time for the same bytes.\n"
                "K=V=128, bf16 q/k/v, fp32 state. gdn and SGLang update a vk "
                "state in place (T=1); gdn FLA-style and FLA read a kv initial state "
                "and write a final state.\n\n" + table + "\n")
    with open(os.path.join(out, "bench_gdn.json"), "w") as f:
        json.dump(rows, f, indent=1)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        keys = [("gdn", "gdn (in place)"), ("sglang", "SGLang"), ("gdn_fla", "gdn (FLA-style)"),
                ("fla", "FLA"), ("copy", "copy")]
        configs = sorted({(r["T"], r["HV"]) for r in rows})
        fig, axes = plt.subplots(1, len(configs), figsize=(5 * len(configs), 4), squeeze=False)
        for ax, (T, HV) in zip(axes[0], configs):
            sub = [r for r in rows if r["T"] == T and r["HV"] == HV]
            for key, label in keys:
                pts = [(r["N"], r["bytes"] / r[key] / 1e3) for r in sub if r.get(key)]
                if pts:
                    ax.plot(*zip(*pts), marker="o", label=label)
            ax.set_xscale("log", base=2)
            ax.set_xlabel("N (sequences)")
            ax.set_ylabel("GB/s")
            ax.set_title(f"T={T}, HV={HV}")
            ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(out, "bench_gdn.png"), dpi=100)
    except Exception as e:  # the table is the result; the plot is a convenience
        print("plot skipped:", e)
    print(table)


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--quick", action="store_true")
    p.add_argument("--sweep", action="store_true", help="also time gdn under several schedules")
    p.add_argument("--out", default=os.environ.get("OUT", "bench/results"))
    p.add_argument("--sglang", default=None, help="directory holding the unpacked sglang wheel")
    a = p.parse_args()
    report(run(a), a.out)
