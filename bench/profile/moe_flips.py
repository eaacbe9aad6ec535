#!/usr/bin/env python
"""Do bf16 rounding flips of MoE top-k expert choices drive the bf16-vs-fp32
logit errors of test_transformers.py's
test_bf16_on_cuda_is_no_less_accurate_than_the_models_own_path?

Reuses the test module (build, MODELS, FORCED, binding, errors, exact_fp32).
For each model, the teacher-forced forward over FORCED (B = 2, T = 32):

  fp32      the fp32 model, transformers' torch reference of the recurrence,
            no TF32 (the test's reference); its routing is the reference routing
  own       bf16, whatever transformers bound (FLA/FlashQLA on CUDA, the torch
            reference on a CPU without fla)
  own-again the own path once more (by default on CUDA only, --repeat-own:
            the experts' index_add_ is not deterministic there)
  torchref  bf16, transformers' torch reference bound (only when `own` is not
            it). The reference upcasts q/k/v/g/beta to fp32 and rounds only its
            output to bf16: the most accurate kernel there is.
  gdn       bf16, gdn.integrations.transformers.enable(model)
  jitterS   bf16, torch reference, its output (the gated norm's input) times
            (1 + u * 2**-8), u ~ U(-1, 1) seeded S, then rounded to bf16: the
            same accurate kernel with other rounding luck.

in three routing variants:

  top-k     the model as built (top-2 of 4 experts)
  pinned    bf16 runs use the fp32 run's expert choice (weights recomputed
            from their own router logits): no discrete flips
  dense     every router picks all experts (top_k = num_experts) in all runs,
            fp32 included: the routing is continuous

Per run: max abs and RMS-relative error of the logits against the variant's
fp32 run (as the test computes them), the number of (layer, token) expert
sets that differ from the fp32 run's, whether the token of the largest error
had a flip, the share of the squared error in flipped tokens, and the
RMS-relative error over the tokens no run of the variant flipped.

    PYTHONPATH=python:python/tests GDN_LIBRARY=build/lib/libGDNCAPI.so \\
        python3 bench/profile/moe_flips.py [--device cuda] [--models qwen3_next,qwen3_5_moe]
"""
import argparse
import contextlib
import functools
import importlib
import sys
import time

import torch

import test_transformers as tt
import gdn.ops as ops
import gdn.integrations.transformers as gdn_tf

JITTER_AMP = 2.0 ** -8  # bf16's unit roundoff
SPOTS = []  # one line per (layer, token) that flipped in some run


def routers(model):
    return [m for m in model.modules()
            if "router" in type(m).__name__.lower() and hasattr(m, "top_k")
            and hasattr(m, "num_experts")]


def linear_attn_norms(model):
    """The gated norm each linear-attention layer applies to the recurrence's output."""
    out = []
    for m in model.modules():
        name = type(m).__name__
        if name.endswith("GatedDeltaNet") or name.endswith("DeltaAttention"):
            out.append(getattr(m, "norm", None) or getattr(m, "o_norm"))
    return out


def router_scores(router, logits, idx):
    """The router's expert weights for the given expert indices (its own formula)."""
    if hasattr(router, "routed_scaling_factor"):  # Kimi: sigmoid scores
        w = logits.float().sigmoid().gather(1, idx)
        if router.norm_topk_prob:
            w = w / (w.sum(-1, keepdim=True) + 1e-20)
        return w * router.routed_scaling_factor
    w = torch.softmax(logits, dim=-1, dtype=torch.float).gather(1, idx)
    if getattr(router, "norm_topk_prob", True):  # Qwen3.5-MoE always normalizes
        w = w / w.sum(-1, keepdim=True)
    return w.to(logits.dtype)


@contextlib.contextmanager
def recording(model, pin=None):
    """Records each router's (router logits, sorted expert indices) per call;
    with pin (a list, per router, of indices) the routers route as pinned."""
    rec = [[] for _ in routers(model)]
    handles = []
    for i, r in enumerate(routers(model)):
        def hook(mod, args, out, i=i):
            logits, scores, idx = out
            if pin is not None:
                idx = pin[i].to(idx.device)
                scores = router_scores(mod, logits, idx).to(out[1].dtype)
            rec[i].append((logits.detach().float().cpu(), idx.sort(-1).values.cpu()))
            if pin is not None:
                return logits, scores, idx
        handles.append(r.register_forward_hook(hook))
    try:
        yield rec
    finally:
        for h in handles:
            h.remove()


@contextlib.contextmanager
def top_k(model, k):
    saved = [(r, r.top_k) for r in routers(model)]
    try:
        for r, _ in saved:
            r.top_k = r.num_experts if k == "all" else r.top_k
        yield
    finally:
        for r, v in saved:
            r.top_k = v


@contextlib.contextmanager
def torch_reference(name):
    """Binds transformers' torch reference of the recurrence (as the test's fp32 run)."""
    _, module_name, routes = tt.MODELS[name]
    module = importlib.import_module(module_name)
    saved = {f: getattr(module, f) for f in routes}
    try:
        for f in routes:
            setattr(module, f, tt.binding(module_name, f)[1])
        yield
    finally:
        for f, v in saved.items():
            setattr(module, f, v)


@contextlib.contextmanager
def gdn_enabled(model, name):
    calls = {}
    routes = tt.MODELS[name][2]
    saved = {g: getattr(ops, g) for g in routes.values()}
    for g, real in saved.items():
        @functools.wraps(real)  # gdn's router passes the keyword arguments real names
        def spy(*a, _g=g, _real=real, **kw):
            calls[_g] = calls.get(_g, 0) + 1
            return _real(*a, **kw)
        setattr(ops, g, spy)
    try:
        assert gdn_tf.enable(model) >= 1
        yield calls
    finally:
        gdn_tf.disable(model)
        for g, real in saved.items():
            setattr(ops, g, real)


@contextlib.contextmanager
def jitter(model, seed, device):
    gen = torch.Generator(device=device).manual_seed(seed)

    def pre(mod, args):
        x = args[0]
        u = torch.rand(x.shape, generator=gen, device=x.device, dtype=torch.float32) * 2 - 1
        return ((x.float() * (1 + JITTER_AMP * u)).to(x.dtype),) + tuple(args[1:])
    handles = [n.register_forward_pre_hook(pre) for n in linear_attn_norms(model)]
    try:
        yield
    finally:
        for h in handles:
            h.remove()


def forward(model, device, pin=None):
    with recording(model, pin) as rec, torch.no_grad():
        logits = model(tt.FORCED.to(device)).logits.float().cpu()
    assert all(len(r) == 1 for r in rec), [len(r) for r in rec]
    return logits, [r[0] for r in rec]


def bound_label(name):
    _, module_name, routes = tt.MODELS[name]
    labels = []
    for f in routes:
        impl, ref = tt.binding(module_name, f)
        labels.append("torch reference" if impl is ref else f"{impl.__module__}.{impl.__name__}")
    return labels


def analyse(name, variant, fp32, runs, k):
    """Rows of the table for one (model, variant)."""
    ref_logits, ref_route = fp32
    B, T = tt.FORCED.shape
    flipped = {}
    for run, (logits, route, secs) in runs.items():
        per_layer = [(r[1] != f[1]).any(-1).view(B, T) for r, f in zip(route, ref_route)]
        flipped[run] = per_layer
    any_flip = torch.zeros(B, T, dtype=torch.bool)
    for per_layer in flipped.values():
        for m in per_layer:
            any_flip |= m
    rows = []
    for run, (logits, route, secs) in runs.items():
        mx, rms = tt.errors(logits, ref_logits)
        d = (logits.double() - ref_logits.double())
        tok_max = d.abs().amax(-1)  # B, T
        b, t = divmod(int(tok_max.argmax()), T)
        mine = torch.zeros(B, T, dtype=torch.bool)
        for m in flipped[run]:
            mine |= m
        nflips = sum(int(m.sum()) for m in flipped[run])
        sq = d.pow(2).sum(-1)
        share = float(sq[mine].sum() / sq.sum()) if mine.any() else 0.0
        clean = ~any_flip
        clean_rms = float(d[clean].norm() / ref_logits.double()[clean].norm()) if clean.any() else float("nan")
        clean_max = float(d[clean].abs().max()) if clean.any() else float("nan")
        where = [f"L{li}:b{bb}t{tt_}" for li, m in enumerate(flipped[run])
                 for bb, tt_ in m.nonzero().tolist()]
        rows.append(dict(model=name, variant=variant, run=run, max=mx, rms=rms, flips=nflips,
                         argmax=f"b{b}t{t}", argmax_flipped=bool(mine[b, t]), share=share,
                         clean_max=clean_max, clean_rms=clean_rms, secs=secs, where=where,
                         top_tokens=[f"b{i // T}t{i % T}:{v:.1e}{'*' if mine.view(-1)[i] else ''}"
                                     for v, i in zip(*tok_max.view(-1).topk(3))]))
    # the fp32 routing's margins: k-th minus (k+1)-th router logit per (layer, token)
    E = ref_route[0][0].shape[-1] if ref_route else 0
    if 0 < k < E:
        margins = []
        for li, (lg, _) in enumerate(ref_route):
            s = lg.sort(-1, descending=True).values
            margins.append((s[:, k - 1] - s[:, k]).view(B, T))
        allm = torch.stack(margins).flatten()
        msg = [f"  fp32 router-logit margins (top-{k} vs next) over {allm.numel()} (layer, token):"
               f" min {allm.min():.2e} median {allm.median():.2e}"]
        spots = sorted({(li, bb, tt_) for per_layer in flipped.values()
                        for li, m in enumerate(per_layer) for bb, tt_ in m.nonzero().tolist()})
        for li, bb, tt_ in spots:
            # each run's router logit of fp32's k-th expert minus that of fp32's (k+1)-th:
            # < 0 swapped, 0 a tie in the rounded logits (topk's tie-break decides)
            order = ref_route[li][0].view(B, T, -1)[bb, tt_].sort(descending=True).indices
            mine_ = []
            for run in runs:
                lg = runs[run][1][li][0].view(B, T, -1)[bb, tt_]
                mine_.append(f"{run}{'*' if flipped[run][li][bb, tt_] else ''} "
                             f"{float(lg[order[k - 1]] - lg[order[k]]):+.1e}")
            lg = ref_route[li][0].view(B, T, -1)[bb, tt_]
            jit = [r for r in runs if r.startswith("jitter")]
            SPOTS.append(f"{name:12s} {variant:7s} L{li} b{bb}t{tt_}: fp32 margin {margins[li][bb, tt_]:.1e}; "
                         + ", ".join(m for m, r in zip(mine_, runs) if not r.startswith("jitter"))
                         + (f"; jitter {sum(bool(flipped[r][li][bb, tt_]) for r in jit)}/{len(jit)} flipped"
                            if jit else ""))
            msg.append(f"    flip at L{li} b{bb}t{tt_}: fp32 logits {[round(float(x), 5) for x in lg]}, "
                       f"margin {margins[li][bb, tt_]:.2e}; per run (* flipped) the same margin: "
                       + ", ".join(mine_))
        print("\n".join(msg), flush=True)
    return rows


def diagnose(name, device, jitters, variants, repeat_own):
    rows = []
    print(f"\n=== {name} on {device}: own path bound to {bound_label(name)}", flush=True)
    t0 = time.perf_counter()
    model = tt.build(name).to(device)
    if routers(model):
        k, E = routers(model)[0].top_k, routers(model)[0].num_experts
        print(f"  {len(routers(model))} routers, top-{k} of {E}", flush=True)
    else:  # a dense model (qwen3_5): no routing to flip, only the errors
        k = E = 0
        variants = ["top-k"]
        print("  no MoE router: errors only", flush=True)
    fp32 = {}
    for v in variants:
        t = time.perf_counter()
        with torch_reference(name), tt.exact_fp32(), top_k(model, "all" if v == "dense" else k):
            fp32[v] = forward(model, device)
        print(f"  fp32 [{v}] {time.perf_counter() - t:.1f} s", flush=True)
    model.to(torch.bfloat16)
    own_is_ref = all(l == "torch reference" for l in bound_label(name))
    for v in variants:
        pin = [r[1] for r in fp32[v][1]] if v == "pinned" else None
        runs = {}
        with top_k(model, "all" if v == "dense" else k):
            def go(label, ctx):
                t = time.perf_counter()
                with ctx:
                    logits, route = forward(model, device, pin)
                runs[label] = (logits, route, time.perf_counter() - t)
            go("own", contextlib.nullcontext())
            if repeat_own:  # CUDA: index_add_ (the experts' sum) is not deterministic there
                go("own-again", contextlib.nullcontext())
            if not own_is_ref:
                go("torchref", torch_reference(name))
            with gdn_enabled(model, name) as calls:
                go("gdn", contextlib.nullcontext())
            assert sum(calls.values()) >= 1, f"gdn was not called: {calls}"
            for s in range(jitters):
                with torch_reference(name):
                    go(f"jitter{s}", jitter(model, s, device))
        ref = fp32["top-k" if v == "pinned" else v]
        ref = (ref[0], ref[1])
        rows += analyse(name, v, ref, runs, E if v == "dense" else k)
        for r in rows:
            if r["variant"] == v:
                print(f"  [{v:6s}] {r['run']:9s} max {r['max']:.3e} rms-rel {r['rms']:.3e} "
                      f"flips {r['flips']:2d} {r['where']} worst tokens {r['top_tokens']} "
                      f"clean max {r['clean_max']:.3e} rms-rel {r['clean_rms']:.3e} ({r['secs']:.1f} s)",
                      flush=True)
    print(f"  {name}: {time.perf_counter() - t0:.1f} s", flush=True)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--models", default="qwen3_next,qwen3_5_moe",
                    help=f"comma-separated, of {list(tt.MODELS)}, or all")
    ap.add_argument("--jitter", type=int, default=8, help="jittered torch-reference runs per variant")
    ap.add_argument("--variants", default="top-k,pinned,dense")
    ap.add_argument("--repeat-own", type=int, default=None,
                    help="1: run the own path twice (default: on a non-CPU device)")
    a = ap.parse_args()
    variants = a.variants.split(",")
    assert set(variants) <= {"top-k", "pinned", "dense"}, variants
    if "pinned" in variants and "top-k" not in variants:
        variants.insert(0, "top-k")  # pinned needs the top-k fp32 routing
    print(f"torch {torch.__version__}, transformers {tt.transformers.__version__}, device {a.device}"
          + (f" ({torch.cuda.get_device_name()})" if a.device.startswith("cuda") else ""),
          flush=True)
    try:
        import fla
        print(f"fla {getattr(fla, '__version__', '?')} at {fla.__file__}", flush=True)
    except Exception as e:  # noqa: BLE001
        print(f"fla not importable ({type(e).__name__})", flush=True)
    rows = []
    for name in (list(tt.MODELS) if a.models == "all" else a.models.split(",")):
        rows += diagnose(name, a.device, a.jitter, variants,
                         a.repeat_own if a.repeat_own is not None else a.device != "cpu")

    print("\n" + "=" * 100)
    print(f"bf16 logits vs the fp32 model's (FORCED, B=2 T=32), device {a.device}. flips: (layer, token) "
          "expert sets != fp32's;\nargmax: token of the max error (* it flipped); share: squared error "
          "in flipped tokens; clean: over tokens no run flipped;\nrule: rms-rel <= own * "
          f"{tt.SLACK} + {tt.FLOOR} (clean: the same on clean tokens); jitter xN: min..max over N runs")
    if SPOTS:
        print("flipped (layer, token): fp32 router-logit margin (k-th - (k+1)-th); each run's margin of the "
              "same experts (* flipped; 0 = tie in bf16)")
        for line in SPOTS:
            print("  " + line)
    hdr = f"{'model':12s} {'variant':7s} {'run':9s} {'max':>17s} {'rms-rel':>17s} {'flips':>5s} " \
          f"{'argmax':>7s} {'share':>5s} {'clean rms':>9s}  rule"
    print(hdr)
    print("-" * (len(hdr) + 20))
    for key in dict.fromkeys((r["model"], r["variant"]) for r in rows):
        rs = [r for r in rows if (r["model"], r["variant"]) == key]
        own = next(r for r in rs if r["run"] == "own")

        def rule(r):
            if r is own:
                return ""
            ok = r["rms"] <= own["rms"] * tt.SLACK + tt.FLOOR
            okc = r["clean_rms"] <= own["clean_rms"] * tt.SLACK + tt.FLOOR
            return f"{'pass' if ok else 'FAIL'} (clean {'pass' if okc else 'FAIL'})"
        for r in rs:
            if not r["run"].startswith("jitter"):
                print(f"{r['model']:12s} {r['variant']:7s} {r['run']:9s} {r['max']:17.2e} {r['rms']:17.2e} "
                      f"{r['flips']:5d} {r['argmax'] + ('*' if r['argmax_flipped'] else ''):>7s} "
                      f"{r['share']:5.2f} {r['clean_rms']:9.2e}  {rule(r)}")
        jit = [r for r in rs if r["run"].startswith("jitter")]
        if jit:
            def rng(f, k):
                return f"{min(r[k] for r in jit):{f}}..{max(r[k] for r in jit):{f}}"
            nflip = sum(1 for r in jit if r["flips"])
            fails = sum(1 for r in jit if rule(r).startswith("FAIL"))
            print(f"{key[0]:12s} {key[1]:7s} {'jitter x' + str(len(jit)):9s} {rng('.2e', 'max'):>17s} "
                  f"{rng('.2e', 'rms'):>17s} {str(nflip) + '/' + str(len(jit)):>5s} {'':7s} "
                  f"{'':5s} {rng('.1e', 'clean_rms'):>9s}  {fails} of {len(jit)} fail")
    return 0


if __name__ == "__main__":
    sys.exit(main())
