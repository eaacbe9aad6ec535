#!/usr/bin/env python3
"""Prefill side by side (issue 23's grid): gdn's chunked forms against the
anchors' chunked prefill kernels, on the same inputs in one process.

Implementations, one row each per point (an anchor that cannot be imported
or fails on a point is an "error: ..." cell, never a dropped row):
  - gdn: gdn.ops.chunk_gated_delta_rule (FLA's signature; the cost model
    picks the form, docs/cost-model.md);
  - FLA chunk: fla.ops.gated_delta_rule.chunk_gated_delta_rule with
    FLA_FLASH_QLA=0, FLA's own Triton kernels (fla-core 0.6.0 otherwise
    hands the call to flash_qla whenever that package imports);
  - FlashQLA: flash_qla.chunk_gated_delta_rule (TileLang; its automatic
    context parallelism, auto_cp, on);
  - FlashInfer prefill: flashinfer.gdn_prefill.chunk_gated_delta_rule
    (CuTe DSL, sm_90a; packed tokens, alpha = exp(g), vk state);
  - SGLang chunk: sglang.kernels.ops.attention.fla.chunk
    .chunk_gated_delta_rule, the extend of SGLang's Triton backend (its own
    copy of FLA's chunk kernels; a vk pool read and written in place at the
    indices).

Shapes: H = 16, K = V = 128, HV = 32 (Qwen3-Next on one rank) and 64
(Qwen3.5); bf16 q, k, v; f32 log-space g = logsigmoid(N(0, 1)); bf16 beta =
sigmoid(N(0, 1)); an f32 initial state N(0, 1); o and the f32 final state;
qk L2 norm in the kernel. Fixed batches N x T over NS x TS while N * T is at
most --max-tokens (the points past it are listed, not run), and the varlen
mixes MIXES (cu_seqlens; sequences of any length, 0 included).

Time: the median of 20 CUDA-graph replays of one call, or, where the call
cannot be captured (a host read-back, such as a context-parallel plan), of
20 calls between CUDA events; the row names which. TFLOP/s counts
4 * tokens * HV * K * V (FlashInfer's convention). Accuracy: o and the final
state RMS-relative (docs/math.md §3) against gdn's token loop
(solve = token_by_token) run on the same values widened to f32, so that its
o is f32 too; the table's header gives that proxy's own error against the
fp64 reference (python/tests/reference.py) at a small point.

KDA (--kda; Kimi Delta Attention): the same grid, inputs and columns with
g per key channel, [B, T, HV, K] f32 log-space, drawn as the per-head g,
logsigmoid(N(0, 1)) a channel (the form of Kimi's gate -exp(A_log)
softplus(x + dt_bias), each channel its own), and the rows
  - gdn: gdn.ops.chunk_kda (FLA's signature; the cost model's form);
  - FLA chunk: fla.ops.kda.chunk_kda (fla-core 0.6.0), FLA's Triton
    kernels (its flash_kda backend takes only the fused gate, no GVA);
  - SGLang chunk: sglang.kernels.ops.attention.fla.kda.chunk_kda, the
    extend of SGLang's Triton KDA backend: the vk pool in place as above;
    its kernels take the heads from k (no GVA), so q and k are repeated to
    HV heads outside the timed call, and it writes o over v, so v is a copy,
    restored with the pool before the checked call;
  - FlashQLA and FlashInfer prefill: error rows saying why (FlashQLA 0.1.3
    has no KDA kernel; FlashInfer 0.7.2.post1's recurrent_kda has chunked
    prefill only on SM100/SM103/SM120, on sm_90 its recurrent decode kernel).
The accuracy reference is gdn.ops.chunk_kda's token loop, checked against
the fp64 reference with the per-key g. The GDN targets are read on these
rows too; WHY_SLOWER (measured for GDN) is not claimed for KDA.

    python3 bench/bench_prefill.py [--site DIR] [--Ns 1,4] [--Ts 512,2048]
        [--hv 32,64] [--mixes 'NAME;...' | --no-mixes] [--anchors 'NAME;...']
        [--schedule warps=2 ...] [--max-tokens 262144] [--kda] [--out DIR]
    python3 bench/bench_prefill.py --from-json A.json,B.log [--out DIR]
    python3 bench/bench_prefill.py --device cpu [--kda] --Ns 1,2 --Ts 20,70 \\
        --hv 4 --H 2 --K 16 --V 16 --out /tmp/bp   (gdn's CPU lowering: a dry run)

Each --schedule adds a row of gdn with those #gdn.schedule parameters
pinned ("gdn, warps = 2"), timed beside the cost model's and the anchors';
it is not an anchor (the fastest-anchor column and the targets skip it).

Writes bench_prefill.md and bench_prefill.json under --out (default
bench/results/prefill/anchors, with --kda bench/results/prefill/anchors-kda)
after every point, and a JSON line a row to stdout (--from-json joins the
parts of a grid run in several calls)."""
import argparse
import contextlib
import functools
import json
import math
import os
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python", "tests"))
import bench_gdn as bg  # noqa: E402  (sets GDN_LIBRARY, imports gdn.ops)
from reference import recurrent as ref_recurrent, rms_rel  # noqa: E402

ops = bg.ops
NS, TS, HVS = (1, 4, 16, 64), (512, 2048, 8192, 32768), (32, 64)
MAX_TOKENS = 1 << 18
# name -> sequence lengths (a varlen batch, packed along T)
MIXES = {
    "varlen, 8 sequences log-uniform in [64, 8192]": "loguniform:8:64:8192",
    "varlen, 1 x 16384 + 31 x 64": [16384] + [64] * 31,
    "varlen, 64 x 256": [256] * 64,
    # One long sequence through cu_seqlens: FlashInfer's and SGLang's prefill
    # of one request (gdn splits its scan: docs/cost-model.md#context-parallel-segments).
    "varlen, 1 x 32768": [32768],
    # Runs last: an anchor that faults on empty sequences (an illegal
    # address ends the process's CUDA context) then costs no other point.
    "varlen, lengths 0, 1, 63, 64, 65, 1000, 0, 4096": [0, 1, 63, 64, 65, 1000, 0, 4096],
}
REPS = 20


def mix_lengths(spec, seed=0):
    """A mix's sequence lengths: a list, or "loguniform:N:LO:HI" (N lengths
    log-uniform in [LO, HI], seeded)."""
    if not isinstance(spec, str):
        return list(spec)
    _, n, lo, hi = spec.split(":")
    g = np.random.default_rng(seed)
    return [int(round(math.exp(x))) for x in
            g.uniform(math.log(int(lo)), math.log(int(hi)), int(n))]


@contextlib.contextmanager
def _env(name, value):
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            del os.environ[name]
        else:
            os.environ[name] = old


def _fla_signature(f, s, **kw):
    """FLA's chunk signature (gdn, FLA, FlashQLA; KDA's too): (o, final state
    [N, HV, K, V])."""
    return f(s["q"], s["k"], s["v"], g=s["g"], beta=s["beta"], initial_state=s["state_kv"],
             output_final_state=True, use_qk_l2norm_in_kernel=True, cu_seqlens=s["cu"], **kw)


def _gdn(s):
    """gdn's call on the set: chunk_kda where g is per key ([B, T, HV, K]),
    else chunk_gated_delta_rule."""
    chunk = ops.chunk_kda if s["g"].dim() == 4 else ops.chunk_gated_delta_rule
    return _fla_signature(chunk, s)


def parse_pins(text):
    """--schedule's "name=value,..." as a dict of #gdn.schedule parameters
    (gdn.ops.set_schedule's): an int where the value is one, else the enum
    case. ValueError naming the text for an item without "="."""
    pins = {}
    for item in filter(None, (x.strip() for x in text.split(","))):
        name, eq, value = item.partition("=")
        if not eq:
            raise ValueError(f"--schedule {text!r}: {item!r} is not name=value")
        value = value.strip()
        pins[name.strip()] = int(value) if value.lstrip("-").isdigit() else value
    return pins


def _pinned(pins, s):
    """gdn with `pins` over the cost model's schedule (a row "gdn, ..."):
    pinned while its kernel is looked up, then back to the cost model."""
    ops.set_schedule(**pins)
    try:
        return _gdn(s)
    finally:
        ops.set_schedule()


def is_gdn(impl):
    """gdn's rows: the cost model's ("gdn") and each pinned one ("gdn, ...")."""
    return impl == "gdn" or impl.startswith("gdn, ")


def _fla_triton(f, s):
    with _env("FLA_FLASH_QLA", "0"):
        return _fla_signature(f, s)


def _flashinfer(f, s):
    """FlashInfer's prefill: tokens packed along T, alpha = exp(g) and beta in
    f32, the vk state; (o [total, HV, V], final state [N, HV, V, K])."""
    p = s.get("_packed")
    if p is None:  # built once a set, at the untimed first call
        flat = lambda x: x.reshape(-1, *x.shape[2:])  # noqa: E731
        N = s["state_kv"].shape[0]
        T = s["q"].shape[1]
        p = s["_packed"] = dict(
            q=flat(s["q"]), k=flat(s["k"]), v=flat(s["v"]), alpha=flat(s["g"]).exp(),
            beta=flat(s["beta"]).float(), state=s["state_kv"].transpose(-1, -2).contiguous(),
            cu=s["cu"] if s["cu"] is not None else
            torch.arange(0, N * T + 1, T, dtype=torch.int64, device=s["q"].device))
    return f(p["q"], p["k"], p["v"], g=p["alpha"], beta=p["beta"], initial_state=p["state"],
             output_final_state=True, cu_seqlens=p["cu"], use_qk_l2norm_in_kernel=True)


def _sglang_chunk(f, s):
    """SGLang's prefill (its Triton backend's extend): the vk pool read and
    written in place at the indices, query_start_loc int32; (o, the pool's
    rows, the final states). The pool is a copy of the set's initial states,
    restored before the call whose result is checked (s["_resets"]). KDA
    (chunk_kda, g per key): q and k repeated to HV heads (no GVA); o comes
    back in v's buffer, so v is a copy, restored with the pool."""
    p = s.get("_sglang")
    kda = s["g"].dim() == 4
    if p is None:
        N = s["state_kv"].shape[0]
        T = s["q"].shape[1]
        vk = s["state_kv"].transpose(-1, -2).contiguous()
        cu = s["cu"] if s["cu"] is not None else torch.arange(
            0, N * T + 1, T, dtype=torch.int64, device=s["q"].device)
        p = s["_sglang"] = dict(pool=vk.clone(), idx=torch.arange(N, dtype=torch.int32,
                                                                 device=vk.device),
                                cu=cu.to(torch.int32))
        flat = lambda x: x.reshape(1, -1, *x.shape[2:])  # noqa: E731  (B = 1, packed)
        p.update(q=flat(s["q"]), k=flat(s["k"]), v=flat(s["v"]), g=flat(s["g"]),
                 beta=flat(s["beta"]))
        s.setdefault("_resets", []).append(lambda: p["pool"].copy_(vk))
        if kda:
            rep = s["v"].shape[2] // s["q"].shape[2]
            p.update(q=p["q"].repeat_interleave(rep, 2), k=p["k"].repeat_interleave(rep, 2),
                     v=p["v"].clone())
            s["_resets"].append(lambda: p["v"].copy_(flat(s["v"])))
    kw = dict(initial_state=p["pool"], initial_state_indices=p["idx"], cu_seqlens=p["cu"],
              use_qk_l2norm_in_kernel=True)
    if kda:  # o only
        return f(p["q"], p["k"], p["v"], p["g"], p["beta"], **kw), p["pool"]
    o, _, _ = f(p["q"], p["k"], p["v"], p["g"], p["beta"], head_first=False, **kw)
    return o, p["pool"]


def _fla_path(anchor, call, s):
    with _env("FLA_FLASH_QLA", "0"):
        return bg.fla_backend_path(call)


ANCHORS = {a.name: a for a in [
    bg.Anchor("FLA chunk", "fla-core", "fla.ops.gated_delta_rule", "chunk_gated_delta_rule",
              _fla_path),
    bg.Anchor("FlashQLA", "flash_qla", "flash_qla", "chunk_gated_delta_rule",
              "tilelang, auto_cp"),
    bg.Anchor("FlashInfer prefill", "flashinfer-python", "flashinfer.gdn_prefill",
              "chunk_gated_delta_rule", "cute-dsl sm_90a"),
    bg.Anchor("SGLang chunk", "sglang", "sglang.kernels.ops.attention.fla.chunk",
              "chunk_gated_delta_rule", "triton, pool in place"),
]}


class NoKernel(bg.Anchor):
    """An anchor package without a kernel for the mode: its row is the error
    `why` (with the installed version), not a dropped row."""

    def __init__(self, name, dist, why):
        super().__init__(name, dist, None, None, None)
        self.why = why

    def load(self):
        super().load()  # the version; there is no module to import
        self.error = self.why
        return self


# --kda: the same anchors by name (CALLS serves both; a call tells KDA by g's rank)
KDA_ANCHORS = {a.name: a for a in [
    bg.Anchor("FLA chunk", "fla-core", "fla.ops.kda", "chunk_kda", _fla_path),
    NoKernel("FlashQLA", "flash_qla", "no KDA prefill (flash_qla 0.1.3: chunk_gated_delta_rule "
             "only)"),
    NoKernel("FlashInfer prefill", "flashinfer-python", "no KDA prefill on sm_90 (flashinfer."
             "kda.recurrent_kda: chunked on SM100/SM103/SM120 only)"),
    bg.Anchor("SGLang chunk", "sglang", "sglang.kernels.ops.attention.fla.kda", "chunk_kda",
              "triton, pool in place, q/k repeated to HV"),
]}
CALLS = {"FLA chunk": _fla_triton, "FlashQLA": _fla_signature, "FlashInfer prefill": _flashinfer,
         "SGLang chunk": _sglang_chunk}
VK_STATE = {"FlashInfer prefill", "SGLang chunk"}  # final states [N, HV, V, K]


def make_set(lengths, fixed, H, HV, K, V, dev, seed=0, kda=False):
    """Inputs of one point: a fixed batch [N, T] (fixed = (N, T)) or the
    varlen batch of `lengths` packed into [1, sum]; kda: g per key channel."""
    g = torch.Generator().manual_seed(seed)
    r = lambda *s: torch.randn(*s, generator=g)  # noqa: E731
    B, T = fixed if fixed else (1, sum(lengths))
    N = B if fixed else len(lengths)
    bf = torch.bfloat16
    s = dict(q=r(B, T, H, K).to(bf), k=r(B, T, H, K).to(bf), v=r(B, T, HV, V).to(bf),
             g=torch.nn.functional.logsigmoid(r(B, T, HV, *((K,) if kda else ()))),
             beta=torch.sigmoid(r(B, T, HV)).to(bf),
             state_kv=r(N, HV, K, V))
    s = {n: t.to(dev) for n, t in s.items()}
    s["cu"] = None if fixed else torch.tensor([0] + list(np.cumsum(lengths)), dtype=torch.int64,
                                              device=dev)
    return s


def outputs(result, kind):
    """(o [tokens, HV, V], final state [N, HV, K, V]) as f64 numpy, whatever
    the implementation's layout."""
    o, state = result
    if kind in VK_STATE:
        state = state.transpose(-1, -2)
    o = o.reshape(-1, *o.shape[-2:])
    return o.double().cpu().numpy(), state.double().cpu().numpy()


def reference(s):
    """gdn's token loop on the set's values widened to f32: (o, state)."""
    wide = {**s, **{n: s[n].float() for n in ("q", "k", "v", "beta")}}
    ops.set_schedule(solve="token_by_token")
    try:
        return outputs(_gdn(wide), "gdn")
    finally:
        ops.set_schedule()


def proxy_error(dev, H, HV, K, V, T, kda=False):
    """The token-loop reference's own RMS-relative error (o, state) against
    the fp64 reference at one sequence of T tokens (kda: g per key, which
    the fp64 reference takes as it is)."""
    s = make_set(None, (1, T), H, HV, K, V, dev, seed=1, kda=kda)
    o, state = reference(s)
    n64 = lambda t: t.double().cpu().numpy()  # noqa: E731
    ro, rs = ref_recurrent(n64(s["q"]), n64(s["k"]), n64(s["v"]), g=n64(s["g"]),
                           beta=n64(s["beta"]), initial_state=n64(s["state_kv"]), qk_l2norm=True)
    return rms_rel(o, ro.reshape(o.shape)), rms_rel(state, rs)


def time_call(fn, dev):
    """(median µs of one call, "graph" or "events")."""
    if dev.type != "cuda":
        fn()
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e6)
        return sorted(times)[1], "wall clock (cpu)"
    fn()  # warm-up: compile, autotune, allocate
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    try:
        graph, stream = torch.cuda.CUDAGraph(), torch.cuda.Stream()
        with torch.cuda.stream(stream), torch.cuda.graph(graph, stream=stream):
            fn()
        torch.cuda.synchronize()
        run, method = graph.replay, "graph"
    except Exception:  # noqa: BLE001 - not capturable: time the calls themselves
        torch.cuda.synchronize()
        run, method = fn, "events"
    run()
    times = []
    for _ in range(REPS):
        start.record()
        run()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    return sorted(times)[len(times) // 2], method


def point(name, s, impls, tokens, HV, K, V, dev):
    """Runs every implementation on the set: the rows of one point."""
    try:
        ref = reference(s)
    except Exception as e:  # noqa: BLE001 - the rows keep their times, no errors
        ref = None
        print(f"# the reference failed on {name}: {bg._error(e)}", flush=True)
    flops = 4 * tokens * HV * K * V
    rows = []
    for impl, (fn, anchor) in impls.items():
        row = {"impl": impl, "version": None, "path": None, "us": None, "timing": None,
               "tflops": None, "o_err": None, "state_err": None, "error": None}
        if anchor is not None:
            row["version"], row["error"] = anchor.version, anchor.error
        try:
            if row["error"] is None:
                if anchor is not None:
                    row["path"] = anchor.path(lambda: fn(s), s)
                for reset in s.get("_resets", []):  # in-place anchors: their states again
                    reset()
                o, state = outputs(fn(s), impl)
                if ref is not None:
                    row["o_err"] = rms_rel(o, ref[0].reshape(o.shape))
                    row["state_err"] = rms_rel(state, ref[1])
                row["us"], row["timing"] = time_call(lambda: fn(s), dev)
                row["tflops"] = flops / row["us"] / 1e6
        except Exception as e:  # noqa: BLE001 - the cell shows it
            row["error"] = bg._error(e)
            print(f"# {impl} failed on {name}: {row['error']}", flush=True)
            if dev.type == "cuda":
                try:
                    torch.cuda.synchronize()
                except Exception:  # noqa: BLE001 - a broken context fails the next calls too
                    pass
        rows.append(row)
        print(f"# {name}: {impl} done at {time.strftime('%H:%M:%S')}", flush=True)  # progress
    return rows


def run(args):
    dev = torch.device(args.device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        sys.exit("bench_prefill.py times on a CUDA GPU (none here); --device cpu is a dry run "
                 "of gdn's CPU lowering, --from-json redraws the table")
    H, K, V = args.H, args.K, args.V
    Ns = [int(x) for x in args.Ns.split(",")] if args.Ns else NS
    Ts = [int(x) for x in args.Ts.split(",")] if args.Ts else TS
    HVs = [int(x) for x in args.hv.split(",")] if args.hv else HVS
    mixes = {} if args.no_mixes else {
        n: m for n, m in MIXES.items()
        if not args.mixes or any(t in n for t in args.mixes.split(";"))}
    anchors = {} if dev.type != "cuda" else {
        n: a.load() for n, a in (KDA_ANCHORS if args.kda else ANCHORS).items()
        if not args.anchors or any(t in n for t in args.anchors.split(";"))}
    impls = {"gdn": (_gdn, None)}
    for text in args.schedule or []:
        pins = parse_pins(text)
        label = ", ".join(f"{k} = {v}" for k, v in pins.items())
        impls[f"gdn, {label}"] = (functools.partial(_pinned, pins), None)
    for n, a in anchors.items():
        impls[n] = (functools.partial(CALLS[n], a.fn), a)
    points = [(f"fixed, N = {N}", (N, T), None, HV) for HV in HVs for N in Ns for T in Ts]
    skipped = [f"{name}, T = {fixed[1]}, HV = {HV}" for name, fixed, _, HV in points
               if fixed[0] * fixed[1] > args.max_tokens]
    points = [p for p in points if p[1][0] * p[1][1] <= args.max_tokens]
    last = list(MIXES)[-1]
    points += [(name, None, mix_lengths(spec), HV) for HV in HVs
               for name, spec in mixes.items() if name != last]
    points += [(last, None, mix_lengths(mixes[last]), HV) for HV in HVs if last in mixes]
    # The meta line comes first in the log, whole (--from-json reads it).
    meta = {"device": bg._device_name() if dev.type == "cuda" else "cpu", "H": H, "K": K, "V": V,
            "kda": args.kda, "proxy": proxy_error(dev, H, HVs[0], K, V, args.proxy_T, args.kda),
            "skipped": skipped, "anchors": {n: {"version": a.version, "error": a.error}
                                            for n, a in anchors.items()}}
    print(json.dumps({"meta": meta}), flush=True)
    results = []
    for name, fixed, lengths, HV in points:
        tokens = fixed[0] * fixed[1] if fixed else sum(lengths)
        s = make_set(lengths, fixed, H, HV, K, V, dev, kda=args.kda)
        res = {"workload": name, "N": fixed[0] if fixed else len(lengths),
               "T": fixed[1] if fixed else None, "tokens": tokens, "HV": HV,
               "rows": point(name, s, impls, tokens, HV, K, V, dev)}
        results.append(res)
        print(json.dumps(res), flush=True)
        del s
        if dev.type == "cuda":
            torch.cuda.empty_cache()
        report(results, meta, args.out)
    return results, meta


# What limits gdn where an anchor is faster, from the measurements behind
# docs/cost-model.md#scan-throughput; printed under the table whenever a row
# loses.
WHY_SLOWER = ("gdn's scan runs a sequence's 16-token chunks one after another on "
              "mma.sync, and a full SM runs out at about 4 warp-chunks a us (the "
              "state's products, its decay and its bf16 copy are paid every 16 "
              "tokens), where FlashInfer's prefill and FlashQLA take 64-token chunks "
              "on wgmma (docs/cost-model.md#scan-throughput). Where the unsplit scan "
              "fills at most half the SMs (one sequence of 4096 tokens or more at HV = 32) "
              "gdn splits it along "
              "T, at about 2.3 x its work (the segments' maps, their join, the scan "
              "again; docs/cost-model.md#context-parallel-segments). In a varlen batch "
              "of several sequences the longest sets the time: its scan runs unsplit "
              "on 4-warp CTAs, one a 64-row V block of a head (64 SMs at HV = 32), one "
              "chunk after another (docs/cost-model.md#varlen-chunk-parallel).")


def _f(x, fmt):
    return "—" if x is None else format(x, fmt)


def report(results, meta, out):
    os.makedirs(out, exist_ok=True)
    po, ps = meta["proxy"]
    kda = meta.get("kda")
    calls = "; ".join(f"{n}: " + (f"{a.module}.{a.function}" if a.module else
                                  "none, its row says why") for n, a in KDA_ANCHORS.items())
    lines = [f"# {'KDA prefill' if kda else 'Prefill'}: gdn vs the anchors' chunked kernels "
             f"on {meta['device']}", "",
             f"bench/bench_prefill.py{' --kda' if kda else ''} (its docstring: shapes, timing, "
             f"accuracy). H = {meta['H']}, K = {meta['K']}, V = {meta['V']}, bf16 q/k/v/beta, "
             + (f"f32 log-space g per key [B, T, HV, K] (KDA; gdn: gdn.ops.chunk_kda; {calls}), "
                if kda else "f32 log-space g, ")
             + "f32 initial and final state, qk L2 norm. us: median of one call (graph: "
             "CUDA-graph replays; events: calls between CUDA events, a call that reads back "
             "to the host). TFLOP/s = "
             "4 tokens HV K V / time. o / state error: RMS-relative against gdn's token "
             "loop on the values widened to f32, which is itself "
             f"{po:.1e} (o) and {ps:.1e} (state) off the fp64 reference. "
             "fastest anchor / gdn > 1: gdn is faster.", ""]
    if meta["skipped"]:
        lines += ["Not run (tokens over --max-tokens): " + "; ".join(meta["skipped"]) + ".", ""]
    lines += ["| workload | N | T | tokens | HV | implementation, version, path | us | TFLOP/s | "
              "o error | state error | timing | fastest anchor / gdn |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        gdn = next((x for x in r["rows"] if x["impl"] == "gdn"), None)
        timed = [x for x in r["rows"] if not is_gdn(x["impl"]) and x["us"]]
        best = min(timed, key=lambda x: x["us"]) if timed else None
        for x in r["rows"]:
            label = ", ".join(str(v) for v in (x["impl"], x["version"], x["path"]) if v)
            if x["error"]:
                cells = ["error: " + x["error"].replace("|", "\\|")] + ["—"] * 5
            else:
                ratio = "—"
                if x is gdn and best and gdn["us"]:
                    ratio = f"{best['us'] / gdn['us']:.2f} ({best['impl']})"
                elif x is not gdn and gdn and gdn["us"] and x["us"]:
                    ratio = f"{x['us'] / gdn['us']:.2f}"
                cells = [_f(x["us"], ".1f"), _f(x["tflops"], ".1f"), _f(x["o_err"], ".1e"),
                         _f(x["state_err"], ".1e"), x["timing"] or "—", ratio]
            lines.append(f"| {r['workload']} | {r['N']} | {r['T'] or '—'} | {r['tokens']} | "
                         f"{r['HV']} | {label} | " + " | ".join(cells) + " |")
    slower = [f"{r['workload']} T = {r['T'] or '—'} HV = {r['HV']}" for r in results
              for gdn in [next((x for x in r["rows"] if x["impl"] == "gdn"), None)]
              if gdn and gdn["us"] and any(x["us"] and x["us"] < gdn["us"]
                                           for x in r["rows"] if not is_gdn(x["impl"]))]
    if slower:
        why = ("not profiled for KDA (WHY_SLOWER in bench/bench_prefill.py was measured on "
               "GDN's scan)") if kda else WHY_SLOWER
        lines += ["", f"An anchor is faster in {len(slower)} of {len(results)} points "
                  f"({'; '.join(slower)}). Why: {why}"]
    lines += [""] + targets(results, kda)
    with open(os.path.join(out, "bench_prefill.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(out, "bench_prefill.json"), "w") as f:
        json.dump({"meta": meta, "results": results}, f, indent=1)
    return "\n".join(lines)


def targets(results, kda=False):
    """Issue 23's targets, each with the rows it covers: met or not, and the
    worst row's figure (kda: the GDN targets read on KDA's rows)."""
    def rows_of(r):
        by = {x["impl"]: x for x in r["rows"]}
        return by.get("gdn"), {n: x for n, x in by.items() if n != "gdn"}

    def speed(pick, anchors, factor, label):
        worst, n, met = None, 0, 0
        for r in results:
            gdn, others = rows_of(r)
            if not pick(r) or not gdn or not gdn["us"]:
                continue
            timed = [x for n_, x in others.items() if n_ in anchors and x["us"]]
            if not timed:
                continue
            best = min(timed, key=lambda x: x["us"])
            ratio = best["us"] / gdn["us"]
            n, met = n + 1, met + (ratio >= factor)
            if worst is None or ratio < worst[0]:
                worst = (ratio, r, best["impl"])
        if not n:
            return f"- {label}: no row timed"
        r = worst[1]
        where = f"{r['workload']}, T = {r['T'] or '—'}, HV = {r['HV']}"
        return (f"- {label}: {met} of {n} rows; the least {worst[0]:.2f} ({where}, "
                f"against {worst[2]})")

    every = set(ANCHORS)
    lines = [f"Targets (issue 23{', set for GDN, read on KDA' if kda else ''}), gdn's time "
             "against the fastest of the anchors named "
             "(every anchor: FLA chunk, FlashQLA, FlashInfer prefill, SGLang chunk):", "",
             speed(lambda r: r["T"] and r["N"] >= 4 and r["T"] >= 2048, every, 1.2,
                   "N >= 4, T >= 2048: >= 1.2x the fastest anchor"),
             speed(lambda r: r["T"] and r["N"] == 1 and r["T"] >= 8192, every, 1.2,
                   "N = 1, T >= 8192: >= 1.2x the fastest anchor"),
             speed(lambda r: r["T"] and r["N"] == 1 and r["T"] >= 8192, {"FLA chunk"}, 4.0,
                   "N = 1, T >= 8192: >= 4x FLA chunk"),
             speed(lambda r: True, {"FLA chunk", "FlashQLA"}, 1.0,
                   "every row: faster than FLA chunk and FlashQLA")]
    errs = [(r, gdn) for r in results for gdn in [rows_of(r)[0]]
            if gdn and gdn["o_err"] is not None]
    if errs:
        o = max(errs, key=lambda e: e[1]["o_err"])
        st = max(errs, key=lambda e: e[1]["state_err"])
        lines.append(f"- accuracy (o <= 3.7e-3, state <= 2.5e-3, the chunked anchors' own): "
                     f"gdn's largest o error {o[1]['o_err']:.1e} ({o[0]['workload']}, "
                     f"HV = {o[0]['HV']}), state {st[1]['state_err']:.1e} "
                     f"({st[0]['workload']}, HV = {st[0]['HV']})")
    return lines


def join(paths):
    """The results of several runs (bench_prefill.json or logs of JSON lines);
    a later run's point replaces an earlier one's (workload, N, T, HV)."""
    meta, joined = None, {}
    for path in paths:
        text = open(path).read()
        if path.endswith(".json"):
            data = json.loads(text)
            items = [{"meta": data["meta"]}] + data["results"]
        else:
            items = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
        for item in items:
            if "meta" in item:
                if meta is None:
                    meta = item["meta"]
                elif bool(meta.get("kda")) != bool(item["meta"].get("kda")):
                    raise SystemExit(f"--from-json: {path} mixes GDN and KDA (--kda) runs")
                else:
                    meta["skipped"] = sorted(set(meta["skipped"]) | set(item["meta"]["skipped"]))
            else:
                joined[(item["workload"], item["N"], item["T"], item["HV"])] = item
    if meta is None:
        raise SystemExit("--from-json: no meta line in " + ", ".join(paths))
    run_ = {f"{w}, T = {T}, HV = {HV}" for w, _, T, HV in joined}  # run by another part
    meta["skipped"] = [p for p in meta["skipped"] if p not in run_]
    return list(joined.values()), meta


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="cuda", help="cuda (default), or cpu for a dry run")
    p.add_argument("--Ns", help="comma-separated N of the fixed batches (default 1,4,16,64)")
    p.add_argument("--Ts", help="comma-separated T of the fixed batches "
                                "(default 512,2048,8192,32768)")
    p.add_argument("--hv", help="comma-separated HV (default 32,64)")
    p.add_argument("--H", type=int, default=16)
    p.add_argument("--K", type=int, default=128)
    p.add_argument("--V", type=int, default=128)
    p.add_argument("--mixes", help="only the varlen mixes whose name contains one of these "
                                   "semicolon-separated texts")
    p.add_argument("--no-mixes", action="store_true", help="no varlen mixes")
    p.add_argument("--schedule", action="append",
                   help="a row of gdn with #gdn.schedule parameters pinned over the cost "
                        "model's, as name=value,... (e.g. warps=2); repeat for more rows")
    p.add_argument("--anchors", help="only the anchors whose name contains one of these "
                                     "semicolon-separated texts")
    p.add_argument("--max-tokens", type=int, default=MAX_TOKENS,
                   help="fixed batches with N * T above this are listed, not run")
    p.add_argument("--proxy-T", type=int, default=512,
                   help="tokens of the point where the reference is checked against fp64")
    p.add_argument("--site", help="an anchor site (scripts/anchor-site.sh), first on sys.path")
    p.add_argument("--from-json", help="no GPU: join comma-separated bench_prefill.json files "
                                       "or logs of this script and redraw the table")
    p.add_argument("--kda", action="store_true",
                   help="KDA: g per key channel [B, T, HV, K]; gdn.ops.chunk_kda against the "
                        "anchors' chunk_kda (the docstring)")
    p.add_argument("--out", help="default $OUT, else bench/results/prefill/anchors "
                                 "(anchors-kda with --kda or a KDA --from-json)")
    a = p.parse_args()
    if a.site:
        bg.add_site(a.site)
    default_out = lambda kda: os.environ.get("OUT") or os.path.join(  # noqa: E731
        HERE, "results", "prefill", "anchors-kda" if kda else "anchors")
    if a.from_json:
        results, meta = join(a.from_json.split(","))
        print(report(results, meta, a.out or default_out(meta.get("kda"))))
    else:
        a.out = a.out or default_out(a.kda)
        print(report(*run(a), a.out))
