#!/usr/bin/env python3
"""Why a quantized state drifts as it does: the error model of docs/math.md
§6 against a simulation.

A state stored with a rounding Q after every token carries the rounding
errors of earlier stores forward, through the same linear map as the state:
with S_t = gamma_t (I - beta_t k_t k_t^T) S_{t-1} + beta_t k_t v_t^T the
exact state and S~_t = Q(gamma_t (I - beta_t k_t k_t^T) S~_{t-1} + beta_t
k_t v_t^T) the stored one, their difference E_t obeys

    E_t = gamma_t (I - beta_t k_t k_t^T) E_{t-1} + e_t

exactly, e_t being the rounding of store t. For unit keys in random
directions the map shrinks E's square norm by x = <gamma^2> (1 - <2 beta -
beta^2> / K) a step on average, so with stores of relative RMS error eps
the state settles at

    |E| / |S| = eps / sqrt(1 - x)            (the stored state)
    |P| / |S| = eps sqrt(x / (1 - x))        (before the store: what o reads)

This script decodes one sequence per head in float64 (the exact state) and
beside it the same sequence stored after every token by gdn.ops's
quantize_state (e4m3 with row scales, round to nearest: the kernels'
rounding) or rounded to bfloat16, and prints per head: 1 - x, eps measured,
and the state's and o's error measured over the second half of the steps
against the model's. Inputs as bench/accuracy_fp8.py --gating long-memory
draws them (softplus(dt_bias) log-uniform in [1e-3, 1e-1], A_log = log U(1,
16), a, b ~ N(0, 1) in bf16, beta = sigmoid(b), L2-normalised bf16 q and k).

    python3 bench/fp8_error_model.py [--steps 2048] [--HV 32] [--K 128] [--V 128]
        (bench/results/quantized/error-model.md)"""
import argparse
import math
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import gdn.ops as ops  # noqa: E402

f64, bf16 = torch.float64, torch.bfloat16


def e4m3(S):
    """S [HV, K, V] float64 stored as the kernels store a kv state."""
    pool, _ = ops.quantize_state(S.float(), layout="kv")
    return ops.dequantize_state(pool, layout="kv").double()


def bfloat16(S):
    return S.to(bf16).double()


def simulate(HV, K, V, steps, seed=0):
    g = torch.Generator().manual_seed(seed)
    r = lambda *s: torch.randn(*s, generator=g, dtype=f64)  # noqa: E731
    A = torch.rand(HV, generator=g, dtype=f64) * 15 + 1
    dt = torch.exp(torch.rand(HV, generator=g, dtype=f64) * (math.log(0.1) - math.log(1e-3))
                   + math.log(1e-3))
    dt_bias = dt + torch.log(-torch.expm1(-dt))
    rounding = {"float8_e4m3fn": e4m3, "bfloat16": bfloat16}
    S = e4m3(r(HV, K, V))  # every run starts from the same, exactly stored state
    stored = {f: S.clone() for f in rounding}
    x = torch.zeros(HV, dtype=f64)
    acc = {f: dict(eps=torch.zeros(HV, dtype=f64), state=torch.zeros(HV, dtype=f64),
                   o=torch.zeros(HV, dtype=f64)) for f in rounding}
    unit = lambda t: t / t.norm(dim=1, keepdim=True)  # noqa: E731
    for t in range(steps):
        k = unit(r(HV, K).to(bf16).double())
        q = unit(r(HV, K).to(bf16).double())
        v = r(HV, V).to(bf16).double()
        a = r(HV).to(bf16).double()
        beta = torch.sigmoid(r(HV).to(bf16).double())
        gamma = torch.exp(-A * torch.nn.functional.softplus(a + dt_bias))
        x += gamma ** 2 * (1 - (2 * beta - beta ** 2) / K)

        def step(S):
            S = gamma[:, None, None] * S
            u = beta[:, None] * (v - torch.einsum("hk,hkv->hv", k, S))
            return S + torch.einsum("hk,hv->hkv", k, u)

        S = step(S)
        o = torch.einsum("hk,hkv->hv", q, S)
        sq = lambda m: m.pow(2).sum(tuple(range(1, m.dim())))  # noqa: E731
        for f, round_ in rounding.items():
            pre = step(stored[f])
            stored[f] = round_(pre)
            acc[f]["eps"] += sq(stored[f] - pre) / sq(pre)
            if t >= steps // 2:
                acc[f]["state"] += sq(stored[f] - S) / sq(S)
                acc[f]["o"] += sq(torch.einsum("hk,hkv->hv", q, pre) - o) / sq(o)
    x /= steps
    half = steps - steps // 2
    out = {}
    for f in rounding:
        eps = (acc[f]["eps"] / steps).sqrt()
        out[f] = dict(x=x, eps=eps, state=(acc[f]["state"] / half).sqrt(),
                      o=(acc[f]["o"] / half).sqrt(), state_model=eps / (1 - x).sqrt(),
                      o_model=eps * (x / (1 - x)).sqrt())
    return out


def table(out, args):
    rms = lambda t: t.pow(2).mean().sqrt().item()  # noqa: E731
    lines = ["# Quantized state: the error model against a simulation "
             "(bench/fp8_error_model.py)", "",
             f"HV = {args.HV}, K = {args.K}, V = {args.V}, {args.steps} decode steps, long-memory "
             "decays; errors RMS-relative against the float64 state over the second half of the "
             "steps. x = <gamma^2> (1 - <2 beta - beta^2> / K); model: state eps / sqrt(1 - x), "
             "o eps sqrt(x / (1 - x)) (docs/math.md §6).", "",
             "| state | heads | eps (one store) | state measured | state model | "
             "o measured | o model |", "|---|---|---|---|---|---|---|"]
    for f, d in out.items():
        lines.append(f"| {f} | all (RMS) | {rms(d['eps']):.2e} | {rms(d['state']):.3f} | "
                     f"{rms(d['state_model']):.3f} | {rms(d['o']):.4f} | {rms(d['o_model']):.4f} |")
    lines += ["", "Per head (every fourth):", "",
              "| state | head | 1 - x | eps | state measured | state model | o measured | "
              "o model |", "|---|---|---|---|---|---|---|---|"]
    for f, d in out.items():
        for h in range(0, args.HV, 4):
            lines.append(f"| {f} | {h} | {1 - d['x'][h].item():.1e} | {d['eps'][h].item():.2e} | "
                         f"{d['state'][h].item():.3f} | {d['state_model'][h].item():.3f} | "
                         f"{d['o'][h].item():.4f} | {d['o_model'][h].item():.4f} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=2048)
    p.add_argument("--HV", type=int, default=32)
    p.add_argument("--K", type=int, default=128)
    p.add_argument("--V", type=int, default=128)
    p.add_argument("--out", default=os.path.join(HERE, "results", "quantized"))
    a = p.parse_args()
    text = table(simulate(a.HV, a.K, a.V, a.steps), a)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "error-model.md"), "w") as f:
        f.write(text)
    print(text)
