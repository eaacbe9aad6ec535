"""Strided operands (issue 19, item 1): the views real clients pass reach the
kernels in place, with no copy, and give the dense result.

- The host's mirror of the op's layout rules (gdn.ops._checks._view_strides)
  agrees with the verifier (include/gdn/Dialect/GDN/IR/OperandLayouts.h) on
  legal and illegal strides.
- q, k, v as views of SGLang's mixed_qkv, a and b as views of a packed `ba`,
  and a pool whose slots are views of a larger per-slot record: the kernel
  is compiled for those strides (its cache key says so), the result equals
  the dense call bit for bit on the CPU, and the record's other bytes are
  untouched.
"""
import itertools

import numpy as np
import pytest

import gdn

torch = pytest.importorskip("torch")
import gdn.ops as ops  # noqa: E402
from gdn.ops._checks import _view_strides  # noqa: E402

cuda_ok = torch.cuda.is_available()
DEVICES = ["cpu"] + (["cuda"] if cuda_ok else [])


def _strided_tensor(shape, strides, dtype=torch.float32):
    span = 1 + sum((n - 1) * s for n, s in zip(shape, strides))
    return torch.zeros(span, dtype=dtype).as_strided(shape, strides)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_host_rule_mirrors_the_verifier(dtype):
    """For q [N, T, H, K] ("tokens") and a pool [slots, HV, V, K] ("slots")
    with strides drawn around the legal ones, the host accepts exactly what
    the verifier accepts (a compile that succeeds, or fails naming the
    operand's layout)."""
    N, T, H, HV, K, V = 2, 3, 2, 4, 32, 16
    c = gdn.Compiler()
    name = {torch.float32: "float32", torch.bfloat16: "bfloat16"}[dtype]
    base = dict(N=N, T=T, H=H, HV=HV, K=K, V=V, input_dtype=name, layout="vk",
                initial_state=True, final_state=True, state_in_place=True,
                num_slots=3, state_dtype=name)
    token_cases = [(T * 200, 200, K, 1), (T * 192, 192, K, 1), (T * 196, 196, K, 1),
                   (T * 200, 200, K + 2, 1), (T * 200, 200, K, 2), (0, 200, K, 1),
                   (T * 200, 200, 40, 1)]
    slot = HV * V * K
    pool_cases = [slot + 64, slot + 4, slot, slot - 8, 2 * slot]
    def agree(t, layout, operand, **strides):
        """Whether the host's rule and the verifier agree on t's layout."""
        host = _view_strides(t, layout) is not False
        try:
            c.compile(**base, **strides)
            compiled = True
        except gdn.GDNError as e:
            assert f"operand '{operand}' has an unsupported layout" in str(e), str(e)
            compiled = False
        assert host == compiled, (strides, host, compiled)
        return host

    seen = {agree(_strided_tensor((N, T, H, K), s, dtype), "tokens", "q", q_strides=s)
            for s in token_cases}
    seen |= {agree(_strided_tensor((3, HV, V, K), (p, V * K, K, 1), dtype), "slots",
                   "initial_state", state_slot_stride=p) for p in pool_cases}
    assert seen == {True, False}


def _compiled_with(field):
    """Whether a kernel in gdn.ops' cache was compiled with `field` (e.g.
    q_strides) set."""
    return any(isinstance(item, tuple) and len(item) == 2 and item[0] == field
               for key in ops._kernels for item in key)


@pytest.mark.parametrize("device", DEVICES)
def test_sglang_views_run_in_place(device):
    """SGLang's decode layout: mixed_qkv [N, 2 H K + HV V] split into q, k, v
    views, a and b views of a packed [N, 2 HV], and a bf16 pool of slots
    that are views of a per-slot record [slots, HV * V * K + 512]. Equal to
    the dense call bit for bit (CPU), the views compiled into the kernel,
    the record's bytes beside the pool untouched."""
    N, H, HV, K, V, slots = 3, 2, 8, 32, 16, 5  # b starts 16 bytes into ba
    g = torch.Generator().manual_seed(7)
    r = lambda *s: torch.randn(*s, generator=g)
    D = 2 * H * K + HV * V
    mixed = r(N, D).to(torch.bfloat16).to(device)
    ba = r(N, 2 * HV).to(torch.bfloat16).to(device)
    A_log = torch.log(torch.rand(HV, generator=g) * 15 + 1).to(device)
    dt_bias = r(HV).to(device)
    record = r(slots, HV * V * K + 512).to(torch.bfloat16).to(device)
    pool = record[:, :HV * V * K].view(slots, HV, V, K)
    assert not pool.is_contiguous() and _view_strides(pool, "slots")
    q, k, v = (t.view(N, 1, -1, d) for t, d in
               zip(torch.split(mixed, [H * K, H * K, HV * V], dim=-1), (K, K, V)))
    a, b = ba[:, :HV], ba[:, HV:]
    idx = torch.tensor([3, -1, 0], dtype=torch.int32, device=device)
    dense_pool = pool.contiguous()
    beside = record[:, HV * V * K:].clone()
    ops._kernels.clear()
    common = dict(softplus_beta=1.0, softplus_threshold=20.0, initial_state_indices=idx,
                  use_qk_l2norm_in_kernel=True)
    o = ops.fused_sigmoid_gating_delta_rule_update(
        A_log, a, dt_bias, q=q, k=k, v=v, b=b, initial_state_source=pool, **common)
    for field in ("q_strides", "k_strides", "v_strides", "gate_strides", "beta_strides",
                  "state_slot_stride"):
        assert _compiled_with(field), field
    o_dense = ops.fused_sigmoid_gating_delta_rule_update(
        A_log, a.contiguous(), dt_bias, q=q.contiguous(), k=k.contiguous(),
        v=v.contiguous(), b=b.contiguous(), initial_state_source=dense_pool, **common)
    tol = dict(rtol=0, atol=0) if device == "cpu" else dict(rtol=0, atol=1e-2)
    torch.testing.assert_close(o, o_dense, **tol)
    torch.testing.assert_close(pool, dense_pool, **tol)
    assert torch.equal(record[:, HV * V * K:], beside)


@pytest.mark.parametrize("device", DEVICES)
def test_commit_pitched_buffers(device):
    """gdn.commit with a pool and a verify buffer whose slots and rows are
    views of larger records: the accepted step lands in the slot, the
    records' other bytes stay."""
    R, T, HV, V, K, slots = 3, 4, 2, 8, 16, 4
    g = torch.Generator().manual_seed(3)
    buf_rec = torch.randn(R, T * HV * V * K + 64, generator=g).to(device)
    pool_rec = torch.randn(slots, HV * V * K + 32, generator=g).to(device)
    buf = buf_rec[:, :T * HV * V * K].view(R, T, HV, V, K)
    pool = pool_rec[:, :HV * V * K].view(slots, HV, V, K)
    before = pool_rec.clone()
    accepted = torch.tensor([2, 0, 4], dtype=torch.int32, device=device)
    idx = torch.tensor([1, 2, 3], dtype=torch.int32, device=device)
    ops.commit_accepted(buf, accepted, pool, state_indices=idx)
    assert torch.equal(pool[1], buf[0, 1]) and torch.equal(pool[3], buf[2, 3])
    assert torch.equal(pool[2], before[2, :HV * V * K].view(HV, V, K))
    assert torch.equal(pool_rec[:, HV * V * K:], before[:, HV * V * K:])


def test_inputs_that_require_grad_are_refused():
    """No backward pass yet: an input that requires grad (with grad enabled)
    is a NotImplementedError naming it, not an output that silently drops
    the gradient; under torch.no_grad() the call runs."""
    q = torch.randn(1, 3, 2, 16, requires_grad=True)
    k, v = torch.randn(1, 3, 2, 16), torch.randn(1, 3, 2, 16)
    g, beta = -torch.rand(1, 3, 2), torch.rand(1, 3, 2)
    for f in (ops.fused_recurrent_gated_delta_rule, ops.chunk_gated_delta_rule):
        with pytest.raises(NotImplementedError, match="argument 'q' requires grad"):
            f(q, k, v, g=g, beta=beta)
        with torch.no_grad():
            o, _ = f(q, k, v, g=g, beta=beta)
        assert not o.requires_grad
