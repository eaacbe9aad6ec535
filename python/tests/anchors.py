"""Shared helper of the GPU tests that compare gdn with the anchors' own
kernels: the anchors' modules imported as packages (from site-packages or
PYTHONPATH; scripts/h200-python.sh puts the site scripts/anchor-site.sh
builds there), or a skip whose reason names the module that is missing.
Other failures while importing an anchor are errors, not skips."""
import importlib

import pytest

# SGLang 0.5.23's Triton kernel of fused_sigmoid_gating_delta_rule_update
# (until 0.5.10: sglang/srt/layers/attention/fla/fused_sigmoid_gating_recurrent.py).
SGLANG_KERNELS = "sglang.kernels.ops.attention.linear.fused_sigmoid_gating_recurrent"


def import_or_skip(module):
    """The module, or a skip naming the module that could not be imported."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        missing = getattr(e, "name", None)
        what = f"module {missing!r} is missing" if missing else f"{type(e).__name__}: {e}"
        pytest.skip(f"cannot import {module}: {what}")


def sglang_kernels():
    """SGLang's Triton kernel module (fused_sigmoid_gating_delta_rule_update)."""
    return import_or_skip(SGLANG_KERNELS)


def fla_ops(name):
    """fla.ops.<name> of fla-core (e.g. "gated_delta_rule")."""
    return import_or_skip("fla.ops." + name)
