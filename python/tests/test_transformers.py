"""gdn.integrations.transformers on small random-weight Qwen3-Next, Qwen3.5
(dense and MoE) and Kimi Linear models (Hugging Face transformers, tested
with 5.17.0), fp32 on the CPU. Their linear-attention layers have the real
head shapes (Qwen3-Next and Qwen3.5-MoE's defaults: H = 16 key heads,
HV = 32 value heads, K = V = 128; Qwen3.5-27B: HV = 48, GQA 3; Kimi Linear:
KDA, H = HV = 32, K = V = 128); everything else is tiny
(hidden 64, vocab 256, 2 layers: one linear-attention layer and the
full-attention layer the pattern needs, 4 experts where the model is MoE).

For each model: greedy generate() of NEW tokens from a fixed batch of two
prompts, and a teacher-forced forward over prompt + generated tokens, first
on the model's own torch path (transformers' torch reference: where FLA
imports, transformers binds FLA's Triton kernels, which do not run on CPU
tensors, so torch_reference_bound binds the wrapper to its torch reference
for the tests and restores it after), then after enable(model):
the same tokens, logits within TOL (max abs difference, fp32; logits are of
order 0.5 and the linear-attention layer moves them by ~5e-2, see
test_the_comparison_can_fail). The gdn entry points are counted (prefill and
the teacher-forced forward through chunk_*, each decode step through
fused_recurrent_*) and gdn's kernel cache must hold kernels of the layer's
shapes. Skipped only when transformers is not importable.

On CUDA, test_bf16_on_cuda_is_no_less_accurate_than_the_models_own_path
(skipped without CUDA) judges the same four models in bf16 against the fp32
model: gdn must be no less accurate than the path transformers bound (FLA
0.6.0's Triton kernels where fla imports, else its torch reference); its
docstring states the rule. Each model prints one line (run pytest with -s):
the bound path and both errors. In that comparison the Qwen MoE routers send
every token to all experts (dense_routing says why); test_bf16_rule_on_cpu
runs the same comparison on the CPU."""
import contextlib
import functools
import importlib
import inspect
import time

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
import gdn.ops as ops  # noqa: E402
import gdn.integrations.transformers as gdn_transformers  # noqa: E402

TOL = 1e-4
NEW = 8
PROMPTS = [[17, 201, 5, 88, 142, 33, 250], [9, 64, 120, 7, 199, 71, 3]]  # B = 2, T = 7
TINY = dict(vocab_size=256, hidden_size=64, intermediate_size=64, num_hidden_layers=2,
            layer_types=["linear_attention", "full_attention"])


def qwen3_next():
    cfg = transformers.Qwen3NextConfig(
        **TINY, num_attention_heads=2, num_key_value_heads=1, head_dim=32,
        linear_num_key_heads=16, linear_num_value_heads=32, linear_key_head_dim=128,
        linear_value_head_dim=128, num_experts=4, num_experts_per_tok=2,
        moe_intermediate_size=32, shared_expert_intermediate_size=32)
    return transformers.Qwen3NextForCausalLM(cfg)


def qwen3_5():
    from transformers.models.qwen3_5 import Qwen3_5ForCausalLM, Qwen3_5TextConfig
    cfg = Qwen3_5TextConfig(
        **TINY, num_attention_heads=2, num_key_value_heads=1, head_dim=32,
        linear_num_key_heads=16, linear_num_value_heads=48, linear_key_head_dim=128,
        linear_value_head_dim=128)
    return Qwen3_5ForCausalLM(cfg)


def qwen3_5_moe():  # the linear-attention shapes of Qwen3-Next (its config's defaults)
    from transformers.models.qwen3_5_moe import Qwen3_5MoeForCausalLM, Qwen3_5MoeTextConfig
    cfg = Qwen3_5MoeTextConfig(
        **TINY, num_attention_heads=2, num_key_value_heads=1, head_dim=32,
        linear_num_key_heads=16, linear_num_value_heads=32, linear_key_head_dim=128,
        linear_value_head_dim=128, num_experts=4, num_experts_per_tok=2,
        moe_intermediate_size=32, shared_expert_intermediate_size=32)
    return Qwen3_5MoeForCausalLM(cfg)


def kimi_linear():
    cfg = transformers.KimiLinearConfig(
        **TINY, moe_intermediate_size=32, num_attention_heads=2, num_key_value_heads=2,
        kv_lora_rank=16, qk_rope_head_dim=16, qk_nope_head_dim=16, v_head_dim=16,
        num_experts=4, num_experts_per_token=2, linear_num_heads=32, linear_head_dim=128,
        pad_token_id=0, bos_token_id=1, eos_token_id=2)
    return transformers.KimiLinearForCausalLM(cfg)


# builder, modeling module, {transformers' function: the gdn entry point enable() routes it to}
MODELS = {
    "qwen3_next": (qwen3_next, "transformers.models.qwen3_next.modeling_qwen3_next",
                   {"torch_chunk_gated_delta_rule": "chunk_gated_delta_rule",
                    "torch_recurrent_gated_delta_rule": "fused_recurrent_gated_delta_rule"}),
    "qwen3_5": (qwen3_5, "transformers.models.qwen3_5.modeling_qwen3_5",
                {"torch_chunk_gated_delta_rule": "chunk_gated_delta_rule",
                 "torch_recurrent_gated_delta_rule": "fused_recurrent_gated_delta_rule"}),
    "qwen3_5_moe": (qwen3_5_moe, "transformers.models.qwen3_5_moe.modeling_qwen3_5_moe",
                    {"torch_chunk_gated_delta_rule": "chunk_gated_delta_rule",
                     "torch_recurrent_gated_delta_rule": "fused_recurrent_gated_delta_rule"}),
    "kimi_linear": (kimi_linear, "transformers.models.kimi_linear.modeling_kimi_linear",
                    {"chunk_kimi_delta_attention": "chunk_kda",
                     "recurrent_kimi_delta_attention": "fused_recurrent_kda"}),
}


def build(name):
    torch.manual_seed(0)
    return MODELS[name][0]().eval()


def binding(module_name, function):
    """(the function transformers' use_kernel_func_from_hub_with_fallback
    wrapper bound for `function`, the torch reference it wraps)."""
    fn = getattr(importlib.import_module(module_name), function)
    fn = getattr(fn, "replaced", fn)  # under gdn's router (an earlier test)
    return inspect.getclosurevars(fn).nonlocals.get("implementation"), fn.__wrapped__


@contextlib.contextmanager
def torch_reference_bound(module_name, functions):
    """Binds transformers' wrappers of `functions` to their torch references
    inside the block, then restores their bindings. Where FLA imports (it
    does on a machine without a GPU once einops is installed, which SGLang
    needs) transformers binds FLA's Triton kernels, which do not run on CPU
    tensors; the comparisons here are with transformers' torch path."""
    saved = []
    for function in functions:
        fn = getattr(importlib.import_module(module_name), function)
        fn = getattr(fn, "replaced", fn)  # under gdn's router (an earlier test)
        cells = dict(zip(fn.__code__.co_freevars, fn.__closure__))
        reference = fn.__wrapped__
        bound = {name: cells[name].cell_contents
                 for name in ("implementation", "is_new_implementation", "applicable_params")}
        saved.append((cells, bound))
        cells["implementation"].cell_contents = reference
        cells["is_new_implementation"].cell_contents = False
        cells["applicable_params"].cell_contents = tuple(inspect.signature(reference).parameters)
    try:
        yield
    finally:
        for cells, bound in saved:
            for name, value in bound.items():
                cells[name].cell_contents = value


def assert_torch_reference(module_name, function):
    """The wrapper bound its torch reference, not FLA's kernel."""
    bound, reference = binding(module_name, function)
    assert bound is not None and bound is reference, (
        f"{module_name}.{function} is bound to {bound!r}, not to transformers' torch "
        "reference: FLA imports here, so the model's own path is not the torch fallback")


def run(model):
    """(generate's output with per-step logits, teacher-forced logits over its sequences)."""
    ids = torch.tensor(PROMPTS)
    with torch.no_grad():
        out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=NEW,
                             min_new_tokens=NEW, do_sample=False, output_logits=True,
                             return_dict_in_generate=True)
        forced = model(out.sequences).logits
    return out, forced


def max_diff(a, b):
    return max((x - y).abs().max().item() for x, y in zip(a, b))


class Spy:
    """Counts the calls of gdn.ops entry points (looked up by the router at
    each call); with zero_o, returns o zeroed."""

    def __init__(self, monkeypatch, names, zero_o=False):
        self.calls = dict.fromkeys(names, 0)
        for name in names:
            real = getattr(ops, name)

            @functools.wraps(real)
            def spy(*args, _name=name, _real=real, **kwargs):
                self.calls[_name] += 1
                o, state = _real(*args, **kwargs)
                return (torch.zeros_like(o) if zero_o else o), state
            monkeypatch.setattr(ops, name, spy)


@pytest.fixture(scope="module", params=list(MODELS))
def case(request):
    """(name, model switched to gdn, reference run on the model's torch path,
    number of linear-attention layers)."""
    name = request.param
    _, module_name, routes = MODELS[name]
    with torch_reference_bound(module_name, routes):
        model = build(name)
        for function in routes:
            assert_torch_reference(module_name, function)
        reference = run(model)
        switched = gdn_transformers.enable(model)
        yield name, model, reference, switched


def test_enable_generates_the_same_tokens_and_logits(case, monkeypatch):
    name, model, (ref, ref_forced), switched = case
    assert switched == 1  # layer 0 of TINY's pattern
    chunk, recurrent = MODELS[name][2].values()
    spy = Spy(monkeypatch, [chunk, recurrent])
    out, forced = run(model)
    assert torch.equal(out.sequences, ref.sequences), (name, out.sequences, ref.sequences)
    assert max_diff(out.logits, ref.logits) < TOL
    assert (forced - ref_forced).abs().max().item() < TOL
    # prefill and the teacher-forced forward: chunk; NEW - 1 decode steps: recurrent
    assert spy.calls == {chunk: 2 * switched, recurrent: (NEW - 1) * switched}, spy.calls
    # gdn compiled (CPU) kernels of this layer's shapes: prefill, decode, teacher-forced
    hv = 48 if name == "qwen3_5" else 32
    shapes = {(d["N"], d["T"], d["HV"], d["K"], d["V"])
              for d in (dict(key[2:]) for key in ops._kernels if key[0] == "cpu")}
    P = len(PROMPTS[0])
    assert {(2, P, hv, 128, 128), (2, 1, hv, 128, 128), (2, P + NEW, hv, 128, 128)} <= shapes


def test_the_comparison_can_fail(case, monkeypatch):
    """gdn's output zeroed in one switched call moves the logits far past
    TOL: in the chunk call (the teacher-forced forward), and in the
    recurrent call alone (generate's decode steps; its prefill step is
    unchanged)."""
    name, model, (ref, ref_forced), _ = case
    chunk, recurrent = MODELS[name][2].values()
    with monkeypatch.context() as mp:
        Spy(mp, [chunk], zero_o=True)
        _, forced = run(model)
    assert (forced - ref_forced).abs().max().item() > 100 * TOL
    with monkeypatch.context() as mp:
        Spy(mp, [recurrent], zero_o=True)
        out, _ = run(model)
    assert (out.logits[0] - ref.logits[0]).abs().max().item() < TOL
    assert max_diff(out.logits[1:], ref.logits[1:]) > 100 * TOL


def test_disable_restores_the_torch_path(case, monkeypatch):
    name, model, (ref, ref_forced), switched = case
    spy = Spy(monkeypatch, MODELS[name][2].values())
    try:
        assert gdn_transformers.disable(model) == switched
        with torch.no_grad():
            forced = model(ref.sequences).logits
        assert sum(spy.calls.values()) == 0
        assert (forced - ref_forced).abs().max().item() < TOL
    finally:
        assert gdn_transformers.enable(model) == switched


def test_enable_is_idempotent_and_needs_no_grad(case):
    name, model, (ref, _), switched = case
    assert gdn_transformers.enable(model) == switched
    hooked = [m for m in model.modules() if m._forward_pre_hooks or m._forward_hooks]
    assert len(hooked) == switched
    assert all(len(m._forward_pre_hooks) == 1 and len(m._forward_hooks) == 1 for m in hooked)
    with pytest.raises(NotImplementedError, match="no backward pass"):
        model(ref.sequences[:, :3])  # autograd on: gdn has no backward yet


def test_a_model_without_linear_attention_is_refused():
    cfg = transformers.LlamaConfig(vocab_size=32, hidden_size=16, intermediate_size=16,
                                   num_hidden_layers=1, num_attention_heads=2)
    with pytest.raises(ValueError, match="model type 'llama'"):
        gdn_transformers.enable(transformers.LlamaForCausalLM(cfg))
    with pytest.raises(TypeError):
        gdn_transformers.enable("qwen3_next")


# The bf16 comparison on CUDA: a fixed teacher-forced sequence (B = 2,
# T = 32; no token 0-2, Kimi's pad/bos/eos) and the rule's constants.
FORCED = torch.randint(3, 256, (2, 32), generator=torch.Generator().manual_seed(1))
SLACK, FLOOR = 1.10, 1e-3


@contextlib.contextmanager
def dense_routing(model):
    """Every MoE router of a Qwen model routes each token to all its
    experts (router.top_k = num_experts), in every run of the comparison.
    Their routers round the router logits to bf16, and with top-2 of 4
    experts a token whose 2nd and 3rd logits are within a bf16 ulp flips its
    expert choice on rounding luck (measured on these weights: Qwen3-Next
    layer 1 token 31, a 4.7e-4 margin against a 4.9e-4 ulp). One flip then
    dominates the logits' error (2/3 of its square, 8x the next token) and
    decides the comparison whatever the recurrence's accuracy: FLA's Triton
    path and gdn flipped (8.8e-3), FlashQLA did not (5.1e-3). Routed to
    every expert, the logits are a continuous function of the recurrence's
    output again. Kimi Linear's router computes in fp32 (its smallest margin
    here is 1.9e-3) and keeps its grouped top-k."""
    routers = [m for m in model.modules()
               if type(m).__name__.endswith("TopKRouter") and hasattr(m, "num_experts")]
    saved = [r.top_k for r in routers]
    for r in routers:
        r.top_k = r.num_experts
    try:
        yield len(routers)
    finally:
        for r, k in zip(routers, saved):
            r.top_k = k


@contextlib.contextmanager
def exact_fp32():
    """fp32 matmuls and convolutions without TF32 (cuDNN allows it by
    default: the torch convolution of the models' short conv)."""
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


def forced_and_tokens(model, device):
    """(teacher-forced logits over FORCED as float32, greedy tokens: NEW
    after PROMPTS)."""
    ids = torch.tensor(PROMPTS, device=device)
    with torch.no_grad():
        logits = model(FORCED.to(device)).logits.float()
        out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=NEW,
                             min_new_tokens=NEW, do_sample=False)
    return logits, out[:, ids.shape[1]:]


def errors(x, ref):
    """(max abs, RMS-relative: ||x - ref|| / ||ref||) in float64."""
    d = x.double() - ref.double()
    return d.abs().max().item(), (d.norm() / ref.double().norm()).item()


def compare_bf16(name, monkeypatch, device):
    """One model: fp32 reference, bf16 own path, bf16 gdn. Returns the
    numbers and asserts the rule (see the test's docstring)."""
    _, module_name, routes = MODELS[name]
    module = importlib.import_module(module_name)
    bound = {}
    for function in routes:
        impl, reference = binding(module_name, function)
        bound[function] = ("torch reference" if impl is reference
                           else f"{impl.__module__}.{impl.__name__}")
    path = "FLA" if all(b.startswith("fla.") for b in bound.values()) else (
        "torch" if all(b == "torch reference" for b in bound.values()) else repr(bound))
    start = time.perf_counter()
    model = build(name).to(device)  # fp32, seeded
    stack = contextlib.ExitStack()
    dense = stack.enter_context(dense_routing(model))
    assert bool(dense) == (name in ("qwen3_next", "qwen3_5_moe")), (name, dense)
    # The fp32 reference: transformers' torch reference of the recurrence,
    # whatever the wrapper bound, in fp32 without TF32: neither candidate.
    with monkeypatch.context() as mp, exact_fp32():
        for function in routes:
            mp.setattr(module, function, binding(module_name, function)[1])
        ref_logits, ref_tokens = forced_and_tokens(model, device)
    model.to(torch.bfloat16)  # the same weights in bf16
    own_logits, own_tokens = forced_and_tokens(model, device)
    chunk, recurrent = routes.values()
    try:
        assert gdn_transformers.enable(model) == 1
        with monkeypatch.context() as mp:
            spy = Spy(mp, [chunk, recurrent])
            gdn_logits, gdn_tokens = forced_and_tokens(model, device)
        with monkeypatch.context() as mp, torch.no_grad():
            Spy(mp, [chunk], zero_o=True)  # the rule can fail: gdn's output zeroed
            zeroed_logits = model(FORCED.to(device)).logits.float()
    finally:
        gdn_transformers.disable(model)
        stack.close()
    # the forward and generate's prefill: chunk; NEW - 1 decode steps: recurrent
    assert spy.calls == {chunk: 2, recurrent: NEW - 1}, spy.calls
    own, gdn = errors(own_logits, ref_logits), errors(gdn_logits, ref_logits)
    zeroed = errors(zeroed_logits, ref_logits)
    same = [label for label, tokens in (("bf16 own path", own_tokens), ("fp32", ref_tokens))
            if torch.equal(gdn_tokens, tokens)]
    print(f"\n[bf16 vs fp32] {name}: bound {path}; own path max {own[0]:.3e} "
          f"rms-rel {own[1]:.3e}; gdn max {gdn[0]:.3e} rms-rel {gdn[1]:.3e}; "
          f"gdn tokens == {' and '.join(same) or 'neither'}; "
          f"own == fp32 tokens: {torch.equal(own_tokens, ref_tokens)}; "
          f"gdn zeroed rms-rel {zeroed[1]:.3e}; {time.perf_counter() - start:.1f} s", flush=True)
    assert gdn[1] <= own[1] * SLACK + FLOOR, (name, bound, own, gdn)
    assert zeroed[1] > own[1] * SLACK + FLOOR, (name, own, zeroed)
    assert same, (name, gdn_tokens.tolist(), own_tokens.tolist(), ref_tokens.tolist())
    return path, own, gdn, same


@pytest.mark.skipif(not torch.cuda.is_available(),
                    reason="needs a CUDA GPU: bf16 against the fp32 model on the GPU, where "
                           "transformers binds FLA's Triton kernels when fla imports")
@pytest.mark.parametrize("name", list(MODELS))
def test_bf16_on_cuda_is_no_less_accurate_than_the_models_own_path(name, monkeypatch):
    """Teacher-forced logits over FORCED (B = 2, T = 32) of the fp32 model
    on CUDA (seeded random weights; transformers' torch reference of the
    recurrence, no TF32) are the reference. The same weights in bf16 run
    (a) the model's own path, whatever transformers bound (FLA 0.6.0's
    Triton kernels where fla imports, else its torch reference; printed) and
    (b) gdn after enable(model), both with the Qwen MoE routers dense
    (dense_routing: a top-k expert flip on bf16 rounding luck would decide
    the comparison). The rule: gdn's RMS-relative error against
    the reference <= the own path's * SLACK + FLOOR (1.10 and 1e-3). The
    slack is for bf16 rounding noise: both runs share every other bf16 layer
    and differ only in the recurrence's output, which each rounds to bf16,
    so equally accurate kernels still land a few percent apart. And greedy
    generate() of NEW tokens through gdn in bf16 gives the bf16 own path's
    tokens or the fp32 model's (printed: which). The rule can fail: with
    gdn's output zeroed in the teacher-forced forward it does (on the CPU
    the zeroed error is 8 to 55 times the own path's)."""
    compare_bf16(name, monkeypatch, "cuda")


@pytest.mark.parametrize("name", list(MODELS))
def test_bf16_rule_on_cpu(name, monkeypatch):
    """The CUDA test's comparison and rule on the CPU, where the model's own
    path is transformers' torch reference (fp32 inside, its output rounded
    to bf16) and gdn runs its CPU lowering: so CI runs the dense routing of
    the MoE models and every assertion of compare_bf16."""
    _, module_name, routes = MODELS[name]
    with torch_reference_bound(module_name, routes):
        compare_bf16(name, monkeypatch, "cpu")
