"""gdn.ops.flashinfer_chunk_gated_delta_rule (gdn.ops.flashinfer
.chunk_gated_delta_rule): FlashInfer 0.7.2's prefill signature
(flashinfer.gdn_prefill.chunk_gated_delta_rule) against a float64 torch
reference written here, on the CPU (and the GPU when there is one): packed
varlen sequences of 0, 1, 63, 64, 65 and 130 tokens, prefix-cache
checkpoints every 64 tokens (every written row, and the sentinel rows of an
oversized buffer untouched), initial states, state pools with state_indices
(in place and into a second pool), GVA and GQA heads, the qk L2 norm, the
arguments that only steer FlashInfer's routing, and the errors naming the
argument for bad input. The signature itself is compared with the installed
FlashInfer's."""
import ast
import importlib.util
import inspect
import math
import os

import pytest

torch = pytest.importorskip("torch")
import gdn  # noqa: E402
import gdn.ops as ops  # noqa: E402
from gdn.ops import _custom_ops  # noqa: E402
from gdn.ops import flashinfer as fi  # noqa: E402

prefill = ops.flashinfer_chunk_gated_delta_rule
LENS = [0, 1, 63, 64, 65, 130]
EVERY = 64
SENTINEL = 4096.0  # exact in bfloat16 too
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def reference(q, k, v, g, beta, cu, scale=None, h0=None, l2=False, every=0):
    """FlashInfer's prefill in float64, token by token: q [T, hq, K],
    k [T, hk, K], v [T, hv, V], g (alpha, linear) and beta [T, HV] or None,
    HV = max(hq, hv) (output head i reads q head i * hq // HV, k head
    i * hk // HV and v head i * hv // HV, as FlashInfer's kernels), h0
    [N, HV, V, K] or None. Returns (o [T, HV, V], final states
    [N, HV, V, K], per sequence the states after every `every` tokens)."""
    q, k, v = (x.detach().double().cpu() for x in (q, k, v))
    T, hq, K = q.shape
    hk, hv, V = k.shape[1], v.shape[1], v.shape[2]
    HV = max(hq, hv)
    qh = [i * hq // HV for i in range(HV)]
    kh = [i * hk // HV for i in range(HV)]
    vh = [i * hv // HV for i in range(HV)]
    scale = K ** -0.5 if not scale else scale
    cu = [int(c) for c in cu]
    o = torch.zeros(T, HV, V, dtype=torch.float64)
    finals, checkpoints = [], []
    for n in range(len(cu) - 1):
        S = (torch.zeros(HV, V, K, dtype=torch.float64) if h0 is None
             else h0[n].detach().double().cpu().clone())
        saved = []
        for j, t in enumerate(range(cu[n], cu[n + 1])):
            qq, kk, vv = q[t, qh], k[t, kh], v[t, vh]  # [HV, K], [HV, K], [HV, V]
            if l2:
                qq = qq / torch.sqrt((qq * qq).sum(-1, keepdim=True) + 1e-6)
                kk = kk / torch.sqrt((kk * kk).sum(-1, keepdim=True) + 1e-6)
            if g is not None:
                S = S * g[t].double().cpu().view(HV, 1, 1)
            b = 1.0 if beta is None else beta[t].double().cpu().view(HV, 1)
            u = b * (vv - torch.einsum("hvk,hk->hv", S, kk))
            S = S + u[:, :, None] * kk[:, None, :]
            o[t] = torch.einsum("hvk,hk->hv", S, qq * scale)
            if every and (j + 1) % every == 0:
                saved.append(S.clone())
        finals.append(S)
        checkpoints.append(saved)
    return o, torch.stack(finals), checkpoints


def cu_of(lens, dtype=torch.int32, start=0):
    return torch.tensor([start] + [start + sum(lens[:i + 1]) for i in range(len(lens))],
                        dtype=dtype)


def inputs(lens=LENS, hq=1, hk=1, hv=2, K=32, V=32, seed=0, device="cpu"):
    """Packed inputs: q, k, v, g (alpha in [0.5, 1)), beta (0, 1), h0
    [N, HV, V, K], cu_seqlens int32."""
    gen = torch.Generator().manual_seed(seed)
    r = lambda *s: torch.randn(*s, generator=gen)  # noqa: E731
    T, N, HV = sum(lens), len(lens), max(hq, hv)
    x = dict(q=r(T, hq, K), k=r(T, hk, K), v=r(T, hv, V),
             g=torch.rand(T, HV, generator=gen) * 0.5 + 0.5, beta=torch.rand(T, HV, generator=gen),
             h0=r(N, HV, V, K) * 0.1, cu=cu_of(lens))
    return {n: t.to(device) for n, t in x.items()}


def close(x, ref, tol=1e-4):
    """Relative error of x (any device, any float dtype) against the fp64 ref."""
    x, ref = x.detach().double().cpu(), ref.double()
    err = (x - ref).norm() / max(float(ref.norm()), 1e-30)
    assert err < tol, f"relative error {float(err):.3g} >= {tol}"


def checkpoint_buffer(lens, HV, V, K, start=1, spare=2, dtype=torch.float32, device="cpu"):
    """(state_checkpoints full of SENTINEL with `start` rows before the first
    checkpoint and `spare` after the last, checkpoint_cu_starts int64)."""
    counts = [n // EVERY for n in lens]
    starts = cu_of(counts, torch.int64, start)
    rows = start + sum(counts) + spare
    return (torch.full((rows, HV, V, K), SENTINEL, dtype=dtype, device=device),
            starts.to(device))


def check_checkpoints(buf, starts, ref_saved, tol=1e-4, skip=()):
    """Every row sequence n owns holds its reference checkpoint; every other
    row (and those of the sequences in `skip`) still holds SENTINEL."""
    written = torch.zeros(buf.shape[0], dtype=torch.bool)
    for n, saved in enumerate(ref_saved):
        lo, hi = int(starts[n]), int(starts[n + 1])
        assert hi - lo == len(saved)
        if n in skip:
            continue
        for j, s in enumerate(saved):
            close(buf[lo + j], s, tol)
            written[lo + j] = True
    assert written.sum() == sum(len(s) for n, s in enumerate(ref_saved) if n not in skip) > 0
    assert torch.all(buf[~written.to(buf.device)] == SENTINEL), "a row outside the checkpoints was written"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("with_h0", [False, True], ids=["zero_state", "initial_state"])
def test_varlen_checkpoints_match_reference(device, with_h0):
    x = inputs(seed=1, device=device)
    HV, V, K = 2, 32, 32
    buf, starts = checkpoint_buffer(LENS, HV, V, K, device=device)
    out = prefill(x["q"], x["k"], x["v"], x["g"], x["beta"],
                  initial_state=x["h0"] if with_h0 else None, output_final_state=True,
                  cu_seqlens=x["cu"], use_qk_l2norm_in_kernel=True, state_checkpoints=buf,
                  checkpoint_cu_starts=starts, checkpoint_every_n_tokens=EVERY)
    assert isinstance(out, tuple) and len(out) == 2
    o, final = out
    ro, rs, saved = reference(x["q"], x["k"], x["v"], x["g"], x["beta"], x["cu"],
                              h0=x["h0"] if with_h0 else None, l2=True, every=EVERY)
    assert o.shape == (sum(LENS), HV, V) and o.dtype == torch.float32
    assert final.shape == (len(LENS), HV, V, K) and final.dtype == torch.float32
    close(o, ro)
    close(final, rs)
    # the empty sequence's final state is its initial state
    close(final[0], x["h0"][0].cpu().double() if with_h0 else torch.zeros(HV, V, K))
    check_checkpoints(buf, starts.cpu(), saved)


@pytest.mark.parametrize("device", DEVICES)
def test_fp8_checkpoints_with_row_scales(device):
    """float8_e4m3fn state_checkpoints with gdn's row scales attached
    (gdn.ops.quantized_state): each written row is the float32 checkpoint
    quantized as a pool's state is (bit for bit on the CPU; within one e4m3
    step on the GPU), with its scales; o and the final state are those of
    the run with float32 checkpoints; rows no sequence owns keep their bytes
    and scales."""
    x = inputs(seed=4, device=device)
    HV, V, K = 2, 32, 32
    f32, starts = checkpoint_buffer(LENS, HV, V, K, device=device)
    buf = ops.quantized_state(f32.shape, device=device)
    buf.view(torch.uint8).fill_(0x3C)
    scale = ops.state_scale_of(buf)
    scale.fill_(7.0)
    before, scale_before = buf.view(torch.uint8).clone(), scale.clone()
    run = lambda ck: prefill(x["q"], x["k"], x["v"], x["g"], x["beta"],  # noqa: E731
                             initial_state=x["h0"], output_final_state=True, cu_seqlens=x["cu"],
                             use_qk_l2norm_in_kernel=True, state_checkpoints=ck,
                             checkpoint_cu_starts=starts, checkpoint_every_n_tokens=EVERY)
    o8, final8 = run(buf)
    o32, final32 = run(f32)
    assert torch.equal(o8, o32) and torch.equal(final8, final32)
    written = f32[:, 0, 0, 0] != SENTINEL
    assert 0 < int(written.sum()) < f32.shape[0]
    want, want_scale = ops.quantize_state(f32[written])
    if device == "cpu":
        assert torch.equal(buf[written].view(torch.uint8), want.view(torch.uint8))
        assert torch.equal(scale[written], want_scale)
    else:
        assert torch.allclose(scale[written], want_scale, rtol=1e-6, atol=0)
        got = buf[written].float() * scale[written][..., None]
        ref = want.float() * want_scale[..., None]
        step = ref.abs() * 2 ** -3 + want_scale[..., None] * 2 ** -9
        assert ((got - ref).abs() <= step * 1.01).all()
    assert torch.equal(buf.view(torch.uint8)[~written], before[~written])
    assert torch.equal(scale[~written], scale_before[~written])
    _, _, saved = reference(x["q"], x["k"], x["v"], x["g"], x["beta"], x["cu"], h0=x["h0"],
                            l2=True, every=EVERY)
    back = ops.dequantize_state(buf)
    rows = [int(starts[n]) + j for n, s in enumerate(saved) for j in range(len(s))]
    for row, s in zip(rows, [s for seq in saved for s in seq]):
        close(back[row], s, 4e-2)


def test_checkpoints_do_not_change_the_result_and_int32_offsets():
    """The same call without checkpoints gives the same output and final
    state bit for bit; int32 checkpoint_cu_starts as int64; a checkpoint
    that ends a sequence equals its final state."""
    x = inputs(seed=2)
    common = dict(initial_state=x["h0"], output_final_state=True, cu_seqlens=x["cu"],
                  use_qk_l2norm_in_kernel=True)
    o1, s1 = prefill(x["q"], x["k"], x["v"], x["g"], x["beta"], **common)
    buf, starts = checkpoint_buffer(LENS, 2, 32, 32, start=0, spare=0)
    o2, s2 = prefill(x["q"], x["k"], x["v"], x["g"], x["beta"], state_checkpoints=buf,
                     checkpoint_cu_starts=starts.to(torch.int32), checkpoint_every_n_tokens=EVERY,
                     **common)
    assert torch.equal(o1, o2) and torch.equal(s1, s2)
    n64 = LENS.index(64)  # 64 tokens: its one checkpoint is its final state
    assert torch.equal(buf[int(starts[n64])], s1[n64])
    _, _, saved = reference(x["q"], x["k"], x["v"], x["g"], x["beta"], x["cu"], h0=x["h0"],
                            l2=True, every=EVERY)
    check_checkpoints(buf, starts, saved)


def test_checkpoints_every_128_and_rows_clamped_to_the_buffer():
    """checkpoint_every_n_tokens = 128: only the 130-token sequence stores
    one. Offsets past the buffer write nothing there (rows are clamped)."""
    lens = [130, 65, 129]
    x = inputs(lens, seed=3)
    buf = torch.full((3, 2, 32, 32), SENTINEL)
    starts = torch.tensor([0, 1, 1, 2], dtype=torch.int64)
    prefill(x["q"], x["k"], x["v"], x["g"], x["beta"], cu_seqlens=x["cu"],
            use_qk_l2norm_in_kernel=True, state_checkpoints=buf, checkpoint_cu_starts=starts,
            checkpoint_every_n_tokens=128)
    _, _, saved = reference(x["q"], x["k"], x["v"], x["g"], x["beta"], x["cu"], l2=True,
                            every=128)
    check_checkpoints(buf, starts, saved)
    # a sequence whose rows lie past the buffer: none written, nothing else touched
    buf = torch.full((2, 2, 32, 32), SENTINEL)
    starts = torch.tensor([0, 1, 1, 5], dtype=torch.int64)  # rows 1..4: only 1 exists
    prefill(x["q"], x["k"], x["v"], x["g"], x["beta"], cu_seqlens=x["cu"],
            use_qk_l2norm_in_kernel=True, state_checkpoints=buf, checkpoint_cu_starts=starts,
            checkpoint_every_n_tokens=128)
    close(buf[0], saved[0][0])
    close(buf[1], saved[2][0])


@pytest.mark.parametrize("in_place", [True, False], ids=["in_place", "two_pools"])
def test_state_pool_with_state_indices(in_place):
    """initial_state / output_state as pools read and written at
    state_indices; a padding row (-1) touches no slot, outputs zeros and
    stores no checkpoint; slots no row names keep their contents."""
    lens = [64, 3, 65, 0, 70]
    x = inputs(lens, seed=4)
    HV, V, K, slots = 2, 32, 32, 8
    idx = torch.tensor([5, 0, -1, 2, 7], dtype=torch.int64)
    pool = torch.randn(slots, HV, V, K, generator=torch.Generator().manual_seed(5)) * 0.1
    pool0 = pool.clone()
    dst = pool if in_place else torch.full_like(pool, SENTINEL)
    buf, starts = checkpoint_buffer(lens, HV, V, K)
    out = torch.full((sum(lens), HV, V), math.nan)
    o, final = prefill(x["q"], x["k"], x["v"], x["g"], x["beta"], initial_state=pool,
                       output_final_state=True, cu_seqlens=x["cu"],
                       use_qk_l2norm_in_kernel=True, output=out, output_state=dst,
                       state_checkpoints=buf, checkpoint_cu_starts=starts,
                       checkpoint_every_n_tokens=EVERY, state_indices=idx)
    assert o is out and final is dst
    h0 = torch.stack([pool0[max(int(i), 0)] for i in idx])
    ro, rs, saved = reference(x["q"], x["k"], x["v"], x["g"], x["beta"], x["cu"], h0=h0,
                              l2=True, every=EVERY)
    cu = x["cu"].tolist()
    pad = slice(cu[2], cu[3])
    assert torch.all(o[pad] == 0)
    keep = torch.ones(o.shape[0], dtype=torch.bool)
    keep[pad] = False
    close(o[keep], ro[keep])
    for n, slot in enumerate(idx.tolist()):
        if slot >= 0:
            close(final[slot], rs[n])
    untouched = [s for s in range(slots) if s not in idx.tolist()]
    expected = pool0 if in_place else torch.full_like(pool0, SENTINEL)
    assert torch.equal(final[untouched], expected[untouched])
    if not in_place:
        assert torch.equal(pool, pool0)  # the read pool is only read
    check_checkpoints(buf, starts, saved, skip=(2,))  # the padding row stores none


@pytest.mark.parametrize("heads", [(1, 1, 2), (2, 2, 4), (2, 1, 1), (4, 2, 2)],
                         ids=["gva_1_2", "gva_2_4", "gqa_2_1", "gqa_4_2"])
@pytest.mark.parametrize("l2", [True, False], ids=["l2norm", "no_l2norm"])
def test_heads_and_l2norm_match_reference(heads, l2):
    """GVA (num_v_heads = 2 num_q_heads) and FlashInfer's GQA (num_q_heads =
    2 num_k_heads = 2 num_v_heads), with and without the qk L2 norm (then
    keys of norm < 1, where the recurrence is stable), K != V."""
    hq, hk, hv = heads
    lens = [5, 64, 17]
    x = inputs(lens, hq, hk, hv, K=32, V=16, seed=6)
    k = x["k"] if l2 else x["k"] / (x["k"].norm(dim=-1, keepdim=True) + 1)
    o, final = prefill(x["q"], k, x["v"], x["g"], x["beta"], initial_state=x["h0"],
                       output_final_state=True, cu_seqlens=x["cu"], use_qk_l2norm_in_kernel=l2,
                       scale=0.3)
    ro, rs, _ = reference(x["q"], k, x["v"], x["g"], x["beta"], x["cu"], scale=0.3,
                          h0=x["h0"], l2=l2)
    assert o.shape == (sum(lens), max(hq, hv), 16) and final.shape == (3, max(hq, hv), 16, 32)
    close(o, ro)
    close(final, rs)


def test_defaults_in_place_state_and_routing_arguments():
    """g = beta = None are ones; scale 0 is K^-0.5 (FlashInfer's rule);
    output_state is initial_state updates it in place; output_final_state
    False returns the output alone (output_state still written); use_cp,
    _cp_chunk_len and max_seqlen do not change the result; backend
    "flashinfer" is "auto"."""
    lens = [3, 66]
    x = inputs(lens, seed=7)
    state = x["h0"].clone()
    o = prefill(x["q"], x["k"], x["v"], initial_state=state, cu_seqlens=x["cu"],
                use_qk_l2norm_in_kernel=True, output_state=state, scale=0)
    assert isinstance(o, torch.Tensor)
    ro, rs, _ = reference(x["q"], x["k"], x["v"], None, None, x["cu"], h0=x["h0"], l2=True)
    close(o, ro)
    close(state, rs)
    base = prefill(x["q"], x["k"], x["v"], x["g"], x["beta"], cu_seqlens=x["cu"],
                   use_qk_l2norm_in_kernel=True)
    for kw in (dict(use_cp=True), dict(use_cp=False, _cp_chunk_len=128),
               dict(max_seqlen=66, backend="flashinfer")):
        again = prefill(x["q"], x["k"], x["v"], x["g"], x["beta"], cu_seqlens=x["cu"],
                        use_qk_l2norm_in_kernel=True, **kw)
        assert torch.equal(base, again), kw


def test_alpha_zero_decays_fully_and_dtypes():
    """alpha = 0 forgets the state before the token (log 0 = -inf);
    bfloat16 inputs and a bfloat16 state pool in place, bfloat16
    checkpoints, int64 cu_seqlens."""
    lens = [64, 10]
    x = inputs(lens, seed=8)
    g = x["g"].clone()
    g[64 + 3] = 0.0  # sequence 1 restarts at its 4th token
    cu = x["cu"].to(torch.int64)
    o, s = prefill(x["q"], x["k"], x["v"], g, x["beta"], initial_state=x["h0"],
                   output_final_state=True, cu_seqlens=cu, use_qk_l2norm_in_kernel=True)
    ro, rs, _ = reference(x["q"], x["k"], x["v"], g, x["beta"], cu, h0=x["h0"], l2=True)
    assert torch.isfinite(o).all()
    close(o, ro)
    close(s, rs)
    bf = {n: x[n].to(torch.bfloat16) for n in ("q", "k", "v")}
    pool = x["h0"].to(torch.bfloat16)
    buf, starts = checkpoint_buffer(lens, 2, 32, 32, dtype=torch.bfloat16)
    o, final = prefill(bf["q"], bf["k"], bf["v"], x["g"], x["beta"], initial_state=pool,
                       output_final_state=True, cu_seqlens=cu, use_qk_l2norm_in_kernel=True,
                       output_state=pool, state_indices=torch.tensor([1, 0]),
                       state_checkpoints=buf, checkpoint_cu_starts=starts,
                       checkpoint_every_n_tokens=EVERY)
    assert o.dtype == torch.bfloat16 and final is pool
    h0 = x["h0"].to(torch.bfloat16)[[1, 0]]
    ro, rs, saved = reference(bf["q"], bf["k"], bf["v"], x["g"], x["beta"], cu, h0=h0, l2=True,
                              every=EVERY)
    close(o, ro, 2e-2)
    close(pool[[1, 0]], rs, 2e-2)
    check_checkpoints(buf, starts, saved, 2e-2)


@pytest.mark.parametrize("alpha", [-0.5, 1.5, math.nan])
def test_alpha_outside_its_domain(alpha, monkeypatch):
    """g is alpha in [0, 1], the caller's contract as in FlashInfer (whose
    kernels take log2(alpha + 1e-10) unchecked). Without validation the call
    runs unchecked (no synchronisation): a negative or NaN alpha makes its
    sequence NaN, and only that one. GDN_VALIDATE_INDICES=1 refuses alpha
    outside [0, 1] naming g and its element, before any launch; 0 and 1
    pass."""
    x = inputs([64, 2], seed=11)
    g = x["g"].clone()
    g[64, 1] = alpha

    def run(g, output=None):
        return prefill(x["q"], x["k"], x["v"], g, x["beta"], initial_state=x["h0"],
                       output_final_state=True, cu_seqlens=x["cu"], output=output)
    monkeypatch.delenv("GDN_VALIDATE_INDICES", raising=False)
    o, s = run(g)
    assert torch.isfinite(o[:64]).all() and torch.isfinite(s[0]).all()
    assert torch.isnan(s[1]).any() == (not alpha >= 0)
    monkeypatch.setenv("GDN_VALIDATE_INDICES", "1")
    sentinel = torch.full((66, 2, 32), SENTINEL)
    with pytest.raises(ValueError, match=r"g \(alpha, the linear decay\) must lie in \[0, 1\], "
                                         rf"got g\[64, 1\] = {alpha}"):
        run(g, sentinel)
    assert torch.all(sentinel == SENTINEL)  # nothing ran
    g[64, 1], g[0, 0] = 0.0, 1.0
    assert torch.isfinite(run(g)[0]).all()

def test_no_tokens_keeps_the_initial_states():
    x = inputs([0, 0], seed=9)
    o, s = prefill(x["q"], x["k"], x["v"], x["g"], x["beta"], initial_state=x["h0"],
                   output_final_state=True, cu_seqlens=x["cu"])
    assert o.shape == (0, 2, 32) and torch.equal(s, x["h0"])
    buf, starts = checkpoint_buffer([0, 0], 2, 32, 32)
    o, s = prefill(x["q"], x["k"], x["v"], output_final_state=True, cu_seqlens=x["cu"],
                   state_checkpoints=buf, checkpoint_cu_starts=starts,
                   checkpoint_every_n_tokens=EVERY)
    assert torch.all(s == 0) and torch.all(buf == SENTINEL)


def _call(**over):
    """A valid small call with checkpoints, with `over` replacing arguments."""
    lens = [64, 2]
    x = inputs(lens, seed=10)
    buf, starts = checkpoint_buffer(lens, 2, 32, 32)
    kw = dict(q=x["q"], k=x["k"], v=x["v"], g=x["g"], beta=x["beta"], initial_state=x["h0"],
              output_final_state=True, cu_seqlens=x["cu"], state_checkpoints=buf,
              checkpoint_cu_starts=starts, checkpoint_every_n_tokens=EVERY)
    kw.update(over)
    return prefill(**kw)


@pytest.mark.parametrize("over,error,name", [
    (dict(checkpoint_every_n_tokens=48), ValueError, "checkpoint_every_n_tokens"),
    (dict(checkpoint_every_n_tokens=-64), ValueError, "checkpoint_every_n_tokens"),
    (dict(checkpoint_every_n_tokens=64.0), TypeError, "checkpoint_every_n_tokens"),
    (dict(checkpoint_every_n_tokens=2**64), ValueError, "checkpoint_every_n_tokens must be "
                                                        "below 2"),
    (dict(checkpoint_cu_starts=None), ValueError, "checkpoint_cu_starts"),
    (dict(state_checkpoints=None), ValueError, "state_checkpoints"),
    (dict(checkpoint_every_n_tokens=0), ValueError, "checkpoint_every_n_tokens == 0"),
    (dict(state_checkpoints=torch.zeros(4, 2, 32, 16)), ValueError, "state_checkpoints"),
    (dict(state_checkpoints=torch.zeros(4, 3, 32, 32)), ValueError, "state_checkpoints"),
    (dict(state_checkpoints=torch.zeros(4, 2, 32)), ValueError, "state_checkpoints"),
    (dict(state_checkpoints=torch.zeros(4, 2, 32, 32).transpose(2, 3)), ValueError,
     "state_checkpoints"),
    (dict(state_checkpoints=torch.zeros(4, 2, 32, 32, dtype=torch.float8_e4m3fn)),
     NotImplementedError, "state_checkpoints"),
    (dict(checkpoint_cu_starts=torch.zeros(2, dtype=torch.int64)), ValueError,
     "checkpoint_cu_starts"),
    (dict(checkpoint_cu_starts=torch.zeros(3)), TypeError, "checkpoint_cu_starts"),
    (dict(initial_state=torch.zeros(2, 2, 32, 32, dtype=torch.float8_e4m3fn)),
     NotImplementedError, "initial_state"),
    (dict(output_state=torch.zeros(2, 2, 32, 32, dtype=torch.float8_e5m2)),
     NotImplementedError, "output_state"),
    (dict(initial_state=torch.zeros(3, 2, 32, 32)), ValueError, "initial_state"),
    (dict(output_state=torch.zeros(2, 2, 32, 32, dtype=torch.float64)), TypeError,
     "output_state"),
    (dict(cu_seqlens=None), ValueError, "cu_seqlens"),
    (dict(cu_seqlens=torch.tensor([0], dtype=torch.int32)), ValueError, "cu_seqlens"),
    (dict(cu_seqlens=torch.tensor([0.0, 66.0])), TypeError, "cu_seqlens"),
    (dict(g=torch.ones(66, 3)), ValueError, "g"),
    (dict(beta=torch.ones(66, 2, dtype=torch.int32)), TypeError, "beta"),
    (dict(output=torch.empty(66, 2, 16)), ValueError, "output"),
    (dict(output=torch.empty(66, 2, 32, dtype=torch.float16)), TypeError, "output"),
    (dict(q=torch.zeros(1, 66, 1, 32)), ValueError, "q"),
    (dict(k=torch.zeros(66, 3, 32)), ValueError, "head"),
    (dict(v=torch.zeros(65, 2, 32)), ValueError, "v"),
    (dict(scale=math.nan), ValueError, "scale"),
    (dict(backend="bogus"), ValueError, "backend"),
    (dict(backend="cudnn"), NotImplementedError, "backend"),
    (dict(use_cp="yes"), ValueError, "use_cp"),
    (dict(max_seqlen=67), ValueError, "max_seqlen"),
    (dict(max_seqlen=32), ValueError, "max_seqlen"),
    (dict(state_indices=torch.tensor([0, 1])), ValueError, "output_state"),
    (dict(state_indices=torch.tensor([0, 1, 2]), output_state=torch.zeros(2, 2, 32, 32)),
     ValueError, "state_indices"),
    (dict(state_indices=torch.tensor([0, 1]), output_state=torch.zeros(3, 2, 32, 32)),
     NotImplementedError, "output_state"),
])
def test_bad_input_names_the_argument_before_any_launch(over, error, name):
    sentinel = torch.full((66, 2, 32), SENTINEL)
    over.setdefault("output", sentinel)
    with pytest.raises(error, match=name):
        _call(**over)
    assert torch.all(sentinel == SENTINEL)  # nothing ran


@pytest.mark.parametrize("starts,rows,name", [
    ([0, 1, 1], 4, "sequence 0 \\(64 tokens\\) 1 rows for its 1"),  # valid: no error
    ([0, 0, 1], 4, "sequence 0 \\(64 tokens\\) 0 rows"),
    ([-1, 1, 1], 4, "checkpoint_cu_starts\\[0\\] = -1"),
    ([1, 0, 1], 4, "non-decreasing"),
    ([3, 4, 5], 4, "state_checkpoints has 4 rows"),
    ([0, 1, 1], 0, "state_checkpoints has 0 rows"),
])
def test_validation_refuses_checkpoints_that_do_not_fit(starts, rows, name, monkeypatch):
    """Without validation the op clamps checkpoint rows to the buffer and
    drops what does not fit (test_checkpoints_every_128_and_rows_clamped_to_
    the_buffer); GDN_VALIDATE_INDICES=1 refuses it before any launch,
    naming the argument (issue 23's bad input: a sequence longer than the
    checkpoint buffer allows). Sequences of 64 and 2 tokens: 1 and 0
    checkpoints every 64."""
    monkeypatch.setenv("GDN_VALIDATE_INDICES", "1")
    buf = torch.full((rows, 2, 32, 32), SENTINEL)
    over = dict(state_checkpoints=buf, checkpoint_cu_starts=torch.tensor(starts))
    if starts == [0, 1, 1] and rows:
        _call(**over)  # exactly the rows needed
        assert torch.all(buf[1:] == SENTINEL) and not torch.any(buf[0] == SENTINEL)
        return
    sentinel = torch.full((66, 2, 32), SENTINEL)
    with pytest.raises(ValueError, match=name):
        _call(output=sentinel, **over)
    assert torch.all(sentinel == SENTINEL) and torch.all(buf == SENTINEL)


def test_validation_refuses_a_slot_named_twice(monkeypatch):
    """Two sequences naming one pool slot would both write it (FlashInfer:
    the ids must be unique); GDN_VALIDATE_INDICES=1 refuses it, padding rows
    (-1) may repeat."""
    monkeypatch.setenv("GDN_VALIDATE_INDICES", "1")
    pool = torch.zeros(4, 2, 32, 32)
    with pytest.raises(ValueError, match="state_indices holds slot 1 for sequences 0 and 1"):
        _call(initial_state=pool, output_state=pool, state_indices=torch.tensor([1, 1]))
    _call(initial_state=pool, output_state=pool, state_indices=torch.tensor([-1, -1]))


def test_compile_checkpoint_fields_need_the_interval():
    c = gdn.default_compiler()
    base = dict(N=1, T=1, H=1, HV=1, K=32, V=8, input_dtype="float32", target="cpu")
    with pytest.raises(ValueError, match="checkpoint_rows"):
        c.compile(checkpoint_rows=2, **base)
    with pytest.raises(ValueError, match="checkpoint_offset_dtype"):
        c.compile(checkpoint_interval=64, checkpoint_rows=2, **base)
    with pytest.raises(ValueError, match="checkpoint_rows"):
        c.compile(checkpoint_interval=64, checkpoint_offset_dtype="int32", **base)
    k = c.compile(checkpoint_interval=64, checkpoint_rows=2, checkpoint_offset_dtype="int64",
                  checkpoint_dtype="bfloat16", initial_state=True, final_state=True,
                  layout="vk", **base)
    names = [n for n, _ in k.arguments]
    assert names.index("checkpoint_offsets") < names.index("initial_state")
    assert names.index("state_checkpoints") > names.index("initial_state")
    assert dict(k.arguments)["state_checkpoints"] == 2 * 1 * 8 * 32 * 2
    assert dict(k.arguments)["checkpoint_offsets"] == 2 * 8


def flashinfer_parameters():
    """[(name, default or inspect.Parameter.empty)] of the installed
    FlashInfer's flashinfer.gdn_prefill.chunk_gated_delta_rule: through
    inspect.signature when flashinfer imports (it needs its JIT runtime),
    else parsed from its source with ast (literal defaults). Skips, with
    the reason, when flashinfer is not installed."""
    try:
        import flashinfer.gdn_prefill as m
        sig = inspect.signature(m.chunk_gated_delta_rule)
        return [(p.name, p.default) for p in sig.parameters.values()]
    except ImportError as e:
        reason = f"{type(e).__name__}: {e}"
    spec = importlib.util.find_spec("flashinfer")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip(f"flashinfer is not installed ({reason})")
    path = os.path.join(list(spec.submodule_search_locations)[0], "gdn_prefill.py")
    if not os.path.exists(path):
        pytest.skip(f"flashinfer cannot be imported ({reason}) and has no {path}")
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    node = next((n for n in tree.body if isinstance(n, ast.FunctionDef)
                 and n.name == "chunk_gated_delta_rule"), None)
    assert node is not None, f"{path} defines no chunk_gated_delta_rule"
    a = node.args
    assert not (a.posonlyargs or a.kwonlyargs or a.vararg or a.kwarg), "new kind of parameter"
    defaults = [inspect.Parameter.empty] * (len(a.args) - len(a.defaults)) + [
        ast.literal_eval(d) for d in a.defaults]
    return [(p.arg, d) for p, d in zip(a.args, defaults)]


def test_signature_matches_flashinfer():
    theirs = flashinfer_parameters()
    for fn in (prefill, fi.chunk_gated_delta_rule):
        ours = [(p.name, p.default) for p in inspect.signature(fn).parameters.values()]
        assert [n for n, _ in ours] == [n for n, _ in theirs]
        for (name, d1), (_, d2) in zip(ours, theirs):
            assert type(d1) is type(d2) and d1 == d2, f"{name}: gdn {d1!r}, FlashInfer {d2!r}"


def _gpu_prefill_matches_reference(lens, hq, hv, seed):
    """A bf16 prefill of `lens` at hq q and k heads, hv v heads, K = V =
    128, with an initial state, the qk L2 norm and checkpoints every 64
    tokens, on the GPU, within the chunked forms' tolerances of the fp64
    reference (docs/math.md §3, §5: states and checkpoints 2.5e-3; o
    against the reference rounded to bf16, 3e-3). Returns the CUDA kernels
    compiled for its token capacity and hv (a varlen prefill's kernel is
    compiled for its capacity)."""
    from inputs import cuda_kernels
    x = inputs(lens, hq=hq, hk=hq, hv=hv, K=128, V=128, seed=seed)
    q, k, v = (x[n].bfloat16() for n in ("q", "k", "v"))
    g = x["g"] * 0.1 + 0.9  # alpha in [0.95, 1): long memory
    dev = torch.device("cuda")
    buf, starts = checkpoint_buffer(lens, hv, 128, 128, device=dev)
    o, final = prefill(q.to(dev), k.to(dev), v.to(dev), g.to(dev), x["beta"].to(dev),
                       initial_state=x["h0"].to(dev), output_final_state=True,
                       cu_seqlens=x["cu"].to(dev), use_qk_l2norm_in_kernel=True,
                       state_checkpoints=buf, checkpoint_cu_starts=starts,
                       checkpoint_every_n_tokens=EVERY)
    torch.cuda.synchronize()
    ro, rs, saved = reference(q, k, v, g, x["beta"], x["cu"], h0=x["h0"], l2=True, every=EVERY)
    assert o.dtype == torch.bfloat16 and final.dtype == torch.float32
    close(final, rs, 2.5e-3)
    close(o, ro.bfloat16().double(), 3e-3)
    check_checkpoints(buf.cpu(), starts.cpu(), saved, tol=2.5e-3)
    return cuda_kernels(T=_custom_ops._token_capacity(sum(lens)), HV=hv)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_real_shapes_on_tensor_cores_on_the_gpu():
    """Qwen3-Next's heads as FlashInfer takes them (16 q and k heads, 32 v
    heads), a packed batch of prefills (893 tokens in 6 sequences of 0 to
    700: at least 8 a sequence on average): the cost model's varlen
    prefill form, the tensor-core solve with bf16 products
    (docs/cost-model.md#varlen-prefill; its PTX holds the mma), within its
    tolerances against the fp64 reference."""
    ours = _gpu_prefill_matches_reference([0, 1, 63, 64, 65, 700], hq=16, hv=32, seed=9)
    assert ours and all("mma.sync" in ptx for kern in ours for _, ptx in kern.launches)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_one_long_sequence_splits_on_the_gpu():
    """One request of 8192 tokens at Qwen3-Next's heads on a quarter of the
    GPUs (4 q and k heads, 8 v heads): the cost model splits the one varlen
    sequence's scan into context-parallel segments (records, segment maps,
    join, scan; docs/cost-model.md#context-parallel-segments), within the
    same tolerances of the fp64 reference as the unsplit prefill."""
    ours = _gpu_prefill_matches_reference([8192], hq=4, hv=8, seed=12)
    names = [[name for name, _ in kern.launches] for kern in ours]
    assert any(len(n) == 4 and n[1].endswith("segment_maps")
               and n[2].endswith("segment_join") for n in names), names
