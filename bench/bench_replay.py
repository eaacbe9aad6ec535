#!/usr/bin/env python3
"""Replayed speculative verify (issue 22), side by side on the GPU: one round
of speculative decoding's verify + commit, per point:
  - gdn replay: per layer a verify that writes the replay windows (gdn's
    fused_sigmoid_gating_delta_rule_update with cache_ring=True, the pool
    only read), then one gdn.replay_commit launch for all layers
    (gdn.ops.replay_commit with the layer dimension); its verify and its
    commit are also timed alone;
  - gdn snapshot: per layer a verify that writes the state after every
    token (intermediate_states_buffer), then per layer the copy commit
    (gdn.ops.commit_accepted: gdn.commit has no layer dimension). One
    buffer serves every layer (the same bytes; 48 buffers of 256 rows of
    12 fp32 states would not fit);
  - SGLang's Triton replay (sglang 0.5.23, imported as a package): per
    layer fused_sigmoid_gating_delta_rule_update(cache_ring=True, ...),
    then commit_gdn_replayssm_fold_all_layers once. An import or call
    failure is an "error: ..." cell, never a dropped column.
Points: H = 16, HV = 32, K = V = 128, bf16 q/k/v, fp32 and bf16
checkpoints, T in {4, 8, 12}, every row accepting `accepted` in {0, 1,
T/2, T} tokens, N in {1, 8, 64, 256} rows on a pool of N slots, 1 and 48
layers per round (48 verifies + one replay commit). Each layer has its own
inputs, checkpoints and windows. Timing as bench_gdn.py: CUDA-graph
replays, median, rotating input sets so the state is cold; "copy" is a
device-to-device copy of the bytes a replay round must move (each
layer's checkpoint read by the verify, inputs, output and windows
written; with accepted > 0 the checkpoint read and written again and the
accepted window steps read by the commit).

Usage: python3 bench/bench_replay.py [--quick] [--Ns 1,8] [--Ts 4] [--layers 1,48]
           [--accepted 0,1] [--out DIR] [--site DIR]
       python3 bench/bench_gdn.py --replay [same options]
"""
import argparse
import json
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_gdn as bg  # noqa: E402  (puts the repository's gdn on sys.path)

ops = bg.ops
H, HV, K, V = 16, 32, 128, 128
SGLANG_MODULE = "sglang.kernels.ops.attention.linear"
SGLANG_REPLAY = [
    bg.Anchor("SGLang replay verify", "sglang", SGLANG_MODULE + ".fused_sigmoid_gating_recurrent",
              "fused_sigmoid_gating_delta_rule_update", "triton"),
    bg.Anchor("SGLang replay commit", "sglang", SGLANG_MODULE + ".gdn_replayssm_spec_fold",
              "commit_gdn_replayssm_fold_all_layers", "triton"),
]
SGLANG_PATH = ("triton: fused_sigmoid_gating_delta_rule_update(cache_ring=True) a layer + "
               "commit_gdn_replayssm_fold_all_layers")


def points(quick):
    """(state dtype, T, N, layers, accepted counts) of the sweep."""
    Ts, Ns = ((4, 12), (1, 64)) if quick else ((4, 8, 12), (1, 8, 64, 256))
    for sdt in (torch.float32, torch.bfloat16):
        for T in Ts:
            accs = sorted({1, T}) if quick else sorted({0, 1, T // 2, T})
            for N in Ns:
                for LY in (1, 48):
                    yield sdt, T, N, LY, accs


# Copies past this size are timed at it and scaled linearly (a copy is
# bandwidth-bound long before; the full-size source and destination of a
# 48-layer N = 256 round would not fit beside its inputs).
COPY_CAP = 2 << 30


def copy_us(nbytes, dev):
    if nbytes <= COPY_CAP:
        return bg.time_copy(nbytes, dev)
    return bg.time_copy(COPY_CAP, dev) * nbytes / COPY_CAP


def round_bytes(sdt, T, N, LY, acc):
    """Bytes one replay round must move (the copy it is compared with)."""
    state = N * HV * K * V * (torch.finfo(sdt).bits // 8)
    io = (2 * N * T * H * K + 2 * N * T * HV * V) * 2 + 2 * N * T * HV * 2
    window = lambda steps: (N * H * steps * K + N * HV * steps * V) * 2 + 2 * N * HV * steps * 4
    commit = 2 * state + window(acc) if acc > 0 else 0
    return LY * (state + io + window(T) + commit)


def make_set(sdt, T, N, LY, seed, dev):
    """One input set: per layer q, k, v, a, b (bf16), A_log, dt_bias; the
    checkpoints [LY, N, HV, V, K] and the windows with a layer dimension;
    one snapshot buffer [N, T, HV, V, K]; accepted and the slot table."""
    g = torch.Generator(device=dev).manual_seed(seed)  # drawn on the GPU (GBs at N = 256)
    bf = torch.bfloat16
    r = lambda *s, dtype=bf: torch.randn(*s, generator=g, device=dev).to(dtype)  # noqa: E731
    layers = [dict(q=r(N, T, H, K), k=r(N, T, H, K), v=r(N, T, HV, V), a=r(N, T, HV),
                   b=r(N, T, HV), dt_bias=r(HV, dtype=torch.float32),
                   A_log=torch.log(torch.rand(HV, generator=g, device=dev) * 15 + 1))
              for _ in range(LY)]
    state = torch.empty(LY, N, HV, V, K, dtype=sdt, device=dev)
    for layer in range(LY):  # a layer at a time: no fp32 copy of all layers
        state[layer].copy_(r(N, HV, V, K, dtype=torch.float32) * 0.1)
    return dict(layers=layers, state=state,
                rawv=torch.zeros(LY, N, HV, T, V, dtype=bf, device=dev),
                rawk=torch.zeros(LY, N, H, T, K, dtype=bf, device=dev),
                g=torch.zeros(LY, N, HV, T, device=dev),
                beta=torch.zeros(LY, N, HV, T, device=dev),
                buf=torch.empty(N, T, HV, V, K, dtype=sdt, device=dev),
                idx=torch.arange(N, dtype=torch.int32, device=dev),
                accepted=torch.zeros(N, dtype=torch.int32, device=dev))


def _verify_call(f, s, layer, **kw):
    x = s["layers"][layer]
    return f(x["A_log"], x["a"], x["dt_bias"], 1.0, 20.0, x["q"], x["k"], x["v"], x["b"],
             s["state"][layer], s["idx"], use_qk_l2norm_in_kernel=True,
             disable_state_update=True, **kw)


def _rings(s, layer):
    return dict(cache_ring=True, replayssm_rawv=s["rawv"][layer], replayssm_rawk=s["rawk"][layer],
                replayssm_g=s["g"][layer], replayssm_beta=s["beta"][layer])


def replay_verify(f, s, windows=True):
    """Every layer's verify, writing the replay windows (or, windows=False,
    o only: what the windows cost)."""
    for layer in range(s["state"].shape[0]):
        _verify_call(f, s, layer, **(_rings(s, layer) if windows else {}))


def gdn_replay_commit(s):
    ops.replay_commit(s["rawk"], s["rawv"], s["g"], s["beta"], s["accepted"], s["state"],
                      state_indices=s["idx"])


def gdn_replay(s):
    replay_verify(ops.fused_sigmoid_gating_delta_rule_update, s)
    gdn_replay_commit(s)


def gdn_snapshot(s):
    LY = s["state"].shape[0]
    for layer in range(LY):
        _verify_call(ops.fused_sigmoid_gating_delta_rule_update, s, layer,
                     intermediate_states_buffer=s["buf"], intermediate_state_indices=s["idx"])
    for layer in range(LY):
        ops.commit_accepted(s["buf"], s["accepted"], s["state"][layer], state_indices=s["idx"],
                            intermediate_state_indices=s["idx"])


def sglang_replay(verify_fn, commit_fn, s):
    replay_verify(verify_fn, s)
    commit_fn(s["state"], s["rawv"], s["rawk"], s["g"], s["beta"], s["idx"], s["accepted"],
              s["rawk"].shape[3], H)


def sglang_cell(sets):
    """SGLang's replay round: its version, path and time, or the error."""
    verify, fold = (a.load() for a in SGLANG_REPLAY)
    cell = {"version": verify.version, "path": SGLANG_PATH, "us": None,
            "error": verify.error or fold.error}
    if cell["error"] is None:
        cell["us"], cell["error"] = bg.time_graph_err(
            lambda s: sglang_replay(verify.fn, fold.fn, s), sets)
    return cell


def run(args):
    if not torch.cuda.is_available():
        sys.exit("bench_replay.py times on a CUDA GPU (none here)")
    if args.schedule:  # e.g. "columns_per_lane=8,lanes_along_v=1": every gdn kernel
        ops.set_schedule({k: (int(v) if v.isdigit() else v) for k, v in
                          (item.split("=") for item in args.schedule.split(","))})
    dev = torch.device("cuda")
    for a in SGLANG_REPLAY:
        a.load()
        print(f"# anchor {a.name}: {a.version or 'not installed'}, {a.module}.{a.function}: "
              f"{'error: ' + a.error if a.error else 'imported'}", flush=True)
    pick = lambda text: None if not text else {int(v) for v in text.split(",")}  # noqa: E731
    Ns, Ts, LYs, accs = pick(args.Ns), pick(args.Ts), pick(args.layers), pick(args.accepted)
    rows = []
    for sdt, T, N, LY, counts in points(args.quick):
        if (Ns and N not in Ns) or (Ts and T not in Ts) or (LYs and LY not in LYs):
            continue
        counts = [c for c in counts if not accs or c in accs]
        if not counts:
            continue
        nbytes = round_bytes(sdt, T, N, LY, T)
        # Rotating sets until a graph touches 4x the L2 (one set past that).
        R = max(1, min(64, math.ceil(4 * bg.L2_BYTES / nbytes)))
        sets = [make_set(sdt, T, N, LY, i, dev) for i in range(R)]
        verify_us, verify_err = bg.time_graph_err(
            lambda s: replay_verify(ops.fused_sigmoid_gating_delta_rule_update, s), sets)
        # The same verify writing no windows (o only): what the windows cost.
        plain_us, plain_err = bg.time_graph_err(
            lambda s: replay_verify(ops.fused_sigmoid_gating_delta_rule_update, s,
                                    windows=False), sets)
        for acc in counts:
            for s in sets:
                s["accepted"].fill_(acc)
            res = {"workload": "replay", "state_dtype": str(sdt).split(".")[-1], "T": T,
                   "accepted": acc, "N": N, "layers": LY, "H": H, "HV": HV,
                   "bytes": round_bytes(sdt, T, N, LY, acc), "sets": R}
            res["copy"] = copy_us(res["bytes"], dev)
            # The checkpoints alone (every layer's), what a verify must read.
            res["checkpoint_copy"] = copy_us(
                LY * N * HV * K * V * (torch.finfo(sdt).bits // 8), dev)
            if args.schedule:
                res["schedule"] = args.schedule
            res["gdn_replay_verify"], res["gdn_replay_verify_error"] = verify_us, verify_err
            res["gdn_plain_verify"], res["gdn_plain_verify_error"] = plain_us, plain_err
            for name, fn in (("gdn_replay", gdn_replay), ("gdn_replay_commit", gdn_replay_commit),
                             ("gdn_snapshot", gdn_snapshot)):
                res[name], res[name + "_error"] = bg.time_graph_err(fn, sets)
            res["anchors"] = {"SGLang Triton replay": sglang_cell(sets)}
            rows.append(res)
            print(json.dumps(res), flush=True)
        del sets
        torch.cuda.empty_cache()
        report(rows, args.out, quiet=True)
    return rows


def report(rows, out, quiet=False):
    if not rows:
        return
    os.makedirs(out, exist_ok=True)

    def us(r, key):
        t = r.get(key)
        if t is None:
            err = r.get(key + "_error")
            return "error: " + bg._md(err) if err else "—"
        return (f"{t:.2f}" if key in ("gdn_replay_commit", "gdn_plain_verify")
                else f"{t:.2f} ({r['copy'] / t:.2f})")

    def ratio(num, den):
        return "—" if not (num and den) else f"{num / den:.2f}"

    lines = ["| state | T | accepted | N | layers | MB | copy us | gdn replay us (of copy) | "
             "verify us (of copy) | verify / checkpoint copy | verify without windows us | "
             "commit us | "
             "gdn snapshot us (of copy) | snapshot / replay | "
             "SGLang, version, path | SGLang us (of copy) | SGLang / gdn replay |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        c = r["anchors"]["SGLang Triton replay"]
        label = ", ".join(x for x in ("SGLang Triton replay", c.get("version"), c.get("path")) if x)
        sgl = ("error: " + bg._md(c["error"]) if c.get("error") else
               "—" if c.get("us") is None else f"{c['us']:.2f} ({r['copy'] / c['us']:.2f})")
        lines.append(
            f"| {r['state_dtype']} | {r['T']} | {r['accepted']} | {r['N']} | {r['layers']} | "
            f"{r['bytes'] / 1e6:.1f} | {r['copy']:.2f} | {us(r, 'gdn_replay')} | "
            f"{us(r, 'gdn_replay_verify')} | "
            f"{ratio(r.get('gdn_replay_verify'), r.get('checkpoint_copy'))} | "
            f"{us(r, 'gdn_plain_verify')} | {us(r, 'gdn_replay_commit')} | "
            f"{us(r, 'gdn_snapshot')} | {ratio(r.get('gdn_snapshot'), r.get('gdn_replay'))} | "
            f"{bg._md(label)} | {sgl} | {ratio(c.get('us'), r.get('gdn_replay'))} |")
    table = "\n".join(lines)
    with open(os.path.join(out, "bench_replay.md"), "w") as f:
        f.write(f"# Replayed verify + commit on {bg._device_name()}\n\n"
                "One speculative round per point (bench/bench_replay.py): every layer's "
                "verify, then the commit of each row's `accepted` tokens. gdn replay = verify "
                "writing raw k/v/g/beta windows + one gdn.replay_commit for all layers "
                "(its verify and commit also timed alone); gdn snapshot = verify writing the "
                "state after every token + gdn.commit a layer (copy); SGLang = its Triton "
                "ReplaySSM (cache_ring verify + commit_gdn_replayssm_fold_all_layers). "
                "H=16, HV=32, K=V=128, bf16 inputs, a pool of N slots. CUDA-graph replay "
                "medians over rotating input sets (cold state); 'of copy' = copy time / "
                "time for the bytes a replay round moves; 'verify / checkpoint copy' = "
                "the verifies' time over a copy of every layer's checkpoint. Ratios "
                "'snapshot / replay' and 'SGLang / gdn replay' > 1: gdn replay is "
                "faster.\n\n" + table + "\n")
    with open(os.path.join(out, "bench_replay.json"), "w") as f:
        json.dump(rows, f, indent=1)
    if not quiet:
        print(table)


def add_arguments(p):
    """The replay workload's options (bench_gdn.py --replay shares them)."""
    p.add_argument("--layers", default=None, help="comma-separated layer counts of 1, 48")
    p.add_argument("--accepted", default=None,
                   help="comma-separated accepted counts (default: 0, 1, T/2, T)")
    p.add_argument("--schedule", default=None,
                   help="#gdn.schedule parameters pinned for every gdn kernel, "
                        "e.g. columns_per_lane=8,lanes_along_v=1 (a sweep)")


def main(args):
    rows = run(args)
    report(rows, args.out)


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--quick", action="store_true",
                   help="T in {4, 12}, N in {1, 64}, accepted in {1, T}")
    p.add_argument("--Ns", default=None)
    p.add_argument("--Ts", default=None)
    p.add_argument("--out", default=os.environ.get("OUT", "bench/results/replay"))
    p.add_argument("--site", default=None, help="a site directory holding the anchors")
    add_arguments(p)
    a = p.parse_args()
    if a.site:
        bg.add_site(a.site)
    main(a)
