"""Faults of the Python layer (issue 18): bad cu_seqlens, scale, empty
shapes and pools, boolean and dependent Compiler.compile fields, run_host
dtypes, unsupported keywords. CPU only."""
import os
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gdn  # noqa: E402
import gdn.ops as ops  # noqa: E402
from inputs import TINY_RECURRENT  # noqa: E402
from reference import recurrent, rms_rel  # noqa: E402

H, HV, K, V = 1, 2, 32, 16
BAD_CU_SEQLENS = [[0, 3, 7], [0, 3, 9], [0, -3, 6], [0, 3, 1000000], [0, 5, 2, 6]]


def np64(t):
    return t.detach().double().cpu().numpy()


def inputs(B, T, H=H, HV=HV, K=K, V=V, slots=None, seed=0):
    """fp32 CPU inputs of every entry point: q, k [B, T, H, K], v [B, T, HV, V],
    log-space g and beta (FLA), a, b, A_log, dt_bias (fused gating), h0
    [B, HV, K, V] (FLA) and a pool [slots, HV, V, K] (default B + 1)."""
    g = torch.Generator().manual_seed(seed)
    r = lambda *s: torch.randn(*s, generator=g)
    slots = B + 1 if slots is None else slots
    return dict(q=r(B, T, H, K), k=r(B, T, H, K), v=r(B, T, HV, V),
                g=torch.log(torch.rand(B, T, HV, generator=g) * 0.5 + 0.5),
                beta=torch.rand(B, T, HV, generator=g), a=r(B, T, HV), b=r(B, T, HV),
                A_log=torch.log(torch.rand(HV, generator=g) * 15 + 1), dt_bias=r(HV),
                h0=r(B, HV, K, V), pool=r(slots, HV, V, K))


def fla(x, **kw):
    return ops.fused_recurrent_gated_delta_rule(x["q"], x["k"], x["v"], g=x["g"],
                                                beta=x["beta"], **kw)


def sglang(x, pool, indices, **kw):
    return ops.fused_sigmoid_gating_delta_rule_update(
        x["A_log"], x["a"], x["dt_bias"], 1.0, 20.0, x["q"], x["k"], x["v"], x["b"], pool,
        indices, **kw)


def decode(x, **kw):
    return ops.gated_delta_rule_decode_pretranspose(
        x["q"], x["k"], x["v"], kw.pop("state", None), x["A_log"], x["a"], x["dt_bias"],
        x["b"], **kw)


def mtp(x, pool, indices, **kw):
    return ops.gated_delta_rule_mtp(x["q"], x["k"], x["v"], pool, indices, x["A_log"], x["a"],
                                    x["dt_bias"], x["b"], **kw)


def bits(t):
    return t.clone().view(torch.int32)


# ---------------------------------------------------------------------------
# 1. cu_seqlens
# ---------------------------------------------------------------------------

def clamped_ranges(cu, T):
    """Each sequence's token range as the kernels clamp it: [0, T], hi >= lo."""
    ranges = []
    for n in range(len(cu) - 1):
        lo = min(max(cu[n], 0), T)
        ranges.append((lo, min(max(cu[n + 1], lo), T)))
    return ranges


def run_bad_cu_seqlens(entry):
    """Runs `entry` ("fla" or "sglang") on T = 6 packed tokens with every bad
    cu_seqlens (int32, int64), without GDN_VALIDATE_INDICES: each call
    returns; final states (FLA) / pool slots (SGLang) are those of the
    clamped ranges, tokens of one sequence match it, everything is finite,
    the initial state and the pool's spare slots stay untouched. Run in a
    subprocess by the test (before the kernels clamped, this corrupted the
    heap and aborted)."""
    T = 6
    for cu in BAD_CU_SEQLENS:
        for dtype in (torch.int32, torch.int64):
            print(f"{entry} cu_seqlens={cu} {dtype}", flush=True)
            N = len(cu) - 1
            x = inputs(1, T, slots=N + 2, seed=len(cu))
            cu_t = torch.tensor(cu, dtype=dtype)
            ranges = clamped_ranges(cu, T)
            if entry == "fla":
                h0 = torch.randn(N, HV, K, V, generator=torch.Generator().manual_seed(5))
                h0_before = h0.clone()
                o, states = fla(x, initial_state=h0, output_final_state=True,
                                use_qk_l2norm_in_kernel=True, cu_seqlens=cu_t)
                assert torch.equal(h0, h0_before), "initial_state is read only"
                layout, s0 = "kv", h0_before
            else:
                pool = x["pool"]
                pool[N:] = float("nan")  # spare slots: never addressed
                s0 = pool[:N].clone()
                o = sglang(x, pool, torch.arange(N, dtype=dtype), cu_seqlens=cu_t,
                           use_qk_l2norm_in_kernel=True)
                assert torch.isnan(pool[N:]).all(), "a spare slot was written"
                layout, states = "vk", pool[:N]
            assert torch.isfinite(o).all() and torch.isfinite(states).all()
            owners = [sum(lo <= t < hi for lo, hi in ranges) for t in range(T)]
            for n, (lo, hi) in enumerate(ranges):
                if lo == hi:  # an empty (clamped) range passes its state through
                    assert torch.equal(states[n], s0[n])
                    continue
                sl = slice(lo, hi)
                gate = (dict(g=np64(x["g"][:, sl]), beta=np64(x["beta"][:, sl])) if entry == "fla"
                        else dict(a=np64(x["a"][:, sl]), A_log=np64(x["A_log"]),
                                  dt_bias=np64(x["dt_bias"]), b=np64(x["b"][:, sl])))
                ro, rs = recurrent(np64(x["q"][:, sl]), np64(x["k"][:, sl]), np64(x["v"][:, sl]),
                                   initial_state=np64(s0[n:n + 1]), qk_l2norm=True,
                                   layout=layout, **gate)
                assert rms_rel(np64(states[n:n + 1]), rs) < 1e-4
                for t in range(lo, hi):
                    if owners[t] == 1:
                        assert rms_rel(np64(o[:, t]), ro[:, t - lo]) < 1e-4
    print("done", flush=True)


def run_isolated(call):
    """Runs test_faults.<call> in a fresh interpreter without
    GDN_VALIDATE_INDICES (so the kernels meet the bad values), where a crash
    fails the test instead of ending pytest; it must print "done" last."""
    env = {k_: v_ for k_, v_ in os.environ.items() if k_ != "GDN_VALIDATE_INDICES"}
    here = os.path.dirname(os.path.abspath(__file__))
    code = f"import sys; sys.path.insert(0, {here!r}); import test_faults; test_faults.{call}"
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, f"rc {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-4000:]}"
    assert r.stdout.rstrip().endswith("done")


@pytest.mark.parametrize("entry", ["fla", "sglang"])
def test_bad_cu_seqlens_without_validation_do_not_crash(entry):
    run_isolated(f"run_bad_cu_seqlens({entry!r})")


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
@pytest.mark.parametrize("cu", BAD_CU_SEQLENS)
@pytest.mark.parametrize("entry", ["fla", "sglang"])
def test_bad_cu_seqlens_with_validation_raise(entry, cu, dtype, monkeypatch):
    monkeypatch.setenv("GDN_VALIDATE_INDICES", "1")
    N = len(cu) - 1
    x = inputs(1, 6, slots=N)
    cu_t = torch.tensor(cu, dtype=dtype)
    before = len(ops._kernels)
    with pytest.raises(ValueError, match="cu_seqlens"):
        if entry == "fla":
            fla(x, cu_seqlens=cu_t)
        else:
            sglang(x, x["pool"], torch.arange(N, dtype=dtype), cu_seqlens=cu_t)
    assert len(ops._kernels) == before  # raised before compiling


def test_validated_cu_seqlens_messages_and_a_good_one(monkeypatch):
    monkeypatch.setenv("GDN_VALIDATE_INDICES", "1")
    x = inputs(1, 6)
    with pytest.raises(ValueError, match=r"cu_seqlens\[0\] must be 0, got 1"):
        fla(x, cu_seqlens=torch.tensor([1, 6]))
    with pytest.raises(ValueError, match=r"non-decreasing, got cu_seqlens\[2\] = 2 < "
                                         r"cu_seqlens\[1\] = 5"):
        fla(x, cu_seqlens=torch.tensor([0, 5, 2, 6]))
    with pytest.raises(ValueError, match=r"cu_seqlens\[-1\] = 7 must be the number of packed "
                                         r"tokens T = 6"):
        fla(x, cu_seqlens=torch.tensor([0, 3, 7]))
    o, ht = fla(x, cu_seqlens=torch.tensor([0, 2, 2, 6], dtype=torch.int32),
                output_final_state=True)
    assert ht.shape == (3, HV, K, V) and torch.isfinite(o).all()


@pytest.mark.parametrize("validate", ["0", "1"])
def test_empty_cu_seqlens_is_a_value_error(validate, monkeypatch):
    monkeypatch.setenv("GDN_VALIDATE_INDICES", validate)
    x = inputs(1, 6)
    empty = torch.zeros(0, dtype=torch.int32)
    with pytest.raises(ValueError, match="cu_seqlens must hold N \\+ 1 >= 1 offsets"):
        fla(x, cu_seqlens=empty, output_final_state=True)
    with pytest.raises(ValueError, match="cu_seqlens must hold"):
        sglang(x, x["pool"], torch.zeros(0, dtype=torch.int32), cu_seqlens=empty)


# ---------------------------------------------------------------------------
# 2. scale
# ---------------------------------------------------------------------------

def test_fla_scale_zero_gives_zero_output_and_the_default_final_state():
    x = inputs(2, 3)
    o, ht = fla(x, scale=0.0, initial_state=x["h0"], output_final_state=True,
                use_qk_l2norm_in_kernel=True)
    assert torch.count_nonzero(o) == 0  # FLA: q * 0
    _, ht_default = fla(x, initial_state=x["h0"], output_final_state=True,
                        use_qk_l2norm_in_kernel=True)
    assert torch.equal(ht, ht_default)  # scale only touches q


def test_fla_negative_scale_negates_the_output():
    x = inputs(2, 3)
    o_neg, ht_neg = fla(x, scale=-1.0, initial_state=x["h0"], output_final_state=True)
    o_pos, ht_pos = fla(x, scale=1.0, initial_state=x["h0"], output_final_state=True)
    assert torch.count_nonzero(o_pos) > 0
    assert torch.equal(o_neg, -o_pos) and torch.equal(ht_neg, ht_pos)
    ro, _ = recurrent(np64(x["q"]), np64(x["k"]), np64(x["v"]), g=np64(x["g"]),
                      beta=np64(x["beta"]), initial_state=np64(x["h0"]), scale=-1.0)
    assert rms_rel(np64(o_neg), ro) < 1e-5


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf"), 1e39, -10**400])
def test_non_finite_scale_is_a_value_error(bad):
    """NaN, inf and values that become inf in the C API's float32 field
    (1e39; 10**400 raised OverflowError) are ValueErrors naming scale."""
    x = inputs(2, 1)
    idx = torch.arange(2, dtype=torch.int32)
    calls = [lambda: fla(x, scale=bad),
             lambda: sglang(x, x["pool"], idx, scale=bad),
             lambda: decode(x, state=x["pool"][:2].clone(), scale=bad),
             lambda: mtp(x, x["pool"], idx, scale=bad),
             lambda: gdn.Compiler().compile(N=1, T=1, H=1, HV=1, K=32, V=8, scale=bad)]
    for call in calls:
        with pytest.raises(ValueError, match="scale must be finite"):
            call()


# ---------------------------------------------------------------------------
# 3. Bad inputs: empty dimensions, 0-slot pools, B = 0, T = 0, N = 0
# ---------------------------------------------------------------------------

def every_entry_point(x, B):
    """Calls of every recurrent entry point on inputs x of batch B."""
    idx = torch.arange(B, dtype=torch.int32)
    return {"fla": lambda: fla(x),
            "sglang": lambda: sglang(x, x["pool"], idx),
            "decode": lambda: decode(x, state=torch.zeros(B, HV, V, K)),
            "decode_pool": lambda: decode(x, initial_state=x["pool"], initial_state_indices=idx),
            "mtp": lambda: mtp(x, x["pool"], idx)}


@pytest.mark.parametrize("dims,name", [(dict(H=0), "q"), (dict(K=0), "q"),
                                       (dict(HV=0), "v"), (dict(V=0), "v")])
def test_empty_head_or_channel_dimensions_are_value_errors(dims, name):
    x = inputs(2, 1, **dims)
    for entry, call in every_entry_point(x, 2).items():
        with pytest.raises(ValueError, match=f"^{name} must have at least one head"):
            call()


def test_a_pool_of_zero_slots_is_a_value_error():
    x = inputs(2, 1, slots=0)
    idx = torch.full((2,), -1, dtype=torch.int32)
    with pytest.raises(ValueError, match="initial_state_source has 0 slots"):
        sglang(x, x["pool"], idx)
    with pytest.raises(ValueError, match="initial_state has 0 slots"):
        decode(x, initial_state=x["pool"], initial_state_indices=idx)
    with pytest.raises(ValueError, match="initial_state has 0 slots"):
        mtp(x, x["pool"], idx)
    with pytest.raises(ValueError, match="intermediate_states_buffer must have at least one row"):
        sglang(inputs(2, 1), inputs(2, 1)["pool"], idx,
               intermediate_states_buffer=torch.zeros(0, 1, HV, V, K),
               intermediate_state_indices=idx)


@pytest.mark.parametrize("B,T", [(0, 3), (0, 0), (2, 0)])
def test_no_tokens_return_empty_outputs_without_a_kernel(B, T):
    x = inputs(B, T, slots=3)
    pool_bits = bits(x["pool"])
    before = len(ops._kernels)
    idx = torch.arange(B, dtype=torch.int64)
    empty_o = (B, T, HV, V)

    o, ht = fla(x)
    assert o.shape == empty_o and o.dtype == torch.float32 and ht is None
    o, ht = fla(x, output_final_state=True)  # no initial state: zeros
    assert ht.shape == (B, HV, K, V) and ht.dtype == torch.float32
    assert torch.count_nonzero(ht) == 0
    h0 = x["h0"].bfloat16()
    o, ht = fla(x, initial_state=h0, output_final_state=True)
    assert ht.dtype == torch.float32 and torch.equal(ht, h0.float())  # the initial state
    h0 = x["h0"].transpose(2, 3).contiguous()  # [B, HV, V, K]
    o, ht = fla(x, initial_state=h0, output_final_state=True, state_v_first=True)
    assert torch.equal(ht, h0) and (B == 0 or ht.data_ptr() != h0.data_ptr())  # a copy

    o = sglang(x, x["pool"], idx, intermediate_states_buffer=torch.zeros(3, T, HV, V, K),
               intermediate_state_indices=idx)
    assert o.shape == empty_o and torch.equal(bits(x["pool"]), pool_bits)
    o, s = decode(x, initial_state=x["pool"], initial_state_indices=idx)
    assert o.shape == empty_o and s is x["pool"] and torch.equal(bits(x["pool"]), pool_bits)
    state = torch.randn(B, HV, V, K)
    o, s = decode(x, state=state.clone())
    assert o.shape == empty_o and torch.equal(s, state)
    out = torch.empty(empty_o)
    o, s = mtp(x, x["pool"], idx, output=out, disable_state_update=False)
    assert o is out and s is x["pool"]
    assert torch.equal(bits(x["pool"]), pool_bits)
    assert len(ops._kernels) == before  # nothing compiled


@pytest.mark.parametrize("T", [0, 3])
def test_varlen_without_sequences_returns_empty_per_sequence_outputs(T):
    x = inputs(1, T, slots=2)
    pool_bits = bits(x["pool"])
    before = len(ops._kernels)
    cu = torch.zeros(1, dtype=torch.int32)  # cu_seqlens = [0]: N = 0
    o, ht = fla(x, output_final_state=True, cu_seqlens=cu,
                initial_state=torch.zeros(0, HV, K, V))
    assert o.shape == (1, T, HV, V) and ht.shape == (0, HV, K, V)
    o = sglang(x, x["pool"], torch.zeros(0, dtype=torch.int32), cu_seqlens=cu)
    assert o.shape == (1, T, HV, V) and torch.equal(bits(x["pool"]), pool_bits)
    assert len(ops._kernels) == before


def test_varlen_with_no_tokens_passes_the_states_through():
    x = inputs(1, 0)
    h0 = torch.randn(2, HV, K, V)
    o, ht = fla(x, output_final_state=True, initial_state=h0,
                cu_seqlens=torch.tensor([0, 0, 0]))
    assert o.shape == (1, 0, HV, V) and torch.equal(ht, h0) and ht.data_ptr() != h0.data_ptr()


BOOL_FIELDS = ["qk_l2norm", "initial_state", "final_state", "state_in_place",
               "allow_neg_eigval", "per_key_decay", "per_channel_beta"]


@pytest.mark.parametrize("field", BOOL_FIELDS)
@pytest.mark.parametrize("bad", ["False", "yes", 2, -1, 0.0, None])
def test_compile_boolean_fields_take_only_bools(field, bad):
    with pytest.raises(TypeError, match=f"^{field} must be a bool"):
        gdn.Compiler().compile(N=1, T=1, H=1, HV=1, K=32, V=8, **{field: bad})


@pytest.mark.parametrize("field", ["checkpoint_interval", "N", "num_slots"])
def test_compile_integer_fields_refuse_bools(field):
    """checkpoint_interval=True is no interval of 1 token."""
    with pytest.raises(TypeError, match=f"^{field} must be an integer, got True"):
        gdn.Compiler().compile(**{**dict(N=1, T=1, H=1, HV=1, K=32, V=8), field: True})


def test_a_compiler_alive_at_exit_is_destroyed_quietly():
    """A Compiler still referenced when the interpreter exits is collected
    after the module's globals are cleared; its __del__ must not raise
    ("Exception ignored in ... Compiler.__del__")."""
    code = ("import sys\nimport gdn\nkeep = gdn.Compiler()\n"
            "keep.compile(N=1, T=1, H=1, HV=1, K=32, V=8)\n"
            "sys.modules['gdn'].lib = None\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ))
    assert r.returncode == 0 and "Exception ignored" not in r.stderr, r.stderr


def test_compile_boolean_fields_accept_numpy_bools_and_0_1():
    c = gdn.Compiler()
    d = dict(N=1, T=1, H=1, HV=1, K=32, V=8, input_dtype="float32", target="cuda")
    on = c.compile(qk_l2norm=True, **d).ptx
    assert on != c.compile(qk_l2norm=False, **d).ptx
    assert c.compile(qk_l2norm=np.bool_(True), **d).ptx == on
    assert c.compile(qk_l2norm=1, **d).ptx == on
    assert c.compile(qk_l2norm=np.int64(0), **d).ptx == c.compile(qk_l2norm=False, **d).ptx


DEPENDENT = [
    (dict(intermediate_index_dtype="int32"), "intermediate_index_dtype.*intermediate_rows"),
    (dict(parent_index_dtype="int64"), "parent_index_dtype.*intermediate_rows"),
    (dict(intermediate_dtype="bfloat16"), "intermediate_dtype.*intermediate_rows"),
    (dict(intermediate_steps=3), "intermediate_steps.*intermediate_rows"),
    (dict(state_index_dtype="int64"), "state_index_dtype.*num_slots"),
    (dict(state_dtype="bfloat16"), "state_dtype.*initial_state or final_state"),
    (dict(allow_neg_eigval=True), "allow_neg_eigval.*beta = 'logits'"),
    (dict(allow_neg_eigval=True, beta="given"), "allow_neg_eigval.*beta = 'logits'"),
    (dict(per_key_decay=True), "per_key_decay.*decay"),
    (dict(per_channel_beta=True), "per_channel_beta.*beta"),
    (dict(gate_dtype="float16"), "gate_dtype.*decay"),
    (dict(beta_dtype="float16"), "beta_dtype.*beta"),
    (dict(state_slot_stride=300), "state_slot_stride.*initial_state or final_state"),
    (dict(intermediate_row_stride=999), "intermediate_row_stride.*intermediate_rows"),
    (dict(gate_strides=(96, 32, 1)), "gate_strides.*decay"),
    (dict(beta_strides=(96, 32, 1)), "beta_strides.*beta"),
]


@pytest.mark.parametrize("kw,message", DEPENDENT)
def test_compile_fields_without_the_field_they_need_are_value_errors(kw, message):
    with pytest.raises(ValueError, match=message):
        gdn.Compiler().compile(N=1, T=1, H=1, HV=1, K=32, V=8, **kw)


def test_compile_defaults_of_dependent_fields_are_not_errors():
    k = gdn.Compiler().compile(N=1, T=1, H=1, HV=1, K=32, V=8, state_index_dtype="int32",
                               intermediate_dtype="float32", intermediate_steps=0,
                               gate_dtype="float32", state_dtype="float32")
    assert [n for n, _ in k.arguments] == ["q", "k", "v", "o"]


def test_run_host_checks_dtypes_shapes_and_outputs():
    c = gdn.Compiler()
    kern = c.compile(N=1, T=1, H=1, HV=1, K=32, V=8, input_dtype="float32")
    q, k, v, o = (np.zeros(32, np.float32), np.zeros(32, np.float32), np.zeros(8, np.float32),
                  np.zeros(8, np.float32))
    kern.run_host([q, k, v, o])
    kern.run_host([q.reshape(1, 1, 1, 32), k, v, o.reshape(1, 1, 1, 8)])
    # float64 of the same byte size: reinterpreted before, refused now
    with pytest.raises(TypeError, match="argument 'q' must have dtype float32"):
        kern.run_host([np.zeros(16, np.float64), k, v, o])
    with pytest.raises(TypeError, match="argument 'o' must have dtype float32"):
        kern.run_host([q, k, v, np.zeros(16, np.float16)])
    with pytest.raises(TypeError, match="argument 'v' must have dtype float32.*native"):
        kern.run_host([q, k, np.zeros(8, ">f4"), o])
    with pytest.raises(ValueError, match=r"argument 'q' must have shape \[1, 1, 1, 32\]"):
        kern.run_host([q.reshape(32, 1), k, v, o])
    # indices: int64 where the kernel reads int32 (same bytes for 2 rows)
    pool = c.compile(N=2, T=1, H=1, HV=1, K=32, V=8, input_dtype="float32",
                     initial_state=True, final_state=True, state_in_place=True, num_slots=3)
    arrays = [np.zeros(64, np.float32), np.zeros(64, np.float32), np.zeros(16, np.float32),
              np.array([0, 1], np.int32), np.zeros(3 * 32 * 8, np.float32),
              np.zeros(16, np.float32)]
    pool.run_host(arrays)
    with pytest.raises(TypeError, match="argument 'state_indices' must have dtype int32"):
        pool.run_host(arrays[:3] + [np.array([1], np.int64)] + arrays[4:])
    # intermediate_states is written: it must be writeable
    verify = c.compile(N=1, T=2, H=1, HV=1, K=32, V=8, input_dtype="float32",
                       intermediate_rows=1, intermediate_steps=2)
    inter = np.zeros(2 * 32 * 8, np.float32)
    inter.flags.writeable = False
    with pytest.raises(ValueError, match="argument 'intermediate_states' must be writeable"):
        verify.run_host([np.zeros(64, np.float32), np.zeros(64, np.float32),
                         np.zeros(16, np.float32), inter, np.zeros(16, np.float32)])
    # every argument the kernel writes must be writeable, state_checkpoints
    # too (it was written through a read-only array: a segfault on a
    # read-only mapping)
    ckpt = c.compile(N=1, T=4, H=1, HV=1, K=32, V=8, input_dtype="float32", final_state=True,
                     checkpoint_interval=1, checkpoint_rows=4, checkpoint_offset_dtype="int32")
    assert [w for _, _, _, _, w in ckpt._types] == [
        n in ("final_state", "o", "state_checkpoints") for n, _ in ckpt.arguments]
    arrays = [np.array([0, 4], np.int32) if n == "checkpoint_offsets"
              else np.zeros(b // 4, np.float32) for n, b in ckpt.arguments]
    ckpt.run_host(arrays)
    arrays[[n for n, _ in ckpt.arguments].index("state_checkpoints")].flags.writeable = False
    with pytest.raises(ValueError, match="argument 'state_checkpoints' must be writeable"):
        ckpt.run_host(arrays)
    # bf16: its bits as uint16 (numpy has no bfloat16); float16 is refused
    bf = c.compile(N=1, T=1, H=1, HV=1, K=32, V=8, input_dtype="bfloat16")
    bf.run_host([np.zeros(32, np.uint16), np.zeros(32, np.uint16), np.zeros(8, np.uint16),
                 np.zeros(8, np.uint16)])
    with pytest.raises(TypeError, match="argument 'q' must have dtype bfloat16"):
        bf.run_host([np.zeros(32, np.float16), np.zeros(32, np.uint16), np.zeros(8, np.uint16),
                     np.zeros(8, np.uint16)])


def test_run_host_checks_dtypes_of_compile_text_kernels():
    text = TINY_RECURRENT
    kern = gdn.Compiler().compile_text(text)
    k, v, o = np.zeros(32, np.float32), np.zeros(8, np.float32), np.zeros(8, np.float32)
    kern.run_host([np.zeros(32, np.float32), k, v, o])
    with pytest.raises(TypeError, match="argument 'q' must have dtype float32"):
        kern.run_host([np.zeros(64, np.float16), k, v, o])
    with pytest.raises(TypeError, match="argument 'o' must have dtype float32"):
        kern.run_host([np.zeros(32, np.float32), k, v, np.zeros(8, np.int32)])


# ---------------------------------------------------------------------------
# 4. Keywords an entry point does not take
# ---------------------------------------------------------------------------

def test_unknown_keywords_as_the_anchors_treat_them():
    """FLA ignores unknown keywords (Hugging Face passes use_cache=...);
    SGLang's and FlashInfer's functions have fixed signatures, so an unknown
    keyword is their TypeError; commit_accepted (gdn's own) raises
    NotImplementedError naming it."""
    x = inputs(2, 1)
    idx = torch.arange(2, dtype=torch.int32)
    o, _ = fla(x, foo=1)
    assert torch.equal(o, fla(x)[0])
    calls = {"sglang": lambda: sglang(x, x["pool"], idx, foo=1),
             "decode": lambda: decode(x, state=x["pool"][:2].clone(), foo=1),
             "mtp": lambda: mtp(x, x["pool"], idx, foo=1)}
    for entry, call in calls.items():
        with pytest.raises(TypeError, match="'foo'"):
            call()
    with pytest.raises(NotImplementedError, match="'foo'"):
        ops.commit_accepted(torch.zeros(2, 1, HV, V, K), torch.ones(2, dtype=torch.int32),
                            x["pool"], idx, foo=1)


# ---------------------------------------------------------------------------
# 5. Indices outside the pool or the buffer
# ---------------------------------------------------------------------------

BAD_SLOTS = {torch.int32: [-2 ** 31, 2 ** 31 - 1, 1000000],
             torch.int64: [-2 ** 63, 2 ** 63 - 1, 2 ** 40]}


def run_bad_indices():
    """Every op that takes a slot or buffer row table, without
    GDN_VALIDATE_INDICES, with slots and rows outside the pool or buffer
    (past its end, and negative ones far below -1): each such row is a
    padding row (no slot, row or window touched, output rows zero), the
    other rows as with good indices. Run in a subprocess by the test
    (before the kernels bounded the tables, a slot past the pool read and
    wrote outside it, and replay_commit's CPU loop read the windows at a
    padding row's slot: a segfault for -2^31)."""
    B, T, S = 2, 3, 4
    for dtype, bad_values in BAD_SLOTS.items():
        for bad in bad_values:
            print(f"bad slot {bad} {dtype}", flush=True)
            x = inputs(B, T, slots=S, seed=3)
            good = torch.tensor([1, 2], dtype=dtype)
            idx = torch.tensor([1, bad], dtype=dtype)
            # SGLang decode / verify on a pool: row 1 is padding.
            pool = x["pool"].clone()
            o = sglang(x, pool, idx)
            ref_pool = x["pool"].clone()
            ref_o = sglang(x, ref_pool, good)
            assert torch.equal(o[0], ref_o[0]) and torch.count_nonzero(o[1]) == 0
            assert torch.equal(pool[1], ref_pool[1])
            assert torch.equal(pool[[0, 2, 3]], x["pool"][[0, 2, 3]])
            buf = torch.full((S, T, HV, V, K), float("nan"))
            o = sglang(x, x["pool"].clone(), good, intermediate_states_buffer=buf,
                       intermediate_state_indices=idx, disable_state_update=True)
            assert torch.isfinite(buf[1]).all()
            assert torch.isnan(buf[[0, 2, 3]]).all(), "a buffer row past the table was written"
            # commit_accepted: bad slots and bad buffer rows commit nothing.
            buf = torch.randn(S, T, HV, V, K)
            for kw in (dict(state_indices=idx, intermediate_state_indices=good),
                       dict(state_indices=good, intermediate_state_indices=idx)):
                pool = x["pool"].clone()
                ops.commit_accepted(buf, torch.full((B,), T, dtype=torch.int32), pool, **kw)
                assert torch.equal(pool[[0, 2, 3]], x["pool"][[0, 2, 3]])
                assert torch.equal(pool[1], buf[1, T - 1])
            # replay_commit: a bad slot replays nothing.
            L = T
            kw_ = torch.randn(S, H, L, K)
            vw, gw = torch.randn(S, HV, L, V), -torch.rand(S, HV, L)
            bw = torch.rand(S, HV, L)
            acc = torch.full((B,), L, dtype=torch.int32)
            pool, ref_pool = x["pool"].clone(), x["pool"].clone()
            ops.replay_commit(kw_, vw, gw, bw, acc, pool, idx)
            ops.replay_commit(kw_, vw, gw, bw, acc, ref_pool, good)
            assert torch.equal(pool[1], ref_pool[1])
            assert torch.equal(pool[[0, 2, 3]], x["pool"][[0, 2, 3]])
    print("done", flush=True)


def test_indices_outside_the_pool_are_padding_rows():
    run_isolated("run_bad_indices()")


# ---------------------------------------------------------------------------
# 6. Tensors the kernel would address otherwise than they are laid out
# ---------------------------------------------------------------------------

def test_the_custom_op_checks_every_tensor_against_the_kernel():
    """torch.ops.gdn.recurrent (public: it takes state_scale) passes bare
    pointers: a tensor whose dtype, shape or strides differ from the
    kernel's argument is a ValueError naming it, not an access outside it."""
    x = inputs(2, 1)
    pool = ops.quantized_state((3, HV, V, K))
    scale = ops.state_scale_of(pool)
    idx = torch.tensor([0, 2], dtype=torch.int32)
    o = torch.empty_like(x["v"])

    def run(state_scale, A_log=x["A_log"]):
        torch.ops.gdn.recurrent(x["q"], x["k"], x["v"], None, x["a"], A_log, x["dt_bias"],
                                None, x["b"], idx, None, None, None, pool, None, None, o,
                                None, None, None, None, state_scale, None, None, None, None, None,
                                False, "vk")

    run(scale)  # the right one
    with pytest.raises(ValueError, match=r"argument 'state_scale' must be a torch.float32 "
                                         r"tensor of shape \[3, 2, 16\]"):
        run(scale[:2])
    wide = torch.zeros(3, 2, HV, V)
    with pytest.raises(ValueError, match=r"argument 'state_scale' .* strides \[64, 16, 1\]"):
        run(wide[:, 0])
    with pytest.raises(ValueError, match="argument 'A_log' must be a torch.float32"):
        run(scale, A_log=x["A_log"].double())


@pytest.mark.parametrize("name", ["q", "a", "b", "state"])
def test_the_custom_op_names_a_dtype_it_does_not_take(name):
    """A float64 (or integer) tensor where the op takes float32, bfloat16,
    float16 (or float8_e4m3fn states) is a TypeError naming it, not a
    KeyError from the dtype table."""
    x = inputs(2, 1)
    x["state"] = torch.zeros(2, HV, V, K)
    x[name] = x[name].double()
    with pytest.raises(TypeError, match=f"argument '{name}' in torch.float64 is not supported"):
        torch.ops.gdn.recurrent(x["q"], x["k"], x["v"], None, x["a"], x["A_log"], x["dt_bias"],
                                None, x["b"], None, None, None, None, x["state"], None, None,
                                torch.empty(x["v"].shape, dtype=x["v"].dtype), None, None, None,
                                None, None, None, None, None, None, None, False, "vk")


def test_flashinfer_buffer_with_a_row_pitch_is_refused_naming_it():
    """FlashInfer's intermediate_states_buffer is addressed by flat steps
    (n * T + t), which a view with a row pitch does not have: refused naming
    it (it was torch's RuntimeError from .view)."""
    from gdn.ops._checks import _StridedInPlace
    B, T = 2, 3
    x = inputs(B, T, slots=4)
    whole = torch.zeros(B, 2, T, HV, V, K)
    with pytest.raises(_StridedInPlace, match="argument 'intermediate_states_buffer'"):
        mtp(x, x["pool"], torch.arange(B, dtype=torch.int32),
            intermediate_states_buffer=whole[:, 0])


# ---------------------------------------------------------------------------
# 7. Found by a hunt of the decode, verify, commit and raw entry points
# ---------------------------------------------------------------------------

def time_major(t):
    """t's values stored token-major ([T, B, ...] in memory): dense but
    permuted, as a slice of a time-major projection is."""
    return t.transpose(0, 1).contiguous().transpose(0, 1)


def test_a_permuted_dense_v_gets_a_dense_output():
    """o was torch.empty_like(v), which keeps a permuted v's strides, and the
    kernel's o then refused it with an error about 'o', an argument the
    caller never gave. Now the same result as with a row-major v."""
    x = inputs(2, 3)
    want_o, want_s = fla(x, output_final_state=True)
    y = dict(x, v=time_major(x["v"]))
    assert not y["v"].is_contiguous()
    o, s = fla(y, output_final_state=True)
    assert o.is_contiguous() and torch.equal(o, want_o) and torch.equal(s, want_s)
    idx = torch.tensor([0, 1], dtype=torch.int32)
    pool = x["pool"].clone()
    want = sglang(x, pool, idx)
    assert torch.equal(sglang(y, x["pool"].clone(), idx), want)


def test_sglang_verify_of_strided_token_views_into_a_longer_buffer():
    """Token views of a longer batch (strided) with a verify buffer of more
    steps than T: the packed view of them was torch's 'view size is not
    compatible' RuntimeError; now it runs as on dense copies."""
    x = inputs(2, 4)
    y = {n: (t[:, :3] if n in ("q", "k", "v", "a", "b") else t) for n, t in x.items()}
    idx = torch.tensor([0, 1], dtype=torch.int32)
    kw = lambda: dict(intermediate_states_buffer=torch.zeros(2, 5, HV, V, K),  # noqa: E731
                      intermediate_state_indices=torch.tensor([1, 0], dtype=torch.int32))
    got_kw, want_kw = kw(), kw()
    got = sglang(y, x["pool"].clone(), idx, **got_kw)
    dense = {n: t.contiguous() for n, t in y.items()}
    want = sglang(dense, x["pool"].clone(), idx, **want_kw)
    assert torch.equal(got, want)
    assert torch.equal(got_kw["intermediate_states_buffer"], want_kw["intermediate_states_buffer"])


def test_commit_names_a_dtype_it_does_not_take():
    inter = torch.zeros(2, 3, HV, V, K)
    acc = torch.tensor([1, 2], dtype=torch.int32)
    with pytest.raises(TypeError, match="gdn::commit: argument 'state' in torch.float64"):
        torch.ops.gdn.commit(inter, acc, torch.zeros(2, HV, V, K, dtype=torch.float64),
                             None, None, None, None, "vk")


def test_commit_and_replay_commit_refuse_a_state_layout_they_do_not_know():
    """The text kernels paste state_layout into their MLIR: anything but
    "vk" / "kv" is a ValueError naming it, before any text is built (it
    reached the parser from replay_commit before)."""
    bad = "vk>, qk_l2norm} {"
    acc = torch.tensor([1, 2], dtype=torch.int32)
    with pytest.raises(ValueError, match="gdn::commit: state_layout must be 'vk' or 'kv'"):
        torch.ops.gdn.commit(torch.zeros(2, 3, HV, V, K), acc, torch.zeros(2, HV, V, K),
                             None, None, None, None, bad)
    L = 2
    with pytest.raises(ValueError, match="gdn::replay_commit: state_layout must be 'vk' or 'kv'"):
        torch.ops.gdn.replay_commit(
            torch.randn(1, 2, H, L, K), torch.randn(1, 2, HV, L, V), -torch.rand(1, 2, HV, L),
            torch.rand(1, 2, HV, L), acc, torch.randn(1, 2, HV, V, K),
            torch.tensor([0, 1], dtype=torch.int32), None, True, bad)


def test_the_custom_op_refuses_malformed_calls_naming_the_argument():
    x = inputs(2, 1)
    o = torch.empty_like(x["v"])

    def run(q=x["q"], state=x["pool"][:2].clone(), indices=None):
        torch.ops.gdn.recurrent(q, x["k"], x["v"], x["g"], None, None, None, x["beta"], None,
                                indices, None, None, None, state, None, None, o, None, None,
                                None, None, None, None, None, None, None, None, False, "vk")

    with pytest.raises(ValueError, match="argument 'q' must be 4-D"):
        run(q=x["q"][0])
    with pytest.raises(ValueError, match="state_indices addresses a pool"):
        run(state=None, indices=torch.tensor([0, 1], dtype=torch.int32))


@pytest.mark.parametrize("indices,cu,offsets,name", [
    ([[0, 1, 2]], [0, 4, 6, 10], None, "state_indices"),
    ([0, 1], [0, 4, 6, 10], None, "state_indices"),
    (0, [0, 4, 6, 10], None, "state_indices"),
    ([0, 1, 2], 10, None, "cu_seqlens"),
    ([0, 1, 2], [[0, 4, 6, 10]], None, "cu_seqlens"),
    ([0, 1, 2], [0, 4, 6, 10], [], "checkpoint_offsets"),
])
def test_the_custom_op_names_a_malformed_row_table(indices, cu, offsets, name):
    """A varlen pool prefill pads its row tables to the kernel's row
    capacity: a table of the wrong shape raised torch's own errors from the
    padding (or named state_indices for a 2-D cu_seqlens, or asked for the
    padded row count) before anything named it."""
    x = inputs(1, 10, HV=4, H=2)
    checkpoints = dict(checkpoint_interval=0)
    rows = None
    if offsets is not None:
        rows = torch.zeros(2, 4, V, K)
        checkpoints = dict(checkpoint_interval=4)
    with pytest.raises(ValueError, match=f"argument '{name}' must be 1-D"):
        torch.ops.gdn.recurrent(
            x["q"], x["k"], x["v"], x["g"], None, None, None, x["beta"], None,
            torch.tensor(indices), torch.tensor(cu), None, None, torch.zeros(3, 4, V, K), None,
            None, torch.empty_like(x["v"]), None, None, None, None, None,
            None if offsets is None else torch.tensor(offsets, dtype=torch.int64), rows,
            None, None, None, False, "vk", **checkpoints)


def test_a_state_read_where_the_call_writes_its_final_state_is_read_as_it_was():
    """FlashInfer's prefill with initial_state and output_state two views of
    one buffer a row apart (not one view updated in place): sequence 1 read
    the row sequence 0 had just written, silently (o off by 0.76 on the
    CPU). The op reads such a state from a copy now; the same for a pool."""
    x = inputs(1, 8, H=HV)
    q, k, v = x["q"][0], x["k"][0], x["v"][0]
    cu = torch.tensor([0, 4, 8], dtype=torch.int32)
    call = lambda h0, out, **kw: ops.flashinfer_chunk_gated_delta_rule(
        q, k, v, g=x["g"][0].exp(), beta=x["beta"][0], cu_seqlens=cu, initial_state=h0,
        output_state=out, **kw)
    buf = torch.randn(3, HV, V, K)
    o_ref, s_ref = call(buf[:2].clone(), torch.empty(2, HV, V, K), output_final_state=True)
    o, s = call(buf[:2], buf[1:], output_final_state=True)
    assert torch.equal(o, o_ref) and torch.equal(s, s_ref)
    pool = torch.randn(4, HV, V, K)
    indices = torch.tensor([0, 1])
    o_ref = call(pool[:3].clone(), torch.empty(3, HV, V, K), state_indices=indices)
    assert torch.equal(call(pool[:3], pool[1:], state_indices=indices), o_ref)


def test_written_arguments_that_share_memory_are_refused():
    x = inputs(1, 4)
    flat = torch.empty(x["v"].numel() + HV * V * K)
    o = flat[:x["v"].numel()].view(x["v"].shape)
    final = flat[-HV * V * K - 1:-1].view(1, HV, V, K)  # one float into o
    with pytest.raises(ValueError, match="arguments 'final_state' and 'o' are both written"):
        torch.ops.gdn.recurrent(x["q"], x["k"], x["v"], x["g"], None, None, None, x["beta"],
                                None, None, None, None, None, None, None, final, o, None, None,
                                None, None, None, None, None, None, None, None, False, "vk")


def test_scales_of_another_shape_are_refused_even_with_the_same_count():
    """[HV, S, V] scales for an [S, HV, V, K] pool hold as many floats as
    the right ones and were read flat: silently wrong rows."""
    pool, scales = ops.quantize_state(torch.randn(3, HV, V, K))
    with pytest.raises(ValueError, match=r"must hold one scale a row .*\[3, 2, 16\]"):
        ops.attach_state_scale(pool.clone(), scales.transpose(0, 1).contiguous())


@pytest.mark.parametrize("call,error,match", [
    (lambda: gdn.Compiler().compile_text(None), TypeError, "mlir must be a str"),
    (lambda: gdn.Compiler().compile_text(TINY_RECURRENT.encode()), TypeError,
     "mlir must be a str"),
    (lambda: gdn.choose_verify_mode("float32", 2**63, 8), ValueError, "T = .* does not fit"),
    (lambda: gdn.choose_verify_mode("float32", 4, 8, expected_accepted=10**400), ValueError,
     "expected_accepted"),
    (lambda: gdn.Compiler().compile(N=1, T=1, H=1, HV=1, K=32, V=8, q_strides=(16, 16, 16)),
     ValueError, "q_strides has 3 entries, not 4"),
    (lambda: ops.quantized_state((4.7, 2, 16, 32)), TypeError, "shape must be a sequence of ints"),
    (lambda: ops.quantized_state("abc"), TypeError, "shape must be a sequence of ints"),
    (lambda: gdn.Compiler().compile(N=1, T=1, H=1, HV=1, K=32, V=8).run_host(
        [np.float32(0)] * 4), TypeError, "argument 'q' must be a numpy array, got float32"),
])
def test_the_python_api_names_what_is_wrong(call, error, match):
    with pytest.raises(error, match=match):
        call()


@pytest.mark.parametrize("call,name", [
    (lambda c: c.compile(N=1, T=1, H=1, HV=1, K=32, V=8,
                         schedule="\0#gdn.schedule<warps = 0>"), "schedule"),
    (lambda c: c.compile_text(TINY_RECURRENT + "\0 not mlir {{{"), "mlir"),
    (lambda c: c.compile(N=1, T=1, H=1, HV=1, K=32, V=8, target="cuda", chip="sm_90a\0junk"),
     "chip"),
])
def test_a_nul_character_is_refused_not_cut(call, name):
    """A C string ends at its first NUL: the rest was silently dropped (a
    schedule after one compiled under the cost model instead)."""
    with pytest.raises(ValueError, match=f"{name} must not contain a NUL character"):
        call(gdn.Compiler())


def test_set_schedule_checks_before_it_changes_the_pins():
    """A bad set_schedule raised only after clearing the pins in force, and
    a text schedule failed with a dict error; both are refused up front now,
    the pins kept."""
    ops.set_schedule(warps=2)
    try:
        for bad, error in (("#gdn.schedule<warps = 4>", TypeError), (5, TypeError),
                           ({"warps": True}, TypeError), ({"no such": 1}, ValueError)):
            with pytest.raises(error):
                ops.set_schedule(bad)
            assert ops._custom_ops._schedule == {"warps": 2}
    finally:
        ops.set_schedule()
    assert ops._custom_ops._schedule == {}


def test_run_host_views_with_a_static_offset():
    """An argument compiled as a view with a static offset (compile_text) is
    passed as the numpy view of its element [0, ...]: the kernel reads and
    writes that view, not offset elements past it (it read and wrote past
    the array before, a segfault at a large offset)."""
    def text(offset):
        q = f"memref<1x1x1x32xf32, strided<[64, 64, 64, 1], offset: {offset}>>"
        st = f"memref<1x1x32x8xf32, strided<[512, 256, 8, 1], offset: {offset}>>"
        return f"""
func.func @f(%q: {q}, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>,
             %st: {st}, %o: memref<1x1x1x8xf32>) {{
  gdn.recurrent q(%q : {q}) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>)
      final_state(%st : {st}) o(%o : memref<1x1x1x8xf32>)
  return
}}"""
    c = gdn.Compiler()
    rng = np.random.default_rng(0)
    k, v = rng.standard_normal(32).astype(np.float32), rng.standard_normal(8).astype(np.float32)
    q = rng.standard_normal(32).astype(np.float32)
    results = []
    for offset in (0, 1000):
        kern = c.compile_text(text(offset))
        assert [x[3] for x in kern._types] == [offset, 0, 0, offset, 0]
        qbuf = np.full(offset + 64, np.nan, np.float32)
        qbuf[offset:offset + 32] = q
        sbuf = np.full(offset + 512, -7.0, np.float32)
        qview = np.lib.stride_tricks.as_strided(qbuf[offset:], (1, 1, 1, 32), (256, 256, 256, 4))
        sview = np.lib.stride_tricks.as_strided(sbuf[offset:], (1, 1, 32, 8), (2048, 1024, 32, 4))
        o = np.zeros(8, np.float32)
        kern.run_host([qview, k, v, sview, o])
        assert np.isfinite(o).all()
        assert (sbuf[:offset] == -7.0).all() and (sbuf[offset + 256:] == -7.0).all()
        results.append((o, sbuf[offset:offset + 256].copy()))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])


def test_fla_pitched_initial_state_with_a_final_state():
    """FLA's fused_recurrent_gated_delta_rule with an initial_state view of a
    slot pitch and output_final_state: the view is copied (the op's two
    states share a layout; the final state is new and dense), as FLA's
    input_guard does, not refused with an error about final_state, an
    argument the caller never passed."""
    torch.manual_seed(0)
    q, k = torch.randn(2, 3, H, K), torch.randn(2, 3, H, K)
    v = torch.randn(2, 3, HV, V)
    g = torch.log(torch.rand(2, 3, HV) * 0.5 + 0.5)
    beta = torch.rand(2, 3, HV)
    h0 = torch.randn(2, 2, HV, K, V)[:, 0]
    o, ht = ops.fused_recurrent_gated_delta_rule(q, k, v, g=g, beta=beta, initial_state=h0,
                                                 output_final_state=True)
    want_o, want_ht = ops.fused_recurrent_gated_delta_rule(
        q, k, v, g=g, beta=beta, initial_state=h0.contiguous(), output_final_state=True)
    assert ht.is_contiguous()
    assert torch.equal(o, want_o) and torch.equal(ht, want_ht)
