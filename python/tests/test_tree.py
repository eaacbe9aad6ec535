"""EAGLE tree verify through SGLang's entry point (retrieve_parent_token):
against the fp64 tree reference (reference.verify_tree), against a torch-only
re-implementation of SGLang's Triton loop, a chain against the plain verify
bit for bit, and SGLang's packed (cu_seqlens) call form. CPU everywhere, CUDA
where a GPU is present."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gdn.ops as ops  # noqa: E402
from reference import rms_rel, verify_tree  # noqa: E402
from test_serving import (DEVICES, NAN, assert_o_close, assert_state_close,  # noqa: E402
                          make_inputs, np64, rand_states, same_bits, sglang)

f32, bf16 = torch.float32, torch.bfloat16
H, HV, K, V, T = 2, 4, 32, 16, 4

# Six rows of T = 4 tokens: SGLang's example tree (1 and 2 children of 0, 3 of
# 1), a chain, a second root at step 2, a parent at its own step and one past
# the table (no tree: treated as roots), a row without a buffer row (its table
# is ignored: a chain), and a padding row.
PARENTS = [[-1, 0, 0, 1], [-1, 0, 1, 2], [-1, 0, -1, 2], [-1, 0, 2, 9], [-1, 0, 0, 2],
           [-1, 0, 0, 0]]
SLOTS = [5, 1, 6, 0, 3, -1]   # pool of 8 slots; row 5 is padding
ROWS = [2, 0, 5, 4, -1, 1]    # buffer of 6 rows; row 4 has none, row 3 is no one's


def rounding(dtype):
    """The rounding of a state stored in `dtype` (reloaded parents are read as stored)."""
    if dtype == f32:
        return lambda s: np.asarray(s, np.float32).astype(np.float64)
    return lambda s: torch.from_numpy(np.ascontiguousarray(s)).to(dtype).double().numpy()


def tree_case(device, buf_dtype, index_dtype, seed=0):
    x = make_inputs(len(SLOTS), T, H, HV, K, V, device, seed=seed)
    pool = rand_states((8, HV, V, K), seed + 1, f32, device)
    idx = torch.tensor(SLOTS, dtype=torch.int32, device=device)
    rows = torch.tensor(ROWS, dtype=torch.int32, device=device)
    parents = torch.tensor(PARENTS, dtype=index_dtype, device=device)
    inter = torch.full((6, T, HV, V, K), NAN, dtype=buf_dtype, device=device)
    return x, pool, idx, rows, parents, inter


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("buf_dtype", [f32, bf16])
@pytest.mark.parametrize("index_dtype", [torch.int32, torch.int64])
@pytest.mark.parametrize("commit", [False, True])
def test_tree_matches_reference(device, buf_dtype, index_dtype, commit):
    x, pool, idx, rows, parents, inter = tree_case(device, buf_dtype, index_dtype)
    pool0, inter0 = pool.clone(), inter.clone()
    o = sglang(x, pool, idx, disable_state_update=not commit, intermediate_states_buffer=inter,
               intermediate_state_indices=rows, cache_steps=T, retrieve_parent_token=parents)
    live = [n for n in range(len(SLOTS)) if SLOTS[n] >= 0]
    sel = lambda name: np64(x[name][live])
    ro, rstates, rfinal = verify_tree(
        sel("q"), sel("k"), sel("v"), np.array(PARENTS)[live], a=sel("a"),
        A_log=np64(x["A_log"]), dt_bias=np64(x["dt_bias"]), b=sel("b"),
        initial_state=np64(pool0[[SLOTS[n] for n in live]]), qk_l2norm=True, layout="vk",
        has_row=[ROWS[n] >= 0 for n in live], round_state=rounding(buf_dtype))
    assert_o_close(o[live], ro)
    assert torch.equal(o[5].cpu(), torch.zeros_like(o[5]).cpu()), "padding row not zero"
    for i, n in enumerate(live):
        if ROWS[n] >= 0:
            assert_state_close(inter[ROWS[n]], rstates[i])
    for r in (1, 3):  # the padding row's and no one's: untouched
        assert same_bits(inter[r], inter0[r]), f"buffer row {r} was written"
    if commit:  # the state after the last token, on whichever branch it is
        for i, n in enumerate(live):
            assert_state_close(pool[SLOTS[n]], rfinal[i])
        untouched = [s for s in range(8) if s not in SLOTS]
    else:
        untouched = range(8)
    for s in untouched:
        assert same_bits(pool[s], pool0[s]), f"slot {s} changed"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("buf_dtype", [f32, bf16])
def test_chain_table_equals_plain_verify_bit_for_bit(device, buf_dtype):
    x, pool, idx, rows, _, inter = tree_case(device, buf_dtype, torch.int32, seed=3)
    chain = torch.tensor([[-1, 0, 1, 2]] * len(SLOTS), dtype=torch.int32, device=device)
    pool0, pool2, inter2 = pool.clone(), pool.clone(), inter.clone()
    kw = dict(intermediate_state_indices=rows, cache_steps=T)
    # One kernel form for both: left to the cost model, the tree may get a
    # producer warp that sums the norms in another order than the plain
    # verify's warps do, which an fp32 buffer shows in its last bits.
    ops.set_schedule(producer_stages=0)
    try:
        o1 = sglang(x, pool, idx, intermediate_states_buffer=inter, **kw)
        o2 = sglang(x, pool2, idx, intermediate_states_buffer=inter2,
                    retrieve_parent_token=chain, **kw)
    finally:
        ops.set_schedule()
    assert same_bits(o1, o2) and same_bits(inter, inter2) and same_bits(pool, pool2)
    # ... while the example tree changes o from token 2 on, and only there.
    o3 = sglang(x, pool0, idx, intermediate_states_buffer=inter.clone(),
                retrieve_parent_token=torch.tensor(PARENTS, dtype=torch.int32, device=device),
                **kw)
    assert same_bits(o3[0, :2], o1[0, :2])
    assert rms_rel(np64(o3[0, 2:]), np64(o1[0, 2:])) > 1e-2


def sglang_tree_torch(x, pool, idx, inter, rows, parents, scale=None):
    """SGLang's fused_sigmoid_gating_delta_rule_update kernel loop with
    HAS_EAGLE_TREE_CUSTOM_ATTN_MASK, in torch fp32 (not its code: its
    semantics): every step t > 0 of a row with a buffer row reloads
    intermediate_states[row, parent[t]], chains included; q, k L2-normalised;
    the pool is not written (target_verify). Valid single-root trees only
    (SGLang reads out of the row for a parent < 0)."""
    o = torch.zeros(x["v"].shape, dtype=f32)
    scale = K ** -0.5 if scale is None else scale
    A_log, dt_bias = x["A_log"].cpu(), x["dt_bias"].cpu()
    for n in range(pool.shape[0] if idx is None else idx.shape[0]):
        slot, row = int(idx[n]), int(rows[n])
        if slot < 0:
            continue
        for hv in range(HV):
            h = hv // (HV // H)
            b_h = pool[slot, hv].float().cpu().T.clone()  # [K, V]
            for t in range(T):
                if t != 0 and row >= 0:
                    b_h = inter[row, int(parents[n, t]), hv].float().cpu().T.clone()
                q = x["q"][n, t, h].float().cpu()
                k = x["k"][n, t, h].float().cpu()
                v = x["v"][n, t, hv].float().cpu()
                xa = x["a"][n, t, hv].float().cpu() + dt_bias[hv]
                sp = torch.where(xa <= 20.0, torch.log(1.0 + torch.exp(xa)), xa)
                g = -torch.exp(A_log[hv]) * sp
                beta = 1.0 / (1.0 + torch.exp(-x["b"][n, t, hv].float().cpu()))
                q = q / torch.sqrt((q * q).sum() + 1e-6) * scale
                k = k / torch.sqrt((k * k).sum() + 1e-6)
                b_h = b_h * torch.exp(g)
                u = (v - (b_h * k[:, None]).sum(0)) * beta
                b_h = b_h + k[:, None] * u[None, :]
                o[n, t, hv] = (b_h * q[:, None]).sum(0)
                if row >= 0:
                    inter[row, t, hv] = b_h.T.to(inter.dtype).to(inter.device)
    return o


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("buf_dtype,tol", [(f32, 1e-5), (bf16, 4e-3)])
def test_tree_matches_sglang_semantics(device, buf_dtype, tol):
    """Single-root trees of 4 rows (one without a buffer row) with fp32 inputs.
    With an f32 buffer gdn equals SGLang's loop to fp32 rounding. With a bf16
    buffer SGLang also rounds a chain's state (it reloads every parent from
    the buffer) where gdn keeps the carried fp32 state: the results differ by
    about one bf16 rounding, hence the looser bound."""
    trees = [[-1, 0, 0, 1], [-1, 0, 1, 1], [-1, 0, 0, 0], [-1, 0, 0, 2]]
    x = make_inputs(4, T, H, HV, K, V, device, dtype=f32, seed=11)
    pool = rand_states((5, HV, V, K), 12, f32, device)
    idx = torch.tensor([4, 0, 2, 1], dtype=torch.int64, device=device)
    rows = torch.tensor([1, -1, 0, 2], dtype=torch.int64, device=device)
    parents = torch.tensor(trees, dtype=torch.int64, device=device)
    inter = torch.full((3, T, HV, V, K), NAN, dtype=buf_dtype, device=device)
    inter_ref = inter.clone().cpu()
    want = sglang_tree_torch(x, pool, idx, inter_ref, rows, parents)
    got = sglang(x, pool, idx, disable_state_update=True, intermediate_states_buffer=inter,
                 intermediate_state_indices=rows, cache_steps=T, retrieve_parent_token=parents)
    assert rms_rel(np64(got), np64(want)) <= tol
    assert rms_rel(np64(inter), np64(inter_ref)) <= tol


@pytest.mark.parametrize("device", DEVICES)
def test_packed_tokens_as_sglang_passes_them(device):
    """SGLang's target_verify packs the drafts, q [1, N * T, ...] with
    cu_seqlens = arange(0, N * T + 1, T), and passes retrieve_parent_token
    [N, T]: the same result as the batched call."""
    x, pool, idx, rows, parents, inter = tree_case(device, bf16, torch.int64, seed=5)
    kw = dict(disable_state_update=True, intermediate_state_indices=rows, cache_steps=T,
              retrieve_parent_token=parents)
    o1 = sglang(x, pool, idx, intermediate_states_buffer=inter, **kw)
    N = len(SLOTS)
    packed = {name: (t.reshape(1, N * T, *t.shape[2:]) if t.dim() > 1 else t)
              for name, t in x.items()}
    cu = torch.arange(0, N * T + 1, T, dtype=torch.int32, device=device)
    inter2 = torch.full_like(inter, NAN)
    o2 = sglang(packed, pool, idx, cu_seqlens=cu, intermediate_states_buffer=inter2, **kw)
    assert same_bits(o2.reshape(o1.shape), o1)
    assert same_bits(inter2, inter)


def test_tree_argument_errors():
    x, pool, idx, rows, parents, inter = tree_case("cpu", f32, torch.int32)
    kw = dict(intermediate_state_indices=rows, cache_steps=T)
    with pytest.raises(ValueError, match=r"retrieve_parent_token must have shape \[6, 4\]"):
        sglang(x, pool, idx, intermediate_states_buffer=inter, retrieve_parent_token=parents[:, :3],
               **kw)
    with pytest.raises(TypeError, match="retrieve_parent_token must have dtype"):
        sglang(x, pool, idx, intermediate_states_buffer=inter,
               retrieve_parent_token=parents.float(), **kw)
    with pytest.raises(ValueError, match="retrieve_parent_token must be contiguous"):
        sglang(x, pool, idx, intermediate_states_buffer=inter,
               retrieve_parent_token=parents.t().contiguous().t(), **kw)
