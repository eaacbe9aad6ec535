#!/usr/bin/env python3
"""Side-by-side GPU benchmark of gdn kernels and the anchors (docs/math.md §4).

Runs on the GPU machine, in one process, on the same inputs:
  - gdn (this project, through gdn.ops),
  - every anchor implementation that supports the workload, each imported as
    a package (from the site directory --site DIR, e.g. the one
    scripts/anchor-site.sh builds, or from PYTHONPATH): FLA (fla-core)
    fused_recurrent_gated_delta_rule, chunk_gated_delta_rule and
    fused_recurrent_kda; SGLang's Triton kernels
    fused_sigmoid_gating_delta_rule_update and
    fused_recurrent_gated_delta_rule_packed_decode and its CuTe-DSL decode
    and MTP kernels; FlashInfer's gated_delta_rule_decode_pretranspose,
    gated_delta_rule_decode and gated_delta_rule_mtp (CuTe-DSL);
  - a device-to-device copy of the same number of bytes: the faster of a
    Triton copy kernel and torch copy_.
An anchor that cannot be imported or fails on a point is an "error: ..."
cell of its row, never a missing row. The table names each anchor's version
(importlib.metadata) and the path its call took (FLA's backend dispatch:
flash_qla, tilelang or its Triton kernels; FlashInfer's CuTe-DSL kernel and
architecture).
Timing: CUDA-graph replays, median; each graph calls the kernel on R rotating
input sets so the bytes touched between two runs of one set exceed the L2
(60 MB) four times: the state is cold, as in a model with 30-60 layers.
Bytes: state read + state written (or, for verify, each intermediate state
written) + q, k, v, o and the gates.
Workloads (WORKLOADS): decode (fp32 state in place, bf16 and fp32 pools,
packed qkv, K-major state), verify (bf16 pool + per-token states, T = 4, 12;
fp32 pool + per-token states, FlashInfer's MTP, T = 4, 12), KDA decode and
EAGLE-tree verify (T = 4) against SGLang; final-state-only T = 1, 4, 12 (and
KDA) against FLA; an fp8 (e4m3) pool, decode and verify T = 4 with bf16
per-token states, against the anchors on a bf16 pool. Prefill (long T, o
and the final state) has its own benchmark, bench/bench_prefill.py. For T > 1
at HV = 32
and N in QUICK_NS also the kernel
forms (FORMS). A row where an anchor is faster says why (_why_slower).

--replay runs instead the replayed-verify workload of bench/bench_replay.py
(one speculative round: verify + commit, gdn replay vs gdn snapshot vs
SGLang's Triton replay; its own table, bench_replay.md), leaving this
table as it is.

Usage: python3 bench/bench_gdn.py [--quick] [--sweep] [--forms] [--only 'TEXT;...']
           [--Ns 1,8] [--Ts 4,12] [--hv 8,32,64] [--out DIR] [--site DIR]
           [--anchors 'NAME;...'] [--profile]   (untimed calls, for ncu)
       python3 bench/bench_gdn.py --replay [--quick] [--Ns ..] [--Ts ..] [--layers 1,48]
           [--accepted 0,1] [--out DIR] [--site DIR]
       python3 bench/bench_gdn.py --from-json A.json,B.log [--device-name NAME]
           [--out DIR]   (no GPU: redraws the table and plot)
       python3 bench/bench_gdn.py --list-anchors [--site DIR]
           (imports the anchors, prints their versions or import errors)
"""
import argparse
import importlib
import importlib.metadata
import json
import logging
import math
import os
import site
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
# The repository's package needs a libGDNCAPI.so: the build tree's unless named.
_built = os.path.join(os.path.dirname(__file__), "..", "build", "lib", "libGDNCAPI.so")
if "GDN_LIBRARY" not in os.environ and os.path.exists(_built):
    os.environ["GDN_LIBRARY"] = os.path.abspath(_built)
import gdn.ops as ops  # noqa: E402

L2_BYTES = 60 << 20
# Schedules tried with --sweep: dicts of #gdn.schedule parameters
# (set_schedule; docs/schedule.md), named by schedule_name.
SCHEDULES_T1 = [dict(columns_per_lane=c, warps=w, **({"lanes_along_v": l} if l else {}))
                for c, w, l in
                [(1, 4, 0), (2, 4, 0), (4, 4, 0), (8, 4, 0), (16, 4, 0), (16, 2, 0), (16, 1, 0),
                 (8, 2, 0), (8, 1, 0), (4, 2, 0), (8, 4, 2), (4, 4, 2), (8, 2, 2)]]
SCHEDULES_TN = [dict(staged_tokens=0), dict(unroll_tokens=4), dict(unroll_tokens=16),
                dict(staged_tokens=4), dict(columns_per_lane=4), dict(warps=1),
                dict(warps=2), dict(columns_per_lane=16), dict(columns_per_lane=16, warps=1),
                dict(columns_per_lane=8, warps=1), dict(columns_per_lane=4, warps=1)]


# Other kernel forms timed for T > 1 workloads at HV = 32 and N in QUICK_NS
# (None where the form does not apply, e.g. the chunked solve with per-token
# states): the chunked (WY) solve of a staged chunk on CUDA cores and on
# tensor cores, the token loop (no chunked solve), a producer warp feeding a
# 2-slot ring (cp.async.bulk, mbarriers) or none, and one lane along V
# without a producer.
FORMS = {"chunked": dict(solve="cuda_cores"),
         "tensor_cores": dict(solve="tensor_cores"),
         "token_loop": dict(solve="token_by_token"),
         "producer": dict(producer_stages=2),
         "no_producer": dict(producer_stages=0),
         "one_v_lane": dict(lanes_along_v=1, producer_stages=0)}


QUICK_NS = (1, 8, 64, 256)


def schedule_name(sched):
    """A column name for a pinned schedule: each parameter's initials and its
    value's (an enum case's initials), e.g. {"columns_per_lane": 2, "solve":
    "tensor_cores"} -> "sched_cpl2,stc"; the parameters' initials differ."""
    initials = lambda name: "".join(word[0] for word in str(name).split("_"))
    return "sched_" + ",".join(
        initials(k) + (str(v) if isinstance(v, int) else initials(v)) for k, v in sched.items())


# ---------------------------------------------------------------------------
# Anchors, imported as packages. Each implementation is one row per point in
# the table; one that cannot be imported, or that fails on a point, is an
# "error: ..." cell of that row.
# ---------------------------------------------------------------------------

def add_site(path):
    """Puts an anchor site (pip install --target, scripts/anchor-site.sh) first
    on sys.path and runs its .pth files (nvidia-cutlass-dsl puts its
    dsl_packages/ on the path with one)."""
    path = os.path.abspath(path)
    if not os.path.isdir(path):
        raise SystemExit(f"--site {path}: no such directory")
    sys.path.insert(0, path)
    site.addsitedir(path)


def _error(e):
    """One line for a table cell: the exception's type and first line."""
    text = str(e).strip().splitlines()[0] if str(e).strip() else ""
    return f"{type(e).__name__}: {text[:160]}"


class _FlaBackendLog(logging.Handler):
    """Collects the lines FLA's backend dispatcher logs at INFO:
    "[FLA Backend] op.function -> backend" and "... -> backend rejected: why"."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def fla_backend_path(call):
    """Runs call() once and returns the path FLA's dispatcher took for it: the
    backends it logs as taking a function (flash_qla, tilelang, ...), else
    "triton" (FLA's own kernels), with the reasons backends gave for refusing.
    FLA logs each choice once a process: its record of logged choices is
    cleared first where it has one."""
    try:
        import fla.backends as fb
        for reg in (list(getattr(fb, "_operation_registries", {}).values()) +
                    list(getattr(fb, "_function_registries", {}).values())):
            getattr(reg, "_logged", set()).clear()
    except ImportError:
        pass
    log = logging.getLogger("fla.backends")
    handler, level = _FlaBackendLog(), log.level
    log.setLevel(logging.INFO)
    log.addHandler(handler)
    try:
        call()
    finally:
        log.removeHandler(handler)
        log.setLevel(level)
    taken, refused = [], []
    for line in handler.lines:
        what = line.split("[FLA Backend] ", 1)[-1]
        (refused if " rejected: " in what else taken).append(what)
    path = "; ".join(sorted(set(taken))) if taken else "triton"
    if refused:
        path += " (" + "; ".join(sorted(set(refused))) + ")"
    return path


def flashinfer_path(mod, dtype, T, fn):
    """The CuTe-DSL kernel FlashInfer 0.7.2's dispatch picks for a state
    dtype and T (gdn_decode.py), and the architecture it compiles for; raises
    when that kernel did not import (gdn_decode.py swallows the ImportError)."""
    if fn == "gated_delta_rule_decode":
        kernel, flag, module = "nontranspose", "_NONTRANSPOSE_AVAILABLE", "gdn_decode_nontranspose"
    elif fn == "gated_delta_rule_mtp":
        kernel, flag, module = "mtp", "_MTP_AVAILABLE", "gdn_decode_mtp"
    elif dtype == torch.bfloat16:
        kernel = "bf16-state" + (" mtp" if T > 1 else "")
        flag, module = "_GDN_DECODE_BF16_STATE_AVAILABLE", "gdn_decode_bf16_state"
    elif T > 1:
        kernel, flag, module = "mtp", "_MTP_AVAILABLE", "gdn_decode_mtp"
    else:
        kernel, flag, module = "pretranspose", "_PRETRANSPOSE_AVAILABLE", "gdn_decode_pretranspose"
    if not getattr(mod, flag, False):
        # Import it here to name the error gdn_decode.py hid.
        importlib.import_module("flashinfer.gdn_kernels." + module)
        raise RuntimeError(f"flashinfer.gdn_decode.{flag} is False")
    try:
        from flashinfer.gdn_kernels.device_target import gdn_device_target
        arch = gdn_device_target(torch.device("cuda", torch.cuda.current_device())).arch
    except Exception as e:  # noqa: BLE001 - the path is information only
        arch = f"arch unknown ({_error(e)})"
    return f"cute-dsl {kernel} {arch}"


class Anchor:
    """One anchor implementation: a function of an anchor package, imported on
    first use; `error` holds why it could not be, `version` the installed
    distribution's version."""

    def __init__(self, name, dist, module, function, path):
        self.name, self.dist, self.module, self.function = name, dist, module, function
        self._path = path  # str, or callable(anchor, call, set) -> str
        self.fn = self.mod = self.error = None
        self.version = None
        self._loaded = False

    def load(self):
        if self._loaded:
            return self
        self._loaded = True
        try:
            self.version = importlib.metadata.version(self.dist)
        except importlib.metadata.PackageNotFoundError:
            self.version = None
        try:
            self.mod = importlib.import_module(self.module)
            self.fn = getattr(self.mod, self.function)
        except Exception as e:  # noqa: BLE001 - shown in the table
            self.error = _error(e)
        return self

    def path(self, call, s):
        """Runs call() once (a warm-up) and returns the path it took."""
        if callable(self._path):
            return self._path(self, call, s)
        call()
        return self._path


def _fla_path(anchor, call, s):
    path = fla_backend_path(call)
    # FLA 0.6.0 hands chunk_gated_delta_rule to FlashQLA where the package
    # flash_qla imports (SM90/SM100/SM120, K = V = 128, no gate in kernel).
    if anchor.function == "chunk_gated_delta_rule" and path == "triton":
        import importlib.util
        if importlib.util.find_spec("flash_qla") is None:
            path += " (flash_qla not installed)"
    return path


def _flashinfer_path(anchor, call, s):
    path = flashinfer_path(anchor.mod, s["state_dtype"], s["q"].shape[1], anchor.function)
    call()
    return path


# name -> Anchor; the workloads refer to them by name.
ANCHORS = {a.name: a for a in [
    Anchor("FLA fused_recurrent", "fla-core", "fla.ops.gated_delta_rule",
           "fused_recurrent_gated_delta_rule", _fla_path),
    Anchor("FLA chunk", "fla-core", "fla.ops.gated_delta_rule", "chunk_gated_delta_rule",
           _fla_path),
    Anchor("FLA fused_recurrent_kda", "fla-core", "fla.ops.kda", "fused_recurrent_kda",
           _fla_path),
    Anchor("SGLang", "sglang", "sglang.kernels.ops.attention.linear.fused_sigmoid_gating_recurrent",
           "fused_sigmoid_gating_delta_rule_update", "triton"),
    Anchor("SGLang packed", "sglang", "sglang.kernels.ops.attention.fla.fused_recurrent",
           "fused_recurrent_gated_delta_rule_packed_decode", "triton"),
    Anchor("SGLang CuTe-DSL", "sglang", "sglang.kernels.ops.attention.cutedsl_gdn",
           "cutedsl_fused_sigmoid_gating_delta_rule_update", "cute-dsl"),
    Anchor("SGLang CuTe-DSL MTP", "sglang", "sglang.kernels.ops.attention.cutedsl_gdn_mtp_ring",
           "gated_delta_rule_mtp", "cute-dsl"),
    Anchor("FlashInfer pretranspose", "flashinfer-python", "flashinfer.gdn_decode",
           "gated_delta_rule_decode_pretranspose", _flashinfer_path),
    Anchor("FlashInfer decode", "flashinfer-python", "flashinfer.gdn_decode",
           "gated_delta_rule_decode", _flashinfer_path),
    Anchor("FlashInfer MTP", "flashinfer-python", "flashinfer.gdn_decode",
           "gated_delta_rule_mtp", _flashinfer_path),
]}


def make_set(N, T, H, HV, K, V, dev, seed, state_dtype=torch.float32, steps=0, kda=False,
             gk=False):
    """One input set; every call of a point (gdn's, each anchor's) reads the
    same tensors (an anchor's own layout, e.g. SGLang's packed mixed_qkv, is
    built from them, outside the timing)."""
    g = torch.Generator(device="cpu").manual_seed(seed)
    bf = torch.bfloat16
    r = lambda *s: torch.randn(*s, generator=g)
    s = dict(
        q=r(N, T, H, K).to(bf).to(dev), k=r(N, T, H, K).to(bf).to(dev),
        v=r(N, T, HV, V).to(bf).to(dev),
        a=r(N, T, HV).to(bf).to(dev), b=r(N, T, HV).to(bf).to(dev),
        A_log=torch.log(torch.rand(HV, generator=g) * 15 + 1).to(dev),
        dt_bias=r(HV).to(dev),
        state_vk=r(N, HV, V, K).to(state_dtype).to(dev)  # pools of SGLang / FlashInfer / vLLM
        if state_dtype != torch.float8_e4m3fn else
        ops.quantize_state(r(N, HV, V, K).to(dev))[0],  # with its row scales attached
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
        # (bf16 beside an fp8 pool: per-token states keep their own dtype)
        s["inter"] = torch.empty(N, steps, HV, V, K, device=dev, dtype=torch.bfloat16
                                 if state_dtype == torch.float8_e4m3fn else state_dtype)
        if state_dtype == torch.float8_e4m3fn:  # e4m3 per-token states, scales attached
            s["inter_fp8"] = ops.quantized_state((N, steps, HV, V, K), device=dev)
    if gk:  # FLA's KDA: log-space decay per key channel [N, T, HV, K]
        s["gk"] = torch.nn.functional.logsigmoid(r(N, T, HV, K)).to(dev)
    if state_dtype == torch.float8_e4m3fn:  # the anchors' bf16 pools beside gdn's fp8 one
        s["state_vk_bf16"] = r(N, HV, V, K).to(bf).to(dev)
        # K-major (kv): gdn's e4m3 state with its row scales [N, HV, V], and
        # the anchors' fp32 one (FlashInfer's K-major decode and FLA take fp32)
        s["state_kv"] = ops.quantize_state(r(N, HV, K, V).to(dev), layout="kv")[0]
        s["state_kv_f32"] = r(N, HV, K, V).to(dev)
    s["state_dtype"] = state_dtype
    # SGLang's CuTe-DSL decode is compiled for a bf16 dt_bias (its models'
    # dtype); the same values rounded.
    s["dt_bias_bf16"] = s["dt_bias"].to(bf)
    if T == 1:  # SGLang's packed decode: q, k, v as columns of one projection
        s["mixed_qkv"] = torch.cat([s["q"].reshape(N, -1), s["k"].reshape(N, -1),
                                    s["v"].reshape(N, -1)], dim=1).contiguous()
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
    None when the kernel refuses the shape (gdn's forms that do not apply)."""
    return time_graph_err(fn, sets, reps)[0]


def time_graph_err(fn, sets, reps=20):
    """(median microseconds, None), or (None, the error) when the call fails."""
    try:
        return _time_graph(fn, sets, reps), None
    except Exception as e:  # noqa: BLE001 - reported in the table
        print(f"# kernel failed: {_error(e)}", flush=True)
        try:
            torch.cuda.synchronize()
        except Exception:  # noqa: BLE001 - a broken context fails the next calls too
            pass
        return None, _error(e)


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


# Workloads: what gdn runs and what each anchor that supports the workload
# runs on the same set s. Bytes count the state read and written (+ each
# intermediate state written) + q, k, v, o and the gates.
def _sgl(f, s, a="a", dt_bias="dt_bias", **kw):
    return f(s["A_log"], s[a], s[dt_bias], 1.0, 20.0, s["q"], s["k"], s["v"], s["b"],
             s["state_vk"], s["idx"], use_qk_l2norm_in_kernel=True, **kw)


def _verify(s, tree=False):
    kw = dict(disable_state_update=True, intermediate_states_buffer=s["inter"],
              intermediate_state_indices=s["idx"], cache_steps=s["inter"].shape[1])
    if tree:
        kw["retrieve_parent_token"] = s["parents"]
    return kw


def _fla_fused_gating(f, s, state):
    """FLA with the gate, beta's sigmoid and the state layout of the decode
    workloads: use_gate_in_kernel (a, A_log, dt_bias), beta logits b. FLA never
    writes its initial state: it returns a new final state (the same bytes)."""
    return f(s["q"], s["k"], s["v"], g=s["a"], beta=s["b"], initial_state=s[state],
             output_final_state=True, use_qk_l2norm_in_kernel=True, use_gate_in_kernel=True,
             A_log=s["A_log"], dt_bias=s["dt_bias"], use_beta_sigmoid_in_kernel=True,
             state_v_first=state == "state_vk")


def _sgl_cute_mtp(f, s, verify):
    kw = dict(intermediate_states_buffer=s["inter"], disable_state_update=True) if verify else {}
    return f(A_log=s["A_log"], a=s["a"], dt_bias=s["dt_bias"], q=s["q"], k=s["k"], v=s["v"],
             b=s["b"], initial_state_source=s["state_vk"], initial_state_indices=s["idx"],
             use_qk_l2norm_in_kernel=True, output=s["o"], **kw)


def _fi_pretranspose(f, s, pool, verify=False):
    kw = dict(intermediate_states_buffer=s["inter"], disable_state_update=True) if verify else {}
    if pool:
        return f(s["q"], s["k"], s["v"], None, s["A_log"], s["a"], s["dt_bias"], s["b"],
                 output=s["o"], initial_state=s["state_vk"], initial_state_indices=s["idx"], **kw)
    return f(s["q"], s["k"], s["v"], s["state_vk"], s["A_log"], s["a"], s["dt_bias"], s["b"],
             output=s["o"])


def _fi_mtp(f, s):
    return f(s["q"], s["k"], s["v"], s["state_vk"], s["idx"], s["A_log"], s["a"], s["dt_bias"],
             s["b"], output=s["o"], intermediate_states_buffer=s["inter"], disable_state_update=True)


def _fi_decode_kv(f, s):
    return f(s["q"], s["k"], s["v"], s["state_kv"], s["A_log"], s["a"], s["dt_bias"], s["b"],
             output=s["o"])


def _packed(f, s):
    N = s["q"].shape[0]
    return f(s["mixed_qkv"], s["a"].view(N, -1), s["b"].view(N, -1), s["A_log"], s["dt_bias"],
             s["q"].shape[-1] ** -0.5, s["state_vk"], s["o"], s["idx"],
             use_qk_l2norm_in_kernel=True)


def _fla_style(f, s):
    return f(s["q"], s["k"], s["v"], g=s["g"], beta=s["beta"], initial_state=s["state_kv"],
             output_final_state=True, use_qk_l2norm_in_kernel=True)


def _fla_kda(f, s):
    return f(s["q"], s["k"], s["v"], g=s["gk"], beta=s["beta"], initial_state=s["state_kv"],
             output_final_state=True, use_qk_l2norm_in_kernel=True)


class Workload:
    """name; the T values; the state dtype; "rw" (state read and written) or
    "verify" (read, then written after every token); gdn(s); anchors: anchor
    name -> call(function, s); extra: only HV = 32 and N in QUICK_NS (beyond
    the issue-4 sweep); kda: gates per key channel (SGLang's a [.., HV, K] or
    FLA's gk); study: gdn's kernel forms (FORMS) and --sweep are timed on it
    too (the workloads before the anchors' other entry points were added);
    why_slower: the measured limit a row that loses to an anchor names;
    inter: gdn's per-token state dtype (verify; None: the state's, bf16
    beside an fp8 pool)."""

    def __init__(self, name, Ts, sdt, passes, gdn, anchors, extra=False, kda=None, study=True,
                 why_slower=None, inter=None):
        self.name, self.Ts, self.sdt, self.passes = name, Ts, sdt, passes
        self.gdn, self.anchors, self.extra, self.kda = gdn, anchors, extra, kda
        self.study, self.why_slower = study, why_slower
        self.inter = inter or (bf16 if sdt == fp8 else sdt)

    def nbytes(self, N, T, H, HV, K, V):
        state = N * HV * K * V * (torch.finfo(self.sdt).bits // 8)
        if self.sdt == fp8:  # and its row scales, f32 [N, HV, V]
            state += N * HV * V * 4
        io = (2 * N * T * H * K + 2 * N * T * HV * V) * 2 + 2 * N * T * HV * 2
        if self.kda == "sglang":  # a per key channel, bf16
            io += N * T * HV * (K - 1) * 2
        elif self.kda == "fla":  # gk per key channel, fp32
            io += N * T * HV * (4 * K - 2)
        if self.passes == "verify":  # the pool read, a state a token written
            per_token = N * HV * K * V * (torch.finfo(self.inter).bits // 8)
            if self.inter == fp8:  # and its row scales
                per_token += N * HV * V * 4
            return state + T * per_token + io
        return 2 * state + io


f32, bf16, fp8 = torch.float32, torch.bfloat16, torch.float8_e4m3fn


def _bf16_pool(call):
    """An anchor's call on the bf16 pool of an fp8 workload's set."""
    return lambda f, s: call(f, {**s, "state_vk": s["state_vk_bf16"]})


def _f32_kv(call):
    """An anchor's call on the fp32 K-major state of an fp8 workload's set."""
    return lambda f, s: call(f, {**s, "state_kv": s["state_kv_f32"]})


WORKLOADS = [
    Workload("decode, state in place", (1,), f32, "rw",
             lambda s: _fi_pretranspose(ops.gated_delta_rule_decode_pretranspose, s, pool=False),
             {"SGLang": _sgl,
              "SGLang CuTe-DSL": lambda f, s: f(s["A_log"], s["dt_bias_bf16"], s["q"], s["k"],
                                                s["v"], s["a"], s["b"], s["state_vk"], s["idx"],
                                                use_qk_l2norm_in_kernel=True),
              "FlashInfer pretranspose": lambda f, s: _fi_pretranspose(f, s, pool=False),
              "FLA fused_recurrent": lambda f, s: _fla_fused_gating(f, s, "state_vk")}),
    Workload("decode, bf16 pool", (1,), bf16, "rw",
             lambda s: _fi_pretranspose(ops.gated_delta_rule_decode_pretranspose, s, pool=True),
             {"SGLang": _sgl,
              "SGLang CuTe-DSL MTP": lambda f, s: _sgl_cute_mtp(f, s, verify=False),
              "FlashInfer pretranspose": lambda f, s: _fi_pretranspose(f, s, pool=True)}),
    Workload("verify, bf16 pool + per-token states", (4, 12), bf16, "verify",
             lambda s: _sgl(ops.fused_sigmoid_gating_delta_rule_update, s, **_verify(s)),
             {"SGLang": lambda f, s: _sgl(f, s, **_verify(s)),
              "SGLang CuTe-DSL MTP": lambda f, s: _sgl_cute_mtp(f, s, verify=True),
              # FlashInfer's bf16-state MTP kernel, through its decode entry
              # point with T > 1 (its gated_delta_rule_mtp takes fp32 pools).
              "FlashInfer pretranspose": lambda f, s: _fi_pretranspose(f, s, pool=True,
                                                                       verify=True)}),
    Workload("final state only (FLA-style)", (1, 4, 12), f32, "rw",
             lambda s: _fla_style(ops.fused_recurrent_gated_delta_rule, s),
             {"FLA fused_recurrent": _fla_style, "FLA chunk": _fla_style}),
    Workload("KDA decode, bf16 pool", (1,), bf16, "rw",
             lambda s: _sgl(ops.fused_sigmoid_gating_delta_rule_update, s, a="a_kda",
                            dt_bias="dt_bias_kda", is_kda=True),
             {"SGLang": lambda f, s: _sgl(f, s, a="a_kda", dt_bias="dt_bias_kda", is_kda=True)},
             extra=True, kda="sglang"),
    Workload("verify with an EAGLE tree, bf16 pool + per-token states", (4,), bf16, "verify",
             lambda s: _sgl(ops.fused_sigmoid_gating_delta_rule_update, s, **_verify(s, True)),
             {"SGLang": lambda f, s: _sgl(f, s, **_verify(s, True))}, extra=True),
    Workload("decode, packed qkv, state in place", (1,), f32, "rw",
             lambda s: _packed(ops.fused_recurrent_gated_delta_rule_packed_decode, s),
             {"SGLang packed": _packed}, extra=True, study=False),
    Workload("decode, K-major state in place", (1,), f32, "rw",
             lambda s: _fi_decode_kv(ops.gated_delta_rule_decode, s),
             {"FlashInfer decode": _fi_decode_kv,
              "FLA fused_recurrent": lambda f, s: _fla_fused_gating(f, s, "state_kv")},
             extra=True, study=False),
    Workload("decode, fp32 pool", (1,), f32, "rw",
             lambda s: _fi_pretranspose(ops.gated_delta_rule_decode_pretranspose, s, pool=True),
             {"SGLang": _sgl,
              "FlashInfer pretranspose": lambda f, s: _fi_pretranspose(f, s, pool=True)},
             extra=True),
    Workload("verify, fp32 pool + per-token states (MTP)", (4, 12), f32, "verify",
             lambda s: _fi_mtp(ops.gated_delta_rule_mtp, s),
             {"FlashInfer MTP": _fi_mtp, "SGLang": lambda f, s: _sgl(f, s, **_verify(s))},
             extra=True),
    # gdn on an fp8 pool (e4m3 with row scales, gdn.ops.quantized_state)
    # against the anchors on their bf16 pools, which none of them quantizes.
    Workload("decode, fp8 pool (anchors: bf16 pool)", (1,), fp8, "rw",
             lambda s: _fi_pretranspose(ops.gated_delta_rule_decode_pretranspose, s, pool=True),
             {"SGLang": _bf16_pool(_sgl),
              "FlashInfer pretranspose": _bf16_pool(
                  lambda f, s: _fi_pretranspose(f, s, pool=True))},
             extra=True),
    Workload("decode, K-major fp8 state in place (anchors: fp32 state)", (1,), fp8, "rw",
             lambda s: _fi_decode_kv(ops.gated_delta_rule_decode, s),
             {"FlashInfer decode": _f32_kv(_fi_decode_kv),
              "FLA fused_recurrent": _f32_kv(
                  lambda f, s: _fla_fused_gating(f, s, "state_kv"))},
             extra=True, study=False),
    Workload("verify, fp8 pool + bf16 per-token states (anchors: bf16 pool)", (4,), fp8,
             "verify",
             lambda s: _sgl(ops.fused_sigmoid_gating_delta_rule_update, s, **_verify(s)),
             {"SGLang": _bf16_pool(lambda f, s: _sgl(f, s, **_verify(s)))}, extra=True,
             study=False),
    Workload("verify, fp8 pool + fp8 per-token states (anchors: bf16 pool)", (4, 12), fp8,
             "verify",
             lambda s: _sgl(ops.fused_sigmoid_gating_delta_rule_update, s,
                            **_verify({**s, "inter": s["inter_fp8"]})),
             {"SGLang": _bf16_pool(lambda f, s: _sgl(f, s, **_verify(s)))}, extra=True,
             study=False, inter=fp8),
    Workload("KDA final state only (FLA-style)", (1, 4), f32, "rw",
             lambda s: _fla_kda(ops.fused_recurrent_kda, s),
             {"FLA fused_recurrent_kda": _fla_kda}, extra=True, kda="fla", study=False),
]


def selected_anchors(args):
    """The anchors to load: all, or those whose name contains one of
    --anchors' semicolon-separated texts."""
    if not args.anchors:
        return dict(ANCHORS)
    return {n: a for n, a in ANCHORS.items() if any(t in n for t in args.anchors.split(";"))}


# The verify anchors that offset their per-token state buffer in int32:
# SGLang's Triton kernel (cache_idx * cache_steps * HV * K * V,
# fused_sigmoid_gating_recurrent.py) and the CuTe-DSL MTP kernels of SGLang
# (cutedsl_gdn_mtp_ring.py) and FlashInfer (gdn_kernels/gdn_decode_bf16_state.py,
# gdn_decode_mtp.py), whose row flat_idx = i_n * T * HV + i_t * HV + i_hv is an
# Int32 times the V * K row stride. Past 2^31 elements they read and write out
# of bounds: the illegal address ends the CUDA context and so the benchmark
# (SGLang CuTe-DSL MTP at verify T = 12, HV = 32, N = 512 on the H100).
INT32_INTERMEDIATE = ("SGLang", "SGLang CuTe-DSL MTP", "FlashInfer pretranspose",
                      "FlashInfer MTP")


def intermediate_overflows(anchor, workload, N, steps, HV, K, V):
    """True where `anchor` would offset a verify's per-token state buffer
    [N, steps, HV, V, K] past int32 (INT32_INTERMEDIATE): it is not run
    there and its cell says why."""
    return (anchor in INT32_INTERMEDIATE and workload.passes == "verify"
            and N * steps * HV * K * V >= 2**31)


def anchor_cell(a, call, sets, overflows=False):
    """One anchor's cell of a point: its version, the path its call took and
    its time, or the error (import, path or call)."""
    cell = {"version": a.version, "path": None, "us": None, "error": a.error}
    if a.error is not None:
        return cell
    if overflows:
        cell["error"] = "not run: int32 offset of the intermediate buffer overflows"
        return cell
    fn = lambda s: call(a.fn, s)  # noqa: E731
    try:
        cell["path"] = a.path(lambda: fn(sets[0]), sets[0])
        cell["us"], cell["error"] = time_graph_err(fn, sets)
    except Exception as e:  # noqa: BLE001 - the cell shows it
        cell["error"] = _error(e)
        print(f"# {a.name} failed: {cell['error']}", flush=True)
    return cell


def run(args):
    if not torch.cuda.is_available():
        sys.exit("bench_gdn.py times on a CUDA GPU (none here); --list-anchors and "
                 "--from-json run without one")
    dev = torch.device("cuda")
    anchors = {n: a.load() for n, a in selected_anchors(args).items()}
    for a in anchors.values():
        print(f"# anchor {a.name}: {a.version or 'not installed'}, {a.module}.{a.function}: "
              f"{'error: ' + a.error if a.error else 'imported'}", flush=True)
    K, V = 128, 128
    Ns = QUICK_NS if args.quick else [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
    if args.Ns:
        Ns = [int(x) for x in args.Ns.split(",")]
    # (H, HV): Qwen3-Next one rank (16, 32); Qwen3.5-122B at TP1 (16, 64) and TP8 (2, 8).
    heads = [(16, 32)] if args.quick else [(2, 8), (16, 32), (16, 64)]
    if args.hv:
        heads = [(h, hv) for h, hv in [(2, 8), (16, 32), (16, 64)] if str(hv) in args.hv.split(",")]
    rows = []
    for w in WORKLOADS:
        if args.only and not any(o in w.name for o in args.only.split(";")):
            continue
        mine = {n: call for n, call in w.anchors.items() if n in anchors}
        # The issue-4 sweep (N, T, state dtype, HV) covers decode, verify and
        # the final-state form; the other workloads stay at the quick points.
        for H, HV in heads if not w.extra else [(16, 32)]:
            for T in w.Ts:
                if args.Ts and str(T) not in args.Ts.split(","):
                    continue
                if HV != 32 and T != w.Ts[0]:
                    continue  # other head counts: the first T only
                for N in [n for n in Ns if not w.extra or n in QUICK_NS]:
                    nbytes = w.nbytes(N, T, H, HV, K, V)
                    R = 1 if args.profile else max(2, min(64, math.ceil(4 * L2_BYTES / nbytes)))
                    steps = T if w.passes == "verify" else 0
                    sets = [make_set(N, T, H, HV, K, V, dev, i, w.sdt, steps, w.kda == "sglang",
                                     w.kda == "fla") for i in range(R)]
                    if args.profile:  # one untimed call each, for Nsight Compute
                        w.gdn(sets[0])
                        for name, call in mine.items():
                            if anchors[name].fn is not None:
                                try:
                                    call(anchors[name].fn, sets[0])
                                except Exception as e:  # noqa: BLE001
                                    print(f"# {name} failed: {_error(e)}", flush=True)
                        torch.cuda.synchronize()
                        print(f"# profiled {w.name} T={T} HV={HV} N={N}", flush=True)
                        continue
                    res = {"workload": w.name, "T": T, "H": H, "HV": HV, "N": N,
                           "state_dtype": str(w.sdt).split(".")[-1], "bytes": nbytes, "sets": R,
                           "anchors": {}}
                    res["copy"] = time_copy(nbytes, dev)
                    res["gdn"] = time_graph(w.gdn, sets)
                    for name, call in mine.items():
                        res["anchors"][name] = anchor_cell(
                            anchors[name], call, sets,
                            overflows=intermediate_overflows(name, w, N, steps, HV, K, V))
                    if w.study and T > 1 and (args.forms or (HV == 32 and N in QUICK_NS)):
                        # what staging buys
                        ops.set_schedule(staged_tokens=0)
                        res["gdn_unstaged"] = time_graph(w.gdn, sets)
                        for form, sched in FORMS.items():
                            ops.set_schedule(sched)  # None: the form does not apply
                            res["gdn_" + form] = time_graph(w.gdn, sets)
                        ops.set_schedule()
                    if (w.study or args.schedules) and args.sweep and HV == 32 and N in (1, 8, 64, 256, 1024) and (
                            T > 1 or (w.name.startswith("decode") and N != 1024)):
                        for sched in args.schedules or (SCHEDULES_TN if T > 1 else
                                                        SCHEDULES_T1):
                            ops.set_schedule(sched)
                            res[schedule_name(sched)] = time_graph(w.gdn, sets)
                        ops.set_schedule()
                    rows.append(res)
                    print(json.dumps(res), flush=True)
                    del sets
                    torch.cuda.empty_cache()
        report(rows, args.out, quiet=True, anchors=anchors)  # a time limit keeps what is done
    return rows, anchors


def anchor_cells(r):
    """name -> cell of a row: this version's rows hold "anchors"; rows of
    earlier versions one anchor as "anchor" and "anchor_us"."""
    if "anchors" in r:
        return r["anchors"]
    if r.get("anchor"):
        return {r["anchor"]: {"us": r.get("anchor_us"), "error": None, "version": None,
                              "path": None}}
    return {}


def _device_name():
    try:
        return torch.cuda.get_device_name()
    except Exception as e:  # noqa: BLE001 - no GPU: the table says so
        return f"no GPU ({_error(e)})"


def _md(text):
    return str(text).replace("|", "\\|")


# A kernel at this fraction of a cold copy of its bytes or more is bound by
# memory bandwidth: what is left between it and a faster anchor is about the
# spread of repeated runs (the same kernel moved 0.4-1 % between the two runs
# of bench/results/anchors and its before/).
COPY_BOUND = 0.95


def _why_slower(copy_us, gdn_us, anchor_us, workload=None):
    """The reason a row where the anchor is faster than gdn prints with it:
    copy-bound, the workload's known limit (Workload.why_slower), or an open
    gap."""
    if copy_us / gdn_us >= COPY_BOUND:
        return (f"(both copy-bound: gdn at {copy_us / gdn_us:.2f}, the anchor at "
                f"{copy_us / anchor_us:.2f} of a copy)")
    w = next((w for w in WORKLOADS if w.name == workload), None)
    if w is not None and w.why_slower:
        return f"(gdn slower, at {copy_us / gdn_us:.2f} of a copy: {w.why_slower})"
    return f"(gdn slower, at {copy_us / gdn_us:.2f} of a copy: an open gap)"


def report(rows, out, quiet=False, device=None, anchors=None):
    if not rows:  # nothing timed (--profile, or a time limit before the first point)
        return
    os.makedirs(out, exist_ok=True)
    # The anchors: as imported in this run, or as the rows name them.
    lines = ["| anchor | version | function | status |", "|---|---|---|---|"]
    if anchors:
        for a in anchors.values():
            lines.append(f"| {a.name} | {a.version or 'not installed'} | "
                         f"{a.module}.{a.function} | "
                         f"{_md('error: ' + a.error) if a.error else 'imported'} |")
    else:  # --from-json: what the rows hold
        seen = {}
        for r in rows:
            for name, c in anchor_cells(r).items():
                v = seen.setdefault(name, {"version": c.get("version"), "n": 0, "timed": 0,
                                           "errors": []})
                v["n"] += 1
                v["timed"] += c.get("us") is not None
                if c.get("error"):
                    v["errors"].append(c["error"])
        for name, v in seen.items():
            status = f"timed at {v['timed']} of {v['n']} points"
            if v["errors"]:
                status += f"; first error: {v['errors'][0]}"
            lines.append(f"| {name} | {v['version'] or '—'} | — | {_md(status)} |")
    lines += ["", "| workload | T | H | HV | N | MB | copy us | gdn us (of copy) | "
              "anchor, version, path | anchor us (of copy) | anchor / gdn |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        def cell(t):
            return "—" if t is None else f"{t:.2f} ({r['copy'] / t:.2f})"
        head = (f"| {r['workload']} | {r['T']} | {r['H']} | {r['HV']} | {r['N']} | "
                f"{r['bytes'] / 1e6:.1f} | {r['copy']:.2f} | {cell(r['gdn'])} | ")
        cells = anchor_cells(r)
        if not cells:
            lines.append(head + "— | — | — |")
        for name, c in cells.items():
            label = ", ".join(x for x in (name, c.get("version"), c.get("path")) if x)
            if c.get("error"):
                value, ratio = "error: " + c["error"], "—"
            else:
                value = cell(c.get("us"))
                ratio = "—" if not (r["gdn"] and c.get("us")) else f"{c['us'] / r['gdn']:.2f}"
                if ratio != "—" and c["us"] / r["gdn"] < 0.995:
                    ratio += " " + _why_slower(r["copy"], r["gdn"], c["us"], r["workload"])
            lines.append(head + f"{_md(label)} | {_md(value)} | {ratio} |")
    formed = [r for r in rows if "gdn_unstaged" in r]
    if formed:
        names = ["unstaged"] + list(FORMS)
        lines += ["", "Other kernel forms at T > 1 (us): unstaged = no shared-memory "
                  "staging; chunked / tensor_cores = the WY solve of a staged chunk on CUDA "
                  "cores (solve = cuda_cores) or tensor cores (tensor_cores); token_loop = no "
                  "chunked solve (token_by_token); "
                  "producer / no_producer = a producer warp feeding a 2-slot ring with "
                  "cp.async.bulk and mbarriers (producer_stages = 2) or none (0); one_v_lane = "
                  "no producer and one lane along V (lanes_along_v = 1, the columns a lane chosen "
                  "again); — = does not apply.", "",
                  "| workload | T | HV | N | default | " + " | ".join(names) + " |",
                  "|---|---|---|---|---|" + "---|" * len(names)]
        for r in formed:
            lines.append(f"| {r['workload']} | {r['T']} | {r['HV']} | {r['N']} | {r['gdn']:.2f} | " +
                         " | ".join("—" if r.get("gdn_" + n) is None else f"{r['gdn_' + n]:.2f}"
                                    for n in names) + " |")
    sweep = [r for r in rows if any(k.startswith("sched_") for k in r)]
    if sweep:
        lines += ["", "Schedule sweep (HV=32; us; columns: the pinned #gdn.schedule "
                  "parameters, each as its initials and its value, e.g. cpl2,w1 = "
                  "columns_per_lane 2, warps 1; unset = the cost model's):", ""]
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
        f.write(f"# gdn vs anchors on {device or _device_name()}\n\n"
                "CUDA-graph replay medians, cold state (rotating input sets); "
                "'of copy' = copy time / kernel time for the same bytes, the copy being "
                "the faster of a Triton copy kernel and torch copy_.\n"
                "K=V=128, bf16 q/k/v. Decode updates a vk state (fp32, or a bf16 pool; "
                "K-major: a kv fp32 state) in place; verify reads a pool and writes the state "
                "after every token to a buffer of the pool's dtype (disable_state_update); "
                "FLA-style reads a kv fp32 initial state and writes a final state. "
                "anchor / gdn > 1: gdn is faster. Each anchor implementation "
                "that supports a workload has a row per point, with its version and the "
                "path its call took; \"error: ...\" = it could not be imported or failed "
                "on the point. FLA never writes its initial state: in the decode "
                "workloads it returns a new final state (the same bytes).\n\n" + table + "\n")
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
            series = {"gdn": [(r["N"], r["bytes"], r["gdn"]) for r in sub],
                      "copy": [(r["N"], r["bytes"], r["copy"]) for r in sub]}
            for r in sub:
                for name, c in anchor_cells(r).items():
                    series.setdefault(name, []).append((r["N"], r["bytes"], c.get("us")))
            for label, pts in series.items():
                pts = [(n, b / t / 1e3) for n, b, t in pts if t]
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
                   help="with --sweep, these schedules instead of the built-in lists (and on any "
                        "workload, not only the studied ones): "
                        "';'-separated, each ','-separated #gdn.schedule parameters, e.g. "
                        "'state_prefetch_distance=0;columns_per_lane=4,lanes_along_v=2;"
                        "reductions=in_turn'")
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
                   help="no timing: one call of gdn and of each anchor a point, for Nsight "
                        "Compute (ncu -k regex:'recurrent|fused' --set full python3 "
                        "bench/bench_gdn.py --profile --only verify --Ts 4 --hv 32 --Ns 16)")
    p.add_argument("--out", default=os.environ.get("OUT"),
                   help="default bench/results/anchors (--replay: bench/results/replay)")
    p.add_argument("--replay", action="store_true",
                   help="the replayed-verify workload (bench/bench_replay.py) instead")
    p.add_argument("--site", default=None,
                   help="a site directory holding the anchors (pip install --target; "
                        "scripts/anchor-site.sh builds one), put first on sys.path; without "
                        "it the anchors come from PYTHONPATH and site-packages")
    p.add_argument("--anchors", default=None,
                   help="only the anchor implementations whose name contains one of these "
                        "semicolon-separated texts, e.g. 'SGLang;FlashInfer' (default: all "
                        "of ANCHORS; each row of a workload an anchor supports shows its time "
                        "or its error)")
    p.add_argument("--list-anchors", action="store_true",
                   help="import the anchors and print their versions, paths and import "
                        "errors; no GPU needed")
    p.add_argument("--from-json", default=None,
                   help="no GPU: redraw the table and plot from comma-separated "
                        "bench_gdn.json files or bench.log files (their JSON lines), "
                        "e.g. to join the parts of a sweep run in several calls; a later "
                        "file's row replaces an earlier one of the same workload, T, HV, N")
    p.add_argument("--device-name", default="NVIDIA H200", help="with --from-json")
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import bench_replay  # noqa: E402
    bench_replay.add_arguments(p)
    a = p.parse_args()
    a.out = a.out or ("bench/results/replay" if a.replay else "bench/results/anchors")
    value = lambda v: int(v) if v.lstrip("-").isdigit() else v  # a size or an enum case
    a.schedules = [{k.strip(): value(v.strip()) for k, v in (kv.split("=") for kv in item.split(","))}
                   for item in a.schedules.split(";")] if a.schedules else None
    if a.site:
        add_site(a.site)
    if a.list_anchors:
        for an in selected_anchors(a).values():
            an.load()
            print(f"{an.name}: {an.version or 'not installed'}: {an.module}.{an.function}: "
                  f"{'error: ' + an.error if an.error else 'imported'}")
        sys.exit(0)
    if a.replay:
        bench_replay.main(a)
        sys.exit(0)
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
        rows, anchors = run(a)
        report(rows, a.out, anchors=anchors)
