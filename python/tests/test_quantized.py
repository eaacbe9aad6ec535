"""float8_e4m3fn states with row scales (issue 24): gdn.recurrent's
state_scale through the anchors' entry points (SGLang's pool decode and
verify, FlashInfer's pool and per-sequence state), on the CPU and, where
present, CUDA.

The contract checked: a quantized state runs exactly as the float32 state
e4m3 x scale would (o, and the per-token states of a verify), and stores
exactly gdn.ops.quantize_state of the float32 result: bit for bit on the
CPU; on the GPU (same schedule pinned for both) within float32 rounding,
since its decode multiplies e4m3 by (scale x decay) where the float32 pool
has (e4m3 x scale) x decay, so a stored element may land on the e4m3 value
next to quantize_state's; padding rows and
slots no row names keep their bytes and scales; views of an all-layer pool
find their scales; the accuracy against the fp64 reference stays within the
e4m3 rounding of one store."""
import re

import pytest

torch = pytest.importorskip("torch")
import gdn.ops as ops  # noqa: E402
from reference import recurrent as ref_recurrent, rms_rel  # noqa: E402

cuda_ok = torch.cuda.is_available()
DEVICES = ["cpu"] + (["cuda"] if cuda_ok else [])
FP8 = torch.float8_e4m3fn


def make(N, T, H=2, HV=4, K=32, V=16, slots=6, device="cpu", seed=0):
    g = torch.Generator().manual_seed(seed)
    r = lambda *s: torch.randn(*s, generator=g)  # noqa: E731
    x = dict(q=r(N, T, H, K).bfloat16(), k=r(N, T, H, K).bfloat16(),
             v=r(N, T, HV, V).bfloat16(), a=r(N, T, HV).bfloat16(), b=r(N, T, HV).bfloat16(),
             A_log=torch.log(torch.rand(HV, generator=g) * 15 + 1), dt_bias=r(HV),
             state=r(slots, HV, V, K) * 0.3)
    return {n: t.to(device) for n, t in x.items()}


def sglang(x, pool, idx, **kw):
    return ops.fused_sigmoid_gating_delta_rule_update(
        x["A_log"], x["a"], x["dt_bias"], 1.0, 20.0, x["q"], x["k"], x["v"], x["b"], pool, idx,
        use_qk_l2norm_in_kernel=True, **kw)


def bits(pool):
    return pool.view(torch.uint8)


@pytest.mark.parametrize("device", DEVICES)
def test_quantize_state_round_trip_and_rounding(device):
    s = torch.randn(3, 4, 16, 32, device=device)
    s[1, 2, 5] = 0.0  # a row of zeros: scale 0, elements 0
    pool, scale = ops.quantize_state(s)
    assert pool.dtype == FP8 and scale.shape == (3, 4, 16)
    assert ops.state_scale_of(pool) is not scale and torch.equal(ops.state_scale_of(pool), scale)
    assert scale[1, 2, 5] == 0 and (bits(pool)[1, 2, 5] == 0).all()
    back = ops.dequantize_state(pool)
    # Each row's largest element comes back to within float32 rounding (448
    # x (amax / 448)); e4m3 keeps 3 mantissa bits: every error is at most
    # half a unit in the last place of e4m3's top binade [256, 448], 16 / 448
    # of the row's largest.
    assert torch.allclose(back.abs().amax(-1), s.abs().amax(-1), rtol=1e-6, atol=0)
    amax = s.abs().amax(-1, keepdim=True)
    rel = (back - s).abs() / torch.where(amax > 0, amax, torch.ones_like(amax))
    assert rel.max() <= 16 / 448 * 1.0001
    assert rms_rel(back.double().cpu().numpy(), s.double().cpu().numpy()) < 0.04
    kv, kv_scale = ops.quantize_state(s.transpose(-1, -2).contiguous(), layout="kv")
    assert torch.equal(kv_scale, scale)
    assert torch.equal(bits(kv).transpose(-1, -2), bits(pool))


@pytest.mark.parametrize("device", DEVICES)
def test_pool_decode_runs_the_dequantized_state_and_stores_it_quantized(device):
    """An fp8 pool decodes as the f32 pool e4m3 x scale: the same o, and the
    same stored bits as quantize_state of the f32 pool's result; padding
    rows and unnamed slots keep their bytes and scales."""
    if device == "cuda":  # one schedule for both, so their f32 states agree
        ops.set_schedule(columns_per_lane=4, lanes_along_v=2, warps=2, staged_tokens=0)
    try:
        x = make(4, 1, device=device, seed=1)
        idx = torch.tensor([3, -1, 0, 5], dtype=torch.int32, device=device)
        pool, _ = ops.quantize_state(x["state"])
        before, scale_before = bits(pool).clone(), ops.state_scale_of(pool).clone()
        f32 = ops.dequantize_state(pool)
        o = sglang(x, pool, idx)
        o32 = sglang(x, f32, idx)
        want, want_scale = ops.quantize_state(f32)
        if device == "cpu":
            assert torch.equal(o, o32)
            assert torch.equal(bits(pool), bits(want))
            assert torch.equal(ops.state_scale_of(pool), want_scale)
        else:  # float32 rounding apart: o within a bf16 step, each stored
            # element on quantize_state's e4m3 value or the next one
            assert torch.allclose(o.float(), o32.float(), rtol=2 ** -7, atol=1e-6)
            scale = ops.state_scale_of(pool)
            assert torch.allclose(scale, want_scale, rtol=1e-6, atol=0)
            got = pool.float() * scale[..., None]
            ref = want.float() * want_scale[..., None]
            step = ref.abs() * 2 ** -3 + want_scale[..., None] * 2 ** -9
            assert ((got - ref).abs() <= step * 1.01).all()
            assert (bits(pool) != bits(want)).float().mean() < 0.05
        for slot in (1, 2, 4):  # no row names them (row 1 is padding)
            assert torch.equal(bits(pool)[slot], before[slot])
            assert torch.equal(ops.state_scale_of(pool)[slot], scale_before[slot])
        assert (o[1] == 0).all()
    finally:
        ops.set_schedule()


@pytest.mark.skipif(not cuda_ok, reason="reductions = mma is a GPU kernel form")
@pytest.mark.parametrize("K", [64, 128])
@pytest.mark.parametrize("R", [2, 4, 8])
def test_mma_decode_matches_the_f32_decode_of_the_dequantized_pool(K, R):
    """reductions = mma (the e4m3 decode on mma.sync and packed f16 pairs,
    R / 2 tiles a warp): o as the f32 pool's decode of the dequantized state
    gives it (k and q as f16 in the sums: a few f16 steps), every stored
    element within an e4m3 step and a half of quantize_state's rounding of
    the f32 result plus the f16 update's 2^-10 of the row's max, the scales
    within f16 rounding, the state's RMS error against the f32 decode that
    of quantize_state;
    padding rows and unnamed slots untouched; a zero slot (scale 0) decodes
    from zeros."""
    x = make(4, 1, H=2, HV=4, K=K, V=64, slots=6, device="cuda", seed=11)
    idx = torch.tensor([3, -1, 0, 5], dtype=torch.int32, device="cuda")
    pool, _ = ops.quantize_state(x["state"])
    pool[5].zero_()
    ops.state_scale_of(pool)[5].zero_()
    before, scale_before = bits(pool).clone(), ops.state_scale_of(pool).clone()
    f32 = ops.dequantize_state(pool)
    o32 = sglang(x, f32, idx)
    want, want_scale = ops.quantize_state(f32)
    ops.set_schedule(reductions="mma", columns_per_lane=R)
    try:
        o = sglang(x, pool, idx)
    finally:
        ops.set_schedule()
    assert torch.allclose(o.float(), o32.float(), rtol=2 ** -6, atol=1e-3)
    assert rms_rel(o.double().cpu().numpy(), o32.double().cpu().numpy()) < 2e-3
    scale = ops.state_scale_of(pool)
    rows = idx[idx >= 0].long()
    assert torch.allclose(scale[rows], want_scale[rows], rtol=2 ** -8, atol=0)
    got = pool.float() * scale[..., None]
    ref = want.float() * want_scale[..., None]
    step = ref.abs() * 2 ** -3 + want_scale[..., None] * 2 ** -9
    # f16 arithmetic on terms up to the row's max: 2^-11 of it on any element
    # (an element that is a small difference of large terms: in the emulation
    # of this schedule's rounding on the CPU at most 0.56 of that beyond the
    # 1.5 e4m3 steps).
    bound = 1.5 * step + 2 ** -10 * (448 * want_scale[..., None])
    assert ((got - ref).abs()[rows] <= bound[rows]).all()
    # The state as far from the f32 decode as quantize_state's rounding of it
    # (against quantize_state itself a zero slot's rows, all u k̂ with one
    # multiplier, repeat each tie the f16 steps break otherwise: 1.6e-2 at
    # K = 64 in the CPU emulation).
    exact = f32[rows].double().cpu().numpy()
    assert (rms_rel(got[rows].double().cpu().numpy(), exact)
            <= 1.02 * rms_rel(ref[rows].double().cpu().numpy(), exact))
    for slot in (1, 2, 4):  # no row names them (row 1 is padding)
        assert torch.equal(bits(pool)[slot], before[slot])
        assert torch.equal(ops.state_scale_of(pool)[slot], scale_before[slot])
    assert (o[1] == 0).all()


@pytest.mark.skipif(not cuda_ok, reason="reductions = mma is a GPU kernel form")
def test_mma_decode_of_a_vanishing_state_stores_zeros_not_nan():
    """The mma decode's bound c = 448 a + |u| of a row whose state and
    update both vanish (k = v = 0, scale 2e-37 / 448) stays positive, and
    the row is stored as zeros with a finite scale, never NaN."""
    x = make(1, 1, H=1, HV=2, K=128, V=16, slots=2, device="cuda", seed=5)
    x["k"].zero_()
    x["v"].zero_()
    pool = ops.quantized_state((2, 2, 16, 128), device="cuda")
    pool[0, :, :, 0] = 448.0
    ops.state_scale_of(pool).fill_(2e-37 / 448)
    ops.set_schedule(reductions="mma", columns_per_lane=2)
    try:
        sglang(x, pool, torch.zeros(1, dtype=torch.int32, device="cuda"))
    finally:
        ops.set_schedule()
    assert not torch.isnan(pool.float()).any()
    assert torch.isfinite(ops.state_scale_of(pool)).all()
    assert (pool[0].float() * ops.state_scale_of(pool)[0][..., None]).abs().max() < 1e-30


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("K,V", [(32, 16), (16, 32)])
def test_kmajor_decode_updates_an_fp8_state_in_place(device, K, V):
    """FlashInfer's K-major gated_delta_rule_decode (layout kv) on an fp8
    state [B, HV, K, V] with scales [B, HV, V]: the same o as the float32
    state e4m3 x scale, and the stored state quantize_state(..., "kv") of
    that state's result (bit for bit on the CPU; on the GPU, same schedule
    pinned for both, within one e4m3 step, as the vk pool)."""
    if device == "cuda":
        ops.set_schedule(columns_per_lane=2, lanes_along_v=4, warps=1)
    try:
        x = make(3, 1, K=K, V=V, slots=3, device=device, seed=4)
        kv = x["state"].transpose(-1, -2).contiguous()  # [B, HV, K, V]
        state, _ = ops.quantize_state(kv, layout="kv")
        f32 = ops.dequantize_state(state, layout="kv")
        assert f32.shape == kv.shape
        run = lambda s: ops.gated_delta_rule_decode(  # noqa: E731
            x["q"], x["k"], x["v"], s, x["A_log"], x["a"], x["dt_bias"], x["b"])[0]
        o, o32 = run(state), run(f32)
        want, want_scale = ops.quantize_state(f32, layout="kv")
        scale = ops.state_scale_of(state, layout="kv")
        assert scale.shape == (3, 4, V)
        if device == "cpu":
            assert torch.equal(o, o32)
            assert torch.equal(bits(state), bits(want))
            assert torch.equal(scale, want_scale)
        else:
            assert torch.allclose(o.float(), o32.float(), rtol=2 ** -7, atol=1e-6)
            assert torch.allclose(scale, want_scale, rtol=1e-6, atol=0)
            got = state.float() * scale[..., None, :]
            ref = want.float() * want_scale[..., None, :]
            step = ref.abs() * 2 ** -3 + want_scale[..., None, :] * 2 ** -9
            assert ((got - ref).abs() <= step * 1.01).all()
        # The kernel ran: the state moved.
        assert not torch.equal(bits(state), bits(ops.quantize_state(kv, layout="kv")[0]))
    finally:
        ops.set_schedule()


def test_kmajor_decode_fp8_state_needs_its_scales():
    x = make(2, 1, slots=2)
    bare = torch.zeros(2, 4, 32, 16, dtype=FP8)
    with pytest.raises(ValueError, match="state: this float8_e4m3fn state has no row scales"):
        ops.gated_delta_rule_decode(x["q"], x["k"], x["v"], bare, x["A_log"], x["a"],
                                    x["dt_bias"], x["b"])


@pytest.mark.parametrize("device", DEVICES)
def test_verify_reads_the_pool_and_writes_bf16_states(device):
    """SGLang's verify over an fp8 pool, the pool only read: the per-token
    states (bf16) and o are those of the f32 pool e4m3 x scale."""
    N, T = 3, 4
    x = make(N, T, device=device, seed=2)
    idx = torch.tensor([2, 5, 0], dtype=torch.int32, device=device)
    rows = torch.arange(N, dtype=torch.int32, device=device)
    pool, _ = ops.quantize_state(x["state"])
    before = bits(pool).clone()
    f32 = ops.dequantize_state(pool)
    bufs = [torch.zeros(N, T, 4, 16, 32, dtype=torch.bfloat16, device=device) for _ in range(2)]
    outs = [sglang(x, p, idx, disable_state_update=True, intermediate_states_buffer=buf,
                   intermediate_state_indices=rows) for p, buf in ((pool, bufs[0]), (f32, bufs[1]))]
    assert torch.equal(bits(pool), before)
    exact = device == "cpu"
    for got, want in ((outs[0], outs[1]), (bufs[0], bufs[1])):
        assert torch.equal(got, want) if exact else torch.allclose(
            got.float(), want.float(), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("device", DEVICES)
def test_a_layer_view_of_an_all_layer_pool_finds_its_scales(device):
    """FlashInfer's pool decode on layer 1 of a [layers, slots, ...] pool
    allocated by quantized_state: layer 1's slots and scales change, the
    other layers' do not; and the per-sequence state of
    gated_delta_rule_decode_pretranspose."""
    x = make(2, 1, device=device, seed=3)
    cache = ops.quantized_state((3, 6, 4, 16, 32), device=device)
    layer = cache[1]
    pool, _ = ops.quantize_state(x["state"])
    layer.copy_(pool)
    ops.state_scale_of(layer).copy_(ops.state_scale_of(pool))
    others = bits(cache)[[0, 2]].clone()
    idx = torch.tensor([4, 1], dtype=torch.int32, device=device)
    run = lambda p, **kw: ops.gated_delta_rule_decode_pretranspose(  # noqa: E731
        x["q"], x["k"], x["v"], None, x["A_log"], x["a"], x["dt_bias"], x["b"],
        initial_state=p, initial_state_indices=idx, **kw)
    o, _ = run(layer)
    o_ref, _ = run(pool)
    assert torch.equal(o, o_ref)
    assert torch.equal(bits(layer), bits(pool))
    assert torch.equal(ops.state_scale_of(layer), ops.state_scale_of(pool))
    assert torch.equal(bits(cache)[[0, 2]], others)
    # A per-sequence state [B, HV, V, K].
    per_seq, _ = ops.quantize_state(x["state"][:2].clone())
    f32 = ops.dequantize_state(per_seq)
    o1, _ = ops.gated_delta_rule_decode_pretranspose(
        x["q"], x["k"], x["v"], per_seq, x["A_log"], x["a"], x["dt_bias"], x["b"])
    o2, _ = ops.gated_delta_rule_decode_pretranspose(
        x["q"], x["k"], x["v"], f32, x["A_log"], x["a"], x["dt_bias"], x["b"])
    assert torch.equal(o1, o2) if device == "cpu" else torch.allclose(
        o1.float(), o2.float(), rtol=1e-2, atol=1e-2)
    assert rms_rel(ops.dequantize_state(per_seq).double().cpu().numpy(),
                   f32.double().cpu().numpy()) < 0.04


def test_accuracy_against_the_fp64_reference():
    """64 decode steps on an fp8 pool: o within 3e-2 RMS-relative of the
    fp64 reference run on the dequantized initial state (each step's store
    rounds to e4m3 again; one store alone is about 2.5e-2 RMS-relative:
    bench/results/quantized/accuracy.md)."""
    steps, N = 64, 2
    x = make(N, steps, K=64, V=64, slots=N, seed=4)
    pool, _ = ops.quantize_state(x["state"])
    s0 = ops.dequantize_state(pool).double().numpy()
    idx = torch.arange(N, dtype=torch.int32)
    outs = []
    for t in range(steps):
        one = {n: (v[:, t:t + 1].contiguous() if n in ("q", "k", "v", "a", "b") else v)
               for n, v in x.items()}
        outs.append(sglang(one, pool, idx))
    o = torch.cat(outs, 1).double().numpy()
    n64 = lambda t: t.double().numpy()  # noqa: E731
    ro, _ = ref_recurrent(n64(x["q"]), n64(x["k"]), n64(x["v"]), a=n64(x["a"]),
                          A_log=n64(x["A_log"]), dt_bias=n64(x["dt_bias"]), b=n64(x["b"]),
                          initial_state=s0, qk_l2norm=True, layout="vk")
    assert rms_rel(o, ro) < 3e-2


def test_refusals_name_the_argument():
    x = make(2, 1, seed=5)
    idx = torch.tensor([0, 1], dtype=torch.int32)
    bare = x["state"].to(FP8)  # no scales attached
    with pytest.raises(ValueError, match="initial_state_source: this float8_e4m3fn state has "
                                         "no row scales attached"):
        sglang(x, bare, idx)
    with pytest.raises(TypeError, match="pool must be float8_e4m3fn"):
        ops.attach_state_scale(x["state"], torch.zeros(6, 4, 16))
    with pytest.raises(ValueError, match="state_scale .* must hold one scale a row"):
        ops.attach_state_scale(bare, torch.zeros(6, 4, 15))
    with pytest.raises(ValueError, match="whole pool"):
        ops.attach_state_scale(bare[1:], torch.zeros(5, 4, 16))
    pool, _ = ops.quantize_state(x["state"])
    with pytest.raises(ValueError, match="initial_state: this float8_e4m3fn state has no row "
                                         "scales attached"):
        qkv = torch.cat([x["q"].flatten(1), x["k"].flatten(1), x["v"].flatten(1)], 1)
        ops.fused_recurrent_gated_delta_rule_packed_decode(
            qkv, x["a"][:, 0], x["b"][:, 0], x["A_log"], x["dt_bias"], None, bare,
            torch.empty_like(x["v"]), idx)
    with pytest.raises(TypeError, match="must have dtype"):
        ops.fused_recurrent_gated_delta_rule(x["q"], x["k"], x["v"], initial_state=pool[:2])
    ops.detach_state_scale(pool)
    with pytest.raises(ValueError, match="no row scales attached"):
        ops.state_scale_of(pool)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("stochastic", [False, True])
def test_packed_decode_on_an_fp8_pool(device, stochastic):
    """SGLang's packed decode (q, k, v read in place from mixed_qkv) on an
    fp8 pool stores the same e4m3 bytes and row scales, and the same out, as
    fused_sigmoid_gating_delta_rule_update on dense q, k, v (one kernel form
    on one pool dtype: bit for bit); a padding row touches nothing."""
    x = make(3, 1, device=device, seed=11)
    B, HV, V = 3, 4, 16
    idx = torch.tensor([4, -1, 1], dtype=torch.int32, device=device)
    pools = []
    for _ in range(2):
        p = ops.quantized_state(x["state"].shape, device=device, stochastic_rounding=stochastic)
        q, sc = ops.quantize_state(x["state"])
        p.copy_(q)
        ops.state_scale_of(p).copy_(sc)
        pools.append(p)
    before = bits(pools[0]).clone()
    qkv = torch.cat([x["q"].flatten(1), x["k"].flatten(1), x["v"].flatten(1)], 1)
    out = torch.full((B, 1, HV, V), float("nan"), dtype=torch.bfloat16, device=device)
    o, s = ops.fused_recurrent_gated_delta_rule_packed_decode(
        qkv, x["a"][:, 0], x["b"][:, 0], x["A_log"], x["dt_bias"], None, pools[0], out, idx,
        use_qk_l2norm_in_kernel=True)
    assert o is out and s is pools[0]
    o2 = sglang(x, pools[1], idx)
    assert torch.equal(out[[0, 2]], o2[[0, 2]]) and torch.count_nonzero(out[1]) == 0
    assert torch.equal(bits(pools[0]), bits(pools[1]))
    assert torch.equal(ops.state_scale_of(pools[0]), ops.state_scale_of(pools[1]))
    for slot in (0, 2, 3, 5):  # untouched slots
        assert torch.equal(bits(pools[0])[slot], before[slot])
    assert not torch.equal(bits(pools[0])[4], before[4])


@pytest.mark.parametrize("device", DEVICES)
def test_replayed_verify_and_commit_on_fp8_checkpoints(device):
    """SGLang's ring verify reads an fp8 pool; replay_commit of every row's
    accepted prefix equals a plain decode of those tokens on the fp8 pool
    (one quantization after the last token): bit for bit on the CPU."""
    N, T = 3, 4
    x = make(N, T, device=device, seed=6)
    idx = torch.tensor([4, 0, 2], dtype=torch.int32, device=device)
    accepted = torch.tensor([4, 0, 2], dtype=torch.int32, device=device)
    pool, _ = ops.quantize_state(x["state"])
    plain = pool.clone()
    ops.attach_state_scale(plain, ops.state_scale_of(pool).clone())
    before = bits(pool).clone()
    slots, HV, V, K = pool.shape
    H = x["q"].shape[2]
    rings = (torch.zeros(slots, HV, T, V, dtype=torch.bfloat16, device=device),
             torch.zeros(slots, H, T, K, dtype=torch.bfloat16, device=device),
             torch.zeros(slots, HV, T, device=device), torch.zeros(slots, HV, T, device=device))
    sglang(x, pool, idx, disable_state_update=True, cache_ring=True, replayssm_rawv=rings[0],
           replayssm_rawk=rings[1], replayssm_g=rings[2], replayssm_beta=rings[3])
    assert torch.equal(bits(pool), before)
    ops.replay_commit(rings[1], rings[0], rings[2], rings[3], accepted, pool, state_indices=idx)
    for n in range(N):
        a = int(accepted[n])
        if a == 0:
            continue
        rows = {k: (v[n:n + 1, :a].contiguous() if k in ("q", "k", "v", "a", "b") else v)
                for k, v in x.items()}
        sglang(rows, plain, idx[n:n + 1].clone())  # (a 16-byte aligned table)
    if device == "cpu":
        assert torch.equal(bits(pool), bits(plain))
        assert torch.equal(ops.state_scale_of(pool), ops.state_scale_of(plain))
    else:
        assert rms_rel(ops.dequantize_state(pool).double().cpu().numpy(),
                       ops.dequantize_state(plain).double().cpu().numpy()) < 1e-2
    assert torch.equal(bits(pool)[[1, 3, 5]], before[[1, 3, 5]])  # no row names them
    assert torch.equal(bits(pool)[0], before[0])  # accepted 0


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("buffer_dtype", [torch.float32, torch.bfloat16])
def test_commit_accepted_into_an_fp8_pool(device, buffer_dtype):
    """commit_accepted into an fp8 pool stores each committed step exactly
    as quantize_state would (bits and scales, CPU and GPU: the f32 values
    are the buffer's); padding rows, rows that accepted nothing and slots
    no row names keep their bytes and scales."""
    g = torch.Generator().manual_seed(7)
    slots, HV, V, K, R, T = 6, 4, 16, 32, 4, 3
    pool, _ = ops.quantize_state((torch.randn(slots, HV, V, K, generator=g) * 0.3).to(device))
    inter = (torch.randn(R, T, HV, V, K, generator=g) * 0.5).to(buffer_dtype).to(device)
    inter[2, 1, 3, 5] = 0  # a row of zeros: scale 0
    accepted = torch.tensor([3, 0, 2, 9], dtype=torch.int32, device=device)
    idx = torch.tensor([4, 1, 2, -1], dtype=torch.int32, device=device)
    rows = torch.tensor([0, 1, 2, 3], dtype=torch.int32, device=device)
    before, scale_before = bits(pool).clone(), ops.state_scale_of(pool).clone()
    ops.commit_accepted(inter, accepted, pool, state_indices=idx, intermediate_state_indices=rows)
    for slot, (row, step) in {4: (0, 2), 2: (2, 1)}.items():
        want, want_scale = ops.quantize_state(inter[row, step].float())
        assert torch.equal(bits(pool)[slot], bits(want))
        assert torch.equal(ops.state_scale_of(pool)[slot], want_scale)
    assert (ops.state_scale_of(pool)[2, 3, 5] == 0).all()
    for slot in (0, 1, 3, 5):  # accepted 0, padding, or named by no row
        assert torch.equal(bits(pool)[slot], before[slot])
        assert torch.equal(ops.state_scale_of(pool)[slot], scale_before[slot])


def test_commit_accepted_into_an_fp8_pool_needs_its_scales():
    pool = torch.zeros(2, 1, 8, 8, dtype=FP8)
    inter = torch.zeros(2, 1, 1, 8, 8)
    with pytest.raises(ValueError, match="state: this float8_e4m3fn state has no row scales"):
        ops.commit_accepted(inter, torch.ones(2, dtype=torch.int32), pool)


# float8_e4m3fn per-token states (intermediate_state_scale): the verify
# buffer itself quantized a row at a time.


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("tree", [False, True])
def test_verify_writes_fp8_per_token_states(device, tree):
    """SGLang's verify over an fp8 pool into an fp8 buffer (scales
    attached): o equals that of the same call into a float32 buffer and
    every stored step is quantize_state of the float32 buffer's step, bit
    for bit on the CPU. A tree reads its parents back as e4m3 x scale, so
    it is checked against a chain-by-chain model instead: each step is the
    decode of its token from its parent's stored (quantized) state. Rows
    without a buffer row (index < 0) write nothing."""
    N, T, HV, V, K = 3, 4, 4, 16, 32
    x = make(N, T, device=device, seed=11)
    idx = torch.tensor([2, 5, 0], dtype=torch.int32, device=device)
    rows = torch.tensor([1, -1, 0], dtype=torch.int32, device=device)
    pool, _ = ops.quantize_state(x["state"])
    fp8 = ops.quantized_state((3, T, HV, V, K), device=device)
    fp8_scales = ops.state_scale_of(fp8)
    fp8_scales.fill_(7.0)  # buffer row 2 is no sequence's: it must stay
    fp8.view(torch.uint8).fill_(0x3C)
    before = bits(fp8).clone()
    kw = dict(disable_state_update=True, intermediate_state_indices=rows)
    if tree:
        kw["retrieve_parent_token"] = torch.tensor(
            [[-1, 0, 0, 2], [-1, 0, 1, 2], [-1, 0, 1, 0]], dtype=torch.int32, device=device)
    o8 = sglang(x, pool, idx, intermediate_states_buffer=fp8, **kw)
    if not tree:
        f32 = torch.zeros(3, T, HV, V, K, device=device)
        o32 = sglang(x, pool, idx, intermediate_states_buffer=f32, **kw)
        want, want_scale = ops.quantize_state(f32[[1, 0]])
        exact = device == "cpu"
        got, got_scale = fp8[[1, 0]], fp8_scales[[1, 0]]
        if exact:
            assert torch.equal(o8, o32)
            assert torch.equal(bits(got), bits(want))
            assert torch.equal(got_scale, want_scale)
        else:
            assert torch.allclose(o8.float(), o32.float(), rtol=1e-2, atol=1e-2)
            assert rms_rel(ops.dequantize_state(got, state_scale=got_scale).double().cpu().numpy(),
                           f32[[1, 0]].double().cpu().numpy()) < 4e-2
    else:
        # Step s of row n: one decode of token s from the stored parent state
        # (the initial pool state for s = 0), checked within e4m3 rounding.
        parents = kw["retrieve_parent_token"].cpu()
        for n, row in ((0, 1), (2, 0)):
            for s in range(T):
                p = int(parents[n, s])
                start = (ops.dequantize_state(fp8[row, p], state_scale=fp8_scales[row, p])
                         if s > 0 and p >= 0 else ops.dequantize_state(pool)[idx[n]])
                one = {k_: t[n:n + 1, s:s + 1].clone() for k_, t in x.items()
                       if k_ not in ("state", "A_log", "dt_bias")}  # aligned copies
                one.update(A_log=x["A_log"], dt_bias=x["dt_bias"])
                buf = torch.zeros(1, 1, HV, V, K, device=device)
                o1 = sglang(one, start[None].contiguous(),
                            torch.zeros(1, dtype=torch.int32, device=device),
                            disable_state_update=True, intermediate_states_buffer=buf,
                            intermediate_state_indices=torch.zeros(1, dtype=torch.int32,
                                                                   device=device))
                got = ops.dequantize_state(fp8[row, s], state_scale=fp8_scales[row, s])
                assert rms_rel(got.double().cpu().numpy(), buf[0, 0].double().cpu().numpy()) < 4e-2
                assert torch.allclose(o8[n, s].float(), o1[0, 0].float(), rtol=2e-2, atol=2e-2)
    # Rows 1 and 0 were written (every step's scales replaced); row 2, which
    # no sequence names (sequence 1 has index -1), kept its bytes and scales.
    assert not (fp8_scales[:2] == 7.0).any()
    assert torch.equal(bits(fp8)[2], before[2]) and (fp8_scales[2] == 7.0).all()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", ["vk", "kv"])
def test_commit_accepted_from_an_fp8_buffer(device, layout):
    """commit_accepted from an fp8 buffer: into an fp8 pool the committed
    step's e4m3 bits and row scales unchanged (vk; kv on the CPU), into a
    bfloat16 pool e4m3 x scale rounded once, in either layout; padding rows,
    rows that accepted nothing and slots no row names keep their bytes and
    scales."""
    g = torch.Generator().manual_seed(9)
    slots, HV, V, K, R, T = 6, 4, 16, 32, 4, 3
    shape = (R, T, HV, V, K) if layout == "vk" else (R, T, HV, K, V)
    inter, _ = ops.quantize_state(torch.randn(*shape, generator=g).to(device) * 0.5, layout)
    inter_scale = ops.state_scale_of(inter, layout)
    accepted = torch.tensor([3, 0, 2, 9], dtype=torch.int32, device=device)
    idx = torch.tensor([4, 1, 2, -1], dtype=torch.int32, device=device)
    rows = torch.tensor([0, 1, 2, 3], dtype=torch.int32, device=device)
    committed = {4: (0, 2), 2: (2, 1)}
    pool_shape = (slots,) + shape[2:]
    bf16 = torch.randn(*pool_shape, generator=g).bfloat16().to(device)
    bf16_before = bf16.clone()
    ops.commit_accepted(inter, accepted, bf16, state_indices=idx,
                        intermediate_state_indices=rows, layout=layout)
    for slot, (row, step) in committed.items():
        want = ops.dequantize_state(inter[row, step], layout, inter_scale[row, step]).bfloat16()
        assert torch.equal(bf16[slot], want)
    for slot in (0, 1, 3, 5):
        assert torch.equal(bf16[slot], bf16_before[slot])
    if layout == "kv" and device != "cpu":
        return  # an fp8 pool in kv is quantized on the CPU only (the GPU refuses it)
    pool, _ = ops.quantize_state(torch.randn(*pool_shape, generator=g).to(device), layout)
    before, scale_before = bits(pool).clone(), ops.state_scale_of(pool, layout).clone()
    ops.commit_accepted(inter, accepted, pool, state_indices=idx,
                        intermediate_state_indices=rows, layout=layout)
    for slot, (row, step) in committed.items():
        assert torch.equal(bits(pool)[slot], bits(inter)[row, step])
        assert torch.equal(ops.state_scale_of(pool, layout)[slot], inter_scale[row, step])
    for slot in (0, 1, 3, 5):
        assert torch.equal(bits(pool)[slot], before[slot])
        assert torch.equal(ops.state_scale_of(pool, layout)[slot], scale_before[slot])


def test_fp8_per_token_states_need_their_scales():
    """An fp8 buffer without attached scales is a ValueError naming it."""
    x = make(1, 2, seed=3)
    pool, _ = ops.quantize_state(x["state"])
    bare = torch.zeros(1, 2, 4, 16, 32, dtype=FP8)
    with pytest.raises(ValueError, match="intermediate_states_buffer: this float8_e4m3fn state "
                                         "has no row scales"):
        sglang(x, pool, torch.zeros(1, dtype=torch.int32), disable_state_update=True,
               intermediate_states_buffer=bare,
               intermediate_state_indices=torch.zeros(1, dtype=torch.int32))
    with pytest.raises(ValueError, match="intermediate_states: this float8_e4m3fn state"):
        ops.commit_accepted(bare, torch.ones(1, dtype=torch.int32), pool[:1])


def _e4m3_neighbours(y):
    """(lower magnitude, spacing) of |y| on the e4m3 grid: |y| lies in
    [lower, lower + spacing), spacing 2^(max(e, -6) - 3) for 2^e <= |y|."""
    a = y.abs().double()
    e = torch.floor(torch.log2(torch.where(a > 0, a, torch.ones_like(a))))
    spacing = torch.exp2(torch.clamp(e, min=-6) - 3)
    return torch.floor(a / spacing) * spacing, spacing


def _rounded(stored, f32):
    """How e4m3 `stored` rounded the row-scaled float32 state `f32` ([...,
    V, K] rows): (y = f32 x 448 / amax, stored as float, the lower e4m3
    neighbour of |y|, the spacing, 0 / 1 for the lower / upper neighbour
    stored, y's fraction of the way to the upper, whether stored is one of
    the two), on the CPU."""
    amax = f32.abs().amax(-1, keepdim=True)
    inv = torch.where(amax != 0, torch.full_like(amax, 448.0) / amax, torch.zeros_like(amax))
    y = (f32 * inv).cpu()
    got = stored.float().cpu()
    lower, spacing = _e4m3_neighbours(y)
    up = (got.abs().double() - lower) / spacing  # 0: lower, 1: upper
    assert (torch.sign(got) * torch.sign(y) >= 0).all()
    frac = (y.abs().double() - lower) / spacing
    return y, got, lower, spacing, up, frac, (up == 0) | (up == 1)


@pytest.mark.parametrize("device", DEVICES)
def test_stochastic_rounding_stores_a_neighbour_with_the_odds_of_its_nearness(device):
    """A pool with stochastic_rounding: every stored e4m3 element is one of
    the two e4m3 neighbours of the float32 value the kernel rounds (the
    f32 pool's result times 448 / its row's amax), the upper one about as
    often as the value's fraction of the way to it (binned), so the stored
    state is unbiased on average; the row scales are those of rounding to
    nearest, and the same inputs store the same bits."""
    if device == "cuda":  # one schedule for both, so their f32 states agree
        ops.set_schedule(columns_per_lane=4, lanes_along_v=2, warps=2, staged_tokens=0)
    try:
        x = make(8, 1, H=4, HV=8, K=64, V=32, slots=8, device=device, seed=3)
        idx = torch.arange(8, dtype=torch.int32, device=device)
        pool, _ = ops.quantize_state(x["state"])
        scale0 = ops.state_scale_of(pool).clone()
        f32 = ops.dequantize_state(pool)
        again = pool.clone()
        ops.attach_state_scale(pool, ops.state_scale_of(pool), stochastic_rounding=True)
        ops.attach_state_scale(again, scale0.clone(), stochastic_rounding=True)
        assert ops.stochastic_rounding_of(pool) and ops.stochastic_rounding_of(pool[2:4])
        assert not ops.stochastic_rounding_of(f32)
        o = sglang(x, pool, idx)
        o32 = sglang(x, f32, idx)
        sglang(x, again, idx)
        assert torch.equal(bits(pool), bits(again))  # deterministic
        _, want_scale = ops.quantize_state(f32)
        if device == "cpu":
            assert torch.equal(o, o32)
            assert torch.equal(ops.state_scale_of(pool), want_scale)
        y, got, lower, spacing, up, frac, on_grid = _rounded(pool, f32)
        exact = frac == 0
        if device == "cpu":
            assert on_grid.all()
            assert (up[exact] == 0).all()  # a value on the grid is kept
        else:  # float32 rounding apart (fma), a few elements elsewhere
            # (No bit-for-bit comparison with the CPU: the random bits hash
            # the f32 value rounded, which differs from the CPU's in its
            # last bits wherever the GPU kept the row scale in the decay,
            # docs/math.md §6; on the H200 a fifth of the stored bytes then
            # differed. Determinism on one device is checked above.)
            assert on_grid.float().mean() > 0.99
        for lo, hi in ((0.05, 0.3), (0.35, 0.65), (0.7, 0.95)):
            sel = on_grid & (frac >= lo) & (frac < hi)
            assert sel.sum() > 2000
            odds, nearness = up[sel].mean().item(), frac[sel].mean().item()
            assert abs(odds - nearness) < 0.02, (lo, hi, odds, nearness)
        # Unbiased: the mean error over the state is a small fraction of a
        # spacing; rounding to nearest of the same values differs in sign
        # per element but never rounds up below half a spacing.
        err = ((got.abs().double() - y.abs().double()) / spacing)[on_grid]
        assert abs(err.mean().item()) < 0.01
        rne = ops.quantize_state(f32)[0].float().cpu()
        rne_up = (rne.abs().double() - lower) / spacing
        assert (rne_up[frac < 0.45] == 0).all() and (up[frac < 0.45] == 1).any()
    finally:
        ops.set_schedule()


def test_stochastic_rounding_needs_an_e4m3_store():
    """The op's verifier through the C API: stochastic rounding of a state
    that is not e4m3 is a compile error naming the attribute."""
    import gdn
    with pytest.raises(gdn.GDNError, match="attribute 'stochastic_rounding' needs an f8E4M3FN"):
        gdn.Compiler().compile(N=1, T=1, H=1, HV=1, K=16, V=16, input_dtype="float32",
                               initial_state=True, final_state=True, state_in_place=True,
                               state_dtype="float32", stochastic_rounding=True)
    with pytest.raises(TypeError, match="stochastic_rounding"):
        ops.quantized_state((1, 1, 4, 4), stochastic_rounding=1)


def test_stochastic_rounding_of_fp8_per_token_states():
    """A verify into an fp8 buffer with stochastic_rounding (the pool only
    read, rounding to nearest asked for by nobody else): every stored step
    element is an e4m3 neighbour of the float32 buffer's step times 448 /
    amax, some of them not the nearest, with the same scales and o."""
    N, T, HV, V, K = 3, 4, 4, 16, 32
    x = make(N, T, seed=12)
    idx = torch.tensor([2, 5, 0], dtype=torch.int32)
    rows = torch.tensor([1, 2, 0], dtype=torch.int32)
    pool, _ = ops.quantize_state(x["state"])
    before = bits(pool).clone()
    fp8 = ops.quantized_state((3, T, HV, V, K), stochastic_rounding=True)
    kw = dict(disable_state_update=True, intermediate_state_indices=rows)
    o8 = sglang(x, pool, idx, intermediate_states_buffer=fp8, **kw)
    f32 = torch.zeros(3, T, HV, V, K)
    o32 = sglang(x, pool, idx, intermediate_states_buffer=f32, **kw)
    assert torch.equal(o8, o32) and torch.equal(bits(pool), before)
    assert torch.equal(ops.state_scale_of(fp8), ops.quantize_state(f32)[1])
    _, _, _, _, up, frac, on_grid = _rounded(fp8, f32)
    assert on_grid.all()
    assert (up[frac < 0.45] == 1).any() and (up[frac > 0.55] == 0).any()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("stochastic", [False, True])
def test_a_row_too_small_to_invert_stores_zeros_not_nan(device, stochastic):
    """A row whose max |S| is below 2^-119 (448 / amax overflows float32)
    stores its elements as 0, not 0 x inf = NaN: in quantize_state and in a
    decode whose decayed state falls there (k = v = 0)."""
    tiny = torch.zeros(1, 2, 4, 8)
    tiny[0, 0, 1, 3] = 1e-37
    pool, scale = ops.quantize_state(tiny)
    assert not torch.isnan(pool.float()).any() and (pool.float() == 0).all()
    x = make(1, 1, H=1, HV=2, K=16, V=8, slots=2, device=device, seed=5)
    x["k"].zero_()
    x["v"].zero_()
    pool = ops.quantized_state((2, 2, 8, 16), device=device, stochastic_rounding=stochastic)
    pool[0, :, :, 0] = 448.0  # e4m3 448 x a scale of 2e-37 / 448
    ops.state_scale_of(pool).fill_(2e-37 / 448)
    sglang(x, pool, torch.zeros(1, dtype=torch.int32, device=device))
    assert not torch.isnan(pool.float()).any()
    assert (pool[0].float() == 0).all()
    assert torch.isfinite(ops.state_scale_of(pool)).all()


def test_a_tree_refuses_stochastically_rounded_parents():
    """An EAGLE tree reads its fp8 per-token states back as parents: with
    stochastic rounding asked for on that buffer, SGLang's entry point
    raises NotImplementedError naming the arguments before any launch."""
    N, T, HV, V, K = 1, 2, 4, 16, 32
    x = make(N, T, seed=13)
    pool, _ = ops.quantize_state(x["state"])
    inter = ops.quantized_state((1, T, HV, V, K), stochastic_rounding=True)
    with pytest.raises(NotImplementedError, match="retrieve_parent_token.*stochastic_rounding"):
        sglang(x, pool, torch.zeros(1, dtype=torch.int32), disable_state_update=True,
               intermediate_states_buffer=inter,
               intermediate_state_indices=torch.zeros(1, dtype=torch.int32),
               retrieve_parent_token=torch.tensor([[-1, 0]], dtype=torch.int32))


def test_a_pitched_fp8_pool_is_refused_not_scaled_at_other_slots():
    """A slot-pitched view of an fp8 pool (one layer of a [slots, layers,
    ...] cache) has row scales with the same pitch, which the kernels (dense
    state_scale) cannot address: refused naming the argument, the cache
    untouched (it used to read and write other slots' scales)."""
    from gdn.ops._checks import _StridedInPlace
    B, T, slots, layers, H, HV, K, V = 2, 1, 3, 2, 1, 2, 16, 16
    g = torch.Generator().manual_seed(0)
    r = lambda *s: torch.randn(*s, generator=g)  # noqa: E731
    q, k, v = r(B, T, H, K), r(B, T, H, K), r(B, T, HV, V)
    cache = ops.quantized_state((slots, layers, HV, V, K))
    p, s = ops.quantize_state(r(slots, layers, HV, V, K))
    cache.copy_(p)
    ops.state_scale_of(cache).copy_(s)
    before, scales = cache.clone(), ops.state_scale_of(cache).clone()
    idx = torch.tensor([0, 2], dtype=torch.int32)
    with pytest.raises(_StridedInPlace, match="argument 'initial_state_source' is a "
                                              "float8_e4m3fn view whose row scales are strided"):
        ops.fused_sigmoid_gating_delta_rule_update(
            torch.rand(HV), r(B, T, HV), r(HV), 1.0, 20.0, q, k, v, r(B, T, HV), cache[:, 1],
            idx)
    assert torch.equal(cache.view(torch.uint8), before.view(torch.uint8))
    assert torch.equal(ops.state_scale_of(cache), scales)


def test_quantized_helpers_name_their_bad_arguments():
    HV, V, K = 2, 16, 16
    pool = torch.zeros(2, HV, V, K, dtype=torch.float8_e4m3fn)
    with pytest.raises(ValueError, match=r"state_scale \[0\] must hold one scale a row"):
        ops.attach_state_scale(pool, torch.zeros(0))  # was a ZeroDivisionError
    for call in (lambda: ops.quantize_state(torch.zeros(2, HV, V, K), layout="KV"),
                 lambda: ops.dequantize_state(ops.quantized_state((2, HV, V, K)), layout="x"),
                 lambda: ops.state_scale_of(ops.quantized_state((2, HV, V, K)), layout="")):
        with pytest.raises(ValueError, match="layout must be 'vk' or 'kv'"):
            call()
    with pytest.raises(ValueError, match=r"pool must be a tensor \[\.\.\., HV, V, K\]"):
        ops.state_scale_of(ops.quantized_state((2, HV, V, K)).flatten())
    with pytest.raises(ValueError, match=r"state_scale must have shape \[2, 2, 16\]"):
        ops.dequantize_state(ops.quantized_state((2, HV, V, K)), state_scale=torch.zeros(3))



@pytest.mark.parametrize("layout", ["vk", "kv"])
@pytest.mark.parametrize("shape", [(1, 2, 4, 0), (1, 2, 0, 4), (1, 0, 4, 4), (0, 2, 4, 4)],
                         ids=["last", "inner", "heads", "rows"])
def test_an_empty_dimension_is_a_value_error_naming_the_argument(shape, layout):
    """quantize_state of a state with an empty K dimension was an
    IndexError from torch.amax, and with another empty dimension (V, HV,
    rows) a ValueError naming the internal state_scale; quantized_state's
    empty shape too. Both now name their argument. dequantize_state of an
    empty pool with its scales given returns the empty float32 state."""
    with pytest.raises(ValueError, match=r"state must have every dimension >= 1 .*got shape "
                                         + re.escape(str(list(shape)))):
        ops.quantize_state(torch.zeros(shape), layout=layout)
    with pytest.raises(ValueError, match=r"shape must have every dimension >= 1"):
        ops.quantized_state(shape, layout=layout)
    rows = shape[:-2] + ((shape[-2],) if layout == "vk" else (shape[-1],))
    back = ops.dequantize_state(torch.zeros(shape, dtype=FP8), layout, torch.zeros(rows))
    assert back.shape == shape and back.dtype == torch.float32


def test_a_wrong_dtype_or_device_is_refused_naming_the_argument():
    """dequantize_state returned float64 for a float64 state_scale (its
    result is float32), and took float16 or integer scales, a pool that is
    not e4m3, or a 1-D pool (an IndexError) as they came; quantize_state
    requantized an e4m3 pool's bytes without their scales. Each is now the
    error attach_state_scale gives: TypeError for a dtype, ValueError for a
    shape or device, naming the argument."""
    HV, V, K = 2, 4, 8
    pool, scale = ops.quantize_state(torch.randn(3, HV, V, K))
    for dtype in (torch.float64, torch.float16, torch.int32):
        with pytest.raises(TypeError, match=f"state_scale must be float32, got {dtype}"):
            ops.dequantize_state(pool, state_scale=scale.to(dtype))
    assert ops.dequantize_state(pool, state_scale=scale).dtype == torch.float32
    with pytest.raises(ValueError, match="state_scale is on meta, pool on cpu"):
        ops.dequantize_state(pool, state_scale=scale.to("meta"))
    with pytest.raises(TypeError, match="pool must be float8_e4m3fn, got torch.bfloat16"):
        ops.dequantize_state(pool.float().bfloat16(), state_scale=scale)
    with pytest.raises(ValueError, match=r"pool must be a tensor \[\.\.\., HV, V, K\]"):
        ops.dequantize_state(pool.flatten(), state_scale=scale.flatten())
    for state in (pool, torch.randn(3, HV, V, K, dtype=torch.float64)):
        with pytest.raises(TypeError, match="state must be float32, bfloat16 or float16, got "
                                            f"{state.dtype}"):
            ops.quantize_state(state)


def test_a_transposed_view_is_refused_not_scaled_across():
    """With K = V a transposed view of a "vk" pool has the pool's shape:
    dequantize_state scaled its elements by the scales of the other
    dimension (silently wrong). Refused now; with the scales given, the
    view is read through its strides in its own layout. quantize_state
    reads a strided state as its contiguous copy."""
    s = torch.randn(2, 2, 8, 8)
    pool, scale = ops.quantize_state(s)
    view = pool.transpose(-1, -2)
    with pytest.raises(ValueError, match="does not hold the pool's rows in its two inner "
                                         "dimensions"):
        ops.dequantize_state(view)
    want = ops.dequantize_state(pool).transpose(-1, -2)
    assert torch.equal(ops.dequantize_state(view, "kv", scale), want)
    strided, strided_scale = ops.quantize_state(s.transpose(-1, -2), layout="kv")
    assert torch.equal(bits(strided).transpose(-1, -2), bits(pool))
    assert torch.equal(strided_scale, scale)

def test_a_kv_view_keeps_its_columns_scales():
    """In "kv" a scale belongs to a (head, value column): a view one K row
    into a head, or of fewer value columns than the pool's, passed the
    checks of a "vk" row (offset and strides a multiple of K) and was
    scaled by other columns' scales (dequantize_state off by 20 of 25).
    Refused now; a view of whole heads finds its columns' scales."""
    K, V = 16, 16
    state = torch.randn(2, 2, K, V) * torch.linspace(0.1, 10, V)  # distinct column scales
    pool, scale = ops.quantize_state(state, layout="kv")
    whole = ops.dequantize_state(pool, layout="kv")
    with pytest.raises(ValueError, match="does not start at a head"):
        ops.dequantize_state(pool.view(-1)[K:K + K * V].view(1, 1, K, V), layout="kv")
    with pytest.raises(ValueError, match="has 8 value columns where the pool has 16"):
        ops.dequantize_state(pool.view(-1)[:K * 8].view(1, 1, K, 8), layout="kv")
    head = pool.view(-1)[3 * K * V:4 * K * V].view(1, 1, K, V)  # slot 1, head 1
    assert torch.equal(ops.state_scale_of(head, "kv"), scale[1:, 1:])
    assert torch.equal(ops.dequantize_state(head, layout="kv"), whole[1:, 1:])


def test_a_view_past_the_attached_pool_is_refused():
    """Scales attached to a pool that is a prefix of its storage (and
    scales that are a prefix of theirs): a view of the same storage past
    the pool has no scales, and reading it would have read and written the
    memory after them."""
    x = make(2, 1, seed=7)
    big = torch.zeros(6, 4, 16, 32, dtype=FP8)
    other = torch.full((6, 4, 16), 123.0)
    ops.attach_state_scale(big[:3], other[:3])
    idx = torch.tensor([0, 1], dtype=torch.int32)
    with pytest.raises(ValueError, match=r"initial_state_source: the view \[3, 4, 16, 32\] "
                                         r"reaches rows 192\.\.383 of a pool with 192 rows"):
        sglang(x, big[3:], idx)
    with pytest.raises(ValueError, match="reaches rows"):
        sglang(x, big, idx)
    assert (other == 123.0).all()  # nothing past the attached scales was touched
    sglang(x, big[1:3], idx)  # a view within the pool still runs
    assert not (other[1:3] == 123.0).all() and (other[3:] == 123.0).all()
    ops.detach_state_scale(big)


@pytest.mark.parametrize("attached, read", [("vk", "kv"), ("kv", "vk")])
def test_a_pool_is_read_in_the_layout_its_scales_were_attached_for(attached, read):
    """With K = V the two layouts have the same shape; a pool quantized
    (or allocated) for one and passed to an entry point of the other would
    have its rows read across, silently wrong (o 30 % off): refused."""
    x = make(2, 1, H=2, HV=4, K=16, V=16, slots=2, seed=8)
    pool, _ = ops.quantize_state(x["state"], layout=attached)
    assert ops.state_scale_of(pool, attached).shape == (2, 4, 16)
    with pytest.raises(ValueError, match=f"attached for layout '{attached}', and it is read "
                                         f"as '{read}'"):
        if read == "kv":
            ops.gated_delta_rule_decode(x["q"], x["k"], x["v"], pool, x["A_log"], x["a"],
                                        x["dt_bias"], x["b"])
        else:
            sglang(x, pool, torch.tensor([0, 1], dtype=torch.int32))
    with pytest.raises(ValueError, match="attached for layout"):
        ops.dequantize_state(pool, layout=read)
    fresh = ops.quantized_state((2, 4, 16, 16), layout=attached)
    with pytest.raises(ValueError, match="attached for layout"):
        ops.state_scale_of(fresh, read)
    with pytest.raises(ValueError, match="layout must be"):
        ops.attach_state_scale(pool, ops.state_scale_of(pool, attached), layout="KV")


def test_the_op_names_a_missing_or_stray_state_scale():
    """torch.ops.gdn.recurrent called directly: a float8_e4m3fn state
    without state_scale, or state_scale with a float32 state, is a
    ValueError naming it (was the kernel lookup's internal RuntimeError)."""
    N, T, H, HV, K, V = 2, 1, 1, 2, 32, 16
    g = torch.Generator().manual_seed(0)
    r = lambda *s: torch.randn(*s, generator=g)  # noqa: E731
    q, k, v = r(N, T, H, K), r(N, T, H, K), r(N, T, HV, V)
    beta, o = torch.rand(N, T, HV), torch.empty(N, T, HV, V)

    def op(final, state_scale):
        torch.ops.gdn.recurrent(q, k, v, None, None, None, None, beta, None, None, None, None,
                                None, None, None, final, o, None, None, None, None, state_scale,
                                None, None, None, None, None, False, "vk")
    with pytest.raises(ValueError, match="state_scale goes with a float8_e4m3fn .*got "
                                         "final_state in torch.float8_e4m3fn and state_scale "
                                         "None"):
        op(torch.zeros(N, HV, V, K, dtype=FP8), None)
    with pytest.raises(ValueError, match="got final_state in torch.float32 and state_scale "
                                         "given"):
        op(torch.zeros(N, HV, V, K), torch.zeros(N, HV, V))
    op(torch.zeros(N, HV, V, K), None)  # the same call without the stray scale runs
    assert o.isfinite().all()
