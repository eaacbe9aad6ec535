"""Replayed speculative verify (issue 22): gdn.recurrent with replay windows
(FlashInfer's gated_delta_rule_mtp(cache_replayssm=True), SGLang's
cache_ring) and gdn.replay_commit (gdn.ops.replay_commit, FlashInfer's
gated_delta_rule_replayssm_commit, SGLang's
commit_gdn_replayssm_fold_all_layers), on the CPU and, where present, CUDA.

The contract checked: the verify's o is the one without windows, bit for
bit, and the windows hold the raw k, v and the f32 log decay and beta; the
commit equals a plain decode of each row's accepted tokens (gdn's own
recurrent with the state in place: bit for bit on the CPU, within rounding
on the GPU; and the fp64 reference within tolerance); padding rows, zero
acceptance and slots no row names leave the pool bit-identical; NaN in
window entries the commit does not read changes nothing; many layers in one
launch equal one launch a layer; a CUDA graph of verify + commit replays
with new accepted counts as eager calls compute."""
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gdn.ops as ops  # noqa: E402
from reference import recurrent as ref_recurrent, rms_rel  # noqa: E402

cuda_ok = torch.cuda.is_available()
DEVICES = ["cpu"] + (["cuda"] if cuda_ok else [])
f32, bf16 = torch.float32, torch.bfloat16


def fresh(t):
    """A dense copy of t in storage of its own: 16-byte aligned, as the GPU
    entry points require (a slice of a row would not be)."""
    return t.clone(memory_format=torch.contiguous_format)


def np64(t):
    return t.detach().double().cpu().numpy()


def make(N, T, H=1, HV=2, K=32, V=16, slots=None, dtype=f32, state_dtype=f32, device="cpu",
         seed=0):
    """Fused-gating inputs of N rows of T tokens and a vk pool of `slots`
    (N + 3) slots, on `device`."""
    g = torch.Generator().manual_seed(seed)
    r = lambda *s: torch.randn(*s, generator=g)  # noqa: E731
    slots = N + 3 if slots is None else slots
    x = dict(q=r(N, T, H, K).to(dtype), k=r(N, T, H, K).to(dtype), v=r(N, T, HV, V).to(dtype),
             a=r(N, T, HV).to(dtype), b=r(N, T, HV).to(dtype),
             A_log=torch.log(torch.rand(HV, generator=g) * 15 + 1), dt_bias=r(HV),
             pool=r(slots, HV, V, K).to(state_dtype))
    return {n: t.to(device) for n, t in x.items()}


def windows(x, L, fill=float("nan")):
    """Empty FlashInfer/SGLang windows for x's pool: (rawv, rawk, g, beta)
    [slots, HV, L, V], [slots, H, L, K], [slots, HV, L] x 2, filled with
    `fill` (NaN: an entry no one writes stays NaN)."""
    slots, HV, V, K = x["pool"].shape
    H, dev, dt = x["q"].shape[2], x["q"].device, x["q"].dtype
    full = lambda shape, dtype: torch.full(shape, fill, dtype=dtype, device=dev)  # noqa: E731
    return (full((slots, HV, L, V), dt), full((slots, H, L, K), dt),
            full((slots, HV, L), f32), full((slots, HV, L), f32))


def verify(x, pool, idx, w=None, l2=True):
    """FlashInfer's replayed verify (windows w) or plain verify (w None) of
    all T tokens, the pool only read. Returns o."""
    kw = {}
    if w is not None:
        kw = dict(cache_replayssm=True, replayssm_rawv=w[0], replayssm_rawk=w[1],
                  replayssm_g=w[2], replayssm_beta=w[3])
    o, _ = ops.gated_delta_rule_mtp(x["q"], x["k"], x["v"], pool, idx, x["A_log"], x["a"],
                                    x["dt_bias"], x["b"], disable_state_update=True,
                                    use_qk_l2norm=l2, **kw)
    return o


def commit(w, accepted, pool, idx, l2=True):
    rawv, rawk, g, beta = w
    return ops.replay_commit(rawk, rawv, g, beta, accepted, pool, state_indices=idx,
                             qk_l2norm=l2)


def plain_decode(x, pool, idx, accepted, l2=True):
    """The oracle: each row's first a = min(accepted, T) tokens run by gdn's
    own recurrent on its slot, the state in place (rows with slot < 0 or
    a <= 0 skipped). Returns the per-row outputs (None where skipped)."""
    T = x["q"].shape[1]
    outs = []
    for n in range(idx.shape[0]):
        a = min(int(accepted[n]), T)
        if int(idx[n]) < 0 or a <= 0:
            outs.append(None)
            continue
        rows = lambda t: fresh(t[n:n + 1, :a])  # noqa: E731
        o, _ = ops.gated_delta_rule_decode_pretranspose(
            rows(x["q"]), rows(x["k"]), rows(x["v"]), None, x["A_log"], rows(x["a"]),
            x["dt_bias"], rows(x["b"]), initial_state=pool,
            initial_state_indices=fresh(idx[n:n + 1]), use_qk_l2norm=l2)
        outs.append(o)
    return outs


def reference_pool(x, pool0, idx, accepted, l2=True):
    """fp64: pool0 with each row's accepted prefix decoded (the reference)."""
    out = np64(pool0)
    T = x["q"].shape[1]
    for n in range(idx.shape[0]):
        a, slot = min(int(accepted[n]), T), int(idx[n])
        if slot < 0 or a <= 0:
            continue
        sub = lambda t: np64(t[n:n + 1, :a])  # noqa: E731
        _, s = ref_recurrent(sub(x["q"]), sub(x["k"]), sub(x["v"]), a=sub(x["a"]),
                             A_log=np64(x["A_log"]), dt_bias=np64(x["dt_bias"]), b=sub(x["b"]),
                             initial_state=out[slot:slot + 1], qk_l2norm=l2, layout="vk")
        out[slot] = s[0]
    return out


def close(got, want, exact):
    """Bit for bit where the contract says so (the CPU's loops), else
    within the state dtype's rounding."""
    if exact:
        return torch.equal(got, want)
    tol = 1e-5 if got.dtype == f32 else 1e-2
    return torch.allclose(got.float(), want.float(), rtol=tol, atol=tol)


def softplus(x):
    return torch.where(x <= 20.0, torch.log1p(torch.exp(torch.clamp(x, max=20.0))), x)


# ---------------------------------------------------------------------------
# verify with windows
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [f32, bf16])
def test_verify_output_is_unchanged_and_windows_hold_the_inputs(device, dtype):
    N, T = 4, 3
    x = make(N, T, H=2, HV=4, dtype=dtype, device=device, seed=1)
    idx = torch.tensor([5, -1, 0, 2], dtype=torch.int32, device=device)
    pool0 = x["pool"].clone()
    o_plain = verify(x, x["pool"], idx)
    w = windows(x, T)
    o = verify(x, x["pool"], idx, w)
    assert torch.equal(o, o_plain), "the windows changed o"
    assert torch.equal(x["pool"], pool0), "verify wrote the checkpoint"
    rawv, rawk, g, beta = w
    HV, H = 4, 2
    a32, b32 = x["a"].float(), x["b"].float()
    want_g = -torch.exp(x["A_log"]) * softplus(a32 + x["dt_bias"])
    for n, slot in enumerate(idx.tolist()):
        if slot < 0:
            continue
        assert torch.equal(rawk[slot], x["k"][n].permute(1, 0, 2)), "k_window: raw k"
        assert torch.equal(rawv[slot], x["v"][n].permute(1, 0, 2)), "v_window: raw v"
        assert torch.allclose(g[slot], want_g[n].T, rtol=1e-6, atol=1e-6)
        assert torch.allclose(beta[slot], torch.sigmoid(b32[n]).T, rtol=1e-6, atol=1e-7)
    for slot in (1, 3, 4, 6):  # named by no live row: untouched
        for t in w:
            assert torch.isnan(t[slot].float()).all(), f"slot {slot} of a window was written"
    assert H == rawk.shape[1] and HV == rawv.shape[1]


def test_windows_without_a_pool_take_row_n_and_the_given_gates():
    """gdn::recurrent itself: log-space g and beta given, no pool (rows = N):
    the windows hold g and beta exactly."""
    N, T, H, HV, K, V = 2, 3, 1, 2, 32, 16
    g_ = torch.Generator().manual_seed(3)
    r = lambda *s: torch.randn(*s, generator=g_)  # noqa: E731
    q, k, v = r(N, T, H, K), r(N, T, H, K), r(N, T, HV, V)
    g = torch.nn.functional.logsigmoid(r(N, T, HV))
    beta = torch.rand(N, T, HV, generator=g_)
    s0 = r(N, HV, K, V)
    o1, o2 = torch.empty(N, T, HV, V), torch.empty(N, T, HV, V)
    kw, vw = torch.full((N, H, T, K), math.nan), torch.full((N, HV, T, V), math.nan)
    gw, bw = torch.full((N, HV, T), math.nan), torch.full((N, HV, T), math.nan)
    args = (q, k, v, g, None, None, None, beta, None, None, None, None, s0, None, None, None)
    torch.ops.gdn.recurrent(*args, o1, None, None, None, None, None, None, None, None, None,
                            None, True, "kv")
    torch.ops.gdn.recurrent(*args, o2, kw, vw, gw, bw, None, None, None, None, None, None, True,
                            "kv")
    assert torch.equal(o1, o2)
    assert torch.equal(kw, k.permute(0, 2, 1, 3)) and torch.equal(vw, v.permute(0, 2, 1, 3))
    assert torch.equal(gw, g.transpose(1, 2)) and torch.equal(bw, beta.transpose(1, 2))


def test_described_kernel_takes_the_windows_in_the_c_api_order():
    """Compiler.compile(replay_steps=L): the four windows after
    intermediate_states and before final_state, rows = the pool's slots."""
    import gdn
    k = gdn.default_compiler().compile(
        N=2, T=3, H=1, HV=2, K=32, V=16, input_dtype="float32", decay="fused_gating",
        beta="logits", qk_l2norm=True, layout="vk", initial_state=True, final_state=True,
        num_slots=5, intermediate_rows=2, intermediate_steps=3, replay_steps=4, target="cpu")
    names = [n for n, _ in k.arguments]
    i = names.index("intermediate_states")
    assert names[i + 1:i + 5] == ["k_window", "v_window", "g_window", "beta_window"]
    assert names[i + 5] == "final_state"
    sizes = dict(k.arguments)
    assert sizes["k_window"] == 5 * 1 * 4 * 32 * 4 and sizes["v_window"] == 5 * 2 * 4 * 16 * 4
    assert sizes["g_window"] == sizes["beta_window"] == 5 * 2 * 4 * 4


# ---------------------------------------------------------------------------
# replay commit
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype,state_dtype", [(f32, f32), (bf16, f32), (bf16, bf16)])
@pytest.mark.parametrize("index_dtype", [torch.int32, torch.int64])
def test_commit_equals_plain_decode_of_the_accepted_tokens(device, dtype, state_dtype,
                                                           index_dtype):
    """Accepted 0, 1, T - 1, T, > T and < 0, a padding row, in one batch."""
    N, T = 7, 4
    x = make(N, T, H=2, HV=4, dtype=dtype, state_dtype=state_dtype, device=device, seed=2)
    idx = torch.tensor([3, 0, 7, 5, -1, 9, 1], dtype=index_dtype, device=device)
    accepted = torch.tensor([0, 1, T - 1, T, 2, T + 3, -2], dtype=index_dtype, device=device)
    pool0 = x["pool"].clone()
    w = windows(x, T)
    verify(x, x["pool"], idx, w)
    got = x["pool"]
    assert commit(w, accepted, got, idx) is got
    want = pool0.clone()
    plain_decode(x, want, idx, accepted)
    assert close(got, want, exact=device == "cpu")
    for slot in (2, 4, 6, 8, 3, 1):  # no row / padding / accepted 0 / accepted < 0
        assert torch.equal(got[slot], pool0[slot]), f"slot {slot} changed"
    ref = reference_pool(x, pool0, idx, accepted)
    assert rms_rel(np64(got), ref) < (1e-5 if state_dtype == f32 else 4e-3)


@pytest.mark.parametrize("device", DEVICES)
def test_nan_in_unused_window_entries_changes_nothing(device):
    """SGLang's ring with L = T + 2 steps: entries past each row's accepted
    prefix (and past T) hold NaN; the commit never reads them."""
    N, T, L = 3, 3, 5
    x = make(N, T, device=device, seed=4)
    idx = torch.tensor([1, 4, 2], dtype=torch.int32, device=device)
    accepted = torch.tensor([1, 3, 2], dtype=torch.int32, device=device)
    pools = []
    for fill in (float("nan"), 0.0):
        pool = x["pool"].clone()
        w = windows(x, L, fill)
        ops.fused_sigmoid_gating_delta_rule_update(
            x["A_log"], x["a"], x["dt_bias"], 1.0, 20.0, x["q"], x["k"], x["v"], x["b"], pool,
            idx, use_qk_l2norm_in_kernel=True, disable_state_update=True, cache_ring=True,
            replayssm_rawv=w[0], replayssm_rawk=w[1], replayssm_g=w[2], replayssm_beta=w[3])
        if fill != fill:
            assert all(torch.isnan(t[:, :, T:].float()).all() for t in w), "steps past T written"
        ops.commit_gdn_replayssm_fold_all_layers(
            pool[None], w[0][None], w[1][None], w[2][None], w[3][None], idx, accepted, L, 1)
        pools.append(pool)
    assert torch.isfinite(pools[0]).all()
    assert torch.equal(pools[0], pools[1])
    want = x["pool"].clone()
    plain_decode(x, want, idx, accepted)
    assert close(pools[0], want, exact=device == "cpu")


@pytest.mark.parametrize("device", DEVICES)
def test_verify_3_commit_2_decode_1_equals_three_plain_decodes(device):
    N, T = 2, 3
    x = make(N, T, device=device, seed=5)
    idx = torch.tensor([4, 1], dtype=torch.int32, device=device)
    exact = device == "cpu"
    # Three plain decodes, one token each.
    plain = x["pool"].clone()
    outs = []
    for t in range(T):
        one = {n: (fresh(v[:, t:t + 1]) if v.dim() > 1 and n != "pool" else v)
               for n, v in x.items()}
        o, _ = ops.gated_delta_rule_decode_pretranspose(
            one["q"], one["k"], one["v"], None, x["A_log"], one["a"], x["dt_bias"], one["b"],
            initial_state=plain, initial_state_indices=idx)
        outs.append(o)
    # Verify 3, commit 2, decode the third token.
    pool = x["pool"].clone()
    w = windows(x, T)
    o_verify = verify(x, pool, idx, w)
    commit(w, torch.full((N,), 2, dtype=torch.int32, device=device), pool, idx)
    third = {n: (fresh(v[:, 2:3]) if v.dim() > 1 and n != "pool" else v)
             for n, v in x.items()}
    o3, _ = ops.gated_delta_rule_decode_pretranspose(
        third["q"], third["k"], third["v"], None, x["A_log"], third["a"], x["dt_bias"],
        third["b"], initial_state=pool, initial_state_indices=idx)
    for t in range(2):
        assert close(o_verify[:, t:t + 1], outs[t], exact), f"verify output of token {t}"
    assert close(o3, outs[2], exact), "the decode after the commit"
    assert close(pool, plain, exact), "the state after three tokens"


@pytest.mark.parametrize("device", DEVICES)
def test_layers_in_one_commit_equal_per_layer_commits(device):
    LY, N, T = 48, 3, 4
    slots, H, HV, K, V = 5, 1, 2, 32, 16
    g = torch.Generator().manual_seed(6)
    r = lambda *s: torch.randn(*s, generator=g).to(device)  # noqa: E731
    kw, vw = r(LY, slots, H, T, K), r(LY, slots, HV, T, V)
    gw = torch.nn.functional.logsigmoid(r(LY, slots, HV, T))
    bw = torch.sigmoid(r(LY, slots, HV, T))
    state = r(LY, slots, HV, V, K)
    idx = torch.tensor([4, -1, 1], dtype=torch.int32, device=device)
    accepted = torch.tensor([2, 3, 4], dtype=torch.int32, device=device)
    each = state.clone()
    for layer in range(LY):
        ops.replay_commit(kw[layer], vw[layer], gw[layer], bw[layer], accepted, each[layer],
                          state_indices=idx)
    ops.replay_commit(kw, vw, gw, bw, accepted, state, state_indices=idx)
    assert torch.equal(state, each)


def test_kv_layout_is_the_transposed_vk_commit():
    N, T = 3, 4
    x = make(N, T, seed=7)
    idx = torch.tensor([0, 2, 5], dtype=torch.int32)
    accepted = torch.tensor([4, 1, 3], dtype=torch.int32)
    w = windows(x, T)
    verify(x, x["pool"], idx, w)
    kv = x["pool"].transpose(-1, -2).contiguous()
    commit(w, accepted, x["pool"], idx)
    ops.replay_commit(w[1], w[0], w[2], w[3], accepted, kv, state_indices=idx, layout="kv")
    assert torch.equal(kv, x["pool"].transpose(-1, -2))


def test_without_l2_norm():
    N, T = 2, 3
    x = make(N, T, seed=8)
    idx = torch.tensor([1, 3], dtype=torch.int32)
    accepted = torch.tensor([3, 2], dtype=torch.int32)
    pool0 = x["pool"].clone()
    w = windows(x, T)
    verify(x, x["pool"], idx, w, l2=False)
    commit(w, accepted, x["pool"], idx, l2=False)
    want = pool0.clone()
    plain_decode(x, want, idx, accepted, l2=False)
    assert torch.equal(x["pool"], want)
    assert rms_rel(np64(x["pool"]), reference_pool(x, pool0, idx, accepted, l2=False)) < 1e-5


# ---------------------------------------------------------------------------
# the anchors' entry points
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("null_block_id", [-1, 0])
def test_flashinfer_round_trip_over_layers(device, null_block_id):
    """gated_delta_rule_mtp(cache_replayssm=True) per layer into a
    [layers, ...] cache, then gated_delta_rule_replayssm_commit once."""
    LY, N, T = 3, 4, 4
    xs = [make(N, T, H=2, HV=4, dtype=bf16, slots=6, device=device, seed=10 + l_)
          for l_ in range(LY)]
    idx = torch.tensor([2, 0, 5, -1], dtype=torch.int32, device=device)
    accepted = torch.tensor([4, 2, 1, 3], dtype=torch.int32, device=device)
    ckpt = torch.stack([x["pool"] for x in xs])
    ckpt0 = ckpt.clone()
    caches = [torch.stack(t) for t in zip(*(windows(x, T) for x in xs))]
    for l_, x in enumerate(xs):
        verify(x, ckpt[l_], idx, tuple(c[l_] for c in caches))
    assert torch.equal(ckpt, ckpt0)
    rawv, rawk, g, beta = caches
    ops.gated_delta_rule_replayssm_commit(ckpt, rawv, rawk, g, beta, idx, accepted,
                                          null_block_id=null_block_id,
                                          backend="auto" if null_block_id < 0 else "simt")
    for l_, x in enumerate(xs):
        want = ckpt0[l_].clone()
        live = idx.clone()
        if null_block_id >= 0:
            live[live <= null_block_id] = -1
        plain_decode(x, want, live, accepted)
        assert close(ckpt[l_], want, exact=device == "cpu"), f"layer {l_}"
    if null_block_id == 0:
        assert torch.equal(ckpt[:, 0], ckpt0[:, 0]), "the null block was written"


@pytest.mark.parametrize("device", DEVICES)
def test_sglang_round_trip_with_a_longer_ring_and_varlen(device):
    """cache_ring with L = max_cache_len > T and packed tokens (cu_seqlens),
    then commit_gdn_replayssm_fold_all_layers; the output equals the plain
    verify's."""
    lens, L = [3, 1, 2], 5
    N, T = len(lens), sum(lens)
    x = make(1, T, H=2, HV=4, slots=6, device=device, seed=20)
    cu = torch.tensor([0, 3, 4, 6], dtype=torch.int32, device=device)
    idx = torch.tensor([4, 1, 0], dtype=torch.int32, device=device)
    accepted = torch.tensor([2, 1, 2], dtype=torch.int64, device=device)
    call = lambda pool, **kw: ops.fused_sigmoid_gating_delta_rule_update(  # noqa: E731
        x["A_log"], x["a"], x["dt_bias"], 1.0, 20.0, x["q"], x["k"], x["v"], x["b"], pool, idx,
        use_qk_l2norm_in_kernel=True, cu_seqlens=cu, disable_state_update=True, **kw)
    pool = x["pool"].clone()
    o_plain = call(pool)
    w = windows(x, L)
    o = call(pool, cache_ring=True, replayssm_rawv=w[0], replayssm_rawk=w[1], replayssm_g=w[2],
             replayssm_beta=w[3])
    assert torch.equal(o, o_plain)
    for n, (slot, start) in enumerate(zip(idx.tolist(), cu.tolist())):
        s = lens[n]
        assert torch.equal(w[1][slot, :, :s], x["k"][0, start:start + s].permute(1, 0, 2))
        assert torch.isnan(w[1][slot, :, s:].float()).all()
    ops.commit_gdn_replayssm_fold_all_layers(pool[None], w[0][None], w[1][None], w[2][None],
                                             w[3][None], idx, accepted, L, 2)
    want = x["pool"].clone()
    for n, slot in enumerate(idx.tolist()):  # each sequence's accepted tokens, decoded
        start, a = cu[n].item(), int(accepted[n])
        sub = {k_: (fresh(v_[:, start:start + a]) if v_.dim() > 1 and k_ != "pool" else v_)
               for k_, v_ in x.items()}
        plain_decode(sub, want, idx[n:n + 1], accepted[n:n + 1])
    assert close(pool, want, exact=device == "cpu")


# EAGLE trees: the verify takes SGLang's parent table, the commit replays
# the accepted path. Rows: the tree (path [0, 2, 3]); a branch
# ([0, 1]); a second root ([1, 2, 3]); a parent >= its step, which ends the
# path ([1]); nothing accepted; a padding row.
TREE_PARENTS = [[-1, 0, 0, 2], [-1, 0, 0, 1], [-1, -1, 1, 2], [-1, 5, 0, 1], [-1, 0, 1, 2],
                [-1, 0, 0, 0]]
TREE_ACCEPTED = [4, 2, 4, 2, 0, 3]  # 1 + the last accepted step
TREE_PATHS = [[0, 2, 3], [0, 1], [1, 2, 3], [1], [], None]
TREE_SLOTS = [3, 0, 7, 5, 1, -1]


def tree_verify(x, pool, idx, parents, w=None):
    """SGLang's tree verify (the pool only read, per-token states into a
    buffer, optionally the rings w). Returns (o, buffer)."""
    N, T = x["q"].shape[:2]
    slots, HV, V, K = pool.shape
    buf = torch.zeros(N, T, HV, V, K, dtype=pool.dtype, device=pool.device)
    rows = torch.arange(N, dtype=torch.int32, device=pool.device)
    kw = {}
    if w is not None:
        kw = dict(cache_ring=True, replayssm_rawv=w[0], replayssm_rawk=w[1],
                  replayssm_g=w[2], replayssm_beta=w[3])
    o = ops.fused_sigmoid_gating_delta_rule_update(
        x["A_log"], x["a"], x["dt_bias"], 1.0, 20.0, x["q"], x["k"], x["v"], x["b"], pool, idx,
        use_qk_l2norm_in_kernel=True, disable_state_update=True, intermediate_states_buffer=buf,
        intermediate_state_indices=rows, retrieve_parent_token=parents, **kw)
    return o, buf


def decode_path(x, pool, slot, n, path):
    """The oracle: the tokens `path` of row n decoded, in order, on `slot`."""
    if not path:
        return
    sel = torch.tensor(path, device=pool.device)
    pick = lambda t: fresh(t[n:n + 1].index_select(1, sel))  # noqa: E731
    ops.gated_delta_rule_decode_pretranspose(
        pick(x["q"]), pick(x["k"]), pick(x["v"]), None, x["A_log"], pick(x["a"]), x["dt_bias"],
        pick(x["b"]), initial_state=pool,
        initial_state_indices=torch.tensor([slot], dtype=torch.int32, device=pool.device),
        use_qk_l2norm=True)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("index_dtype", [torch.int32, torch.int64])
def test_tree_commit_replays_the_accepted_path(device, index_dtype):
    """A tree of 4 tokens whose accepted path is [0, 2, 3]: the committed
    state is the plain decode of tokens 0, 2, 3 (and likewise for the other
    rows' paths); the verify's o and stored states are those of the tree
    verify without rings; window entries off the paths (NaN) are never read;
    slots no row commits stay bit-identical."""
    N, T = len(TREE_SLOTS), 4
    x = make(N, T, H=2, HV=4, slots=9, device=device, seed=30)
    idx = torch.tensor(TREE_SLOTS, dtype=index_dtype, device=device)
    parents = torch.tensor(TREE_PARENTS, dtype=index_dtype, device=device)
    accepted = torch.tensor(TREE_ACCEPTED, dtype=index_dtype, device=device)
    pool0 = x["pool"].clone()
    o_plain, buf_plain = tree_verify(x, x["pool"], idx, parents)
    w = windows(x, T)
    o, buf = tree_verify(x, x["pool"], idx, parents, w)
    assert torch.equal(o, o_plain) and torch.equal(buf, buf_plain)
    assert torch.equal(x["pool"], pool0), "the verify wrote the pool"
    for n, (slot, path) in enumerate(zip(TREE_SLOTS, TREE_PATHS)):
        if slot >= 0 and path is not None:  # off the path: NaN, never read
            off = [s for s in range(T) if s not in path]
            for t in w:
                t[slot, :, off] = float("nan")
    got = x["pool"]
    ops.replay_commit(w[1], w[0], w[2], w[3], accepted, got, state_indices=idx,
                      retrieve_parent_token=parents)
    want = pool0.clone()
    for n, (slot, path) in enumerate(zip(TREE_SLOTS, TREE_PATHS)):
        if slot >= 0:
            decode_path(x, want, slot, n, path)
    assert torch.isfinite(got).all()
    assert close(got, want, exact=device == "cpu")
    for slot in (1, 2, 4, 6, 8):  # accepted 0, and slots no row names
        assert torch.equal(got[slot], pool0[slot]), f"slot {slot} changed"
    # An f32 buffer stores the parents exactly: the leaf's stored state is
    # the path's decode as well.
    for n, slot in enumerate(TREE_SLOTS[:4]):
        assert close(got[slot], buf[n, TREE_ACCEPTED[n] - 1], exact=device == "cpu")


def test_entry_point_refusals_name_the_argument():
    N, T = 2, 3
    x = make(N, T, dtype=bf16, seed=30)
    idx = torch.arange(N, dtype=torch.int32)
    w = windows(x, T)
    mtp = lambda **kw: ops.gated_delta_rule_mtp(  # noqa: E731
        x["q"], x["k"], x["v"], x["pool"], idx, x["A_log"], x["a"], x["dt_bias"], x["b"], **kw)
    full = dict(cache_replayssm=True, replayssm_rawv=w[0], replayssm_rawk=w[1],
                replayssm_g=w[2], replayssm_beta=w[3])
    with pytest.raises(ValueError, match="disable_state_update=True"):
        mtp(disable_state_update=False, **full)
    with pytest.raises(ValueError, match="intermediate-state snapshots"):
        mtp(intermediate_states_buffer=torch.zeros(N, T, 2, 16, 32), **full)
    with pytest.raises(ValueError, match="missing replayssm_g"):
        mtp(**{**full, "replayssm_g": None})
    with pytest.raises(ValueError, match="replayssm_rawk must have shape"):
        mtp(**{**full, "replayssm_rawk": w[1][:, :, :2]})
    with pytest.raises(ValueError, match="replayssm_beta must have dtype"):
        mtp(**{**full, "replayssm_beta": w[3].double()})
    with pytest.raises(ValueError, match="replayssm_rawv must be a contiguous"):
        mtp(**{**full, "replayssm_rawv": w[0].transpose(0, 1).contiguous().transpose(0, 1)})
    h = make(N, T, dtype=torch.float16, seed=31)
    with pytest.raises(NotImplementedError, match="'replayssm_rawv'"):
        ops.gated_delta_rule_mtp(h["q"], h["k"], h["v"], h["pool"], idx, h["A_log"], h["a"],
                                 h["dt_bias"], h["b"], **full)
    L3 = [t[None] for t in w]
    commit_fi = lambda **kw: ops.gated_delta_rule_replayssm_commit(  # noqa: E731
        x["pool"][None], *L3, idx, idx, **kw)
    with pytest.raises(ValueError, match="backend must be auto, simt, or tcgen05"):
        commit_fi(backend="cute")
    for name in ("track_state_indices", "track_steps"):
        with pytest.raises(NotImplementedError, match=f"'{name}'"):
            commit_fi(**{name: idx})
    with pytest.raises(ValueError, match="null_block_id must be >= -1"):
        commit_fi(null_block_id=-2)
    with pytest.raises(ValueError, match="rawk_cache must be"):
        ops.gated_delta_rule_replayssm_commit(x["pool"][None], L3[0], w[1], L3[2], L3[3], idx,
                                              idx)
    with pytest.raises(TypeError, match="g_cache must have dtype"):
        ops.gated_delta_rule_replayssm_commit(x["pool"][None], L3[0], L3[1], L3[2].half(), L3[3],
                                              idx, idx)
    fold = lambda *a, **kw: ops.commit_gdn_replayssm_fold_all_layers(  # noqa: E731
        x["pool"][None], *L3, idx, idx, *a, **kw)
    with pytest.raises(ValueError, match="max_cache_len = 4"):
        fold(4, 1)
    with pytest.raises(ValueError, match="num_k_heads = 2"):
        fold(T, 2)
    with pytest.raises(NotImplementedError, match="'mamba_track_indices'"):
        fold(T, 1, mamba_track_indices=idx, mamba_steps_to_track=idx)
    with pytest.raises(ValueError, match="accept_lens must be 1-D"):
        ops.commit_gdn_replayssm_fold_all_layers(x["pool"][None], *L3, idx, idx[None], T, 1)
    sgl = lambda **kw: ops.fused_sigmoid_gating_delta_rule_update(  # noqa: E731
        x["A_log"], x["a"], x["dt_bias"], 1.0, 20.0, x["q"], x["k"], x["v"], x["b"], x["pool"],
        idx, use_qk_l2norm_in_kernel=True, disable_state_update=True, cache_ring=True, **kw)
    rings = dict(replayssm_rawv=w[0], replayssm_rawk=w[1], replayssm_g=w[2], replayssm_beta=w[3])
    with pytest.raises(ValueError, match="per-layer ring views: replayssm_g"):
        sgl(**{**rings, "replayssm_g": w[2][None]})
    with pytest.raises(NotImplementedError, match="'replayssm_rawk'"):
        sgl(**{**rings, "replayssm_rawk": w[1].float()})
    with pytest.raises(ValueError, match="replayssm_rawv must have shape"):
        sgl(**{**rings, "replayssm_rawv": w[0][:1]})
    assert torch.isnan(w[1].float()).all(), "a refused call wrote a window"


def test_replay_commit_windows_that_share_memory_with_the_state():
    """Windows and a state carved apart from one allocation were refused
    (one storage); a g_window inside the state's bytes from another storage
    (two numpy views of one array) was read after the replay's writes. Both
    now replay as separate buffers do: disjoint views as they are, an
    overlapping window from a copy."""
    N, T = 2, 3
    x = make(N, T, seed=41)
    rawv, rawk, g, beta = windows(x, T, 0.0)
    acc = torch.tensor([1, 2], dtype=torch.int32)
    state = torch.randn(2, 2, 16, 32)
    want = state.clone()
    ops.replay_commit(rawk[:2], rawv[:2], g[:2], beta[:2], acc, want)
    n = state.numel()
    whole = torch.empty(n + rawv[:2].numel())
    carved, v_window = whole[:n].view_as(state), whole[n:].view_as(rawv[:2])
    carved.copy_(state), v_window.copy_(rawv[:2])
    ops.replay_commit(rawk[:2], v_window, g[:2], beta[:2], acc, carved)
    assert torch.equal(carved, want)
    array = state.clone().flatten().numpy()
    inside = torch.from_numpy(array[n // 2 - g[:2].numel():n // 2]).view_as(g[:2])
    inside.copy_(g[:2])  # the last floats of slot 0 are the gates now
    overlapped = torch.from_numpy(array).view_as(state)
    assert inside.untyped_storage().data_ptr() != overlapped.untyped_storage().data_ptr()
    want = overlapped.clone()
    ops.replay_commit(rawk[:2], rawv[:2], g[:2], beta[:2], acc, want)
    ops.replay_commit(rawk[:2], rawv[:2], inside, beta[:2], acc, overlapped)
    assert torch.equal(overlapped, want)


def test_replay_commit_argument_errors():
    N, T = 2, 3
    x = make(N, T, seed=40)
    rawv, rawk, g, beta = windows(x, T, 0.0)
    idx = torch.tensor([0, 3], dtype=torch.int32)
    acc = torch.tensor([1, 2], dtype=torch.int32)
    pool = x["pool"]
    f = ops.replay_commit
    with pytest.raises(TypeError, match="k_window must be a torch.Tensor"):
        f(rawk.numpy(), rawv, g, beta, acc, pool, idx)
    with pytest.raises(ValueError, match=r"k_window must be \[layers, slots, H, L, K\]"):
        f(rawk[0], rawv, g, beta, acc, pool, idx)
    with pytest.raises(ValueError, match="v_window must have 4 dimensions"):
        f(rawk, rawv[None], g, beta, acc, pool, idx)
    with pytest.raises(TypeError, match="v_window must have dtype"):
        f(rawk, rawv.half(), g, beta, acc, pool, idx)
    with pytest.raises(TypeError, match="g_window must have dtype"):
        f(rawk, rawv, g.half(), beta, acc, pool, idx)
    with pytest.raises(ValueError, match="beta_window must have shape"):
        f(rawk, rawv, g, beta[:, :, :2], acc, pool, idx)
    with pytest.raises(ValueError, match="k_window must be contiguous"):
        f(rawk.transpose(2, 3).contiguous().transpose(2, 3), rawv, g, beta, acc, pool, idx)
    with pytest.raises(TypeError, match="accepted must have dtype"):
        f(rawk, rawv, g, beta, acc.float(), pool, idx)
    with pytest.raises(ValueError, match="state must have shape"):
        f(rawk, rawv, g, beta, acc, pool.transpose(-1, -2).contiguous()[:, :, :8], idx)
    with pytest.raises(ValueError, match="state_indices must have shape"):
        f(rawk, rawv, g, beta, acc, pool, idx[:1])
    with pytest.raises(ValueError, match="5 slots but accepted has 2 rows"):
        f(rawk, rawv, g, beta, acc, pool)
    with pytest.raises(ValueError, match="layout must be 'vk' or 'kv'"):
        f(rawk, rawv, g, beta, acc, pool, idx, layout="kkv")
    if cuda_ok:
        with pytest.raises(ValueError, match="state is on cuda"):
            f(rawk, rawv, g, beta, acc, pool.cuda(), idx)
    # A tree's parent table [N, P], 1 <= P <= min(L, 64).
    parents = torch.tensor([[-1, 0, 1], [-1, 0, 0]], dtype=torch.int32)
    tree = lambda p: f(rawk, rawv, g, beta, acc, pool, idx,  # noqa: E731
                       retrieve_parent_token=p)
    with pytest.raises(ValueError, match=r"retrieve_parent_token must be \[N, P\] with N = 2 "
                                         r"and 1 <= P <= min\(L, 64\) = 3"):
        tree(torch.zeros(2, 4, dtype=torch.int32))
    with pytest.raises(ValueError, match="retrieve_parent_token must be"):
        tree(parents[0])
    with pytest.raises(TypeError, match="retrieve_parent_token must have dtype"):
        tree(parents.float())
    with pytest.raises(TypeError, match="retrieve_parent_token must be a torch.Tensor"):
        tree(parents.tolist())
    assert torch.equal(pool, make(N, T, seed=40)["pool"]), "a refused call wrote the state"
    tree(parents[:, :2].t().contiguous().t())  # a strided table is copied, then taken


def test_empty_batch_compiles_and_launches_nothing():
    x = make(1, 2, seed=41)
    rawv, rawk, g, beta = windows(x, 2, 0.0)
    before = dict(ops._custom_ops._text_kernels)
    none = torch.zeros(0, dtype=torch.int32)
    assert ops.replay_commit(rawk, rawv, g, beta, none, x["pool"], state_indices=none) is x["pool"]
    assert ops._custom_ops._text_kernels == before


def test_torch_compile_traces_the_op_and_opcheck():
    N, T = 3, 4
    x = make(N, T, seed=42)
    idx = torch.tensor([0, 2, -1], dtype=torch.int32)
    acc = torch.tensor([2, 4, 1], dtype=torch.int32)
    w = windows(x, T)
    verify(x, x["pool"], idx, w)
    want = x["pool"].clone()
    commit(w, acc, want, idx)

    def step(w, acc, pool, idx):
        commit(w, acc, pool, idx)
        return pool

    got = x["pool"].clone()
    torch.compile(step, backend="aot_eager", fullgraph=True)(w, acc, got, idx)
    assert torch.equal(got, want)
    rawv, rawk, g, beta = (t[None] for t in w)
    torch.library.opcheck(torch.ops.gdn.replay_commit.default,
                          (rawk, rawv, g, beta, acc, x["pool"][None].clone(), idx, None, True, "vk"),
                          test_utils=("test_schema", "test_faketensor"))


@pytest.mark.skipif(not cuda_ok, reason="CUDA graphs need a GPU")
def test_cuda_graph_of_verify_and_commit_replays_with_new_accepted_counts():
    N, T = 8, 4
    x = make(N, T, H=2, HV=4, dtype=bf16, slots=12, device="cuda", seed=50)
    idx = torch.tensor([3, 0, 11, -1, 7, 5, 1, 9], dtype=torch.int32, device="cuda")
    accepted = torch.zeros(N, dtype=torch.int32, device="cuda")
    out = torch.empty_like(x["v"])
    w = windows(x, T, 0.0)
    pool = x["pool"].clone()

    def round_():
        ops.gated_delta_rule_mtp(x["q"], x["k"], x["v"], pool, idx, x["A_log"], x["a"],
                                 x["dt_bias"], x["b"], output=out, disable_state_update=True,
                                 cache_replayssm=True, replayssm_rawv=w[0], replayssm_rawk=w[1],
                                 replayssm_g=w[2], replayssm_beta=w[3])
        commit(w, accepted, pool, idx)

    round_()  # compile outside the capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        round_()
    for counts in ([4, 1, 0, 2, 3, 4, 2, 1], [0, 0, 4, 4, 1, 1, 3, 2]):
        accepted.copy_(torch.tensor(counts, dtype=torch.int32))
        pool.copy_(x["pool"])
        graph.replay()
        torch.cuda.synchronize()
        replayed, o_replayed = pool.clone(), out.clone()
        pool.copy_(x["pool"])
        round_()
        assert torch.equal(pool, replayed) and torch.equal(out, o_replayed)
        want = x["pool"].clone()
        plain_decode(x, want, idx, accepted)
        assert close(replayed, want, exact=False)


@pytest.mark.skipif(not cuda_ok, reason="the GPU kernels need a GPU")
@pytest.mark.parametrize("reductions", ["side_by_side", "in_turn"])
@pytest.mark.parametrize("tree", [False, True])
def test_gpu_commit_is_bit_exact_with_a_decode_of_the_same_schedule(reductions, tree):
    """The op's exactness contract on the GPU: with an f32 state and the
    same token-loop schedule pinned for both (set_schedule), the committed
    pool equals the plain decode of the accepted tokens (of a tree: of the
    accepted path) bit for bit."""
    ops.set_schedule(columns_per_lane=2, lanes_along_v=2, warps=4, staged_tokens=0,
                     reductions=reductions)
    try:
        N, T = 6, 4
        x = make(N, T, H=2, HV=4, K=128, V=128, device="cuda", seed=7)
        if tree:
            idx = torch.tensor(TREE_SLOTS, dtype=torch.int32, device="cuda")
            accepted = torch.tensor(TREE_ACCEPTED, dtype=torch.int32, device="cuda")
            parents = torch.tensor(TREE_PARENTS, dtype=torch.int32, device="cuda")
        else:
            idx = torch.tensor([4, 0, -1, 2, 7, 5], dtype=torch.int32, device="cuda")
            accepted = torch.tensor([T, 1, 3, 0, 2, T - 1], dtype=torch.int32, device="cuda")
            parents = None
        pool0 = x["pool"].clone()
        w = windows(x, T)
        if tree:
            tree_verify(x, x["pool"], idx, parents, w)
        else:
            verify(x, x["pool"], idx, w)
        got = x["pool"]
        ops.replay_commit(w[1], w[0], w[2], w[3], accepted, got, state_indices=idx,
                          retrieve_parent_token=parents)
        want = pool0.clone()
        if tree:
            for n, (slot, path) in enumerate(zip(TREE_SLOTS, TREE_PATHS)):
                if slot >= 0:
                    decode_path(x, want, slot, n, path)
        else:
            plain_decode(x, want, idx, accepted)
        assert torch.equal(got, want)
    finally:
        ops.set_schedule()
