"""How fast an fp8 (e4m3) pool decode can run: floors beside gdn's.

gdn's e4m3 pool decode runs at about 1.35 x its bf16 pool decode at N >= 64
(issue 24 asks 1.8 x): half the bytes, but about the same instructions an
element (bench/results/quantized/sass-mix.md), at 128 registers a thread and
25 % occupancy. Before building a packed-math kernel form, this script
measures what the memory system and a plain kernel allow, in one process on
the same rotating cold input sets as bench_gdn.py (CUDA-graph replay
medians, µs):

  copy            the copy of the row's bytes (bench_gdn.time_copy): the
                  e4m3 pool and its f32 row scales read and written, q, k,
                  v, o and the gates
  e4m3 pass       a Triton kernel that reads each slot's e4m3 rows and row
                  scales through the slot index, and writes them back
                  rescaled and requantized (no recurrence): the bytes, the
                  index's dependent load and the quantization's row max
  triton decode   the whole decode (fused gating, qk L2 norm, the delta
                  rule on the rows, requantized with new row scales) as a
                  plain Triton kernel, the best of a few tile shapes; its o
                  and state are checked against gdn's before it is timed
  gdn e4m3        gdn's decode of the e4m3 pool (the table's row)
  gdn e4m3 mma    the same under reductions = mma (MmaDecode.cpp), the
                  best of 1, 2 and 4 tiles a warp
  gdn bf16        gdn's decode of a bf16 pool (the row the 1.8 x is
                  against)

H = 16, HV = 32, K = V = 128, T = 1, bf16 q/k/v, vk pools updated in place.
Run on the GPU machine with the Python package on the path:

    python3 bench/profile/fp8_decode_floor.py --Ns 8,64,256 --out DIR
"""
import argparse
import math
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import bench_gdn as bg  # noqa: E402
from floor_table import emit, over_copy  # noqa: E402
from gdn import ops  # noqa: E402

H, HV, K, V = 16, 32, 128, 128
E4M3_MAX = 448.0
_kernels = {}


def _triton_kernels():
    """The two Triton kernels, built on first use (Triton imports lazily)."""
    if _kernels:
        return _kernels
    import triton
    import triton.language as tl

    @triton.jit
    def e4m3_pass(E, scales, idx, BV: tl.constexpr, KK: tl.constexpr, VV: tl.constexpr,
                  NH: tl.constexpr):
        vb, hv, n = tl.program_id(0), tl.program_id(1), tl.program_id(2)
        slot = tl.load(idx + n).to(tl.int64)
        rows = vb * BV + tl.arange(0, BV)
        keys = tl.arange(0, KK)
        base = (slot * NH + hv) * VV
        p = E + (base + rows)[:, None] * KK + keys[None, :]
        s = tl.load(p).to(tl.float32) * tl.load(scales + base + rows)[:, None]
        amax = tl.max(tl.abs(s), axis=1)
        inv = tl.where(amax > 0, 448.0 / amax, 0.0)
        tl.store(p, (s * inv[:, None]).to(tl.float8e4nv))
        tl.store(scales + base + rows, amax / 448.0)

    @triton.jit
    def decode(q, k, v, a, b, A_log, dt_bias, E, scales, idx, o, scale,
               BV: tl.constexpr, KK: tl.constexpr, VV: tl.constexpr, NH: tl.constexpr,
               GROUP: tl.constexpr):
        vb, hv, n = tl.program_id(0), tl.program_id(1), tl.program_id(2)
        h = hv // GROUP
        slot = tl.load(idx + n).to(tl.int64)
        keys = tl.arange(0, KK)
        rows = vb * BV + tl.arange(0, BV)
        kf = tl.load(k + (n * (NH // GROUP) + h) * KK + keys).to(tl.float32)
        qf = tl.load(q + (n * (NH // GROUP) + h) * KK + keys).to(tl.float32)
        kf = kf / tl.sqrt(tl.sum(kf * kf) + 1e-6)
        qf = qf / tl.sqrt(tl.sum(qf * qf) + 1e-6) * scale
        x = tl.load(a + n * NH + hv).to(tl.float32) + tl.load(dt_bias + hv)
        softplus = tl.where(x > 20.0, x, tl.log(1.0 + tl.exp(x)))
        decay = tl.exp(-tl.exp(tl.load(A_log + hv)) * softplus)
        beta = 1.0 / (1.0 + tl.exp(-tl.load(b + n * NH + hv).to(tl.float32)))
        base = (slot * NH + hv) * VV
        p = E + (base + rows)[:, None] * KK + keys[None, :]
        unit = tl.load(scales + base + rows) * decay  # the rows' scale, decayed
        e = tl.load(p).to(tl.float32)
        vf = tl.load(v + (n * NH + hv) * VV + rows).to(tl.float32)
        u = beta * (vf - unit * tl.sum(e * kf[None, :], axis=1))
        out = unit * tl.sum(e * qf[None, :], axis=1) + u * tl.sum(kf * qf)
        tl.store(o + (n * NH + hv) * VV + rows, out.to(tl.bfloat16))
        s = e * unit[:, None] + u[:, None] * kf[None, :]
        amax = tl.max(tl.abs(s), axis=1)
        inv = tl.where(amax > 0, 448.0 / amax, 0.0)
        tl.store(p, (s * inv[:, None]).to(tl.float8e4nv))
        tl.store(scales + base + rows, amax / 448.0)

    _kernels.update(e4m3_pass=e4m3_pass, decode=decode)
    return _kernels


def e4m3_pass(s, BV=16, warps=4):
    pool, sc = s["state_vk"], ops.state_scale_of(s["state_vk"])
    _triton_kernels()["e4m3_pass"][(V // BV, HV, pool.shape[0])](
        pool, sc, s["idx"], BV=BV, KK=K, VV=V, NH=HV, num_warps=warps)


def triton_decode(s, BV=16, warps=4):
    pool, sc = s["state_vk"], ops.state_scale_of(s["state_vk"])
    N = s["q"].shape[0]
    _triton_kernels()["decode"][(V // BV, HV, N)](
        s["q"], s["k"], s["v"], s["a"], s["b"], s["A_log"], s["dt_bias"], pool, sc, s["idx"],
        s["o"], K ** -0.5, BV=BV, KK=K, VV=V, NH=HV, GROUP=HV // H, num_warps=warps)


def gdn_decode(s, pool="state_vk"):
    return ops.gated_delta_rule_decode_pretranspose(
        s["q"], s["k"], s["v"], None, s["A_log"], s["a"], s["dt_bias"], s["b"],
        output=s["o"], initial_state=s[pool], initial_state_indices=s["idx"])


def gdn_mma(sets):
    """gdn's e4m3 decode under reductions = mma (pinned: the cost model does
    not choose it yet), the best of 1, 2 and 4 tiles a warp: (µs, tiles)."""
    best = (None, None)
    for R in (2, 4, 8):
        ops.set_schedule(reductions="mma", columns_per_lane=R)
        try:
            us = bg.time_graph(gdn_decode, sets)
        finally:
            ops.set_schedule()
        print(f"# gdn e4m3 mma, columns_per_lane = {R}: {us}", flush=True)
        if us and (best[0] is None or us < best[0]):
            best = (us, R // 2)
    return best


def check(N, dev, configs):
    """Runs gdn and the Triton decode (each config) from the same e4m3 pool;
    returns {config: (o RMS-rel, state RMS-rel)} against gdn's."""
    ref = bg.make_set(N, 1, H, HV, K, V, dev, 99, torch.float8_e4m3fn)
    start = (ref["state_vk"].clone(), ops.state_scale_of(ref["state_vk"]).clone())
    gdn_decode(ref)
    want_o = ref["o"].float().clone()
    want_s = ops.dequantize_state(ref["state_vk"])
    out = {}
    for cfg in configs:
        s = dict(ref, o=torch.empty_like(ref["o"]))
        s["state_vk"] = ops.attach_state_scale(start[0].clone(), start[1].clone())
        triton_decode(s, *cfg)
        got_s = ops.dequantize_state(s["state_vk"])
        rel = lambda x, y: (float((x - y).norm() / y.norm()))  # noqa: E731
        out[cfg] = (rel(s["o"].float(), want_o), rel(got_s, want_s))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--Ns", default="8,64,256")
    p.add_argument("--out", type=Path, default=None, help="writes fp8_decode_floor.md there")
    a = p.parse_args()
    dev = torch.device("cuda")
    configs = [(8, 2), (16, 4), (32, 4), (32, 8)]  # (rows a program, warps)
    errors = check(8, dev, configs)
    for cfg, (eo, es) in errors.items():
        print(f"# triton decode {cfg} vs gdn: o {eo:.2e}, state {es:.2e} RMS-relative",
              flush=True)
    good = [c for c, (eo, es) in errors.items() if eo < 5e-3 and es < 1e-2]
    fp8_w = bg.Workload("decode fp8", (1,), torch.float8_e4m3fn, "rw", None, {})
    rows = []
    for N in [int(n) for n in a.Ns.split(",")]:
        nbytes = fp8_w.nbytes(N, 1, H, HV, K, V)
        R = max(2, min(64, math.ceil(4 * bg.L2_BYTES / nbytes)))
        sets = [bg.make_set(N, 1, H, HV, K, V, dev, i, torch.float8_e4m3fn) for i in range(R)]
        t = {"copy": bg.time_copy(nbytes, dev),
             "e4m3 pass": bg.time_graph(e4m3_pass, sets),
             "gdn e4m3": bg.time_graph(gdn_decode, sets),
             "gdn e4m3 mma": gdn_mma(sets),
             "gdn bf16": bg.time_graph(lambda s: gdn_decode(s, "state_vk_bf16"), sets)}
        tri = {c: bg.time_graph(lambda s, c=c: triton_decode(s, *c), sets) for c in good}
        best = min((v, c) for c, v in tri.items() if v) if any(tri.values()) else (None, None)
        t["triton decode"], cfg = best
        rows.append((N, nbytes, t, cfg))
        print(f"# N={N} {t} triton config {cfg} (all: {tri})", flush=True)
        del sets
    for N, nbytes, t, cfg in rows:  # the mma form's tiles a warp beside its time
        t["gdn e4m3 mma"], t["mma tiles"] = t["gdn e4m3 mma"]
    cols = ["copy", "e4m3 pass", "triton decode", "gdn e4m3", "gdn e4m3 mma", "gdn bf16"]
    lines = [f"# fp8 pool decode floors on {torch.cuda.get_device_name()}", "",
             "CUDA-graph replay medians over rotating cold input sets (bench_gdn.py's), µs; "
             "in brackets: the time over the copy of the e4m3 row's bytes. H = 16, HV = 32, "
             "K = V = 128, T = 1, bf16 q/k/v, vk pools in place through state_indices. "
             "Triton decode: best of (rows a program, warps) in "
             f"{[list(c) for c in good]} (checked against gdn: " +
             ", ".join(f"{list(c)} o {e[0]:.1e} / state {e[1]:.1e}" for c, e in errors.items())
             + " RMS-relative).", "",
             "| N | MB | " + " | ".join(cols) + " | triton config | mma tiles a warp | "
             "gdn bf16 / gdn e4m3 | gdn bf16 / gdn e4m3 mma |",
             "|---|---|" + "---|" * (len(cols) + 4)]
    for N, nbytes, t, cfg in rows:
        cells = over_copy(t, cols)
        ratios = [f"{t['gdn bf16'] / t[c]:.2f}" if t[c] and t["gdn bf16"] else "—"
                  for c in ("gdn e4m3", "gdn e4m3 mma")]
        lines.append(f"| {N} | {nbytes / 1e6:.1f} | " + " | ".join(cells) +
                     f" | {list(cfg) if cfg else '—'} | {t['mma tiles'] or '—'} | " +
                     " | ".join(ratios) + " |")
    emit(lines, a.out, "fp8_decode_floor.md")


if __name__ == "__main__":
    main()
