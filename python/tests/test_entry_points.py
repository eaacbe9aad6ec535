"""The anchors' semantics of gdn's entry points (issue 19, item 2), on the CPU
against the fp64 reference: FLA ignores unknown keywords; strided q/k/v views
(slices of a fused projection) give the result of contiguous tensors; SGLang's
2-D a/b; initial_state_source=None; SGLang's buffer addressing; FlashInfer's
gated_delta_rule_mtp returning (output, initial_state) with the pool updated
in place; SGLang's packed decode equal to the unpacked call; FlashInfer's
K-major gated_delta_rule_decode equal to the pretranspose one on transposed
states; FLA's fused_recurrent_kda; NotImplementedError naming every argument
gdn cannot honour. docs/anchors.md lists the arguments these cover."""
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gdn.ops as ops  # noqa: E402
from reference import recurrent, rms_rel  # noqa: E402

NAN = float("nan")
cuda_ok = torch.cuda.is_available()
DEVICES = ["cpu"] + (["cuda"] if cuda_ok else [])


def same(x, y):
    """Bit for bit on the CPU; on the GPU two calls that compile different
    kernels (another schedule) may round differently: 1e-5 there."""
    if x.device.type == "cpu":
        return torch.equal(x, y)
    return torch.allclose(x, y, rtol=0, atol=1e-5)


def np64(t):
    return t.detach().double().cpu().numpy()


def gen(seed):
    g = torch.Generator().manual_seed(seed)
    return lambda *s: torch.randn(*s, generator=g)


def gdn_inputs(N, T, H=1, HV=2, K=32, V=16, seed=0, dtype=torch.float32, device="cpu"):
    """q, k, v, fused gating a, b [N, T, HV], A_log, dt_bias [HV] (fp32),
    log-space g, beta in (0, 1), a vk pool of N + 2 slots, on `device`."""
    r = gen(seed)
    x = dict(q=r(N, T, H, K), k=r(N, T, H, K), v=r(N, T, HV, V), a=r(N, T, HV), b=r(N, T, HV),
             g=torch.log(torch.rand(N, T, HV) * 0.5 + 0.5), beta=torch.rand(N, T, HV),
             pool=r(N + 2, HV, V, K))
    x = {n: t.to(dtype) if n in ("q", "k", "v", "a", "b", "g", "beta") else t for n, t in x.items()}
    x["A_log"] = torch.log(torch.rand(HV) * 15 + 1)
    x["dt_bias"] = r(HV)
    return {n: t.to(device) for n, t in x.items()}


def ref_fused(x, idx_rows=None, state=None, layout="vk", qk_l2norm=True, **kw):
    """The reference for fused gating on rows idx_rows (all) from `state`."""
    rows = slice(None) if idx_rows is None else idx_rows
    return recurrent(np64(x["q"][rows]), np64(x["k"][rows]), np64(x["v"][rows]),
                     a=np64(x["a"][rows]), A_log=np64(x["A_log"]), dt_bias=np64(x["dt_bias"]),
                     b=np64(x["b"][rows]), initial_state=None if state is None else np64(state),
                     qk_l2norm=qk_l2norm, layout=layout, **kw)


def packed_views(q, k, v):
    """q, k, v as SGLang and Hugging Face models pass them: views of one fused
    projection [B, T, 2 H K + HV V] (strided along T and B)."""
    B, T, H, K = q.shape
    HV, V = v.shape[2:]
    mixed = torch.cat([q.reshape(B, T, H * K), k.reshape(B, T, H * K),
                       v.reshape(B, T, HV * V)], dim=-1)
    qv, kv, vv = torch.split(mixed, [H * K, H * K, HV * V], dim=-1)
    views = qv.view(B, T, H, K), kv.view(B, T, H, K), vv.view(B, T, HV, V)
    assert not any(t.is_contiguous() for t in views)
    return views


# ---------------------------------------------------------------------------
# FLA: unknown keywords, strided views, dtypes, defaults
# ---------------------------------------------------------------------------

def test_fla_unknown_keywords_are_ignored():
    """Hugging Face transformers passes use_cache=..., output_router_logits=...:
    FLA ignores them, and so does gdn (both FLA entry points)."""
    x = gdn_inputs(2, 3, seed=1)
    h0 = gen(2)(2, 2, 32, 16)
    args = (x["q"], x["k"], x["v"])
    o, ht = ops.fused_recurrent_gated_delta_rule(*args, g=x["g"], beta=x["beta"],
                                                 initial_state=h0, output_final_state=True)
    o2, ht2 = ops.fused_recurrent_gated_delta_rule(*args, g=x["g"], beta=x["beta"],
                                                   initial_state=h0, output_final_state=True,
                                                   use_cache=True, output_router_logits=False,
                                                   head_first=False)
    assert torch.equal(o, o2) and torch.equal(ht, ht2)
    gk = x["g"][..., None].expand(2, 3, 2, 32).contiguous()
    o3, _ = ops.fused_recurrent_kda(*args, gk, x["beta"], use_cache=True, foo=object())
    o4, _ = ops.fused_recurrent_kda(*args, gk, x["beta"])
    assert torch.equal(o3, o4)


def test_fla_transpose_state_layout_is_the_deprecated_alias():
    x = gdn_inputs(1, 2, seed=3)
    h0 = gen(4)(1, 2, 16, 32)  # [N, HV, V, K]
    kw = dict(g=x["g"], beta=x["beta"], initial_state=h0, output_final_state=True)
    with pytest.warns(DeprecationWarning, match="transpose_state_layout"):
        o, ht = ops.fused_recurrent_gated_delta_rule(x["q"], x["k"], x["v"],
                                                     transpose_state_layout=True, **kw)
    o2, ht2 = ops.fused_recurrent_gated_delta_rule(x["q"], x["k"], x["v"], state_v_first=True,
                                                   **kw)
    assert torch.equal(o, o2) and torch.equal(ht, ht2)
    with pytest.raises(ValueError, match="transpose_state_layout"):
        ops.fused_recurrent_gated_delta_rule(x["q"], x["k"], x["v"], state_v_first=True,
                                             transpose_state_layout=True, **kw)


@pytest.mark.parametrize("device", DEVICES)
def test_fla_strided_views_equal_contiguous_and_are_not_written(device):
    """q, k, v views of a fused projection, a strided g, beta and A_log /
    dt_bias and a strided initial state give exactly the contiguous result;
    the views are left as they were."""
    N, T, H, HV, K, V = 2, 3, 2, 4, 32, 16
    x = gdn_inputs(N, T, H, HV, K, V, seed=5, device=device)
    qv, kv, vv = packed_views(x["q"], x["k"], x["v"])
    before = [t.clone() for t in (qv, kv, vv)]
    gw = torch.stack([x["a"], x["a"]], dim=-1)[..., 0]  # a strided view of the raw gate
    bw = torch.stack([x["beta"], x["beta"]], dim=-1)[..., 1]
    assert not gw.is_contiguous() and not bw.is_contiguous()
    h0 = gen(6)(N, HV, V, K).to(device).transpose(2, 3)  # [N, HV, K, V], strided
    A2 = torch.stack([x["A_log"], x["A_log"]], -1)[:, 0]
    D2 = torch.stack([x["dt_bias"], x["dt_bias"]], -1)[:, 1]
    kw = dict(use_gate_in_kernel=True, initial_state=h0, output_final_state=True,
              use_qk_l2norm_in_kernel=True)
    o, ht = ops.fused_recurrent_gated_delta_rule(qv, kv, vv, g=gw, beta=bw, A_log=A2,
                                                 dt_bias=D2, **kw)
    kw["initial_state"] = h0.contiguous()
    o_c, ht_c = ops.fused_recurrent_gated_delta_rule(x["q"], x["k"], x["v"], g=x["a"],
                                                     beta=x["beta"], A_log=x["A_log"],
                                                     dt_bias=x["dt_bias"], **kw)
    assert torch.equal(o, o_c) and torch.equal(ht, ht_c)  # one kernel: bit for bit
    for t, t0 in zip((qv, kv, vv), before):
        assert torch.equal(t, t0)
    ro, rs = recurrent(np64(x["q"]), np64(x["k"]), np64(x["v"]), a=np64(x["a"]),
                       A_log=np64(x["A_log"]), dt_bias=np64(x["dt_bias"]), beta=np64(x["beta"]),
                       initial_state=np64(h0), qk_l2norm=True)
    assert rms_rel(np64(o), ro) < 1e-5 and rms_rel(np64(ht), rs) < 1e-5


def test_fla_strided_cu_seqlens_is_copied():
    x = gdn_inputs(1, 5, seed=7)
    cu = torch.tensor([0, 0, 2, 2, 5, 5], dtype=torch.int64)[::2]  # [0, 2, 5], strided
    assert not cu.is_contiguous()
    o, ht = ops.fused_recurrent_gated_delta_rule(x["q"], x["k"], x["v"], g=x["g"],
                                                 beta=x["beta"], cu_seqlens=cu,
                                                 output_final_state=True)
    o2, ht2 = ops.fused_recurrent_gated_delta_rule(x["q"], x["k"], x["v"], g=x["g"],
                                                   beta=x["beta"], cu_seqlens=cu.contiguous(),
                                                   output_final_state=True)
    assert torch.equal(o, o2) and torch.equal(ht, ht2) and ht.shape[0] == 2


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_fla_gating_parameters_in_half_precision(dtype):
    """A_log / dt_bias in bf16 or fp16 are accepted (FLA's kernel converts on
    load): the result of their float32 values; without dt_bias, no bias."""
    x = gdn_inputs(2, 2, seed=8)
    A, D = x["A_log"].to(dtype), x["dt_bias"].to(dtype)
    kw = dict(g=x["a"], beta=x["beta"], use_gate_in_kernel=True, output_final_state=True)
    o, ht = ops.fused_recurrent_gated_delta_rule(x["q"], x["k"], x["v"], A_log=A, dt_bias=D, **kw)
    o2, ht2 = ops.fused_recurrent_gated_delta_rule(x["q"], x["k"], x["v"], A_log=A.float(),
                                                   dt_bias=D.float(), **kw)
    assert torch.equal(o, o2) and torch.equal(ht, ht2)
    o3, _ = ops.fused_recurrent_gated_delta_rule(x["q"], x["k"], x["v"], A_log=x["A_log"], **kw)
    ro, _ = recurrent(np64(x["q"]), np64(x["k"]), np64(x["v"]), a=np64(x["a"]),
                      A_log=np64(x["A_log"]), dt_bias=np.zeros(2), beta=np64(x["beta"]))
    assert rms_rel(np64(o3), ro) < 1e-5


def test_fla_ignores_A_log_and_dt_bias_without_use_gate_in_kernel():
    x = gdn_inputs(1, 2, seed=9)
    o, _ = ops.fused_recurrent_gated_delta_rule(x["q"], x["k"], x["v"], g=x["g"], beta=x["beta"])
    o2, _ = ops.fused_recurrent_gated_delta_rule(x["q"], x["k"], x["v"], g=x["g"], beta=x["beta"],
                                                 A_log=torch.zeros(7, dtype=torch.float64),
                                                 dt_bias="not a tensor")
    assert torch.equal(o, o2)


def test_fla_beta_none_with_sigmoid_is_sigmoid_of_one():
    """FLA fills a missing beta with ones; with use_beta_sigmoid_in_kernel
    they are logits: beta = sigmoid(1) (2 sigmoid(1) with allow_neg_eigval)."""
    x = gdn_inputs(2, 3, H=2, HV=2, seed=10)
    for neg in (False, True):
        o, _ = ops.fused_recurrent_gated_delta_rule(x["q"], x["k"], x["v"], g=x["g"],
                                                    use_beta_sigmoid_in_kernel=True,
                                                    allow_neg_eigval=neg)
        ro, _ = recurrent(np64(x["q"]), np64(x["k"]), np64(x["v"]), g=np64(x["g"]),
                          b=np.ones((2, 3, 2)), allow_neg_eigval=neg)
        assert rms_rel(np64(o), ro) < 1e-5
    o, _ = ops.fused_recurrent_gated_delta_rule(x["q"], x["k"], x["v"], g=x["g"])
    ro, _ = recurrent(np64(x["q"]), np64(x["k"]), np64(x["v"]), g=np64(x["g"]))
    assert rms_rel(np64(o), ro) < 1e-5


# ---------------------------------------------------------------------------
# FLA: fused_recurrent_kda
# ---------------------------------------------------------------------------

def kda_inputs(N, T, H=2, HV=4, K=32, V=16, seed=0, device="cpu"):
    r = gen(seed)
    x = dict(q=r(N, T, H, K), k=r(N, T, H, K), v=r(N, T, HV, V),
                gk=torch.log(torch.rand(N, T, HV, K) * 0.5 + 0.5), a=r(N, T, HV, K),
                beta=torch.rand(N, T, HV), bc=r(N, T, HV, V),
                A_log=torch.log(torch.rand(HV) * 15 + 1), dt_bias=r(HV * K),
                h0=r(N, HV, K, V))
    return {n: t.to(device) for n, t in x.items()}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("state_v_first", [False, True])
def test_fused_recurrent_kda_log_space_matches_reference(device, state_v_first):
    x = kda_inputs(2, 3, seed=11, device=device)
    h0 = x["h0"].transpose(2, 3).contiguous() if state_v_first else x["h0"]
    keep = h0.clone()
    o, ht = ops.fused_recurrent_kda(x["q"], x["k"], x["v"], x["gk"], x["beta"], initial_state=h0,
                                    output_final_state=True, use_qk_l2norm_in_kernel=True,
                                    state_v_first=state_v_first)
    assert torch.equal(h0, keep), "FLA never writes initial_state"
    ro, rs = recurrent(np64(x["q"]), np64(x["k"]), np64(x["v"]), g=np64(x["gk"]),
                       beta=np64(x["beta"]), initial_state=np64(x["h0"]), qk_l2norm=True)
    if state_v_first:
        rs = rs.transpose(0, 1, 3, 2)
    assert ht.dtype == torch.float32 and o.dtype == x["v"].dtype
    assert rms_rel(np64(o), ro) < 1e-5 and rms_rel(np64(ht), rs) < 1e-5
    # Negative control: a per-head decay (gk's mean) misses.
    wo, _ = recurrent(np64(x["q"]), np64(x["k"]), np64(x["v"]), g=np64(x["gk"]).mean(-1),
                      beta=np64(x["beta"]), initial_state=np64(x["h0"]), qk_l2norm=True)
    assert rms_rel(np64(o), wo) > 1e-2
    o2, ht2 = ops.fused_recurrent_kda(x["q"], x["k"], x["v"], x["gk"], x["beta"])
    assert ht2 is None


@pytest.mark.parametrize("A_log_given,dt_bias_given", [(True, True), (False, True),
                                                       (True, False)])
def test_fused_recurrent_kda_gate_in_kernel_matches_reference(A_log_given, dt_bias_given):
    """use_gate_in_kernel: g = -exp(A_log) softplus(g + dt_bias) per key
    channel; A_log None is FLA's constant 1.0, dt_bias None no bias; per value
    channel beta logits."""
    x = kda_inputs(2, 2, seed=12)
    kw = dict(use_gate_in_kernel=True, use_beta_sigmoid_in_kernel=True, output_final_state=True,
              initial_state=x["h0"])
    if A_log_given:
        kw["A_log"] = x["A_log"]
    if dt_bias_given:
        kw["dt_bias"] = x["dt_bias"].view(4, 32) if A_log_given else x["dt_bias"]
    o, ht = ops.fused_recurrent_kda(x["q"], x["k"], x["v"], x["a"], x["bc"], **kw)
    ro, rs = recurrent(np64(x["q"]), np64(x["k"]), np64(x["v"]), a=np64(x["a"]),
                       A_log=np64(x["A_log"]) if A_log_given else np.ones(4),
                       dt_bias=np64(x["dt_bias"]) if dt_bias_given else np.zeros(4 * 32),
                       b=np64(x["bc"]), initial_state=np64(x["h0"]))
    assert rms_rel(np64(o), ro) < 1e-5 and rms_rel(np64(ht), rs) < 1e-5


@pytest.mark.parametrize("device", DEVICES)
def test_fused_recurrent_kda_varlen_output_starts_at_zero(device):
    """FLA's KDA output is zero-initialised: packed tokens past the last
    sequence are 0 (GDN's is not: FLA's torch.empty_like)."""
    x = kda_inputs(1, 6, seed=13, device=device)
    cu = torch.tensor([0, 2, 4], dtype=torch.int32, device=device)  # tokens 4, 5 belong to no sequence
    h0 = x["h0"].expand(2, -1, -1, -1).contiguous()
    o, ht = ops.fused_recurrent_kda(x["q"], x["k"], x["v"], x["gk"], x["beta"], initial_state=h0,
                                    output_final_state=True, cu_seqlens=cu)
    assert torch.count_nonzero(o[:, 4:]) == 0 and torch.count_nonzero(o[:, :4]) > 0
    for n, (lo, hi) in enumerate(((0, 2), (2, 4))):
        ro, rs = recurrent(np64(x["q"][:, lo:hi]), np64(x["k"][:, lo:hi]),
                           np64(x["v"][:, lo:hi]), g=np64(x["gk"][:, lo:hi]),
                           beta=np64(x["beta"][:, lo:hi]), initial_state=np64(h0[n:n + 1]))
        assert rms_rel(np64(o[:, lo:hi]), ro) < 1e-5
        assert rms_rel(np64(ht[n:n + 1]), rs) < 1e-5


def test_fused_recurrent_kda_lower_bound():
    x = kda_inputs(1, 1, seed=14)
    with pytest.raises(NotImplementedError, match="'lower_bound'"):
        ops.fused_recurrent_kda(x["q"], x["k"], x["v"], x["a"], x["beta"], A_log=x["A_log"],
                                use_gate_in_kernel=True, lower_bound=-5.0)
    # Without use_gate_in_kernel FLA's kernel never reads it.
    o, _ = ops.fused_recurrent_kda(x["q"], x["k"], x["v"], x["gk"], x["beta"], lower_bound=-5.0)
    o2, _ = ops.fused_recurrent_kda(x["q"], x["k"], x["v"], x["gk"], x["beta"])
    assert torch.equal(o, o2)
    with pytest.raises(ValueError, match="use_beta_sigmoid_in_kernel"):
        ops.fused_recurrent_kda(x["q"], x["k"], x["v"], x["gk"], x["beta"], allow_neg_eigval=True)


# ---------------------------------------------------------------------------
# SGLang: fused_sigmoid_gating_delta_rule_update
# ---------------------------------------------------------------------------

def sglang(x, pool, idx, a=None, b=None, q=None, k=None, v=None, **kw):
    return ops.fused_sigmoid_gating_delta_rule_update(
        x["A_log"], x["a"] if a is None else a, x["dt_bias"], 1.0, 20.0,
        x["q"] if q is None else q, x["k"] if k is None else k, x["v"] if v is None else v,
        x["b"] if b is None else b, pool, idx, use_qk_l2norm_in_kernel=True, **kw)


@pytest.mark.parametrize("device", DEVICES)
def test_sglang_2d_a_b_and_packed_qkv_views_equal_the_4d_call(device):
    """SGLang 0.5.23's decode passes q, k, v as [1, N, H, K] views of the
    conv output, a and b as [N, HV], with cu_seqlens = 0..N."""
    N, H, HV, K, V = 3, 2, 4, 32, 16
    x = gdn_inputs(N, 1, H, HV, K, V, seed=20, device=device)
    idx = torch.tensor([4, -1, 0], dtype=torch.int32, device=device)
    pool_ref = x["pool"].clone()
    o_ref = sglang(x, pool_ref, idx)
    flat = lambda t: t.reshape(1, N, *t.shape[2:])  # [N, 1, ...] -> [1, N, ...]
    qv, kv, vv = packed_views(flat(x["q"]), flat(x["k"]), flat(x["v"]))
    pool = x["pool"].clone()
    cu = torch.arange(N + 1, dtype=torch.int32, device=device)
    o = sglang(x, pool, idx, a=x["a"].reshape(N, HV), b=x["b"].reshape(N, HV), q=qv, k=kv, v=vv,
               cu_seqlens=cu)
    assert o.shape == (1, N, HV, V)
    assert same(o.reshape(N, 1, HV, V), o_ref) and same(pool, pool_ref)
    # Without cu_seqlens: [B * T, HV] with T > 1.
    x = gdn_inputs(2, 3, H, HV, K, V, seed=21, device=device)
    idx = torch.tensor([1, 3], dtype=torch.int64, device=device)
    p1, p2 = x["pool"].clone(), x["pool"].clone()
    o1 = sglang(x, p1, idx)
    o2 = sglang(x, p2, idx, a=x["a"].reshape(6, HV), b=x["b"].reshape(6, HV))
    assert torch.equal(o1, o2) and torch.equal(p1, p2)  # one kernel
    ro, rs = ref_fused(x, state=x["pool"][[1, 3]])
    assert rms_rel(np64(o1), ro) < 1e-5 and rms_rel(np64(p1[[1, 3]]), rs) < 1e-5


def test_sglang_kda_2d_a_and_kimi_A_log():
    """Kimi Linear's KDA decode: a [N * T, HV * K] (2-D), A_log [1, 1, HV, 1],
    b [1, N, HV], lower_bound=None."""
    N, H, HV, K, V = 2, 2, 2, 32, 16
    r = gen(22)
    q, k, v = r(1, N, H, K), r(1, N, H, K), r(1, N, HV, V)
    a, b = r(1, N, HV, K), r(1, N, HV)
    A_log, dt_bias = torch.log(torch.rand(HV) * 15 + 1), r(HV * K)
    pool = r(3, HV, V, K)
    p0 = pool.clone()
    idx = torch.tensor([2, 0], dtype=torch.int32)
    cu = torch.arange(N + 1, dtype=torch.int32)
    o = ops.fused_sigmoid_gating_delta_rule_update(
        A_log.view(1, 1, HV, 1), a.reshape(N, HV * K), dt_bias, 1.0, 20.0, q, k, v, b, pool, idx,
        use_qk_l2norm_in_kernel=True, cu_seqlens=cu, is_kda=True, lower_bound=None)
    ro, rs = recurrent(np64(q).reshape(N, 1, H, K), np64(k).reshape(N, 1, H, K),
                       np64(v).reshape(N, 1, HV, V), a=np64(a).reshape(N, 1, HV, K),
                       A_log=np64(A_log), dt_bias=np64(dt_bias), b=np64(b).reshape(N, 1, HV),
                       initial_state=np64(p0[[2, 0]]), qk_l2norm=True, layout="vk")
    assert rms_rel(np64(o).reshape(N, 1, HV, V), ro) < 1e-5
    assert rms_rel(np64(pool[[2, 0]]), rs) < 1e-5 and torch.equal(pool[1], p0[1])


def test_sglang_without_initial_state_source_starts_from_zeros():
    """initial_state_source=None (SGLang: USE_INITIAL_STATE off): every row
    from a zero state, nothing written, the indices not read; a verify buffer
    still receives the states."""
    x = gdn_inputs(2, 3, seed=23)
    o = sglang(x, None, None)
    ro, _ = ref_fused(x)
    assert rms_rel(np64(o), ro) < 1e-5
    inter = torch.full((2, 3, 2, 16, 32), NAN)
    o2 = sglang(x, None, torch.tensor([-1, -1], dtype=torch.int32), disable_state_update=True,
                intermediate_states_buffer=inter,
                intermediate_state_indices=torch.tensor([1, 0], dtype=torch.int32))
    assert torch.equal(o, o2)
    _, rs = ref_fused(x)
    assert rms_rel(np64(inter[[1, 0], -1]), rs) < 1e-5


@pytest.mark.parametrize("device", DEVICES)
def test_sglang_buffer_with_more_steps_than_tokens(device):
    """SGLang addresses the buffer by its own step pitch: token t of row n at
    [intermediate_state_indices[n], t]; steps >= T stay untouched; cache_steps
    is only a launch hint there (ignored)."""
    N, T, S = 2, 2, 5
    x = gdn_inputs(N, T, seed=24, device=device)
    pool = x["pool"].clone()
    p0 = pool.clone()
    idx = torch.tensor([3, 1], dtype=torch.int32, device=device)
    inter = torch.full((3, S, 2, 16, 32), NAN, device=device)
    rows = torch.tensor([2, 0], dtype=torch.int32, device=device)
    o = sglang(x, pool, idx, disable_state_update=True, intermediate_states_buffer=inter,
               intermediate_state_indices=rows, cache_steps=7)
    assert torch.equal(pool, p0)
    for n, (slot, row) in enumerate(((3, 2), (1, 0))):
        for t in range(T):
            ro, rs = ref_fused({k_: (t_[n:n + 1, :t + 1] if t_.dim() > 1 and k_ != "pool" else t_)
                                for k_, t_ in x.items()}, state=p0[slot:slot + 1])
            assert rms_rel(np64(inter[row, t]), rs[0]) < 1e-5
        assert rms_rel(np64(o[n:n + 1]), ro) < 1e-5
    assert torch.isnan(inter[:, T:]).all() and torch.isnan(inter[1]).all()


def test_sglang_fixed_signature_and_unsupported_arguments():
    x = gdn_inputs(2, 1, seed=25)
    idx = torch.arange(2, dtype=torch.int32)
    with pytest.raises(TypeError, match="'use_cache'"):
        sglang(x, x["pool"], idx, use_cache=True)
    for kw, name in ((dict(lower_bound=-5.0), "lower_bound"),
                     (dict(cache_ring=True, is_kda=True), "cache_ring"),
                     (dict(is_kda=True, match_cutedsl_decode=True), "match_cutedsl_decode")):
        with pytest.raises(NotImplementedError, match=f"'{name}'"):
            sglang(x, x["pool"], idx, **kw)
    with pytest.raises(ValueError, match="match_cutedsl_decode is defined for the KDA"):
        sglang(x, x["pool"], idx, match_cutedsl_decode=True)
    with pytest.raises(NotImplementedError, match="'softplus_beta'"):
        ops.fused_sigmoid_gating_delta_rule_update(
            x["A_log"], x["a"], x["dt_bias"], 2.0, 20.0, x["q"], x["k"], x["v"], x["b"],
            x["pool"], idx)
    # replayssm_* without cache_ring: never read by SGLang, ignored.
    p1, p2 = x["pool"].clone(), x["pool"].clone()
    o1 = sglang(x, p1, idx, replayssm_rawv=torch.zeros(1), replayssm_g=torch.zeros(1))
    o2 = sglang(x, p2, idx)
    assert torch.equal(o1, o2) and torch.equal(p1, p2)
    # SGLang reads retrieve_parent_token through its strides; gdn does not yet.
    x2 = gdn_inputs(2, 2, seed=26)
    inter = torch.zeros(2, 2, 2, 16, 32)
    with pytest.raises(NotImplementedError, match="'retrieve_parent_token'") as e:
        sglang(x2, x2["pool"], idx, intermediate_states_buffer=inter,
               intermediate_state_indices=idx, disable_state_update=True,
               retrieve_parent_token=torch.zeros(2, 2, dtype=torch.int32).t())
    assert isinstance(e.value, ValueError)
    # A pool whose slots are not dense (here every key row a view of a longer
    # row) is written in place: never copied, refused.
    strided = torch.zeros(4, 2, 16, 64)[..., :32]
    with pytest.raises(NotImplementedError, match="'initial_state_source'") as e:
        sglang(x, strided, idx)
    assert isinstance(e.value, ValueError)


# ---------------------------------------------------------------------------
# SGLang: fused_recurrent_gated_delta_rule_packed_decode
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("H,HV", [(2, 4), (1, 1)])
def test_packed_decode_equals_unpacked(device, H, HV):
    """mixed_qkv [B, 2 H K + HV V] split as SGLang's kernel reads it equals
    the unpacked call (bit for bit) and the reference; (out, initial_state)
    are the tensors passed, updated in place; index -1 is padding."""
    B, K, V = 3, 32, 16
    r0 = gen(30 + H)
    r = lambda *s: r0(*s).to(device)
    q, k, v = r(B, 1, H, K), r(B, 1, H, K), r(B, 1, HV, V)
    a, b = r(B, HV), r(B, HV)
    A_log, dt_bias = torch.log(torch.rand(HV) * 15 + 1).to(device), r(HV)
    mixed = torch.cat([q.reshape(B, -1), k.reshape(B, -1), v.reshape(B, -1)], dim=1)
    pool = r(5, HV, V, K)
    p0 = pool.clone()
    idx = torch.tensor([4, -1, 1], dtype=torch.int32, device=device)
    out = torch.full((B, 1, HV, V), NAN, device=device)
    o, s = ops.fused_recurrent_gated_delta_rule_packed_decode(
        mixed, a, b, A_log, dt_bias, K ** -0.5, pool, out, idx, use_qk_l2norm_in_kernel=True)
    assert o is out and s is pool
    pool2 = p0.clone()
    o2, _ = ops.gated_delta_rule_decode_pretranspose(
        q, k, v, None, A_log, a.view(B, 1, HV), dt_bias, b.view(B, 1, HV), scale=K ** -0.5,
        initial_state=pool2, initial_state_indices=idx)
    assert torch.equal(out, o2) and torch.equal(pool, pool2)  # one kernel: bit for bit
    assert torch.count_nonzero(out[1]) == 0
    for s_ in (0, 2, 3):
        assert torch.equal(pool[s_], p0[s_])
    x = dict(q=q, k=k, v=v, a=a.view(B, 1, HV), b=b.view(B, 1, HV), A_log=A_log, dt_bias=dt_bias)
    ro, rs = ref_fused(x, idx_rows=[0, 2], state=p0[[4, 1]])
    assert rms_rel(np64(out[[0, 2]]), ro) < 1e-5 and rms_rel(np64(pool[[4, 1]]), rs) < 1e-5


def test_packed_decode_argument_errors():
    B, H, HV, K, V = 2, 1, 2, 32, 16
    r = gen(33)
    mixed = r(B, 2 * H * K + HV * V)
    a, b = r(B, HV), r(B, HV)
    A_log, dt_bias = torch.zeros(HV), torch.zeros(HV)
    pool, idx = r(3, HV, V, K), torch.arange(B, dtype=torch.int32)
    out = torch.empty(B, 1, HV, V)
    f = ops.fused_recurrent_gated_delta_rule_packed_decode
    with pytest.raises(ValueError, match="mixed_qkv"):
        f(mixed[:, :-1], a, b, A_log, dt_bias, None, pool, out, idx)
    with pytest.raises(ValueError, match="`a` and `b` must be 2D"):
        f(mixed, a.view(B, 1, HV), b, A_log, dt_bias, None, pool, out, idx)
    with pytest.raises(NotImplementedError, match="'out'"):
        f(mixed, a, b, A_log, dt_bias, None, pool, out.bfloat16(), idx)
    with pytest.raises(TypeError):
        f(mixed, a, b, A_log, dt_bias, None, pool, out, idx, use_cache=True)


# ---------------------------------------------------------------------------
# FlashInfer: gated_delta_rule_mtp, gated_delta_rule_decode(_pretranspose)
# ---------------------------------------------------------------------------

def mtp(x, pool, idx, **kw):
    return ops.gated_delta_rule_mtp(x["q"], x["k"], x["v"], pool, idx, x["A_log"], x["a"],
                                    x["dt_bias"], x["b"], **kw)


@pytest.mark.parametrize("device", DEVICES)
def test_mtp_returns_output_and_the_pool_updated_in_place(device):
    x = gdn_inputs(2, 3, seed=40, device=device)
    pool = x["pool"].clone()
    p0 = pool.clone()
    idx = torch.tensor([3, 1], dtype=torch.int32, device=device)
    out = torch.empty_like(x["v"])
    o, s = mtp(x, pool, idx, output=out, disable_state_update=False)
    assert o is out and s is pool
    ro, rs = ref_fused(x, state=p0[[3, 1]])
    assert rms_rel(np64(o), ro) < 1e-5 and rms_rel(np64(pool[[3, 1]]), rs) < 1e-5
    assert torch.equal(pool[[0, 2]], p0[[0, 2]])
    # disable_state_update=None is FlashInfer 0.7.2's True: the pool is read only.
    pool = p0.clone()
    o, s = mtp(x, pool, idx)
    assert s is pool and torch.equal(pool, p0) and rms_rel(np64(o), ro) < 1e-5


@pytest.mark.parametrize("device", DEVICES)
def test_mtp_buffer_rows_as_flashinfer_writes_them(device):
    """A buffer [>= B, >= T, ...]: FlashInfer's kernels write token t of row n
    at flat step n * T + t; the rest stays untouched."""
    N, T = 2, 2
    x = gdn_inputs(N, T, seed=41, device=device)
    idx = torch.tensor([0, 2], dtype=torch.int64, device=device)
    buf = torch.full((3, 4, 2, 16, 32), NAN, device=device)
    mtp(x, x["pool"].clone(), idx, intermediate_states_buffer=buf, disable_state_update=True)
    flat = buf.view(-1, 2, 16, 32)
    for n, slot in enumerate((0, 2)):
        for t in range(T):
            sub = {k_: (t_[n:n + 1, :t + 1] if t_.dim() > 1 and k_ != "pool" else t_)
                   for k_, t_ in x.items()}
            _, rs = ref_fused(sub, state=x["pool"][slot:slot + 1])
            assert rms_rel(np64(flat[n * T + t]), rs[0]) < 1e-5
    assert torch.isnan(flat[N * T:]).all()


def test_mtp_unsupported_and_refused_arguments():
    x = gdn_inputs(2, 2, seed=42)
    idx = torch.arange(2, dtype=torch.int32)
    with pytest.raises(NotImplementedError, match="'ssm_state_indices'"):
        mtp(x, x["pool"], idx, ssm_state_indices=torch.zeros(2, 2, dtype=torch.int32),
            disable_state_update=False)
    with pytest.raises(ValueError, match="requires replayssm_rawv/rawk/g/beta"):
        mtp(x, x["pool"], idx, cache_replayssm=True, disable_state_update=True)
    with pytest.raises(NotImplementedError, match="'output_state_indices'"):
        mtp(x, x["pool"], idx, output_state_indices=idx.clone())
    with pytest.raises(ValueError, match="replayssm_g"):
        mtp(x, x["pool"], idx, replayssm_g=torch.zeros(4, 2, 2))
    with pytest.raises(TypeError):
        mtp(x, x["pool"], idx, use_cache=True)
    o, s = mtp(x, x["pool"].clone(), idx, output_state_indices=idx)  # the same tensor: fine
    assert o.shape == x["v"].shape


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("T", [1, 2])
def test_decode_k_major_equals_pretranspose_on_transposed_states(device, T):
    """gated_delta_rule_decode: state [B, HV, K, V] (K-major, no transpose)
    gives the pretranspose call's output and, transposed, its state; both
    return the state they update in place; bf16 dt_bias is accepted (the
    result of its float32 values)."""
    x = gdn_inputs(3, T, H=2, HV=4, seed=43, device=device)
    s_vk = gen(44)(3, 4, 16, 32).to(device)
    s0 = s_vk.clone()
    s_kv = s_vk.transpose(2, 3).contiguous()
    o1, r1 = ops.gated_delta_rule_decode_pretranspose(x["q"], x["k"], x["v"], s_vk, x["A_log"],
                                                      x["a"], x["dt_bias"], x["b"])
    o2, r2 = ops.gated_delta_rule_decode(x["q"], x["k"], x["v"], s_kv, x["A_log"], x["a"],
                                         x["dt_bias"], x["b"])
    assert r1 is s_vk and r2 is s_kv
    assert torch.allclose(o1, o2, rtol=0, atol=1e-5)
    assert torch.allclose(s_vk, s_kv.transpose(2, 3), rtol=0, atol=1e-5)
    ro, rs = ref_fused(x, state=s0)
    assert rms_rel(np64(o2), ro) < 1e-5 and rms_rel(np64(s_kv.transpose(2, 3)), rs) < 1e-5
    bf = x["dt_bias"].bfloat16()
    s3, s4 = s0.transpose(2, 3).contiguous(), s0.transpose(2, 3).contiguous()
    o3, _ = ops.gated_delta_rule_decode(x["q"], x["k"], x["v"], s3, x["A_log"], x["a"], bf,
                                        x["b"], backend="flashinfer")
    o4, _ = ops.gated_delta_rule_decode(x["q"], x["k"], x["v"], s4, x["A_log"], x["a"],
                                        bf.float(), x["b"])
    assert torch.equal(o3, o4) and torch.equal(s3, s4)
    with pytest.raises(NotImplementedError, match="'backend'"):
        ops.gated_delta_rule_decode(x["q"], x["k"], x["v"], s_kv, x["A_log"], x["a"],
                                    x["dt_bias"], x["b"], backend="cake_gdn")
    with pytest.raises(ValueError, match="unsupported GDN backend"):
        ops.gated_delta_rule_decode(x["q"], x["k"], x["v"], s_kv, x["A_log"], x["a"],
                                    x["dt_bias"], x["b"], backend="rubin")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("pool_mode", [False, True])
def test_pretranspose_verify_arguments(device, pool_mode):
    """T > 1: intermediate_states_buffer (FlashInfer's flat rows) and
    disable_state_update, in both state modes; T = 1 refuses them
    (ValueError, as FlashInfer)."""
    N, T = 2, 3
    x = gdn_inputs(N, T, seed=45, device=device)
    p0 = x["pool"].clone()
    buf = torch.full((N, T + 1, 2, 16, 32), NAN, device=device)
    if pool_mode:
        idx = torch.tensor([3, 0], dtype=torch.int32, device=device)
        kw = dict(initial_state=x["pool"], initial_state_indices=idx)
        state, start = None, p0[[3, 0]]
    else:
        state, start = x["pool"][:N].clone(), p0[:N]
        kw = {}
    o, s = ops.gated_delta_rule_decode_pretranspose(
        x["q"], x["k"], x["v"], state, x["A_log"], x["a"], x["dt_bias"].half(), x["b"],
        intermediate_states_buffer=buf, disable_state_update=True, **kw)
    assert s is (x["pool"] if pool_mode else state)
    assert torch.equal(x["pool"], p0) and (pool_mode or torch.equal(state, p0[:N]))
    ro, rs = ref_fused(dict(x, dt_bias=x["dt_bias"].half().float()), state=start)
    assert rms_rel(np64(o), ro) < 1e-5
    flat = buf.view(-1, 2, 16, 32)
    assert rms_rel(np64(flat[[T - 1, 2 * T - 1]]), rs) < 1e-5
    assert torch.isnan(flat[N * T:]).all()
    o2, s2 = ops.gated_delta_rule_decode_pretranspose(
        x["q"], x["k"], x["v"], state, x["A_log"], x["a"], x["dt_bias"].half(), x["b"], **kw)
    # Another kernel form on the GPU (final state, no buffer): equal within
    # fp32 rounding, not bit for bit.
    assert rms_rel(np64(o2), ro) < 1e-5
    updated = s2[[3, 0]] if pool_mode else s2
    assert rms_rel(np64(updated), rs) < 1e-5
    x1 = gdn_inputs(N, 1, seed=46, device=device)
    args = (x1["q"], x1["k"], x1["v"], x1["pool"][:N].clone(), x1["A_log"], x1["a"],
            x1["dt_bias"], x1["b"])
    with pytest.raises(ValueError, match="only for T > 1"):
        ops.gated_delta_rule_decode_pretranspose(*args, intermediate_states_buffer=buf)
    with pytest.raises(ValueError, match="only for T > 1"):
        ops.gated_delta_rule_decode_pretranspose(*args, disable_state_update=True)


def test_pretranspose_unsupported_arguments():
    x = gdn_inputs(2, 1, seed=47)
    args = (x["q"], x["k"], x["v"], x["pool"][:2].clone(), x["A_log"], x["a"], x["dt_bias"],
            x["b"])
    for backend in ("cake_gdn", "rubin"):
        with pytest.raises(NotImplementedError, match="'backend'"):
            ops.gated_delta_rule_decode_pretranspose(*args, backend=backend)
    with pytest.raises(ValueError, match="unsupported GDN backend"):
        ops.gated_delta_rule_decode_pretranspose(*args, backend="triton")
    with pytest.raises(NotImplementedError, match="'initial_state'"):
        ops.gated_delta_rule_decode_pretranspose(
            *args[:3], None, *args[4:], initial_state=torch.zeros(3, 2, 2, 8, 32),
            initial_state_indices=torch.arange(2, dtype=torch.int32))
    with pytest.raises(TypeError):
        ops.gated_delta_rule_decode_pretranspose(*args, use_cache=True)
    strided_state = torch.zeros(2, 2, 32, 16).transpose(2, 3)
    with pytest.raises(NotImplementedError, match="'state'"):
        ops.gated_delta_rule_decode_pretranspose(*args[:3], strided_state, *args[4:])


def test_not_implemented_names_every_unsupported_fla_argument():
    x = gdn_inputs(2, 1, seed=48)
    f = ops.fused_recurrent_gated_delta_rule
    with pytest.raises(NotImplementedError, match="'gv'"):
        f(x["q"], x["k"], x["v"], gv=torch.zeros(2, 1, 2, 16))
    with pytest.raises(NotImplementedError, match="'gk' together with 'g'"):
        f(x["q"], x["k"], x["v"], g=x["g"], gk=torch.zeros(2, 1, 2, 32))
    with pytest.raises(ValueError, match="A_log must be provided"):
        f(x["q"], x["k"], x["v"], g=x["a"], use_gate_in_kernel=True)
    assert math.isfinite(float(f(x["q"], x["k"], x["v"])[0].abs().sum()))


def test_docs_table_covers_this_files_arguments():
    """Every keyword this file passes to an entry point is in the table (the
    full check against the anchors is test_signatures.py)."""
    import test_signatures
    rows = test_signatures.doc_table()
    for key in [("SGLang", "fused_sigmoid_gating_delta_rule_update", "lower_bound"),
                ("FlashInfer", "gated_delta_rule_decode_pretranspose", "backend"),
                ("FlashInfer", "gated_delta_rule_mtp", "cache_replayssm"),
                ("FLA", "fused_recurrent_kda", "**kwargs")]:
        assert key in rows
