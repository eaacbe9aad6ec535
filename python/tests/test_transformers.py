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
on the model's own torch path (asserted: transformers bound its torch
reference, FLA's kernels do not import here), then after enable(model):
the same tokens, logits within TOL (max abs difference, fp32; logits are of
order 0.5 and the linear-attention layer moves them by ~5e-2, see
test_the_comparison_can_fail). The gdn entry points are counted (prefill and
the teacher-forced forward through chunk_*, each decode step through
fused_recurrent_*) and gdn's kernel cache must hold kernels of the layer's
shapes. Skipped only when transformers is not importable."""
import functools
import importlib
import inspect

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


def assert_torch_reference(module_name, function):
    """transformers' use_kernel_func_from_hub_with_fallback wrapper bound its
    torch reference (the function it wraps), not FLA's kernel."""
    fn = getattr(importlib.import_module(module_name), function)
    fn = getattr(fn, "replaced", fn)  # under gdn's router (an earlier test)
    bound = inspect.getclosurevars(fn).nonlocals.get("implementation")
    assert bound is not None and bound is fn.__wrapped__, (
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
    model = build(name)
    for function in routes:
        assert_torch_reference(module_name, function)
    reference = run(model)
    switched = gdn_transformers.enable(model)
    return name, model, reference, switched


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
