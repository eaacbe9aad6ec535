"""Accuracy of a quantized (float8_e4m3fn, row-scaled) state as decode runs:
the drift of o and of the state after 1, 64, 512 and 4096 decode steps, one
token a step through SGLang's entry point on a pool updated in place,
against the fp64 reference and beside the same run on a bfloat16 and a
float32 pool. Qwen3-Next's shapes by default (H = 16, HV = 32,
K = V = 128), one sequence, inputs drawn as bench_gdn.py draws them (q, k,
v, a, b ~ N(0, 1), A_log = log U(1, 16), dt_bias ~ N(0, 1); qk L2 norm in
the kernel). Every run starts from the same state: e4m3 x scale of a
N(0, 1) draw (exact in float32; the bfloat16 pool rounds it once). The e4m3
pool runs twice: rounded to nearest and with stochastic rounding
(docs/math.md §6). `--gating long-memory` draws dt_bias as FLA's
GatedDeltaNet initialises it (softplus(dt_bias) log-uniform in [1e-3, 1e-1]),
so the decay exp(g) is near 1 and a state keeps many steps; by default
dt_bias ~ N(0, 1) decays most of the state within a few steps.

Runs on the CPU lowering (the arithmetic the GPU kernels round alike, to
float32 reassociation) or on CUDA. Writes accuracy.md and accuracy.json.

    python3 bench/accuracy_fp8.py [--steps 4096] [--device cpu] [--out DIR]
        [--gating long-memory]   (writes accuracy-long-memory.md/.json)"""
import argparse
import json
import math
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "python", "tests"))
import gdn.ops as ops  # noqa: E402
from reference import recurrent as ref_recurrent, rms_rel  # noqa: E402

CHECKPOINTS = (1, 64, 512, 4096)


def inputs(steps, H, HV, K, V, seed, gating="default"):
    g = torch.Generator().manual_seed(seed)
    r = lambda *s: torch.randn(*s, generator=g)  # noqa: E731
    bf = torch.bfloat16
    x = dict(q=r(1, steps, H, K).to(bf), k=r(1, steps, H, K).to(bf), v=r(1, steps, HV, V).to(bf),
             a=r(1, steps, HV).to(bf), b=r(1, steps, HV).to(bf),
             A_log=torch.log(torch.rand(HV, generator=g) * 15 + 1), dt_bias=r(HV),
             state=r(1, HV, V, K))
    if gating == "long-memory":  # dt log-uniform in [1e-3, 1e-1], dt_bias = softplus^-1(dt)
        dt = torch.exp(torch.rand(HV, generator=g) * (math.log(0.1) - math.log(1e-3))
                       + math.log(1e-3))
        x["dt_bias"] = dt + torch.log(-torch.expm1(-dt))
    return x


def run(x, pool, dev, steps):
    """o of every step and the pool (dequantized) at each checkpoint."""
    idx = torch.zeros(1, dtype=torch.int32, device=dev)
    d = {n: t.to(dev) for n, t in x.items() if n != "state"}
    outs, states = [], {}
    for t in range(steps):
        one = {n: (v[:, t:t + 1].contiguous() if n in ("q", "k", "v", "a", "b") else v)
               for n, v in d.items()}
        outs.append(ops.fused_sigmoid_gating_delta_rule_update(
            one["A_log"], one["a"], one["dt_bias"], 1.0, 20.0, one["q"], one["k"], one["v"],
            one["b"], pool, idx, use_qk_l2norm_in_kernel=True).float().cpu())
        if t + 1 in CHECKPOINTS:
            states[t + 1] = (ops.dequantize_state(pool) if pool.dtype == torch.float8_e4m3fn
                             else pool.float()).cpu().double().numpy()
    return torch.cat(outs, 1).double().numpy(), states


def reference(x, s0, steps):
    """fp64 o of every step and the state at each checkpoint."""
    n64 = lambda t: t.double().numpy()  # noqa: E731
    state, outs, states, done = s0, [], {}, 0
    for cp in [c for c in CHECKPOINTS if c <= steps]:
        seg = lambda t: n64(t[:, done:cp])  # noqa: E731
        o, state = ref_recurrent(seg(x["q"]), seg(x["k"]), seg(x["v"]), a=seg(x["a"]),
                                 A_log=n64(x["A_log"]), dt_bias=n64(x["dt_bias"]), b=seg(x["b"]),
                                 initial_state=state, qk_l2norm=True, layout="vk")
        outs.append(o)
        states[cp] = state
        done = cp
    return np.concatenate(outs, 1), states


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=4096)
    p.add_argument("--device", default="cpu")
    p.add_argument("--H", type=int, default=16)
    p.add_argument("--HV", type=int, default=32)
    p.add_argument("--K", type=int, default=128)
    p.add_argument("--V", type=int, default=128)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--gating", choices=("default", "long-memory"), default="default")
    p.add_argument("--out", default=os.path.join(HERE, "results", "quantized"))
    a = p.parse_args()
    x = inputs(a.steps, a.H, a.HV, a.K, a.V, a.seed, a.gating)
    fp8_pool, _ = ops.quantize_state(x["state"].to(a.device))
    s0 = ops.dequantize_state(fp8_pool)  # the common start, exact in float32
    ref_o, ref_states = reference(x, s0.cpu().double().numpy(), a.steps)
    sr_pool = ops.attach_state_scale(fp8_pool.clone(), ops.state_scale_of(fp8_pool).clone(),
                                     stochastic_rounding=True)
    pools = {"float8_e4m3fn": fp8_pool, "float8_e4m3fn, stochastic rounding": sr_pool,
             "bfloat16": s0.to(torch.bfloat16), "float32": s0.clone()}
    rows = []
    for name, pool in pools.items():
        o, states = run(x, pool, a.device, a.steps)
        for cp in [c for c in CHECKPOINTS if c <= a.steps]:
            rows.append(dict(state_dtype=name, steps=cp,
                             o_rms_rel=rms_rel(o[:, :cp], ref_o[:, :cp]),
                             o_last_rms_rel=rms_rel(o[:, cp - 1], ref_o[:, cp - 1]),
                             state_rms_rel=rms_rel(states[cp], ref_states[cp])))
            print(rows[-1], flush=True)
    os.makedirs(a.out, exist_ok=True)
    tag = "" if a.gating == "default" else "-" + a.gating
    gating = ("dt_bias ~ N(0, 1)" if a.gating == "default" else
              "long memory: softplus(dt_bias) log-uniform in [1e-3, 1e-1]")
    with open(os.path.join(a.out, f"accuracy{tag}.json"), "w") as f:
        json.dump(dict(shapes=dict(H=a.H, HV=a.HV, K=a.K, V=a.V), device=a.device,
                       seed=a.seed, gating=a.gating, rows=rows), f, indent=1)
    with open(os.path.join(a.out, f"accuracy{tag}.md"), "w") as f:
        f.write(f"# Quantized state accuracy (bench/accuracy_fp8.py, {a.device})\n\n"
                f"One sequence decoded token by token on a pool updated in place; H = {a.H}, "
                f"HV = {a.HV}, K = {a.K}, V = {a.V}, seed {a.seed}, {gating}. "
                "RMS-relative errors against "
                "the fp64 reference started from the same state (e4m3 x scale): o over all "
                "steps so far, o of the last step, and the state after it.\n\n"
                "| state | steps | o (all steps) | o (last step) | state |\n|---|---|---|---|---|\n")
        for r in rows:
            f.write(f"| {r['state_dtype']} | {r['steps']} | {r['o_rms_rel']:.2e} | "
                    f"{r['o_last_rms_rel']:.2e} | {r['state_rms_rel']:.2e} |\n")


if __name__ == "__main__":
    main()
