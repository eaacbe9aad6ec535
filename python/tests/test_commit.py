"""gdn.ops.commit_accepted (the gdn.commit op): CPU tensors wherever torch is
installed, the same cases on CUDA where a GPU is present. Every case checks
the whole pool bit for bit against the op's contract, written out below."""
import pytest

torch = pytest.importorskip("torch")
import gdn.ops as ops  # noqa: E402

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def expected_pool(buf, accepted, pool, state_indices=None, intermediate_state_indices=None):
    """The contract: row n with slot >= 0, row >= 0 and a = min(accepted, T) >= 1
    sets pool[slot] to buf[row, a - 1], converted through float32 (rounded
    once); nothing else changes."""
    out = pool.clone()
    T = buf.shape[1]
    for n in range(accepted.shape[0]):
        a = min(int(accepted[n]), T)
        slot = n if state_indices is None else int(state_indices[n])
        row = n if intermediate_state_indices is None else int(intermediate_state_indices[n])
        if slot >= 0 and row >= 0 and a >= 1:
            out[slot] = buf[row, a - 1].float().to(pool.dtype)
    return out


def sglang_case(buf_dtype, pool_dtype, index_dtype, device, seed=0):
    """A 9-slot pool, a 6-row pool-scoped buffer (T = 4, HV = 2, [V, K] =
    [16, 32]) and 8 rows: a commit, a padding row, accepted = 0, a negative
    buffer row, accepted = 9 > T, accepted < 0, accepted = T, accepted = 1."""
    g = torch.Generator().manual_seed(seed)
    buf = torch.randn(6, 4, 2, 16, 32, generator=g).to(buf_dtype)
    pool = torch.randn(9, 2, 16, 32, generator=g).to(pool_dtype)
    accepted = torch.tensor([2, 3, 0, 1, 9, -2, 4, 1], dtype=index_dtype)
    slots = torch.tensor([3, -1, 0, 6, 1, 4, 2, 5], dtype=index_dtype)
    rows = torch.tensor([5, 0, 2, -1, 1, 3, 4, 0], dtype=torch.int64)
    return [t.to(device) for t in (buf, accepted, pool, slots, rows)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("buf_dtype,pool_dtype", [
    (torch.float32, torch.float32), (torch.bfloat16, torch.bfloat16),
    (torch.float32, torch.bfloat16), (torch.float16, torch.float32),
    (torch.float32, torch.float16)])
@pytest.mark.parametrize("index_dtype", [torch.int32, torch.int64])
def test_pool_commit_matches_contract(device, buf_dtype, pool_dtype, index_dtype):
    buf, accepted, pool, slots, rows = sglang_case(buf_dtype, pool_dtype, index_dtype, device)
    before = [t.clone() for t in (buf, accepted, pool, slots, rows)]
    want = expected_pool(buf.cpu(), accepted.cpu(), pool.cpu(), slots.cpu(), rows.cpu())
    out = ops.commit_accepted(buf, accepted, pool, state_indices=slots,
                              intermediate_state_indices=rows)
    assert out is pool
    assert torch.equal(pool.cpu(), want)
    # Slots 0, 4, 6, 7 and 8 are named by no committing row: untouched.
    for s in (0, 4, 6, 7, 8):
        assert torch.equal(pool[s].cpu(), before[2][s].cpu()), f"slot {s} changed"
    # The clamped row (accepted 9 > T = 4) got the last step of its buffer row.
    assert torch.equal(pool[1].cpu(), buf[1, 3].float().to(pool_dtype).cpu())
    for t, b in zip((buf, accepted, slots, rows), (before[0], before[1], before[3], before[4])):
        assert torch.equal(t, b), "an input was written"


@pytest.mark.parametrize("device", DEVICES)
def test_batch_scoped_commit_without_pool(device):
    # FlashInfer: buffer row n into state row n; kv layout [K, V] = [32, 8].
    g = torch.Generator().manual_seed(1)
    buf = torch.randn(3, 3, 4, 32, 8, generator=g).to(device)
    state = torch.randn(3, 4, 32, 8, generator=g).to(device)
    accepted = torch.tensor([2, 0, 5], dtype=torch.int32, device=device)
    old = state.clone()
    ops.commit_accepted(buf, accepted, state)
    assert torch.equal(state[0], buf[0, 1])
    assert torch.equal(state[1], old[1])  # nothing accepted
    assert torch.equal(state[2], buf[2, 2])  # 5 > T = 3: the last step


def test_commit_then_decode_equals_decoding_the_accepted_tokens():
    """Verify T = 3 with per-token states and no commit, commit 2 tokens,
    then the pool equals running the first 2 tokens for real."""
    N, T, H, HV, K, V = 2, 3, 1, 2, 32, 16
    g = torch.Generator().manual_seed(2)
    r = lambda *s: torch.randn(*s, generator=g)
    q, k, v = r(N, T, H, K), r(N, T, H, K), r(N, T, HV, V)
    a, b = r(N, T, HV), r(N, T, HV)
    A_log, dt_bias = torch.log(torch.rand(HV, generator=g) * 15 + 1), r(HV)
    pool = r(4, HV, V, K)
    slots = torch.tensor([2, 0], dtype=torch.int32)
    buf = torch.zeros(N, T, HV, V, K)
    keep = pool.clone()
    ops.gated_delta_rule_mtp(q, k, v, pool, slots, A_log, a, dt_bias, b,
                             intermediate_states_buffer=buf, disable_state_update=True)
    assert torch.equal(pool, keep)
    ops.commit_accepted(buf, torch.tensor([2, 2], dtype=torch.int32), pool, state_indices=slots)
    direct = keep.clone()
    ops.gated_delta_rule_mtp(q[:, :2].contiguous(), k[:, :2].contiguous(), v[:, :2].contiguous(),
                             direct, slots, A_log, a[:, :2].contiguous(), dt_bias,
                             b[:, :2].contiguous(), disable_state_update=False)
    assert torch.allclose(pool, direct, rtol=0, atol=1e-6)
    assert torch.equal(pool[1], keep[1]) and torch.equal(pool[3], keep[3])


def test_empty_batch_does_nothing():
    buf = torch.randn(0, 2, 1, 8, 4)
    state = torch.randn(0, 1, 8, 4)
    assert ops.commit_accepted(buf, torch.zeros(0, dtype=torch.int32), state) is state


def test_graph_capture_traces_the_op_without_breaks():
    """torch.compile(fullgraph=True) traces the custom op (fake kernel, in-place
    mutation of `state`); the compiled function commits the same bytes."""
    buf, accepted, pool, slots, rows = sglang_case(torch.float32, torch.float32, torch.int32, "cpu")
    want = expected_pool(buf, accepted, pool, slots, rows)

    def step(buf, accepted, pool, slots, rows):
        ops.commit_accepted(buf, accepted, pool, state_indices=slots,
                            intermediate_state_indices=rows)
        return pool

    compiled = torch.compile(step, backend="aot_eager", fullgraph=True)
    compiled(buf, accepted, pool, slots, rows)
    assert torch.equal(pool, want)


def test_opcheck():
    buf, accepted, pool, slots, rows = sglang_case(torch.bfloat16, torch.float32, torch.int64, "cpu")
    torch.library.opcheck(torch.ops.gdn.commit.default, (buf, accepted, pool, slots, rows, None, None),
                          test_utils=("test_schema", "test_faketensor"))


def test_a_buffer_that_shares_memory_with_the_pool_is_read_as_it_was():
    """Disjoint views of one allocation were refused (one storage), and a
    buffer overlapping the pool from another storage (two numpy views of
    one array) was read after the commit's own writes: slot 1 got what row
    0 had just written into slot 0. The op reads an overlapping buffer from
    a copy now, and takes disjoint views as they are."""
    n, rows = 2 * 4 * 2 * 16 * 32, torch.tensor([1, 0])
    accepted, slots = torch.tensor([4, 4], dtype=torch.int32), torch.tensor([0, 1])
    whole = torch.randn(n + 2 * 2 * 16 * 32)
    buf, pool = whole[:n].view(2, 4, 2, 16, 32), whole[n:].view(2, 2, 16, 32)
    want = expected_pool(buf, accepted, pool.clone(), slots, rows)
    ops.commit_accepted(buf, accepted, pool, slots, rows)
    assert torch.equal(pool, want)
    row = 2 * 16 * 32
    array = torch.randn(2 * 2 * row).numpy()
    buf = torch.from_numpy(array).view(2, 2, 2, 16, 32)  # rows' steps: array rows 0..3
    pool = torch.from_numpy(array[row:3 * row]).view(2, 2, 16, 32)  # slot s = array row s + 1
    assert buf.untyped_storage().data_ptr() != pool.untyped_storage().data_ptr()
    accepted = torch.tensor([2, 2], dtype=torch.int32)
    want = expected_pool(buf.clone(), accepted, pool.clone(), slots, rows)
    ops.commit_accepted(buf, accepted, pool, slots, rows)
    assert torch.equal(pool, want)


def test_row_scales_that_share_memory_are_read_as_they_were():
    """A float8 buffer and pool whose attached row scales are views of one
    float32 storage: the commit wrote slot 1's scale, then read it back as
    the buffer's scale for slot 2. The buffer's scales are read from a copy."""
    buf = torch.zeros(2, 2, 2, 16, 32, dtype=torch.float8_e4m3fn)
    pool = torch.zeros(3, 2, 16, 32, dtype=torch.float8_e4m3fn)
    scales = torch.rand(2 * 2 * 2 * 16) + 0.5
    ops.attach_state_scale(buf, scales.view(2, 2, 2, 16))
    ops.attach_state_scale(pool, scales[:3 * 2 * 16].view(3, 2, 16))  # the same floats
    before = scales.clone().view(2, 2, 2, 16)
    ops.commit_accepted(buf, torch.tensor([2, 2]), pool, torch.tensor([1, 2]),
                        torch.tensor([1, 0]))
    committed = ops.state_scale_of(pool)
    assert torch.equal(committed[1], before[1, 1]) and torch.equal(committed[2], before[0, 1])
    ops.detach_state_scale(buf), ops.detach_state_scale(pool)


def test_bad_arguments_raise_naming_the_argument(monkeypatch):
    buf, accepted, pool, slots, rows = sglang_case(torch.float32, torch.float32, torch.int32, "cpu")
    f = ops.commit_accepted
    kw = dict(state_indices=slots, intermediate_state_indices=rows)
    with pytest.raises(TypeError, match="intermediate_states must be a torch.Tensor"):
        f(buf.numpy(), accepted, pool, **kw)
    with pytest.raises(ValueError, match=r"intermediate_states must be \[R, T, HV, V, K\]"):
        f(buf[0], accepted, pool, **kw)
    with pytest.raises(TypeError, match="intermediate_states must have dtype"):
        f(buf.double(), accepted, pool, **kw)
    with pytest.raises(ValueError, match="intermediate_states must be contiguous"):
        f(buf.transpose(3, 4), accepted, pool, **kw)
    with pytest.raises(TypeError, match="accepted must have dtype"):
        f(buf, accepted.float(), pool, **kw)
    with pytest.raises(ValueError, match=r"accepted must be 1-D \[N\]"):
        f(buf, accepted[None], pool, **kw)
    with pytest.raises(TypeError, match="state must be a torch.Tensor"):
        f(buf, accepted, None, **kw)
    with pytest.raises(ValueError, match=r"state must have shape \[9, 2, 16, 32\]"):
        f(buf, accepted, pool[:, :1].contiguous(), **kw)
    with pytest.raises(ValueError, match=r"state must have shape \[8, 2, 16, 32\]"):
        f(buf, accepted, pool, intermediate_state_indices=rows)  # no pool: [N, ...]
    with pytest.raises(ValueError, match="state_indices must have shape"):
        f(buf, accepted, pool, state_indices=slots[:3], intermediate_state_indices=rows)
    with pytest.raises(TypeError, match="intermediate_state_indices must have dtype"):
        f(buf, accepted, pool, state_indices=slots, intermediate_state_indices=rows.float())
    with pytest.raises(ValueError, match="intermediate_states has 6 rows but accepted has 8"):
        f(buf, accepted, pool, state_indices=slots)
    monkeypatch.setenv("GDN_VALIDATE_INDICES", "1")
    with pytest.raises(ValueError, match="state_indices holds slot 9, past the pool's 9 slots"):
        f(buf, accepted, pool, state_indices=torch.tensor([9, 0, 0, 0, 0, 0, 0, 0],
                                                          dtype=torch.int32),
          intermediate_state_indices=rows)
    # Nothing above touched the pool.
    assert torch.equal(pool, sglang_case(torch.float32, torch.float32, torch.int32, "cpu")[2])
