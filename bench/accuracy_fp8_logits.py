"""Teacher-forced logits of a transformers model whose linear-attention
states are stored in float8_e4m3fn with row scales, against the same model
storing them in float32 (issue 24: accuracy as users feel it). The model is
transformers' Qwen3-Next (5.17) with the linear-attention shapes of
Qwen3-Next-80B (16 key heads, 32 value heads, K = V = 128) in a small, randomly
initialised body (hidden size 256, 4 layers, 3 of them linear attention):
real weights are not reachable from the development machine, so this
measures how one state rounding a step propagates through such layers, not
a trained model's quality.

gdn.integrations.transformers.enable(model) routes the layers' kernels to
gdn.ops; here each entry point that returns a final state (the prefill's
chunk call and each decode step's fused_recurrent call, layout kv) has it
stored as an e4m3 pool would hold it: quantize_state then dequantize_state,
which is bit for bit what gdn's fp8 kernels store and read on the CPU
(python/tests/test_quantized.py). A bfloat16 state is the same round trip
through bfloat16. The prompt is prefilled, then every later token of a fixed
random sequence is fed one at a time (teacher forcing) and its logits
compared with the float32-state run's: RMS-relative error, KL divergence
(nats) of the next-token distributions, and top-1 agreement, over the first
1, 64 and 256 steps.

    python3 bench/accuracy_fp8_logits.py [--steps 256] [--out DIR]"""
import argparse
import functools
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import gdn.ops as ops  # noqa: E402
import gdn.integrations.transformers as gdn_transformers  # noqa: E402

CHECKPOINTS = (1, 64, 256)
PROMPT = 32


def model():
    import transformers
    torch.manual_seed(0)
    cfg = transformers.Qwen3NextConfig(
        vocab_size=1024, hidden_size=256, intermediate_size=512, num_hidden_layers=4,
        layer_types=["linear_attention"] * 3 + ["full_attention"], num_attention_heads=4,
        num_key_value_heads=1, head_dim=64, linear_num_key_heads=16,
        linear_num_value_heads=32, linear_key_head_dim=128, linear_value_head_dim=128,
        num_experts=4, num_experts_per_tok=2, moe_intermediate_size=128,
        shared_expert_intermediate_size=128)
    return transformers.Qwen3NextForCausalLM(cfg).eval()


def stored(state, dtype):
    """`state` (float32, layout kv) as a pool of `dtype` holds it."""
    if state is None or dtype == torch.float32:
        return state
    if dtype == torch.bfloat16:
        return state.to(torch.bfloat16).float()
    pool, _ = ops.quantize_state(state, layout="kv")
    back = ops.dequantize_state(pool, layout="kv")
    ops.detach_state_scale(pool)
    return back


def storing(fn, dtype):
    @functools.wraps(fn)
    def call(*args, **kwargs):
        o, state = fn(*args, **kwargs)
        return o, stored(state, dtype)
    return call


def logits(m, ids, dtype):
    """Teacher-forced logits [steps, vocab] after the prompt, the states
    stored in `dtype` between calls."""
    names = ("chunk_gated_delta_rule", "fused_recurrent_gated_delta_rule")
    saved = {n: getattr(ops, n) for n in names}
    for n in names:
        setattr(ops, n, storing(saved[n], dtype))
    try:
        out = []
        with torch.no_grad():
            r = m(ids[:, :PROMPT], use_cache=True)
            cache = r.past_key_values
            for t in range(PROMPT, ids.shape[1]):
                r = m(ids[:, t:t + 1], past_key_values=cache, use_cache=True)
                cache = r.past_key_values
                out.append(r.logits[0, -1].float())
        return torch.stack(out)
    finally:
        for n in names:
            setattr(ops, n, saved[n])


def compare(x, ref, n):
    x, ref = x[:n].double(), ref[:n].double()
    rms = ((x - ref).pow(2).mean() / ref.pow(2).mean()).sqrt().item()
    lp, lq = torch.log_softmax(ref, -1), torch.log_softmax(x, -1)
    kl = (lp.exp() * (lp - lq)).sum(-1).mean().item()
    top1 = (x.argmax(-1) == ref.argmax(-1)).double().mean().item()
    return {"rms_rel": rms, "kl": kl, "top1": top1}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=256)
    p.add_argument("--out", default=None)
    args = p.parse_args()
    m = model()
    gdn_transformers.enable(m)
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, m.config.vocab_size, (1, PROMPT + args.steps), generator=g)
    runs = {str(d).replace("torch.", ""): logits(m, ids, d)
            for d in (torch.float32, torch.bfloat16, torch.float8_e4m3fn)}
    ref = runs.pop("float32")
    rows = {name: {n: compare(x, ref, n) for n in CHECKPOINTS if n <= args.steps}
            for name, x in runs.items()}
    lines = ["| state | steps | logits RMS-rel vs fp32 state | KL (nats) | top-1 agreement |",
             "|---|---|---|---|---|"]
    for name, by_n in rows.items():
        for n, r in by_n.items():
            lines.append(f"| {name} | {n} | {r['rms_rel']:.2e} | {r['kl']:.2e} | "
                         f"{r['top1']:.3f} |")
    text = "\n".join(lines)
    print(text)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "accuracy-logits.md"), "w") as f:
            f.write("# Teacher-forced logits with stored states (bench/accuracy_fp8_logits.py)\n\n"
                    f"transformers {__import__('transformers').__version__}, Qwen3-Next "
                    "linear-attention shapes, random weights, CPU.\n\n" + text + "\n")
        with open(os.path.join(args.out, "accuracy-logits.json"), "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
