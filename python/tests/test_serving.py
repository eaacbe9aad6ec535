"""Serving inputs that must come out right (issue 5): state pools with padding
rows, pools past 2^31 elements, kv/vk layouts with K != V, varlen with empty
sequences, gate and beta extremes, GQA maps, verify + commit + decode, CUDA
graph replay with new indices, int32/int64 indices.

Every test runs on the CPU and, where a GPU is present, on CUDA; the reference
is reference.recurrent (fp64). Tolerances (docs/math.md §3): RMS-relative error
o <= 2e-3 and fp32 state <= 1e-5; bf16 states see assert_state_close.
"""
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gdn.ops as ops  # noqa: E402
from reference import recurrent, rms_rel  # noqa: E402

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
f32, bf16 = torch.float32, torch.bfloat16
NAN = float("nan")


# ----------------------------------------------------------------------------
# helpers


def np64(t):
    return t.detach().double().cpu().numpy() if isinstance(t, torch.Tensor) else np.asarray(t, np.float64)


def bits(t):
    """The bytes of t (bit-for-bit comparisons that also hold for NaN)."""
    t = t.detach().contiguous().cpu()
    return t.reshape(-1).view(torch.uint8)


def same_bits(a, b):
    return torch.equal(bits(a), bits(b))


def make_inputs(N, T, H, HV, K, V, device, dtype=bf16, seed=0):
    """Random q, k [N, T, H, K], v [N, T, HV, V], a, b [N, T, HV] in `dtype`;
    A_log, dt_bias [HV] fp32, distinct per head. A_log in log([0.05, 0.5]) keeps
    the decay mild, so the initial state still matters after a few tokens."""
    g = torch.Generator().manual_seed(seed)
    r = lambda *s: torch.randn(*s, generator=g)
    x = dict(q=r(N, T, H, K), k=r(N, T, H, K), v=r(N, T, HV, V), a=r(N, T, HV), b=r(N, T, HV))
    x = {name: t.to(dtype) for name, t in x.items()}
    x["A_log"] = torch.log(torch.rand(HV, generator=g) * 0.45 + 0.05)
    x["dt_bias"] = r(HV)
    return {name: t.to(device).contiguous() for name, t in x.items()}


def rand_states(shape, seed, dtype=f32, device="cpu"):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(dtype).to(device)


def ref(x, s0, n=slice(None), t=slice(None), layout="vk"):
    """fp64 reference with fused gating and qk L2 norm for rows n, tokens t of
    x, from the initial states s0 [rows, HV, ...] (in `layout`)."""
    if isinstance(n, int):
        n = slice(n, n + 1)
    sel = lambda name: np64(x[name][n, t])
    return recurrent(sel("q"), sel("k"), sel("v"), a=sel("a"), A_log=np64(x["A_log"]),
                     dt_bias=np64(x["dt_bias"]), b=sel("b"), initial_state=np64(s0),
                     qk_l2norm=True, layout=layout)


def assert_o_close(o, ro, tol=2e-3):
    """o is stored in v's dtype: the reference is rounded the same way first, so
    the bf16 rounding floor (~1.5e-3 RMS-relative) does not eat the 2e-3 budget
    and the check measures the kernel's arithmetic."""
    r = torch.from_numpy(np.ascontiguousarray(ro)).to(o.dtype)
    err = rms_rel(np64(o), np64(r))
    assert err <= tol, f"o: RMS-relative error {err:.3g} > {tol}"


def assert_state_close(s, rs):
    """fp32 state: RMS-relative error <= 1e-5 against the fp64 reference.
    bf16 state: the kernel keeps the state in fp32 and rounds once on store, so
    its fp32 value is within ~1e-6 (relative to the state's scale) of the fp64
    one; rounded to bf16, it equals the reference rounded to bf16 except where
    the two straddle a rounding boundary, where they differ by one bf16 ulp, at
    most 2^-7 = 7.8e-3 of the element. Hence: every element within 1e-2 of the
    rounded reference element (plus 1e-5 of the largest element for entries near
    zero, where the fp32 error exceeds an ulp), and RMS-relative <= 1e-2."""
    if s.dtype == f32:
        err = rms_rel(np64(s), rs)
        assert err <= 1e-5, f"state: RMS-relative error {err:.3g} > 1e-5"
        return
    r = torch.from_numpy(np.ascontiguousarray(rs)).to(s.dtype).double()
    got = s.detach().cpu().double()
    bound = 1e-2 * r.abs() + 1e-5 * r.abs().max()
    bad = int(((got - r).abs() > bound).sum())
    assert bad == 0, f"bf16 state: {bad} elements more than one ulp from the rounded reference"
    assert rms_rel(got.numpy(), r.numpy()) <= 1e-2


def sglang(x, pool, idx, **kw):
    return ops.fused_sigmoid_gating_delta_rule_update(
        x["A_log"], x["a"], x["dt_bias"], 1.0, 20.0, x["q"], x["k"], x["v"], x["b"], pool, idx,
        use_qk_l2norm_in_kernel=True, **kw)


def pool_update(entry, x, pool, idx):
    """A decode (T=1) or verify-with-commit (T>1) on a vk pool through one of
    the entry points; FlashInfer's output is pre-filled with NaN so that rows the
    kernel does not write show up."""
    if entry == "sglang":
        return sglang(x, pool, idx)
    out = torch.full_like(x["v"], NAN)
    if entry == "flashinfer":
        o, s = ops.gated_delta_rule_decode_pretranspose(
            x["q"], x["k"], x["v"], None, x["A_log"], x["a"], x["dt_bias"], x["b"], output=out,
            initial_state=pool, initial_state_indices=idx)
        assert s is pool
        return o
    assert entry == "flashinfer_mtp"
    o, s = ops.gated_delta_rule_mtp(x["q"], x["k"], x["v"], pool, idx, x["A_log"], x["a"],
                                    x["dt_bias"], x["b"], output=out,
                                    disable_state_update=False)
    assert s is pool
    return o


def raw(x, state=None, idx=None, cu=None, o=None, layout="vk", a=None, initial_state=None,
        final_state=None):
    """torch.ops.gdn.recurrent with fused gating and qk L2 norm."""
    if o is None:
        o = torch.empty_like(x["v"])
    torch.ops.gdn.recurrent(x["q"], x["k"], x["v"], None, x["a"] if a is None else a,
                            x["A_log"], x["dt_bias"], None, x["b"], idx, cu, None,
                            initial_state, state, None, final_state, o, None, None, None,
                            None, None, None, None, None, None, None, True, layout)
    return o


# ----------------------------------------------------------------------------
# 1, 2: padding rows (index < 0) touch no slot, output zero rows

POOL_ENTRIES = [("sglang", 1), ("sglang", 4), ("flashinfer", 1), ("flashinfer_mtp", 4)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("pool_dtype", [f32, bf16])
@pytest.mark.parametrize("entry,T", POOL_ENTRIES)
def test_pool_padding_rows_touch_no_slot_and_output_exact_zeros(device, pool_dtype, entry, T):
    """6-slot pool, state_indices = [3, -1, 0, -1]: slots 0 and 3 become the
    reference's final states, slots 1, 2, 4, 5 stay bit-identical, o rows 1 and
    3 are exactly 0."""
    H, HV, K, V = 2, 4, 32, 64
    x = make_inputs(4, T, H, HV, K, V, device, seed=101)
    pool0 = rand_states((6, HV, V, K), 102, pool_dtype, device)
    pool = pool0.clone()
    idx = torch.tensor([3, -1, 0, -1], dtype=torch.int32, device=device)
    o = pool_update(entry, x, pool, idx)
    for s in (1, 2, 4, 5):
        assert same_bits(pool[s], pool0[s]), f"unused slot {s} was written"
    assert torch.equal(o[1].cpu(), torch.zeros_like(o[1].cpu())), "padding row 1 of o is not 0"
    assert torch.equal(o[3].cpu(), torch.zeros_like(o[3].cpu())), "padding row 3 of o is not 0"
    for row, slot in ((0, 3), (2, 0)):
        assert not torch.equal(pool[slot].cpu(), pool0[slot].cpu()), f"slot {slot} not updated"
        ro, rs = ref(x, pool0[slot:slot + 1], n=row)
        assert_o_close(o[row:row + 1], ro)
        assert_state_close(pool[slot:slot + 1], rs)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("pool_dtype", [f32, bf16])
@pytest.mark.parametrize("entry,T", POOL_ENTRIES)
def test_pool_nan_in_unused_slots_changes_nothing(device, pool_dtype, entry, T):
    """The same call with slots 1, 2, 4, 5 full of NaN: those slots stay
    bit-identical NaN, o and slots 0, 3 equal the run without NaN bit for bit
    (a padding row that read any slot would spread the NaN)."""
    H, HV, K, V = 2, 4, 32, 64
    x = make_inputs(4, T, H, HV, K, V, device, seed=111)
    clean = rand_states((6, HV, V, K), 112, pool_dtype, device)
    dirty = clean.clone()
    dirty[[1, 2, 4, 5]] = NAN
    dirty0 = dirty.clone()
    idx = torch.tensor([3, -1, 0, -1], dtype=torch.int64, device=device)
    o_clean = pool_update(entry, x, clean, idx)
    o_dirty = pool_update(entry, x, dirty, idx)
    for s in (1, 2, 4, 5):
        assert same_bits(dirty[s], dirty0[s]), f"NaN slot {s} was written"
    assert torch.isfinite(o_dirty.float()).all(), "NaN of an unused slot reached o"
    assert same_bits(o_dirty, o_clean)
    for s in (0, 3):
        assert same_bits(dirty[s], clean[s]), f"slot {s} differs from the run without NaN"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("entry,T", [("sglang", 1), ("sglang", 2), ("flashinfer", 1),
                                     ("flashinfer_mtp", 2)])
def test_padding_index_minus_one_never_aliases_the_last_slot(device, entry, T):
    """5-slot pool, state_indices = [-1, 3]: slot 4 (what -1 means in Python
    indexing) is bit-identical afterwards, as are slots 0-2; row 0 of o is 0."""
    H, HV, K, V = 2, 4, 32, 64
    x = make_inputs(2, T, H, HV, K, V, device, seed=121)
    pool0 = rand_states((5, HV, V, K), 122, f32, device)
    pool = pool0.clone()
    idx = torch.tensor([-1, 3], dtype=torch.int32, device=device)
    o = pool_update(entry, x, pool, idx)
    assert same_bits(pool[4], pool0[4]), "index -1 wrote the last slot"
    for s in (0, 1, 2):
        assert same_bits(pool[s], pool0[s])
    assert torch.equal(o[0].cpu(), torch.zeros_like(o[0].cpu()))
    ro, rs = ref(x, pool0[3:4], n=1)
    assert_o_close(o[1:2], ro)
    assert_state_close(pool[3:4], rs)


@pytest.mark.parametrize("device", DEVICES)
def test_padding_intermediate_index_never_aliases_the_last_buffer_row(device):
    """Verify with a 5-row intermediate buffer and intermediate_state_indices =
    [-1, 3] (state_indices [-1, 3] too): buffer rows 0-2 and 4 (the last) stay
    bit-identical NaN, row 3 holds the reference's per-token states."""
    H, HV, K, V, T = 2, 4, 32, 64, 3
    x = make_inputs(2, T, H, HV, K, V, device, seed=131)
    pool0 = rand_states((5, HV, V, K), 132, f32, device)
    pool = pool0.clone()
    inter = torch.full((5, T, HV, V, K), NAN, device=device)
    inter0 = inter.clone()
    idx = torch.tensor([-1, 3], dtype=torch.int32, device=device)
    o = sglang(x, pool, idx, disable_state_update=True, intermediate_states_buffer=inter,
               intermediate_state_indices=idx.clone(), cache_steps=T)
    assert same_bits(pool, pool0), "disable_state_update=True wrote the pool"
    for r in (0, 1, 2, 4):
        assert same_bits(inter[r], inter0[r]), f"intermediate row {r} was written"
    assert torch.equal(o[0].cpu(), torch.zeros_like(o[0].cpu()))
    for t in range(T):
        _, rs = ref(x, pool0[3:4], n=1, t=slice(0, t + 1))
        assert_state_close(inter[3:4, t], rs)


# ----------------------------------------------------------------------------
# 3: pools past 2^31 elements


def _check_large_pool(device, HV, K, V):
    """bf16 pool of 4100 slots, state_indices = [4099, 0, 4096]: rows match the
    reference, every other slot stays zero. With HV=32, K=V=128 a slot holds
    2^19 elements, so slots 4096 and 4099 start at element offsets >= 2^31:
    32-bit offset arithmetic would wrap."""
    slots = 4100
    pool = torch.zeros(slots, HV, V, K, dtype=bf16, device=device)
    used = [4099, 0, 4096]
    s0 = rand_states((3, HV, V, K), 142, bf16, device)
    pool[used] = s0
    x = make_inputs(3, 1, 2, HV, K, V, device, seed=141)
    idx = torch.tensor(used, dtype=torch.int64, device=device)
    o = sglang(x, pool, idx)
    ro, rs = ref(x, s0)
    assert_o_close(o, ro)
    for i, slot in enumerate(used):
        assert_state_close(pool[slot:slot + 1], rs[i:i + 1])
    # Every other slot is still zero (in chunks: the pool may be 4.3 GB).
    for lo, hi in ((1, 4096), (4097, 4099)):
        for c in range(lo, hi, 256):
            chunk = pool[c:min(c + 256, hi)]
            assert int(torch.count_nonzero(chunk.view(torch.int16))) == 0, \
                f"a slot in [{c}, {min(c + 256, hi)}) was written"


@pytest.mark.parametrize("device", DEVICES)
def test_bf16_pool_past_2g_elements_qwen3_next_heads(device):
    HV, K, V = 32, 128, 128
    need = 4100 * HV * K * V * 2
    if device == "cpu":
        avail = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        if avail < need * 3 // 2:
            pytest.skip(f"the 4100x32x128x128 bf16 pool needs {need / 2**30:.1f} GiB "
                        f"(+50% margin); {avail / 2**30:.1f} GiB of RAM available")
    _check_large_pool(device, HV, K, V)


@pytest.mark.parametrize("device", DEVICES)
def test_bf16_pool_of_4100_slots_small_heads(device):
    _check_large_pool(device, 2, 32, 32)


# ----------------------------------------------------------------------------
# 4: kv and vk layouts with K != V


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", ["kv", "vk"])
@pytest.mark.parametrize("K,V", [(64, 32), (32, 64)])
def test_pool_layout_kv_and_vk_with_k_ne_v(device, layout, K, V):
    """A pool in each layout ([slots, HV, K, V] kv, [slots, HV, V, K] vk) with
    K != V, a random (non-symmetric) initial state and per-head gates: each slot
    comes back in its own layout, equal to the reference (raw op: the entry
    points have no kv pool)."""
    H, HV, T = 2, 4, 2
    x = make_inputs(3, T, H, HV, K, V, device, seed=151)
    shape = (5, HV, K, V) if layout == "kv" else (5, HV, V, K)
    pool0 = rand_states(shape, 152, f32, device)
    pool = pool0.clone()
    idx = torch.tensor([4, -1, 1], dtype=torch.int32, device=device)
    o = raw(x, state=pool, idx=idx, layout=layout)
    for s in (0, 2, 3):
        assert same_bits(pool[s], pool0[s])
    for row, slot in ((0, 4), (2, 1)):
        ro, rs = ref(x, pool0[slot:slot + 1], n=row, layout=layout)
        assert_o_close(o[row:row + 1], ro)
        assert_state_close(pool[slot:slot + 1], rs)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("state_v_first", [False, True])
@pytest.mark.parametrize("K,V", [(64, 32), (32, 64)])
def test_fla_state_layout_kv_and_vk_with_k_ne_v(device, state_v_first, K, V):
    """FLA's entry: initial_state [N, HV, K, V] (or [N, HV, V, K] with
    state_v_first), per-head fused gates: the final state comes back in the
    same layout, equal to the reference; initial_state is not written."""
    H, HV, T, N = 2, 4, 3, 2
    x = make_inputs(N, T, H, HV, K, V, device, seed=161)
    layout = "vk" if state_v_first else "kv"
    h0 = rand_states((N, HV, V, K) if state_v_first else (N, HV, K, V), 162, f32, device)
    h00 = h0.clone()
    o, ht = ops.fused_recurrent_gated_delta_rule(
        x["q"], x["k"], x["v"], g=x["a"], beta=x["b"], initial_state=h0, output_final_state=True,
        use_qk_l2norm_in_kernel=True, use_gate_in_kernel=True, A_log=x["A_log"],
        dt_bias=x["dt_bias"], use_beta_sigmoid_in_kernel=True, state_v_first=state_v_first)
    assert same_bits(h0, h00)
    assert ht.shape == h0.shape
    ro, rs = ref(x, h00, layout=layout)
    assert_o_close(o, ro)
    assert_state_close(ht, rs)


# ----------------------------------------------------------------------------
# 5: varlen with empty sequences


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("cu_dtype", [torch.int32, torch.int64])
def test_varlen_trailing_empty_sequences_leave_their_slots_untouched(device, cu_dtype):
    """SGLang entry, B=1, cu_seqlens = [0, 2, 4, 4, 4], state_indices =
    [1, 2, 3, 4]: slots 1, 2 hold the reference of tokens [0, 2) and [2, 4);
    slots 3, 4 (empty sequences) and 0, 5 (unused) are bit-identical."""
    H, HV, K, V = 2, 4, 32, 64
    x = make_inputs(1, 4, H, HV, K, V, device, seed=171)
    pool0 = rand_states((6, HV, V, K), 172, f32, device)
    pool = pool0.clone()
    cu = torch.tensor([0, 2, 4, 4, 4], dtype=cu_dtype, device=device)
    idx = torch.tensor([1, 2, 3, 4], dtype=torch.int32, device=device)
    o = sglang(x, pool, idx, cu_seqlens=cu)
    for s in (0, 3, 4, 5):
        assert same_bits(pool[s], pool0[s]), f"slot {s} was written"
    for slot, (lo, hi) in ((1, (0, 2)), (2, (2, 4))):
        ro, rs = ref(x, pool0[slot:slot + 1], t=slice(lo, hi))
        assert_o_close(o[:, lo:hi], ro)
        assert_state_close(pool[slot:slot + 1], rs)


@pytest.mark.parametrize("device", DEVICES)
def test_varlen_leading_empty_sequence(device):
    """cu_seqlens = [0, 0, 3], state_indices = [2, 0]: slot 2 (empty sequence)
    is bit-identical, slot 0 holds the reference of tokens [0, 3)."""
    H, HV, K, V = 2, 4, 32, 64
    x = make_inputs(1, 3, H, HV, K, V, device, seed=181)
    pool0 = rand_states((3, HV, V, K), 182, f32, device)
    pool = pool0.clone()
    cu = torch.tensor([0, 0, 3], dtype=torch.int32, device=device)
    idx = torch.tensor([2, 0], dtype=torch.int32, device=device)
    o = sglang(x, pool, idx, cu_seqlens=cu)
    assert same_bits(pool[1:], pool0[1:])
    ro, rs = ref(x, pool0[0:1])
    assert_o_close(o, ro)
    assert_state_close(pool[0:1], rs)


@pytest.mark.parametrize("device", DEVICES)
def test_varlen_zero_sequences_changes_nothing(device):
    """cu_seqlens = [0] (N = 0): the pool is bit-identical, and o (raw op,
    pre-filled with NaN) is not written."""
    H, HV, K, V = 2, 4, 32, 64
    x = make_inputs(1, 2, H, HV, K, V, device, seed=191)
    pool0 = rand_states((3, HV, V, K), 192, f32, device)
    pool = pool0.clone()
    cu = torch.tensor([0], dtype=torch.int32, device=device)
    idx = torch.zeros(0, dtype=torch.int32, device=device)
    sglang(x, pool, idx, cu_seqlens=cu)
    assert same_bits(pool, pool0)
    o = torch.full_like(x["v"], NAN)
    o0 = o.clone()
    raw(x, state=pool, idx=idx, cu=cu, o=o)
    assert same_bits(pool, pool0)
    assert same_bits(o, o0), "N = 0 wrote o"


@pytest.mark.parametrize("device", DEVICES)
def test_varlen_nan_tokens_past_the_last_sequence_change_nothing(device):
    """cu_seqlens = [0, 2, 4, 4, 4] over 6 packed tokens: tokens 4, 5 (past
    cu[-1]) full of NaN (q, k, v, a, b) give the same o for tokens 0-3 and the
    same pool, bit for bit, as finite tokens there; o rows 4, 5 (raw op,
    pre-filled with a sentinel) are not written."""
    H, HV, K, V = 2, 4, 32, 64
    x = make_inputs(1, 6, H, HV, K, V, device, seed=201)
    xn = {name: t.clone() for name, t in x.items()}
    for name in ("q", "k", "v", "a", "b"):
        xn[name][:, 4:] = NAN
    pool0 = rand_states((6, HV, V, K), 202, f32, device)
    cu = torch.tensor([0, 2, 4, 4, 4], dtype=torch.int32, device=device)
    idx = torch.tensor([1, 2, 3, 4], dtype=torch.int32, device=device)
    pool, pool_n = pool0.clone(), pool0.clone()
    o = sglang(x, pool, idx, cu_seqlens=cu)
    o_n = sglang(xn, pool_n, idx, cu_seqlens=cu)
    assert same_bits(pool_n, pool)
    assert same_bits(o_n[:, :4], o[:, :4])
    assert torch.isfinite(pool_n).all()
    sentinel = torch.full_like(x["v"], -7.0)
    pool_r = pool0.clone()
    raw(xn, state=pool_r, idx=idx, cu=cu, o=sentinel)
    assert same_bits(pool_r, pool)
    assert torch.equal(sentinel[:, 4:].cpu(), torch.full_like(sentinel[:, 4:].cpu(), -7.0)), \
        "o rows past cu_seqlens[-1] were written"


# ----------------------------------------------------------------------------
# 6: gate extremes
#
# g = -exp(A_log) * softplus(a + dt_bias) in fp32 (exp overflows past 88.72):
#   (A_log, a + dt_bias) = (100, 0):    exp(100) = inf, softplus(0) = ln 2   -> g = -inf
#   (A_log, a + dt_bias) = (x, +inf):   softplus(+inf) = +inf                -> g = -inf
#   (100, -200): softplus(-200) = 0 in fp32 (exp(-200) underflows), and
#                inf * 0 is NaN if computed naively; exactly g = -3.7e-44,
#                exp(g) = 1 (the reference, fp64, agrees)
#   (100, -inf): softplus(-inf) = 0 exactly, g = -0, exp(g) = 1 (inf * 0 again)
#   (0, 100):    g = -100, exp(g) = 3.7e-44 (a denormal, or 0 if flushed)
#   (0, -100):   g = -3.7e-44 (or -0), exp(g) = 1
# A token with g = -inf multiplies the state by exactly 0, so everything after
# it is independent of the state before it.

GATE_HEADS = [(100.0, -200.0), (100.0, 0.0), (0.0, 100.0), (0.0, -100.0),
              (0.5, float("inf")), (0.5, float("-inf")), (100.0, float("inf")),
              (100.0, float("-inf"))]
NEG_INF_HEADS = [1, 4, 6]  # heads of GATE_HEADS whose extreme token has g = -inf in fp32


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("where", ["a", "dt_bias"])
def test_gate_extremes_stay_finite_and_g_minus_inf_zeroes_the_state(device, where):
    """One value head per (A_log, a + dt_bias) pair of GATE_HEADS, T = 3.
    where="a": the extreme value is a at token 1 (dt_bias = 0, tokens 0 and 2
    random); where="dt_bias": it is dt_bias (a = 0 on every token). o and the
    state are finite and match the reference; for the g = -inf heads, the run
    from a zero initial state gives the same o after the extreme token and the
    same final state, exactly."""
    H, HV, K, V, T = 2, len(GATE_HEADS), 32, 64, 3
    x = make_inputs(2, T, H, HV, K, V, "cpu", seed=211)
    x["A_log"] = torch.tensor([p[0] for p in GATE_HEADS])
    ext = torch.tensor([p[1] for p in GATE_HEADS])
    if where == "a":
        x["dt_bias"] = torch.zeros(HV)
        x["a"][:, 1] = ext.to(bf16)  # all these values are exact in bf16
        first = 1
    else:
        x["dt_bias"] = ext
        x["a"].zero_()
        first = 0
    x = {name: t.to(device) for name, t in x.items()}
    pool0 = rand_states((2, HV, V, K), 212, f32, device)
    pool, zero = pool0.clone(), torch.zeros_like(pool0)
    idx = torch.tensor([1, 0], dtype=torch.int32, device=device)
    o = sglang(x, pool, idx)
    o_zero = sglang(x, zero, idx)
    assert torch.isfinite(o.float()).all(), "NaN/inf in o"
    assert torch.isfinite(pool).all(), "NaN/inf in the state"
    for row, slot in ((0, 1), (1, 0)):
        ro, rs = ref(x, pool0[slot:slot + 1], n=row)
        for h in range(HV):
            assert rms_rel(np64(pool[slot, h]), rs[0, h]) <= 1e-5, f"state of head {h} {GATE_HEADS[h]}"
            r = torch.from_numpy(ro[0, :, h].copy()).to(o.dtype)
            assert rms_rel(np64(o[row, :, h]), np64(r)) <= 2e-3, f"o of head {h} {GATE_HEADS[h]}"
    for h in NEG_INF_HEADS:
        assert torch.equal(pool[:, h].cpu(), zero[:, h].cpu()), f"head {h}: g = -inf kept the state"
        assert torch.equal(o[:, first:, h].cpu(), o_zero[:, first:, h].cpu())


@pytest.mark.parametrize("device", DEVICES)
def test_softplus_threshold_20_plus_minus_one_ulp(device):
    """a + dt_bias at the softplus threshold: 20 - 1 ulp, 20, 20 + 1 ulp (fp32 a,
    dt_bias = 0; the SGLang entry accepts an fp32 a) and 10 + 10. The result is
    finite and matches the reference (softplus continuous across 20)."""
    H, HV, K, V, T = 2, 4, 32, 64, 2
    x = make_inputs(2, T, H, HV, K, V, "cpu", seed=221)
    twenty = torch.tensor(20.0)
    vals = torch.stack([torch.nextafter(twenty, torch.tensor(0.0)), twenty,
                        torch.nextafter(twenty, torch.tensor(40.0)), torch.tensor(10.0)])
    x["a"] = vals.expand(2, T, HV).contiguous()
    x["dt_bias"] = torch.tensor([0.0, 0.0, 0.0, 10.0])
    x["A_log"] = torch.log(torch.tensor([0.05, 0.04, 0.03, 0.02]))  # g ~ -1 .. -0.4
    x = {name: t.to(device) for name, t in x.items()}
    pool0 = rand_states((2, HV, V, K), 222, f32, device)
    pool = pool0.clone()
    idx = torch.tensor([0, 1], dtype=torch.int32, device=device)
    o = sglang(x, pool, idx)
    assert torch.isfinite(o.float()).all() and torch.isfinite(pool).all()
    ro, rs = ref(x, pool0)
    assert_o_close(o, ro)
    assert_state_close(pool, rs)


@pytest.mark.parametrize("device", DEVICES)
def test_softplus_threshold_raw_op_fp32_gate(device):
    """The same through the raw op with fp32 a on a kv pool (FLA's layout)."""
    H, HV, K, V, T = 2, 4, 32, 64, 2
    x = make_inputs(2, T, H, HV, K, V, "cpu", seed=231)
    twenty = torch.tensor(20.0)
    up, down = torch.nextafter(twenty, torch.tensor(40.0)), torch.nextafter(twenty, torch.tensor(0.0))
    x["a"] = torch.stack([down, twenty, up, up]).expand(2, T, HV).contiguous()
    x["dt_bias"] = torch.tensor([0.0, 0.0, 0.0, -0.0])
    x["A_log"] = torch.log(torch.tensor([0.05, 0.04, 0.03, 0.02]))
    x = {name: t.to(device) for name, t in x.items()}
    pool0 = rand_states((2, HV, K, V), 232, f32, device)
    pool = pool0.clone()
    idx = torch.tensor([1, 0], dtype=torch.int64, device=device)
    o = raw(x, state=pool, idx=idx, layout="kv")
    assert torch.isfinite(o.float()).all() and torch.isfinite(pool).all()
    for row, slot in ((0, 1), (1, 0)):
        ro, rs = ref(x, pool0[slot:slot + 1], n=row, layout="kv")
        assert_o_close(o[row:row + 1], ro)
        assert_state_close(pool[slot:slot + 1], rs)


@pytest.mark.parametrize("device", DEVICES)
def test_log_space_g_minus_30_on_every_token_stays_finite(device):
    """FLA entry, log-space g = -30 on all T = 8 tokens (the state decays by
    exp(-240) overall, which underflows fp32): o and the final state are finite
    and match the reference."""
    N, T, H, HV, K, V = 2, 8, 2, 4, 32, 64
    gen = torch.Generator().manual_seed(241)
    q, k = torch.randn(N, T, H, K, generator=gen), torch.randn(N, T, H, K, generator=gen)
    v = torch.randn(N, T, HV, V, generator=gen)
    g = torch.full((N, T, HV), -30.0)
    beta = torch.rand(N, T, HV, generator=gen)
    h0 = torch.randn(N, HV, K, V, generator=gen)
    to = lambda t: t.to(device)
    o, ht = ops.fused_recurrent_gated_delta_rule(
        to(q), to(k), to(v), g=to(g), beta=to(beta), initial_state=to(h0),
        output_final_state=True, use_qk_l2norm_in_kernel=True)
    assert torch.isfinite(o).all() and torch.isfinite(ht).all()
    ro, rs = recurrent(np64(q), np64(k), np64(v), g=np64(g), beta=np64(beta),
                       initial_state=np64(h0), qk_l2norm=True)
    assert_o_close(o, ro)
    assert_state_close(ht, rs)


# ----------------------------------------------------------------------------
# 7: every finite bf16 value of b


@pytest.mark.parametrize("device", DEVICES)
def test_every_finite_bf16_beta_logit(device):
    """b takes every finite bf16 value (65280 of the 65536 bit patterns), one per
    (row, head), T = 1: beta = sigmoid(fp32(b)) is never NaN, so o and the state
    are finite, and every row matches the reference (per head, not just on
    average: a single bad row must fail). fp32 q, k, v make the per-row o check
    tight."""
    patterns = torch.arange(-32768, 32768, dtype=torch.int32).to(torch.int16).view(bf16)
    b_vals = patterns[torch.isfinite(patterns.float())]
    assert b_vals.numel() == 65280
    H, HV, K, V = 4, 32, 32, 16
    N = b_vals.numel() // HV
    x = make_inputs(N, 1, H, HV, K, V, "cpu", dtype=f32, seed=251)
    x["a"] = x["a"].to(bf16)
    x["b"] = b_vals.reshape(N, 1, HV).contiguous()
    x = {name: t.to(device) for name, t in x.items()}
    pool0 = rand_states((N, HV, V, K), 252, f32, device)
    pool = pool0.clone()
    idx = torch.arange(N, dtype=torch.int32, device=device)
    o = sglang(x, pool, idx)
    assert torch.isfinite(o).all(), "NaN/inf in o"
    assert torch.isfinite(pool).all(), "NaN/inf in the state"
    ro, rs = ref(x, pool0)
    o64, s64 = np64(o), np64(pool)
    o_err = np.linalg.norm(o64 - ro, axis=-1) / np.maximum(np.linalg.norm(ro, axis=-1), 1e-30)
    s_err = (np.linalg.norm((s64 - rs).reshape(N, HV, -1), axis=-1)
             / np.linalg.norm(rs.reshape(N, HV, -1), axis=-1))
    worst = np.unravel_index(np.argmax(s_err), s_err.shape)
    assert s_err.max() <= 1e-5, \
        f"state of b = {float(x['b'][worst[0], 0, worst[1]])}: error {s_err.max():.3g}"
    assert o_err.max() <= 2e-3, f"o: worst row error {o_err.max():.3g}"


# ----------------------------------------------------------------------------
# 8: GQA maps


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("H,HV", [(16, 16), (16, 32), (16, 48), (2, 8), (4, 24)])
def test_gqa_value_head_uses_qk_head_j_div_ratio(device, H, HV):
    """Value head j reads q/k head j // (HV / H) (contiguous groups), with
    distinct q/k per head. Negative control: the interleaved map j % H gives a
    clearly different result (so the check can tell the two apart)."""
    N, T, K, V = 2, 2, 32, 32
    x = make_inputs(N, T, H, HV, K, V, device, seed=261 + HV)
    pool0 = rand_states((N, HV, V, K), 262, f32, device)
    pool = pool0.clone()
    idx = torch.arange(N, dtype=torch.int64, device=device)
    o = sglang(x, pool, idx)
    ro, rs = ref(x, pool0)
    assert_o_close(o, ro)
    assert_state_close(pool, rs)
    if H < HV and H > 1:  # with H == HV or H == 1 both maps agree
        wrong = dict(x)
        heads = torch.arange(HV, device=device) % H
        wrong["q"], wrong["k"] = x["q"][:, :, heads], x["k"][:, :, heads]  # H -> HV, 1:1
        rwo, _ = ref(wrong, pool0)
        assert rms_rel(np64(o), rwo) > 0.2


# ----------------------------------------------------------------------------
# 9: verify, commit, decode


@pytest.mark.parametrize("device", DEVICES)
def test_verify_t3_commit_two_tokens_then_decode_equals_three_decode_steps(device):
    """SGLang flow: verify T = 3 with disable_state_update=True and a pool-scoped
    intermediate buffer, accept 2 tokens, commit, decode 1 new token. There is no
    fused commit op yet: the commit copies intermediate_states_buffer[row, 1]
    (the state after accepted token 2) into the pool slot with torch, as SGLang
    does. The outputs of tokens 0, 1 and of the new token, and the final state,
    equal three plain T = 1 decode steps (tokens 0, 1, new), and the fp64
    reference of those three tokens."""
    H, HV, K, V = 2, 4, 32, 64
    xv = make_inputs(2, 3, H, HV, K, V, device, seed=271)   # the 3 draft tokens
    xd = make_inputs(2, 1, H, HV, K, V, device, seed=272)   # the new token after commit
    xd["A_log"], xd["dt_bias"] = xv["A_log"], xv["dt_bias"]  # same layer, same head gates
    pool0 = rand_states((4, HV, V, K), 273, f32, device)
    idx = torch.tensor([2, 0], dtype=torch.int32, device=device)
    rows = torch.tensor([1, 0], dtype=torch.int32, device=device)

    pool = pool0.clone()
    inter = torch.full((3, 3, HV, V, K), NAN, device=device)
    o_verify = sglang(xv, pool, idx, disable_state_update=True,
                      intermediate_states_buffer=inter, intermediate_state_indices=rows,
                      cache_steps=3)
    assert same_bits(pool, pool0)
    accepted = 2
    for n in range(2):  # the commit, done with torch
        pool[idx[n]] = inter[rows[n], accepted - 1]
    o_new = sglang(xd, pool, idx)

    step = lambda x, t: {name: (tn[:, t:t + 1].contiguous() if tn.dim() > 1 else tn)
                         for name, tn in x.items()}
    plain = pool0.clone()
    o0 = sglang(step(xv, 0), plain, idx)
    o1 = sglang(step(xv, 1), plain, idx)
    o2 = sglang(xd, plain, idx)
    assert rms_rel(np64(pool), np64(plain)) <= 1e-6
    assert rms_rel(np64(o_verify[:, 0:1]), np64(o0)) <= 2e-3
    assert rms_rel(np64(o_verify[:, 1:2]), np64(o1)) <= 2e-3
    assert rms_rel(np64(o_new), np64(o2)) <= 2e-3
    assert same_bits(pool[[1, 3]], pool0[[1, 3]])

    for n in range(2):
        slot = int(idx[n])
        _, s1 = ref(xv, pool0[slot:slot + 1], n=n, t=slice(0, 2))
        ro, rs = ref(xd, s1, n=n)
        assert_state_close(pool[slot:slot + 1], rs)
        assert_o_close(o_new[n:n + 1], ro)


# ----------------------------------------------------------------------------
# 10: CUDA graph replay with new indices


@cuda
@pytest.mark.parametrize("entry", ["sglang", "flashinfer"])
def test_cuda_graph_replay_with_new_state_indices_equals_eager(entry):
    """A graph captured at N = 8 with state_indices = 0..7, replayed after
    copying [10, 11, -1, -1, -1, -1, -1, -1] into the same index tensor: o and
    the pool equal an eager run with those indices bit for bit; slots 0-7 are
    untouched. Qwen3-Next heads (H=16, HV=32, K=V=128), fp32 pool of 12 slots."""
    device = "cuda"
    x = make_inputs(8, 1, 16, 32, 128, 128, device, seed=281)
    pool0 = rand_states((12, 32, 128, 128), 282, f32, device)
    new = torch.tensor([10, 11] + [-1] * 6, dtype=torch.int32, device=device)
    out = torch.empty_like(x["v"])

    def call(pool, idx):
        if entry == "sglang":
            return sglang(x, pool, idx)
        ops.gated_delta_rule_decode_pretranspose(
            x["q"], x["k"], x["v"], None, x["A_log"], x["a"], x["dt_bias"], x["b"], output=out,
            initial_state=pool, initial_state_indices=idx)
        return out

    eager_pool = pool0.clone()
    eager_o = call(eager_pool, new.clone()).clone()  # also loads the module before capture
    torch.cuda.synchronize()

    pool = pool0.clone()
    idx = torch.arange(8, dtype=torch.int32, device=device)
    graph = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        with torch.cuda.graph(graph, stream=stream):
            graph_o = call(pool, idx)
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    assert same_bits(pool, pool0), "capturing ran the kernel"
    idx.copy_(new)
    graph_o.fill_(NAN)
    graph.replay()
    torch.cuda.synchronize()
    assert same_bits(graph_o, eager_o)
    assert same_bits(pool, eager_pool)
    assert same_bits(pool[:8], pool0[:8]), "the replay used the captured indices 0..7"
    assert not torch.equal(pool[10], pool0[10])
    assert torch.count_nonzero(graph_o[2:]) == 0


# ----------------------------------------------------------------------------
# 11: int32 and int64 indices


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("pool_dtype", [f32, bf16])
@pytest.mark.parametrize("T", [1, 3])
def test_int32_and_int64_state_indices_are_bit_identical(device, pool_dtype, T):
    """The same call with int32 and with int64 state_indices (and, for T = 3,
    intermediate_state_indices into a verify buffer) gives bit-identical o,
    pool and buffer."""
    H, HV, K, V = 2, 4, 32, 64
    x = make_inputs(4, T, H, HV, K, V, device, seed=291)
    pool0 = rand_states((6, HV, V, K), 292, pool_dtype, device)
    res = []
    for dt in (torch.int32, torch.int64):
        pool = pool0.clone()
        idx = torch.tensor([5, -1, 0, 2], dtype=dt, device=device)
        kw = {}
        if T > 1:
            inter = torch.full((4, T, HV, V, K), NAN, dtype=pool_dtype, device=device)
            kw = dict(intermediate_states_buffer=inter, cache_steps=T,
                      intermediate_state_indices=torch.tensor([3, 1, -1, 0], dtype=dt,
                                                              device=device))
        o = sglang(x, pool, idx, **kw)
        res.append((o, pool, kw.get("intermediate_states_buffer")))
    (o32, p32, i32), (o64, p64, i64) = res
    assert not torch.equal(p32[5], pool0[5])  # the call did something
    assert same_bits(o32, o64)
    assert same_bits(p32, p64)
    if T > 1:
        assert not torch.isnan(i32[3].float()).any()
        assert same_bits(i32, i64)


# ----------------------------------------------------------------------------
# K and V each in {64, 128, 256} (issue 5, item 5), both layouts, T = 1 and
# T = 3 (staged on the GPU), fp32 and bf16 pools: every (K, V) pair the
# serving models use, through the raw op on a pool with a padding row.


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", ["vk", "kv"])
@pytest.mark.parametrize("K", [64, 128, 256])
@pytest.mark.parametrize("V", [64, 128, 256])
def test_head_sizes_64_128_256_in_both_layouts(device, layout, K, V):
    H, HV, N, T = 2, 4, 3, 3
    x = make_inputs(N, T, H, HV, K, V, device, seed=K + V)
    shape = (5, HV, V, K) if layout == "vk" else (5, HV, K, V)
    for pool_dtype in (f32, bf16):
        pool0 = rand_states(shape, K * V, pool_dtype, device)
        pool = pool0.clone()
        idx = torch.tensor([4, -1, 1], dtype=torch.int32, device=device)
        o = torch.full_like(x["v"], NAN)
        torch.ops.gdn.recurrent(x["q"], x["k"], x["v"], None, x["a"], x["A_log"], x["dt_bias"],
                                None, x["b"], idx, None, None, None, pool, None, None, o, None,
                                None, None, None, None, None, None, None, None, None, True, layout)
        real = [0, 2]
        ro, rs = ref(x, pool0[[4, 1]].float(), n=real, layout=layout)
        assert_o_close(o[real], ro)
        assert torch.equal(o[1], torch.zeros_like(o[1]))  # the padding row
        assert_state_close(pool[[4, 1]], rs)
        assert same_bits(pool[[0, 2, 3]], pool0[[0, 2, 3]])
