"""Varlen prefills compile for a token capacity (and, on a pool, a row
capacity), not their exact shape (gdn.ops._custom_ops._prefill_capacity;
docs/DESIGN.md, "Token capacity"): the results are those of the exact
kernel bit for bit, batches of many lengths share a few kernels, and
cu_seqlens that break the contract still keep every access inside the
tokens given."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gdn.ops as ops  # noqa: E402
from gdn.ops import _custom_ops  # noqa: E402

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
H, HV, K, V = 1, 2, 16, 16


def batch(lens, device, seed=0, slots=None):
    g = torch.Generator().manual_seed(seed)
    r = lambda *s: torch.randn(*s, generator=g)  # noqa: E731
    T = sum(lens)
    x = dict(q=r(1, T, H, K).bfloat16(), k=r(1, T, H, K).bfloat16(), v=r(1, T, HV, V).bfloat16(),
             g=torch.nn.functional.logsigmoid(r(1, T, HV)), beta=torch.sigmoid(r(1, T, HV)),
             cu=torch.tensor(np.concatenate([[0], np.cumsum(lens)]), dtype=torch.int32),
             pool=r(slots or len(lens) + 3, HV, V, K))
    return {n: t.to(device) for n, t in x.items()}


def sglang_extend(x, idx):
    return ops.sglang_chunk_gated_delta_rule(
        x["q"], x["k"], x["v"], x["g"], x["beta"], initial_state=x["pool"],
        initial_state_indices=idx, cu_seqlens=x["cu"], use_qk_l2norm_in_kernel=True)[0]


def fla(x):
    return ops.chunk_gated_delta_rule(
        x["q"], x["k"], x["v"], g=x["g"], beta=x["beta"], cu_seqlens=x["cu"].long(),
        initial_state=x["pool"][:x["cu"].numel() - 1].transpose(-1, -2),
        output_final_state=True, use_qk_l2norm_in_kernel=True)


@pytest.fixture
def exact(monkeypatch):
    """The same calls with every kernel compiled for its exact shape."""
    def use():
        monkeypatch.setattr(_custom_ops, "_prefill_capacity",
                            lambda T, N, cu, idx, tables: (T, N, cu, idx, tables))
    return use


@pytest.mark.parametrize("device", DEVICES)
def test_same_results_as_the_exact_kernel(device, exact):
    """A pool prefill of 3 sequences (one of them a padding row) and an FLA
    varlen prefill: o and the states bit for bit as the kernel compiled for
    the exact T and N (on the GPU within rounding: another schedule may
    be chosen)."""
    lens = [37, 0, 60]
    idx = torch.tensor([2, -1, 0], dtype=torch.int32, device=device)
    x = batch(lens, device)
    p0 = x["pool"].clone()
    o = sglang_extend(x, idx)
    o_fla, s_fla = fla(dict(x, pool=p0.clone()))
    pool = x["pool"].clone()
    exact()
    y = dict(x, pool=p0.clone())
    o2 = sglang_extend(y, idx)
    o2_fla, s2_fla = fla(dict(x, pool=p0.clone()))
    same = torch.equal if device == "cpu" else (
        lambda a, b: torch.allclose(a.float(), b.float(), rtol=0, atol=2e-2))
    assert same(o, o2) and same(pool, y["pool"])
    assert same(o_fla, o2_fla) and same(s_fla, s2_fla)
    assert torch.equal(pool[[1, 3, 4]], p0[[1, 3, 4]])  # untouched slots


def test_batches_of_many_lengths_share_few_kernels():
    """40 pool prefills of 1 to 6 sequences and 7 to 700 tokens, 40
    shapes, compile one kernel a (row capacity, token capacity): token
    capacities on quarter octaves (..., 64, 80, 96, 112, 128, ...) and row
    capacities 1, 2, 4, 8, fewer than 30 kernels; short batches keep
    their size class (3 tokens in 2 sequences compile for 3)."""
    rng = np.random.default_rng(0)
    before = set(_custom_ops._kernels)
    exact = set()
    for i in range(40):
        n = int(rng.integers(1, 7))
        lens = [int(x) for x in rng.integers(7, 700 // n, n)]
        exact.add((n, sum(lens)))
        x = batch(lens, "cpu", seed=i, slots=8)
        sglang_extend(x, torch.arange(n, dtype=torch.int32))
    shapes = {(dict(k[2:])["N"], dict(k[2:])["T"]) for k in set(_custom_ops._kernels) - before}
    assert shapes == {(_custom_ops._row_capacity(n), _custom_ops._token_capacity(T))
                      for n, T in exact}
    quarter_octaves = {m << e for m in (4, 5, 6, 7) for e in range(1, 9)}
    assert len(exact) == 40 and len(shapes) < 30
    assert all(T in quarter_octaves and N in (1, 2, 4, 8) for N, T in shapes), shapes
    assert [_custom_ops._token_capacity(T) for T in (3, 7, 8, 9, 13, 64, 65, 700)] == \
        [3, 7, 8, 10, 14, 64, 80, 768]


def test_cu_seqlens_past_the_tokens_stay_inside_them():
    """cu_seqlens whose last entry exceeds the tokens given (a broken
    contract) would let a kernel compiled for a larger capacity read past
    them: they are clamped first, so the call equals the one with the
    clamped table."""
    x = batch([20, 30], "cpu", seed=3)
    bad = dict(x, cu=torch.tensor([0, 20, 70], dtype=torch.int32), pool=x["pool"].clone())
    good = dict(x, cu=torch.tensor([0, 20, 50], dtype=torch.int32), pool=x["pool"].clone())
    idx = torch.tensor([0, 1], dtype=torch.int32)
    assert torch.equal(sglang_extend(bad, idx), sglang_extend(good, idx))
    assert torch.equal(bad["pool"], good["pool"])


def test_decode_and_verify_keep_their_exact_shapes():
    """Varlen decode (a token a sequence) and verify (per-token states) are
    compiled for their own shapes: their few shapes recur, and the extra
    launches would cost them more than they save."""
    x = batch([1, 1, 1], "cpu", seed=4)
    before = set(_custom_ops._kernels)
    ops.sglang_chunk_gated_delta_rule(x["q"], x["k"], x["v"], x["g"], x["beta"],
                                      initial_state=x["pool"],
                                      initial_state_indices=torch.arange(3, dtype=torch.int32),
                                      cu_seqlens=x["cu"], use_qk_l2norm_in_kernel=True)
    (key,) = set(_custom_ops._kernels) - before
    assert (dict(key[2:])["N"], dict(key[2:])["T"]) == (3, 3)


def test_views_of_a_packed_projection_share_the_kernel():
    """q, k, v as views of one [T, 2 H K + HV V] projection (SGLang's
    mixed_qkv; their batch stride is T times the row): two prefills of 100
    and 110 tokens (capacity 112) compile one kernel, which reads the views
    in place, with the results of the same call on dense copies."""
    before = set(_custom_ops._kernels)
    for T in (100, 110):
        x = batch([T - 40, 40], "cpu", seed=T)
        mixed = torch.cat([x["q"].flatten(2), x["k"].flatten(2), x["v"].flatten(2)], -1)
        q, k, v = torch.split(mixed, [H * K, H * K, HV * V], -1)
        views = dict(x, q=q.view(1, T, H, K), k=k.view(1, T, H, K), v=v.view(1, T, HV, V),
                     pool=x["pool"].clone())
        assert not views["q"].is_contiguous()
        idx = torch.tensor([1, 0], dtype=torch.int32)
        assert torch.equal(sglang_extend(views, idx), sglang_extend(x, idx))
        assert torch.equal(views["pool"], x["pool"])
    keys = set(_custom_ops._kernels) - before
    strided = [k_ for k_ in keys if "q_strides" in dict(k_[2:])]
    assert len(strided) == 1 and len(keys) == 2  # one for the views, one dense


@pytest.mark.parametrize("lens, starts", [([130, 70, 0], [0, 2, 3, 3]),
                                          ([128, 64, 64], [0, 2, 3, 4])])
def test_flashinfer_prefill_with_a_pool_and_checkpoints(exact, lens, starts):
    """FlashInfer's prefill on a pool (3 sequences: padded to 4 rows) with
    prefix-cache checkpoints every 64 tokens (checkpoint_cu_starts padded
    with its last entry): o, the pool and every checkpoint row as the exact
    kernel's, rows no sequence owns untouched; with 200 tokens (a capacity
    of 224) and with 256, a capacity itself, where the rows were padded and
    the checkpoint table was not (a ValueError naming checkpoint_offsets)."""

    def run():
        x = batch(lens, "cpu", seed=7, slots=5)
        T = sum(lens)
        flat = lambda t: t.reshape(T, *t.shape[2:])  # noqa: E731
        ck = torch.full((5, HV, V, K), 7.0)
        o, s = ops.flashinfer_chunk_gated_delta_rule(
            flat(x["q"]), flat(x["k"]), flat(x["v"]), g=flat(x["g"]).exp(),
            beta=flat(x["beta"]), initial_state=x["pool"], output_state=x["pool"],
            output_final_state=True, cu_seqlens=x["cu"], use_qk_l2norm_in_kernel=True,
            state_indices=torch.tensor([3, 0, 1], dtype=torch.int32), state_checkpoints=ck,
            checkpoint_cu_starts=torch.tensor(starts, dtype=torch.int32),
            checkpoint_every_n_tokens=64)
        return o, s.clone(), ck

    o, pool, ck = run()
    exact()
    o2, pool2, ck2 = run()
    assert torch.equal(o, o2) and torch.equal(pool, pool2) and torch.equal(ck, ck2)
    used = starts[-1]
    assert (ck[used:] == 7.0).all() and not (ck[:used] == 7.0).any()


@pytest.mark.parametrize("total", [250, 256])
def test_rewritten_tables_are_not_read_early(monkeypatch, total):
    """The capacity path writes cu_seqlens (clamped) and a pool's padded
    row tables on the device just before the launch, so the kernel must not
    read them early (fresh_early_inputs: no programmatic launch), whether T
    is rounded up (250 to 256) or is a capacity itself (256)."""
    seen = []
    real = _custom_ops._kernel

    def spy(device, fresh_early_inputs=False, **desc):
        seen.append(fresh_early_inputs)
        return real(device, fresh_early_inputs, **desc)

    monkeypatch.setattr(_custom_ops, "_kernel", spy)
    x = batch([total - 128, 64, 64], "cpu")
    sglang_extend(x, torch.tensor([0, 1, 2], dtype=torch.int32))
    assert seen == [True]
