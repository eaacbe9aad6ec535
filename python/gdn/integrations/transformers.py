"""Hugging Face transformers (written against 5.17.0): one call switches the
linear-attention layers of a loaded model to gdn's kernels.

    import gdn.integrations.transformers as gdn_transformers
    model = AutoModelForCausalLM.from_pretrained(...)
    gdn_transformers.enable(model)    # returns the number of layers switched

Switched layers: Qwen3-Next's Qwen3NextGatedDeltaNet, Qwen3.5's
Qwen3_5GatedDeltaNet and Qwen3_5MoeGatedDeltaNet (Gated DeltaNet) and Kimi
Linear's KimiLinearDeltaAttention (KDA). In them the modeling code's
recurrent call (decode: T = 1 with a cache) runs
gdn.ops.fused_recurrent_gated_delta_rule / fused_recurrent_kda, and its
chunk call (prefill, or no cache) gdn.ops.chunk_gated_delta_rule /
chunk_kda: the same recurrence, on the tensor-core chunked solve for more
than 16 bf16/f16 tokens (KDA and fp32: token by token;
docs/integrations.md). Projections, the short convolution, the gated RMS
norm and the cache stay the model's own; the cache keeps the state that
gdn returns, float32 [B, HV, K, V], as it keeps FLA's.

How transformers 5.17 picks these kernels: each modeling module defines its
torch reference (torch_chunk_gated_delta_rule and
torch_recurrent_gated_delta_rule; Kimi: chunk_kimi_delta_attention and
recurrent_kimi_delta_attention) under
`use_kernel_func_from_hub_with_fallback(name, "fla")`
(transformers.integrations.hub_kernels). At import it binds FLA's function
of that name when `fla.ops...` imports, else the torch reference (logging
once that it falls back); there is no "fast path available" flag and no
layer attribute such as `self.chunk_gated_delta_rule`: the layer's forward
calls the module-level name, and the wrapper drops keyword arguments the
bound function does not name. transformers' own per-model replacement,
`model.set_use_kernels(True, kernel_config)` -> `kernels.kernelize`, needs
the optional `kernels` package (>= 0.16, < 0.17) and a kernel repository on
the Hub or on disk in kernels' build layout; without `kernels` its
decorators are no-ops.

So `enable(model)`: (1) once per process and modeling module, replaces
those module-level names by a router that calls the function it replaced,
except inside the forward of a switched layer, where it calls gdn's entry
point with the keyword arguments that entry point names (as transformers
filters them for FLA's); (2) brackets the forward of each of the model's
layers with a forward pre-hook and an always-called forward hook (a
per-thread depth counter). Other models, and layers not switched, keep their
kernels; `disable(model)` removes the hooks.

gdn's ops have no backward pass yet: a switched layer raises
NotImplementedError when autograd would record it (run under torch.no_grad()
or torch.inference_mode(), as generate() does), never a silent drop of the
gradient. Arguments gdn cannot honour raise NotImplementedError naming them
(docs/anchors.md); the modeling code of the models above passes none.
"""
import contextvars
import functools
import inspect
import sys

import torch

from .. import ops

_GDN = {"torch_chunk_gated_delta_rule": "chunk_gated_delta_rule",
        "torch_recurrent_gated_delta_rule": "fused_recurrent_gated_delta_rule"}
_KDA = {"chunk_kimi_delta_attention": "chunk_kda",
        "recurrent_kimi_delta_attention": "fused_recurrent_kda"}

# (module, class) of each layer gdn switches -> {module-level name its
# forward calls: the gdn.ops entry point that replaces it}.
_LAYERS = {
    ("transformers.models.qwen3_next.modeling_qwen3_next", "Qwen3NextGatedDeltaNet"): _GDN,
    ("transformers.models.qwen3_5.modeling_qwen3_5", "Qwen3_5GatedDeltaNet"): _GDN,
    ("transformers.models.qwen3_5_moe.modeling_qwen3_5_moe", "Qwen3_5MoeGatedDeltaNet"): _GDN,
    ("transformers.models.kimi_linear.modeling_kimi_linear", "KimiLinearDeltaAttention"): _KDA,
}
MODEL_TYPES = ("qwen3_next", "qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text",
               "kimi_linear")

# > 0 while a switched layer's forward runs in this thread (or asyncio task).
_depth = contextvars.ContextVar("gdn_transformers_depth", default=0)


def _enter(layer, args):
    _depth.set(_depth.get() + 1)


def _leave(layer, args, output):
    # always_call: also when the forward raised. max(): an exception in an
    # earlier pre-hook skips _enter but not _leave.
    _depth.set(max(_depth.get() - 1, 0))


def _requires_grad(args, kwargs):
    return torch.is_grad_enabled() and any(
        isinstance(t, torch.Tensor) and t.requires_grad for t in (*args, *kwargs.values()))


class _Router:
    """Stands in for one module-level kernel function of a modeling module:
    outside a switched layer's forward it calls `replaced` (the function it
    replaced, transformers' wrapper) unchanged; inside, gdn.ops.<gdn_name>,
    looked up at each call, with the keyword arguments that function names
    (transformers' wrapper filters them the same way for FLA)."""

    def __init__(self, replaced, gdn_name):
        functools.update_wrapper(self, replaced, updated=())  # name, doc, __wrapped__
        self.replaced = replaced
        self.gdn_name = gdn_name

    def __call__(self, *args, **kwargs):
        if _depth.get() == 0:
            return self.replaced(*args, **kwargs)
        if _requires_grad(args, kwargs):
            raise NotImplementedError(
                f"gdn: {self.gdn_name} has no backward pass yet; run the model under "
                "torch.no_grad() or torch.inference_mode() (generate() does), or "
                "gdn.integrations.transformers.disable(model) to train")
        fn = getattr(ops, self.gdn_name)
        return fn(*args, **{k: v for k, v in kwargs.items() if k in _named_parameters(fn)})


@functools.lru_cache(maxsize=None)
def _named_parameters(fn):
    return frozenset(p.name for p in inspect.signature(fn).parameters.values()
                     if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD))


def _transformers_version():
    return getattr(sys.modules.get("transformers"), "__version__", "unknown")


def _route(module_name, names):
    """Installs a _Router for each name of the modeling module (once)."""
    module = sys.modules[module_name]
    for name, gdn_name in names.items():
        current = getattr(module, name, None)
        if isinstance(current, _Router):
            continue
        if not callable(current):
            raise RuntimeError(
                f"gdn: {module_name} has no function {name} (transformers "
                f"{_transformers_version()}); gdn.integrations.transformers follows the "
                "modeling code of transformers 5.17.0")
        setattr(module, name, _Router(current, gdn_name))


def _layers(model):
    """[(layer, its table entry)] of the model's layers that gdn switches
    (subclasses too)."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    found = []
    for module in model.modules():
        for cls in type(module).__mro__:
            key = (cls.__module__, cls.__name__)
            if key in _LAYERS:
                found.append((module, key))
                break
    return found


def _is_switched(layer):
    return any(h is _enter for h in layer._forward_pre_hooks.values())


def enable(model):
    """Switches the Gated DeltaNet / KDA layers of `model` (a loaded
    transformers model of type qwen3_next, qwen3_5, qwen3_5_moe or
    kimi_linear, or any module that contains such layers) to gdn's kernels.
    Idempotent; returns the number of the model's layers that now run on
    gdn. ValueError naming the model type when it has none; RuntimeError
    when the modeling code lacks a function this module replaces (another
    transformers version)."""
    layers = _layers(model)
    if not layers:
        config = getattr(model, "config", None)
        model_type = getattr(config, "model_type", None)
        raise ValueError(
            f"gdn: model type {model_type!r} ({type(model).__name__}) has no Gated DeltaNet or "
            f"KDA layer that gdn can switch; supported model types: {', '.join(MODEL_TYPES)}")
    for key in {key for _, key in layers}:
        _route(key[0], _LAYERS[key])
    for layer, _ in layers:
        if not _is_switched(layer):
            layer.register_forward_pre_hook(_enter, prepend=True)
            layer.register_forward_hook(_leave, always_call=True)
    return len(layers)


def disable(model):
    """Switches the model's layers back to the kernels transformers bound
    (the module-level routers stay and pass their calls through). Returns
    the number of layers switched back."""
    count = 0
    for layer, _ in _layers(model):
        if not _is_switched(layer):
            continue
        # torch has no public way to find a hook's handle again: drop the
        # entries (and the always-call mark) of _enter and _leave.
        for hid in [h for h, fn in layer._forward_pre_hooks.items() if fn is _enter]:
            del layer._forward_pre_hooks[hid]
        for hid in [h for h, fn in layer._forward_hooks.items() if fn is _leave]:
            del layer._forward_hooks[hid]
            layer._forward_hooks_always_called.pop(hid, None)
        count += 1
    return count
