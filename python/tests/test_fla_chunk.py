"""gdn.ops.chunk_gated_delta_rule and chunk_kda (FLA 0.6.0's prefill entry
points, python/gdn/ops/fla_chunk.py): the fp64 reference on the CPU, the
keywords FLA reads from **kwargs, the arguments ignored because they do not
change the result, and FLA's ValueErrors and gdn's NotImplementedErrors.
Their signatures are checked against FLA's in test_signatures.py."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gdn.ops as ops  # noqa: E402
from inputs import cuda_kernels  # noqa: E402
from reference import recurrent, rms_rel  # noqa: E402

N, T, H, HV, K, V = 2, 5, 2, 4, 16, 8


def np64(t):
    return t.detach().double().cpu().numpy()


def inputs(kda, seed=0):
    g = torch.Generator().manual_seed(seed)
    r = lambda *s: torch.randn(*s, generator=g)
    decay_shape = (N, T, HV, K) if kda else (N, T, HV)
    return dict(q=r(N, T, H, K), k=r(N, T, H, K), v=r(N, T, HV, V),
                g=torch.log(torch.rand(*decay_shape, generator=g) * 0.5 + 0.5),
                beta=torch.rand(N, T, HV, generator=g), h0=r(N, HV, K, V))


@pytest.mark.parametrize("kda", [False, True], ids=["gdn", "kda"])
def test_chunk_matches_reference(kda):
    x = inputs(kda)
    chunk = ops.chunk_kda if kda else ops.chunk_gated_delta_rule
    # chunk_size, chunk_indices, cu_seqlens_cpu, an unknown keyword: no effect on the result
    o, ht = chunk(x["q"], x["k"], x["v"], x["g"], x["beta"], initial_state=x["h0"],
                  output_final_state=True, use_qk_l2norm_in_kernel=True, chunk_size=32,
                  cu_seqlens_cpu=None, use_cache=True)
    ro, rs = recurrent(np64(x["q"]), np64(x["k"]), np64(x["v"]), g=np64(x["g"]),
                       beta=np64(x["beta"]), initial_state=np64(x["h0"]), qk_l2norm=True,
                       layout="kv")
    assert o.dtype == torch.float32 and ht.dtype == torch.float32
    assert rms_rel(np64(o), ro) < 1e-5 and rms_rel(np64(ht), rs) < 1e-5
    # the same call as the recurrent entry point it stands for
    fused = ops.fused_recurrent_kda if kda else ops.fused_recurrent_gated_delta_rule
    fo, fs = fused(x["q"], x["k"], x["v"], g=x["g"], beta=x["beta"], initial_state=x["h0"],
                   output_final_state=True, use_qk_l2norm_in_kernel=True)
    assert torch.equal(o, fo) and torch.equal(ht, fs)


@pytest.mark.parametrize("kda", [False, True], ids=["gdn", "kda"])
def test_chunk_reads_the_gate_keywords_as_fla(kda):
    """use_gate_in_kernel, A_log and dt_bias come through **kwargs in GDN's
    chunk (named parameters in fused_recurrent_*): they must reach the
    kernel. transpose_state_layout is FLA's deprecated alias."""
    x = inputs(kda, seed=1)
    a = torch.randn(x["g"].shape, generator=torch.Generator().manual_seed(2))
    A_log = torch.log(torch.rand(HV) * 15 + 1)
    dt_bias = torch.randn(HV * K if kda else HV)
    chunk = ops.chunk_kda if kda else ops.chunk_gated_delta_rule
    kw = dict(use_gate_in_kernel=True, A_log=A_log, dt_bias=dt_bias)
    o, _ = chunk(x["q"], x["k"], x["v"], a, x["beta"], **kw)
    ro, _ = recurrent(np64(x["q"]), np64(x["k"]), np64(x["v"]), a=np64(a), A_log=np64(A_log),
                      dt_bias=np64(dt_bias), beta=np64(x["beta"]), layout="kv")
    assert rms_rel(np64(o), ro) < 1e-5
    h0 = x["h0"].transpose(-1, -2).contiguous()  # [N, HV, V, K]
    with pytest.warns(DeprecationWarning):
        _, ht = chunk(x["q"], x["k"], x["v"], x["g"], x["beta"], initial_state=h0,
                      output_final_state=True, transpose_state_layout=True)
    assert ht.shape == (N, HV, V, K)


def test_chunk_kda_refuses_what_gdn_cannot_compute():
    x = inputs(True)
    args = (x["q"], x["k"], x["v"], x["g"], x["beta"])
    with pytest.raises(NotImplementedError, match="return_intermediate_states"):
        ops.chunk_kda(*args, return_intermediate_states=True)
    with pytest.raises(NotImplementedError, match="cp_context"):
        ops.chunk_kda(*args, cp_context=object())
    with pytest.raises(NotImplementedError, match="lower_bound"):
        ops.chunk_kda(*args, use_gate_in_kernel=True, lower_bound=-5.0, safe_gate=True)
    # FLA's ValueErrors come first
    with pytest.raises(ValueError, match="A_log"):
        ops.chunk_kda(*args, use_gate_in_kernel=True)
    with pytest.raises(ValueError, match="lower_bound"):
        ops.chunk_kda(*args, use_gate_in_kernel=True, A_log=torch.zeros(HV), safe_gate=True)
    with pytest.raises(ValueError, match="safe range"):
        ops.chunk_kda(*args, use_gate_in_kernel=True, safe_gate=True, lower_bound=-6.0)
    with pytest.raises(ValueError, match="chunk_size"):
        ops.chunk_kda(*args, chunk_size=16)
    # without use_gate_in_kernel, safe_gate / lower_bound / the graph keywords change nothing
    o, _ = ops.chunk_kda(*args, safe_gate=True, lower_bound=-5.0, disable_recompute=True,
                         use_graph=True, max_num_seqs=N)
    assert torch.equal(o, ops.fused_recurrent_kda(*args)[0])


def test_chunk_gated_delta_rule_refuses_what_gdn_cannot_compute():
    x = inputs(False)
    args = (x["q"], x["k"], x["v"], x["g"], x["beta"])
    with pytest.raises(NotImplementedError, match="cp_context"):
        ops.chunk_gated_delta_rule(*args, cp_context=object())
    with pytest.raises(ValueError, match="chunk_size"):
        ops.chunk_gated_delta_rule(*args, chunk_size=128)
    with pytest.raises(DeprecationWarning):
        ops.chunk_gated_delta_rule(*args, head_first=False)


def test_chunk_varlen_matches_per_sequence_calls():
    x = inputs(False, seed=3)
    cu = torch.tensor([0, 2, T], dtype=torch.int32)
    flat = {n: x[n][:1] for n in ("q", "k", "v", "g", "beta")}  # B = 1, T packed tokens
    o, ht = ops.chunk_gated_delta_rule(flat["q"], flat["k"], flat["v"], flat["g"], flat["beta"],
                                       initial_state=x["h0"], output_final_state=True,
                                       cu_seqlens=cu)
    for n, (s, e) in enumerate([(0, 2), (2, T)]):
        ro, rs = recurrent(*(np64(flat[m][:, s:e]) for m in ("q", "k", "v")),
                           g=np64(flat["g"][:, s:e]), beta=np64(flat["beta"][:, s:e]),
                           initial_state=np64(x["h0"][n:n + 1]), layout="kv")
        assert rms_rel(np64(o[:, s:e]), ro) < 1e-5
        assert rms_rel(np64(ht[n:n + 1]), rs) < 1e-5
    assert np.isfinite(np64(o)).all()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("T", [17, 300])
def test_chunk_real_shapes_on_the_gpu(T):
    """Qwen3-Next's heads (H = 16, HV = 32, K = V = 128), bf16 q/k/v, qk L2
    norm, a kv initial state: FLA's chunk entry point takes the cost model's
    prefill form, solve = chunk_parallel with bf16 products (precision =
    bf16; two launches: every chunk's solve, then the scan;
    docs/cost-model.md), within the chunked anchors' accuracy against the
    fp64 reference (docs/math.md §3, §5: the state 2.5e-3; o against the
    reference rounded to bf16, 3e-3)."""
    Nb, H_, HV_, K_ = 2, 16, 32, 128
    g = torch.Generator().manual_seed(T)
    r = lambda *s: torch.randn(*s, generator=g)  # noqa: E731
    q, k, v = (r(Nb, T, n, K_).bfloat16() for n in (H_, H_, HV_))
    gate = torch.log(torch.rand(Nb, T, HV_, generator=g) * 0.1 + 0.9)
    beta = torch.rand(Nb, T, HV_, generator=g).bfloat16()
    h0 = r(Nb, HV_, K_, K_) * 0.1
    dev = torch.device("cuda")
    o, ht = ops.chunk_gated_delta_rule(
        *(x.to(dev) for x in (q, k, v, gate, beta)), initial_state=h0.to(dev),
        output_final_state=True, use_qk_l2norm_in_kernel=True)
    torch.cuda.synchronize()
    names = [[name for name, _ in k.launches] for k in cuda_kernels(T=T)]
    assert any(len(n) == 2 and n[0].endswith("chunk_solves") for n in names), names
    ro, rs = recurrent(np64(q), np64(k), np64(v), g=np64(gate), beta=np64(beta),
                       initial_state=np64(h0), qk_l2norm=True, layout="kv")
    assert o.dtype == torch.bfloat16 and ht.dtype == torch.float32
    assert rms_rel(np64(ht), rs) < 2.5e-3
    ro_bf16 = torch.from_numpy(ro).bfloat16().double().numpy()
    assert rms_rel(np64(o), ro_bf16) < 3e-3


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_chunk_one_long_sequence_splits_on_the_gpu():
    """One sequence of 8192 tokens at Qwen3-Next's heads: the cost model
    splits the chunk scan into context-parallel segments
    (docs/cost-model.md#context-parallel-segments; docs/math.md §7): the
    records, the segment maps, the join and the scan of every segment from
    its start state. o and the final state are within the chunked anchors'
    accuracy of the fp64 reference, as the unsplit scan's are."""
    T_, H_, HV_, K_ = 8192, 16, 32, 128
    g = torch.Generator().manual_seed(11)
    r = lambda *s: torch.randn(*s, generator=g)  # noqa: E731
    q, k, v = (r(1, T_, n, K_).bfloat16() for n in (H_, H_, HV_))
    gate = torch.log(torch.rand(1, T_, HV_, generator=g) * 0.1 + 0.9)
    beta = torch.rand(1, T_, HV_, generator=g).bfloat16()
    h0 = r(1, HV_, K_, K_) * 0.1
    dev = torch.device("cuda")
    o, ht = ops.chunk_gated_delta_rule(
        *(x.to(dev) for x in (q, k, v, gate, beta)), initial_state=h0.to(dev),
        output_final_state=True, use_qk_l2norm_in_kernel=True)
    torch.cuda.synchronize()
    names = [[name for name, _ in k.launches] for k in cuda_kernels(T=T_)]
    assert any(len(n) >= 3 and n[0].endswith("chunk_solves")
               and n[1].endswith("segment_maps") for n in names), names
    ro, rs = recurrent(np64(q), np64(k), np64(v), g=np64(gate), beta=np64(beta),
                       initial_state=np64(h0), qk_l2norm=True, layout="kv")
    assert rms_rel(np64(ht), rs) < 2.5e-3
    ro_bf16 = torch.from_numpy(ro).bfloat16().double().numpy()
    assert rms_rel(np64(o), ro_bf16) < 3e-3


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_chunk_varlen_chunk_parallel_on_the_gpu():
    """A varlen prefill of long sequences takes chunk_parallel's two
    launches (docs/cost-model.md#varlen-chunk-parallel), its records in
    slots a sequence (docs/math.md §5), here with 40 packed tokens before
    cu_seqlens[0] that no sequence owns (the slots below the first
    sequence's hold no record: a fault there wrote past the workspace):
    each sequence's o and final state equal those of the same sequence
    called alone, and sequence 0's are within the chunked anchors'
    accuracy of the fp64 reference."""
    H_, HV_, K_ = 16, 32, 128
    lens, skip = [100, 0, 70], 40
    T_ = skip + sum(lens)
    g = torch.Generator().manual_seed(7)
    r = lambda *s: torch.randn(*s, generator=g)  # noqa: E731
    q, k, v = (r(1, T_, n, K_).bfloat16().cuda() for n in (H_, H_, HV_))
    gate = torch.log(torch.rand(1, T_, HV_, generator=g) * 0.1 + 0.9).cuda()
    beta = torch.rand(1, T_, HV_, generator=g).bfloat16().cuda()
    h0 = (r(len(lens), HV_, K_, K_) * 0.1).cuda()
    cu = torch.tensor(np.cumsum([skip] + lens), dtype=torch.int32, device="cuda")
    o, ht = ops.chunk_gated_delta_rule(q, k, v, gate, beta, initial_state=h0,
                                       output_final_state=True, cu_seqlens=cu,
                                       use_qk_l2norm_in_kernel=True)
    torch.cuda.synchronize()
    names = _varlen_launches(T_, HV_, K_)  # this call's kernel: a capacity of T_ or more
    assert any(len(n) == 2 and n[0].endswith("chunk_solves") for n in names), names
    for n, (s, e) in enumerate(zip(cu[:-1].tolist(), cu[1:].tolist())):
        if s == e:  # an empty sequence: its state passes through
            assert torch.equal(ht[n], h0[n])
            continue
        alone = torch.tensor([0, e - s], dtype=torch.int32, device="cuda")
        oa, ha = ops.chunk_gated_delta_rule(
            *(x[:, s:e] for x in (q, k, v, gate, beta)), initial_state=h0[n:n + 1],
            output_final_state=True, cu_seqlens=alone, use_qk_l2norm_in_kernel=True)
        assert torch.allclose(o[:, s:e].float(), oa.float(), rtol=0, atol=1e-2 * oa.abs().max())
        assert rms_rel(np64(ht[n:n + 1]), np64(ha)) < 1e-5
    s, e = skip, skip + lens[0]
    ro, rs = recurrent(*(np64(x[:, s:e]) for x in (q, k, v)), g=np64(gate[:, s:e]),
                       beta=np64(beta[:, s:e]), initial_state=np64(h0[:1]), qk_l2norm=True,
                       layout="kv")
    assert rms_rel(np64(ht[:1]), rs) < 2.5e-3


def _varlen_launches(T_, HV_, K_):
    """The launch names of the varlen CUDA kernels compiled so far for HV_,
    K_ and a token capacity of at least T_."""
    from gdn.ops import _custom_ops
    return [[name for name, _ in k.launches] for key, k in _custom_ops._kernels.items()
            if key[0] == "cuda" and dict(key[2:]).get("cu_seqlens_dtype") == "int32"
            and dict(key[2:]).get("HV") == HV_ and dict(key[2:]).get("K") == K_
            and dict(key[2:]).get("T", 0) >= T_]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("T", [17, 300])
@pytest.mark.parametrize("gates", ["g", "fused"])
def test_chunk_kda_chunk_parallel_on_the_gpu(T, gates):
    """Kimi Linear's KDA prefill at Qwen3-Next-like heads (H = 16, HV = 32,
    K = V = 128), bf16 q/k/v, qk L2 norm, a per-key decay (log-space g, or
    FLA's use_gate_in_kernel: -exp(A_log) softplus(g + dt_bias) per key):
    FLA's chunk_kda takes chunk_parallel's two launches (KeyDecayChunks.cpp,
    docs/math.md §5 "A decay per key"), within the chunked anchors'
    accuracy of the fp64 reference (the state 2.5e-3; o against the
    reference rounded to bf16, 3e-3)."""
    Nb, H_, HV_, K_ = 2, 16, 32, 128
    g = torch.Generator().manual_seed(T)
    r = lambda *s: torch.randn(*s, generator=g)  # noqa: E731
    q, k, v = (r(Nb, T, n, K_).bfloat16() for n in (H_, H_, HV_))
    beta = torch.rand(Nb, T, HV_, generator=g).bfloat16()
    h0 = r(Nb, HV_, K_, K_) * 0.1
    dev = torch.device("cuda")
    kw, ref = {}, {}
    if gates == "g":
        gate = torch.log(torch.rand(Nb, T, HV_, K_, generator=g) * 0.2 + 0.8)
        ref["g"] = np64(gate)
    else:
        gate = r(Nb, T, HV_, K_)
        A_log, dt_bias = r(HV_) * 0.5, r(HV_ * K_) * 0.5
        kw = dict(use_gate_in_kernel=True, A_log=A_log.to(dev), dt_bias=dt_bias.to(dev))
        ref = dict(a=np64(gate), A_log=np64(A_log), dt_bias=np64(dt_bias))
    o, ht = ops.chunk_kda(*(x.to(dev) for x in (q, k, v, gate, beta)), initial_state=h0.to(dev),
                          output_final_state=True, use_qk_l2norm_in_kernel=True, **kw)
    torch.cuda.synchronize()
    names = [[name for name, _ in k.launches] for k in cuda_kernels(T=T, per_key_decay=True)]
    assert names and all(len(n) == 2 and n[0].endswith("chunk_solves") for n in names), names
    ro, rs = recurrent(np64(q), np64(k), np64(v), beta=np64(beta), initial_state=np64(h0),
                       qk_l2norm=True, layout="kv", **ref)
    assert rms_rel(np64(ht), rs) < 2.5e-3
    ro_bf16 = torch.from_numpy(ro).bfloat16().double().numpy()
    assert rms_rel(np64(o), ro_bf16) < 3e-3
