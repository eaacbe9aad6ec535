"""KDA (Kimi Delta Attention) through the PyTorch entry points: the decay per
key channel (FLA's gk, SGLang's is_kda fused gating with dt_bias [HV * K]) and
beta per value channel, against the fp64 reference on the CPU (and the GPU
where there is one), with negative controls that the per-key decay is really
applied per key row; vs FLA and SGLang's Triton kernels on the GPU when they
are importable (the H200 run, scripts/h200-python.sh)."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gdn.ops as ops  # noqa: E402
from reference import recurrent, rms_rel  # noqa: E402
from inputs import place  # noqa: E402

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def np64(t):
    return t.detach().double().cpu().numpy()


def kda_inputs(N, T, H, HV, K, V, device="cpu", dtype=torch.bfloat16, seed=0):
    """Kimi-style inputs: per-key gate inputs a and log-space gk, both [N, T, HV, K],
    A_log [HV], dt_bias [HV * K], beta logits b [N, T, HV] and per channel
    bc [N, T, HV, V], a pool state [N, HV, V, K]."""
    g = torch.Generator().manual_seed(seed)
    r = lambda *s: torch.randn(*s, generator=g)
    x = dict(q=r(N, T, H, K), k=r(N, T, H, K), v=r(N, T, HV, V), a=r(N, T, HV, K),
             gk=torch.log(torch.rand(N, T, HV, K, generator=g) * 0.5 + 0.5),
             b=r(N, T, HV), bc=r(N, T, HV, V),
             A_log=torch.log(torch.rand(HV, generator=g) * 15 + 1), dt_bias=r(HV * K),
             state=r(N, HV, V, K))
    return place(x, device, dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("T", [1, 3])
@pytest.mark.parametrize("bias_shape", ["flat", "2d"])
def test_sglang_is_kda_matches_reference(device, T, bias_shape):
    N, H, HV, K, V = 3, 2, 4, 64, 32
    x = kda_inputs(N, T, H, HV, K, V, device=device, seed=T)
    extra = torch.randn(2, HV, V, K, generator=torch.Generator().manual_seed(9))
    pool = torch.cat([x["state"], extra.to(device)])  # 5 slots
    p0 = pool.clone()
    idx = torch.tensor([4, -1, 0], dtype=torch.int32, device=device)
    dt_bias = x["dt_bias"] if bias_shape == "flat" else x["dt_bias"].view(HV, K)
    o = ops.fused_sigmoid_gating_delta_rule_update(
        x["A_log"], x["a"], dt_bias, 1.0, 20.0, x["q"], x["k"], x["v"], x["b"], pool, idx,
        use_qk_l2norm_in_kernel=True, is_kda=True)
    used = [4, 0]
    ro, rs = recurrent(np64(x["q"])[[0, 2]], np64(x["k"])[[0, 2]], np64(x["v"])[[0, 2]],
                       a=np64(x["a"])[[0, 2]], A_log=np64(x["A_log"]), dt_bias=np64(x["dt_bias"]),
                       b=np64(x["b"])[[0, 2]], initial_state=np64(p0)[used], qk_l2norm=True,
                       layout="vk")
    assert rms_rel(np64(o)[[0, 2]], ro) < 2e-3
    assert rms_rel(np64(pool)[used], rs) < 1e-5
    assert torch.equal(o[1].cpu(), torch.zeros_like(o[1]).cpu()), "padding row outputs zeros"
    for slot in (1, 2, 3):
        assert torch.equal(pool[slot], p0[slot]), f"slot {slot} is no row's: untouched"
    # Negative control: the per-head decay of each head's mean gate input is
    # measurably different, so the check above sees the per-key decay.
    a_mean = np64(x["a"])[[0, 2]].mean(axis=-1)
    bias_mean = np64(x["dt_bias"]).reshape(HV, K).mean(axis=-1)
    wo, _ = recurrent(np64(x["q"])[[0, 2]], np64(x["k"])[[0, 2]], np64(x["v"])[[0, 2]],
                      a=a_mean, A_log=np64(x["A_log"]), dt_bias=bias_mean,
                      b=np64(x["b"])[[0, 2]], initial_state=np64(p0)[used], qk_l2norm=True,
                      layout="vk")
    assert rms_rel(np64(o)[[0, 2]], wo) > 2e-2


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("state_v_first", [False, True])
@pytest.mark.parametrize("beta_kind", ["head", "channel", "channel_logits"])
def test_fla_gk_and_per_channel_beta_match_reference(device, state_v_first, beta_kind):
    N, T, H, HV, K, V = 2, 4, 1, 2, 32, 64  # K != V: a transposed decay cannot pass
    x = kda_inputs(N, T, H, HV, K, V, device=device, dtype=torch.float32, seed=11)
    h0 = torch.randn(N, HV, K, V, generator=torch.Generator().manual_seed(5))
    h0_in = (h0.transpose(2, 3) if state_v_first else h0).contiguous().to(device)
    kw, ref_kw = {}, {}
    if beta_kind == "head":
        beta = torch.sigmoid(x["b"])
        ref_kw["beta"] = np64(beta)
    elif beta_kind == "channel":
        beta = torch.sigmoid(x["bc"])
        ref_kw["beta"] = np64(beta)
    else:
        beta = x["bc"]
        kw["use_beta_sigmoid_in_kernel"] = True
        ref_kw["b"] = np64(beta)
    o, ht = ops.fused_recurrent_gated_delta_rule(
        x["q"], x["k"], x["v"], gk=x["gk"], beta=beta, initial_state=h0_in,
        output_final_state=True, use_qk_l2norm_in_kernel=True, state_v_first=state_v_first,
        **kw)
    ro, rs = recurrent(np64(x["q"]), np64(x["k"]), np64(x["v"]), g=np64(x["gk"]),
                       initial_state=h0.double().numpy(), qk_l2norm=True, **ref_kw)
    if state_v_first:
        rs = rs.transpose(0, 1, 3, 2)
    assert rms_rel(np64(o), ro) < 1e-4
    assert rms_rel(np64(ht), rs) < 1e-5
    # Negative controls: a per-head decay (the mean of gk) and, with a
    # per-channel beta, a per-head beta (its mean) each miss by far.
    wo, _ = recurrent(np64(x["q"]), np64(x["k"]), np64(x["v"]), g=np64(x["gk"]).mean(-1),
                      initial_state=h0.double().numpy(), qk_l2norm=True, **ref_kw)
    assert rms_rel(np64(o), wo) > 1e-2
    if beta_kind != "head":
        name = next(iter(ref_kw))
        wb = {name: ref_kw[name].mean(-1)}
        wo, _ = recurrent(np64(x["q"]), np64(x["k"]), np64(x["v"]), g=np64(x["gk"]),
                          initial_state=h0.double().numpy(), qk_l2norm=True, **wb)
        assert rms_rel(np64(o), wo) > 1e-2


@pytest.mark.parametrize("device", DEVICES)
def test_sglang_per_channel_beta_logits_with_kda_gating(device):
    N, T, H, HV, K, V = 2, 2, 2, 2, 32, 32
    x = kda_inputs(N, T, H, HV, K, V, device=device, seed=21)
    pool = x["state"].clone()
    idx = torch.arange(N, dtype=torch.int64, device=device)
    o = ops.fused_sigmoid_gating_delta_rule_update(
        x["A_log"], x["a"], x["dt_bias"], 1.0, 20.0, x["q"], x["k"], x["v"], x["bc"], pool, idx,
        is_kda=True)
    ro, rs = recurrent(np64(x["q"]), np64(x["k"]), np64(x["v"]), a=np64(x["a"]),
                       A_log=np64(x["A_log"]), dt_bias=np64(x["dt_bias"]), b=np64(x["bc"]),
                       initial_state=np64(x["state"]), layout="vk")
    assert rms_rel(np64(o), ro) < 2e-3
    assert rms_rel(np64(pool), rs) < 1e-5


def test_kda_bad_arguments_name_the_argument():
    N, T, H, HV, K, V = 2, 1, 1, 2, 32, 16
    x = kda_inputs(N, T, H, HV, K, V)
    idx = torch.arange(N, dtype=torch.int32)
    sgl = ops.fused_sigmoid_gating_delta_rule_update

    def call(**kw):
        args = dict(A_log=x["A_log"], a=x["a"], dt_bias=x["dt_bias"], softplus_beta=1.0,
                    softplus_threshold=20.0, q=x["q"], k=x["k"], v=x["v"], b=x["b"],
                    initial_state_source=x["state"], initial_state_indices=idx, is_kda=True)
        args.update(kw)
        return sgl(**args)

    with pytest.raises(ValueError, match=r"dt_bias must have shape \[64\]"):
        call(dt_bias=x["dt_bias"][:HV].contiguous())
    with pytest.raises(ValueError, match=r"dt_bias must have shape \[2, 32\]"):
        call(dt_bias=x["dt_bias"].view(K, HV))
    with pytest.raises(ValueError, match=r"a must have shape \[2, 1, 2, 32\]"):
        call(a=x["a"][..., 0].contiguous())
    with pytest.raises(ValueError, match=r"a must have shape \[2, 1, 2\]"):
        call(is_kda=False)  # a per key channel needs is_kda=True
    with pytest.raises(ValueError, match=r"b must have shape \[2, 1, 2, 16\]"):
        call(b=x["bc"][..., :8].contiguous())
    fla = ops.fused_recurrent_gated_delta_rule
    with pytest.raises(ValueError, match=r"gk must have shape \[2, 1, 2, 32\]"):
        fla(x["q"], x["k"], x["v"], gk=x["gk"][..., :16].contiguous())
    with pytest.raises(NotImplementedError, match="'gk' together with 'g'"):
        fla(x["q"], x["k"], x["v"], g=x["b"], gk=x["gk"])
    with pytest.raises(NotImplementedError, match="'gv'"):
        fla(x["q"], x["k"], x["v"], gv=x["bc"])
    with pytest.raises(ValueError, match=r"beta must have shape \[2, 1, 2, 16\]"):
        fla(x["q"], x["k"], x["v"], gk=x["gk"], beta=x["a"])


def test_compile_desc_per_key_needs_a_decay():
    import gdn
    with pytest.raises(ValueError, match="per_key_decay needs decay"):
        gdn.default_compiler().compile(N=1, T=1, H=1, HV=1, K=32, V=8, per_key_decay=True)
    with pytest.raises(ValueError, match="per_channel_beta needs beta"):
        gdn.default_compiler().compile(N=1, T=1, H=1, HV=1, K=32, V=8, per_channel_beta=True)
    k = gdn.default_compiler().compile(N=1, T=1, H=1, HV=2, K=32, V=8, decay="fused_gating",
                                       beta="logits", per_key_decay=True, per_channel_beta=True)
    sizes = dict(k.arguments)
    # f32 gates: a [1, 1, 2, 32], dt_bias [2 * 32], b [1, 1, 2, 8]
    assert sizes["a"] == 2 * 32 * 4 and sizes["dt_bias"] == 2 * 32 * 4 and sizes["b"] == 2 * 8 * 4


# --------------------------------------------------------------------------
# GPU: against FLA and SGLang's Triton kernels (when importable).
# --------------------------------------------------------------------------

def _load_sglang():
    """SGLang's Triton kernel module, imported as a package (skipped, naming
    the missing module, where it cannot be)."""
    from anchors import sglang_kernels
    return sglang_kernels()


@cuda
@pytest.mark.parametrize("T", [1, 4])
def test_cuda_kda_matches_sglang_is_kda(T):
    sgl = _load_sglang()
    N, H, HV, K, V = 8, 32, 32, 128, 128  # Kimi Linear heads
    x = kda_inputs(N, T, H, HV, K, V, device="cuda", seed=40 + T)
    ours_pool, theirs_pool = x["state"].clone(), x["state"].clone()
    idx = torch.arange(N, dtype=torch.int32, device="cuda")
    args = lambda pool: (x["A_log"], x["a"], x["dt_bias"], 1.0, 20.0, x["q"], x["k"], x["v"],
                         x["b"], pool, idx)
    o = ops.fused_sigmoid_gating_delta_rule_update(*args(ours_pool), use_qk_l2norm_in_kernel=True,
                                                   is_kda=True)
    ref = sgl.fused_sigmoid_gating_delta_rule_update(*args(theirs_pool),
                                                     use_qk_l2norm_in_kernel=True, is_kda=True)
    torch.cuda.synchronize()
    assert rms_rel(np64(o), np64(ref)) < 2e-3
    assert rms_rel(np64(ours_pool), np64(theirs_pool)) < 1e-5


@cuda
@pytest.mark.parametrize("T", [1, 4])
def test_cuda_gk_matches_fla(T):
    from anchors import fla_ops
    fla = fla_ops("gated_delta_rule")
    N, H, HV, K, V = 8, 32, 32, 128, 128
    x = kda_inputs(N, T, H, HV, K, V, device="cuda", seed=50 + T)
    beta = torch.sigmoid(x["bc"].float()).to(torch.bfloat16)  # per value channel
    h0 = x["state"].transpose(2, 3).contiguous()
    ours = ops.fused_recurrent_gated_delta_rule(
        x["q"], x["k"], x["v"], gk=x["gk"], beta=beta, initial_state=h0,
        output_final_state=True, use_qk_l2norm_in_kernel=True)
    theirs = fla.fused_recurrent_gated_delta_rule(
        x["q"], x["k"], x["v"], gk=x["gk"], beta=beta, initial_state=h0,
        output_final_state=True, use_qk_l2norm_in_kernel=True)
    torch.cuda.synchronize()
    assert rms_rel(np64(ours[0]), np64(theirs[0])) < 2e-3
    assert rms_rel(np64(ours[1]), np64(theirs[1])) < 1e-5
