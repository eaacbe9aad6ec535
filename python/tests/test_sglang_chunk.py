"""gdn.ops.sglang_chunk_gated_delta_rule: SGLang 0.5.23's prefill entry point
(sglang.kernels.ops.attention.fla.chunk.chunk_gated_delta_rule) on a pool
read and written in place, against the fp64 reference, and SGLang's own
argument rules."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gdn.ops as ops  # noqa: E402
from reference import recurrent, rms_rel  # noqa: E402

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
H, HV, K, V = 2, 4, 32, 16
bf16 = torch.bfloat16


def np64(t):
    return t.detach().double().cpu().numpy()


def inputs(lens, slots, device, seed=0, state_dtype=torch.float32, dims=(H, HV, K, V)):
    """Packed varlen q, k, v [1, T, ...] bf16, g [1, T, HV] float32 log
    decay, beta [1, T, HV] float32 (as SGLang's fused_gdn_gating gives
    them), cu_seqlens, and a vk pool; dims = (H, HV, K, V)."""
    H, HV, K, V = dims
    g = torch.Generator().manual_seed(seed)
    r = lambda *s: torch.randn(*s, generator=g)  # noqa: E731
    T = sum(lens)
    x = dict(q=r(1, T, H, K).to(bf16), k=r(1, T, H, K).to(bf16), v=r(1, T, HV, V).to(bf16),
             g=torch.nn.functional.logsigmoid(r(1, T, HV) + 2), beta=torch.sigmoid(r(1, T, HV)),
             cu=torch.tensor(np.concatenate([[0], np.cumsum(lens)]), dtype=torch.int32),
             pool=r(slots, HV, V, K).to(state_dtype))
    return {n: t.to(device) for n, t in x.items()}


def reference(x, lens, starts):
    """fp64 o [T, HV, V] and final states of each sequence from starts[n]
    (a vk state or None: zeros)."""
    cu = np.concatenate([[0], np.cumsum(lens)])
    o, finals = np.zeros((cu[-1],) + tuple(x["v"].shape[2:])), []
    for n, s0 in enumerate(starts):
        seg = lambda t: np64(t[:, cu[n]:cu[n + 1]])  # noqa: E731
        on, sn = recurrent(seg(x["q"]), seg(x["k"]), seg(x["v"]), g=seg(x["g"]),
                           beta=seg(x["beta"]),
                           initial_state=None if s0 is None else np64(s0)[None],
                           qk_l2norm=True, layout="vk")
        o[cu[n]:cu[n + 1]] = on[0]
        finals.append(sn[0])
    return o, finals


def call(x, **kw):
    return ops.sglang_chunk_gated_delta_rule(x["q"], x["k"], x["v"], x["g"], x["beta"],
                                             cu_seqlens=x["cu"], use_qk_l2norm_in_kernel=True,
                                             **kw)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("state_dtype", [torch.float32, torch.bfloat16])
def test_pool_in_place(device, state_dtype):
    """Each sequence starts from its slot and its final state is written
    back (rounded once to the pool's dtype); a padding row (index -1)
    touches nothing and its o rows are zero; an empty sequence keeps its
    slot; other slots are untouched; returns (o, None, None)."""
    lens, idx, slots = [5, 0, 40, 3], [3, 0, -1, 1], 6
    x = inputs(lens, slots, device, state_dtype=state_dtype)
    p0 = x["pool"].clone()
    indices = torch.tensor(idx, dtype=torch.int32, device=device)
    o, none, h = call(x, initial_state=x["pool"], initial_state_indices=indices)
    assert none is None and h is None and o.shape == x["v"].shape and o.dtype == bf16
    ro, finals = reference(x, lens, [p0[3], p0[0], None, p0[1]])
    real = np.r_[0:5, 45:48]  # the padding row's 40 tokens are zero
    assert rms_rel(np64(o[0])[real], ro[real]) < 1e-2
    assert torch.count_nonzero(o[0, 5:45]) == 0
    tol = 1e-5 if state_dtype == torch.float32 else 1e-2
    for slot, final in ((3, finals[0]), (1, finals[3]), (0, finals[1])):
        assert rms_rel(np64(x["pool"][slot]), final) < tol
    for slot in (2, 4, 5):
        assert torch.equal(x["pool"][slot], p0[slot])


@pytest.mark.parametrize("device", DEVICES)
def test_read_only_and_per_sequence_states(device):
    """inplace_update=False (SGLang's multi-item scoring) reads the pool
    only, with the same o; without indices initial_state holds one state a
    sequence, updated in place; without initial_state every sequence starts
    from zero and nothing is written."""
    lens = [7, 12]
    x = inputs(lens, 4, device, seed=1)
    p0 = x["pool"].clone()
    idx = torch.tensor([2, 0], dtype=torch.int32, device=device)
    o_ro, _, _ = call(x, initial_state=x["pool"], initial_state_indices=idx,
                      inplace_update=False)
    assert torch.equal(x["pool"], p0)
    o, _, _ = call(x, initial_state=x["pool"], initial_state_indices=idx)
    assert torch.equal(o_ro, o)
    states = p0[[2, 0]].clone()
    o2, _, _ = call(x, initial_state=states)
    assert torch.equal(o2, o) and torch.equal(states, x["pool"][[2, 0]])
    o3, _, _ = call(x)
    ro, _ = reference(x, lens, [None, None])
    assert rms_rel(np64(o3[0]), ro) < 1e-2


@pytest.mark.parametrize("device", DEVICES)
def test_fp8_pool(device):
    """A float8_e4m3fn pool with its row scales attached: the e4m3 state
    read, the final state stored with new scales."""
    lens = [9, 4]
    x = inputs(lens, 3, device, seed=2)
    pool, _ = ops.quantize_state(x["pool"])
    start = ops.dequantize_state(pool).clone()
    idx = torch.tensor([1, 2], dtype=torch.int32, device=device)
    o, _, _ = call(x, initial_state=pool, initial_state_indices=idx)
    ro, finals = reference(x, lens, [start[1], start[2]])
    assert rms_rel(np64(o[0]), ro) < 1e-2
    back = ops.dequantize_state(pool)
    assert rms_rel(np64(back[1]), finals[0]) < 5e-2 and rms_rel(np64(back[2]), finals[1]) < 5e-2
    assert torch.equal(back[0], start[0])


def test_sglang_rules():
    """SGLang's own refusals, with its messages: head_first, B != 1 with
    cu_seqlens, an index table that is not one entry a sequence."""
    x = inputs([3, 2], 3, "cpu")
    with pytest.raises(DeprecationWarning, match="head_first is deprecated"):
        call(x, head_first=True)
    two = {n: (t.expand(2, *t.shape[1:]) if n in ("q", "k", "v", "g", "beta") else t)
           for n, t in x.items()}
    with pytest.raises(ValueError, match="batch size is expected to be 1"):
        call(two, initial_state=x["pool"][:2])
    with pytest.raises(ValueError, match="initial_state_indices"):
        call(x, initial_state=x["pool"],
             initial_state_indices=torch.tensor([0, 1, 2], dtype=torch.int32))
    with pytest.raises(ValueError, match="one state a sequence"):
        call(x, initial_state=x["pool"])


@pytest.mark.skipif(not torch.cuda.is_available(), reason="the tensor-core solve runs on CUDA")
@pytest.mark.parametrize("precision", ["bf16", "tf32x3"])
@pytest.mark.parametrize("solve", ["tensor_cores", "chunk_parallel"])
def test_fp8_pool_on_tensor_cores(precision, solve):
    """The chunked solve on tensor cores (its state in mma fragments) on a
    float8_e4m3fn pool, in one launch or in chunk_parallel's two (the
    records of a varlen batch in slots a sequence): the same o as the
    float32 pool e4m3 x scale under the same schedule, each stored element
    within one e4m3 step of quantize_state of that run's result, and
    against the fp64 reference. Sequences around the chunk of 16: 1, 15,
    16, 17, 40 tokens, and an empty one; a padding row."""
    ops.set_schedule(solve=solve, precision=precision)
    try:
        lens, idx = [1, 15, 0, 16, 17, 40, 3], [1, 2, 3, 4, 5, 6, -1]
        x = inputs(lens, 8, "cuda", seed=3, dims=(2, 4, 32, 32))  # whole mma tiles
        pool, _ = ops.quantize_state(x["pool"])
        scale0 = ops.state_scale_of(pool).clone()
        before = pool.view(torch.uint8).clone()
        f32 = ops.dequantize_state(pool)
        indices = torch.tensor(idx, dtype=torch.int32, device="cuda")
        o8, _, _ = call(x, initial_state=pool, initial_state_indices=indices)
        start = f32.clone()
        o32, _, _ = call(x, initial_state=f32, initial_state_indices=indices)
        assert torch.allclose(o8.float(), o32.float(), rtol=2 ** -7, atol=1e-5)
        want, want_scale = ops.quantize_state(f32)
        scale = ops.state_scale_of(pool)
        rows = [1, 2, 4, 5, 6]  # the slots a non-empty sequence wrote
        assert torch.allclose(scale[rows], want_scale[rows], rtol=1e-5, atol=0)
        got = pool.float() * scale[..., None]
        ref = want.float() * want_scale[..., None]
        step = ref.abs() * 2 ** -3 + want_scale[..., None] * 2 ** -9
        assert ((got - ref).abs()[rows] <= step[rows] * 1.01).all()
        for slot in (0, 3, 7):  # unnamed, an empty sequence's, unnamed
            assert torch.equal(pool.view(torch.uint8)[slot], before[slot])
            assert torch.equal(scale[slot], scale0[slot])
        ro, finals = reference(x, lens, [start[i] if i >= 0 else None for i in idx])
        T = sum(lens)
        real = np.r_[0:T - lens[-1]]
        assert rms_rel(np64(o8[0])[real], ro[real]) < 1e-2
        assert torch.count_nonzero(o8[0, T - lens[-1]:]) == 0
        back = ops.dequantize_state(pool)
        for n, slot in enumerate(idx):
            if slot >= 0 and lens[n]:
                assert rms_rel(np64(back[slot]), finals[n]) < 5e-2
    finally:
        ops.set_schedule()
