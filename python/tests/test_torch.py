"""PyTorch entry points: CPU tensors everywhere torch is installed; CUDA tests
(vs the fp64 reference, vs FLA when fla-core is importable, CUDA-graph replay,
repeatability) where a GPU is present (the H200 run, scripts/h200-check.sh)."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gdn.ops as ops  # noqa: E402
from reference import recurrent, rms_rel  # noqa: E402
from inputs import place  # noqa: E402

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def np64(t):
    return t.detach().double().cpu().numpy()


def qwen_inputs(N, T=1, H=16, HV=32, K=128, V=128, device="cpu", dtype=torch.bfloat16, seed=0):
    g = torch.Generator().manual_seed(seed)
    r = lambda *s: torch.randn(*s, generator=g)
    x = dict(q=r(N, T, H, K), k=r(N, T, H, K), v=r(N, T, HV, V), a=r(N, T, HV), b=r(N, T, HV),
             A_log=torch.log(torch.rand(HV, generator=g) * 15 + 1), dt_bias=r(HV),
             state=r(N, HV, V, K))
    return place(x, device, dtype)


@pytest.mark.parametrize("device", DEVICES)
def test_flashinfer_decode_pretranspose_matches_reference(device):
    x = qwen_inputs(4, H=2, HV=4, device=device)
    s0 = x["state"].clone()
    o, s = ops.gated_delta_rule_decode_pretranspose(
        x["q"], x["k"], x["v"], x["state"], x["A_log"], x["a"], x["dt_bias"], x["b"])
    assert s is x["state"]
    ro, rs = recurrent(np64(x["q"]), np64(x["k"]), np64(x["v"]), a=np64(x["a"]),
                       A_log=np64(x["A_log"]), dt_bias=np64(x["dt_bias"]), b=np64(x["b"]),
                       initial_state=np64(s0), qk_l2norm=True, layout="vk")
    assert rms_rel(np64(o), ro) < 2e-3
    assert rms_rel(np64(s), rs) < 1e-5


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("gate", ["log_space", "in_kernel"])
def test_fla_fused_recurrent_matches_reference(device, gate):
    N, T, H, HV, K, V = 2, 3, 2, 4, 64, 32
    g = torch.Generator().manual_seed(1)
    q, k = torch.randn(N, T, H, K, generator=g), torch.randn(N, T, H, K, generator=g)
    v = torch.randn(N, T, HV, V, generator=g)
    gg = torch.log(torch.rand(N, T, HV, generator=g) * 0.5 + 0.5)
    beta = torch.rand(N, T, HV, generator=g)
    h0 = torch.randn(N, HV, K, V, generator=g)
    A_log, dt_bias = torch.log(torch.rand(HV, generator=g) * 15 + 1), torch.randn(HV, generator=g)
    to = lambda t: t.to(device)
    kw = dict(use_gate_in_kernel=True, A_log=to(A_log), dt_bias=to(dt_bias)) if gate == "in_kernel" else {}
    h0d = to(h0)
    o, ht = ops.fused_recurrent_gated_delta_rule(
        to(q), to(k), to(v), g=to(gg), beta=to(beta), initial_state=h0d,
        output_final_state=True, use_qk_l2norm_in_kernel=True, **kw)
    assert torch.equal(h0d.cpu(), h0), "FLA never writes initial_state"
    if gate == "in_kernel":
        ro, rs = recurrent(np64(q), np64(k), np64(v), a=np64(gg), A_log=np64(A_log),
                           dt_bias=np64(dt_bias), beta=np64(beta), initial_state=np64(h0),
                           qk_l2norm=True)
    else:
        ro, rs = recurrent(np64(q), np64(k), np64(v), g=np64(gg), beta=np64(beta),
                           initial_state=np64(h0), qk_l2norm=True)
    assert rms_rel(np64(o), ro) < 1e-4
    assert rms_rel(np64(ht), rs) < 1e-5


def test_bad_arguments_raise_before_any_launch():
    x = qwen_inputs(2, H=2, HV=4)
    args = [x["q"], x["k"], x["v"], x["state"], x["A_log"], x["a"], x["dt_bias"], x["b"]]
    f = ops.gated_delta_rule_decode_pretranspose
    with pytest.raises(TypeError, match="k must have dtype"):
        f(x["q"], x["k"].float(), *args[2:])
    with pytest.raises(ValueError, match="v must have shape"):
        f(x["q"], x["k"], x["v"][:1].contiguous(), *args[3:])
    with pytest.raises(ValueError, match="'state' is a strided view written in place"):
        f(*args[:3], x["state"].transpose(2, 3), *args[4:])
    with pytest.raises(TypeError, match="A_log must have dtype"):
        f(*args[:4], x["A_log"].double(), *args[5:])
    with pytest.raises(ValueError, match="either state or"):
        f(*args, initial_state=x["state"], initial_state_indices=torch.zeros(2, dtype=torch.int32))
    with pytest.raises(NotImplementedError, match="'output_state_indices'"):
        f(*args, output_state_indices=torch.zeros(2, dtype=torch.int32))
    with pytest.raises(ValueError, match="cu_seqlens needs packed tokens with batch 1"):
        ops.fused_recurrent_gated_delta_rule(x["q"], x["k"], x["v"], cu_seqlens=torch.tensor([0, 1]))
    with pytest.raises(NotImplementedError, match="'gv'"):
        ops.fused_recurrent_gated_delta_rule(x["q"], x["k"], x["v"], gv=x["a"])
    with pytest.raises(ValueError, match="retrieve_parent_token needs intermediate_states_buffer"):
        ops.fused_sigmoid_gating_delta_rule_update(
            x["A_log"], x["a"], x["dt_bias"], 1.0, 20.0, x["q"], x["k"], x["v"], x["b"],
            x["state"], torch.arange(2), retrieve_parent_token=torch.zeros(2, 1))
    with pytest.raises(TypeError, match="initial_state_indices must have dtype"):
        ops.fused_sigmoid_gating_delta_rule_update(
            x["A_log"], x["a"], x["dt_bias"], 1.0, 20.0, x["q"], x["k"], x["v"], x["b"],
            x["state"], torch.arange(2).float())
    with pytest.raises(TypeError, match="q must be a torch.Tensor"):
        ops.fused_recurrent_gated_delta_rule(np.zeros((1, 1, 1, 32)), x["k"], x["v"])


@cuda
@pytest.mark.parametrize("N", [1, 8, 64])
def test_cuda_decode_matches_reference_on_qwen3_next_shapes(N):
    x = qwen_inputs(N, device="cuda", seed=N)
    s0 = x["state"].clone()
    o, s = ops.gated_delta_rule_decode_pretranspose(
        x["q"], x["k"], x["v"], x["state"], x["A_log"], x["a"], x["dt_bias"], x["b"])
    torch.cuda.synchronize()
    ro, rs = recurrent(np64(x["q"]), np64(x["k"]), np64(x["v"]), a=np64(x["a"]),
                       A_log=np64(x["A_log"]), dt_bias=np64(x["dt_bias"]), b=np64(x["b"]),
                       initial_state=np64(s0), qk_l2norm=True, layout="vk")
    assert rms_rel(np64(o), ro) < 2e-3
    assert rms_rel(np64(s), rs) < 1e-5


@cuda
@pytest.mark.parametrize("N", [1, 8, 64])
def test_cuda_matches_fla(N):
    from anchors import fla_ops
    fla = fla_ops("gated_delta_rule")
    x = qwen_inputs(N, device="cuda", seed=100 + N)
    gg = torch.nn.functional.logsigmoid(x["a"].float())  # log-space decay <= 0
    beta = torch.sigmoid(x["b"].float()).to(torch.bfloat16)
    h0 = x["state"].transpose(2, 3).contiguous()  # FLA's [N, HV, K, V]
    ours = ops.fused_recurrent_gated_delta_rule(
        x["q"], x["k"], x["v"], g=gg, beta=beta, initial_state=h0, output_final_state=True,
        use_qk_l2norm_in_kernel=True)
    theirs = fla.fused_recurrent_gated_delta_rule(
        x["q"], x["k"], x["v"], g=gg, beta=beta, initial_state=h0, output_final_state=True,
        use_qk_l2norm_in_kernel=True)
    torch.cuda.synchronize()
    assert rms_rel(np64(ours[0]), np64(theirs[0])) < 2e-3
    assert rms_rel(np64(ours[1]), np64(theirs[1])) < 1e-5


def _sglang_kernel():
    """SGLang's fused_sigmoid_gating_delta_rule_update, imported as a package
    (scripts/h200-python.sh puts the carried anchor site on PYTHONPATH); the
    test is skipped, naming the missing module, where it cannot be imported."""
    from anchors import sglang_kernels
    return sglang_kernels().fused_sigmoid_gating_delta_rule_update


@cuda
@pytest.mark.parametrize("pool_dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("N", [1, 8, 64])
def test_cuda_sglang_entry_matches_sglang(N, pool_dtype):
    """Our SGLang entry point against SGLang's own kernel on the same inputs:
    a pool of N + 3 slots with a padding row, updated in place."""
    sglang = _sglang_kernel()
    x = qwen_inputs(N, device="cuda", seed=200 + N)
    g = torch.Generator().manual_seed(300 + N)
    pool0 = torch.randn(N + 3, 32, 128, 128, generator=g).to(pool_dtype).cuda()
    idx = torch.randperm(N + 3, generator=g)[:N].to(torch.int32).cuda()
    if N > 1:
        idx[1] = -1  # a padding row
    ours_pool, theirs_pool = pool0.clone(), pool0.clone()
    args = lambda pool: (x["A_log"], x["a"], x["dt_bias"], 1.0, 20.0, x["q"], x["k"], x["v"],
                         x["b"], pool, idx)
    ours = ops.fused_sigmoid_gating_delta_rule_update(*args(ours_pool), use_qk_l2norm_in_kernel=True)
    theirs = sglang(*args(theirs_pool), use_qk_l2norm_in_kernel=True)
    torch.cuda.synchronize()
    real = idx >= 0
    assert rms_rel(np64(ours[real]), np64(theirs[real])) < 2e-3
    # fp32: the 1e-5; bf16 pool: both round the fp32 state once, so
    # they differ by at most one bf16 step where the fp32 values straddle a
    # rounding boundary (bounded here as RMS 4e-3, ~half a bf16 ulp).
    assert rms_rel(np64(ours_pool), np64(theirs_pool)) < (1e-5 if pool_dtype == torch.float32 else 4e-3)


@cuda
def test_cuda_graph_replay_equals_eager_and_is_repeatable():
    x = qwen_inputs(8, device="cuda", seed=7)
    s0 = x["state"].clone()
    out = torch.empty_like(x["v"])
    args = lambda: (x["q"], x["k"], x["v"], x["state"], x["A_log"], x["a"], x["dt_bias"], x["b"])
    ops.gated_delta_rule_decode_pretranspose(*args(), output=out)  # warm: loads the module
    x["state"].copy_(s0)
    ops.gated_delta_rule_decode_pretranspose(*args(), output=out)
    eager_o, eager_s = out.clone(), x["state"].clone()
    graph = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        x["state"].copy_(s0)
        with torch.cuda.graph(graph, stream=stream):
            ops.gated_delta_rule_decode_pretranspose(*args(), output=out)
    for _ in range(3):
        x["state"].copy_(s0)
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(out, eager_o)
        assert torch.equal(x["state"], eager_s)
    for _ in range(1000):
        x["state"].copy_(s0)
        ops.gated_delta_rule_decode_pretranspose(*args(), output=out)
    torch.cuda.synchronize()
    assert torch.equal(out, eager_o) and torch.equal(x["state"], eager_s)


def test_programmatic_launch_is_dropped_after_the_ops_own_conversion():
    """A programmatic kernel reads its initial state before waiting for the
    previous kernel: where the op itself has just written it (a bf16 initial
    state converted to fp32), the call compiles without programmatic launch."""
    N, T, H, HV, K, V = 1, 2, 1, 2, 16, 16
    g = torch.Generator().manual_seed(3)
    q, k = torch.randn(N, T, H, K, generator=g), torch.randn(N, T, H, K, generator=g)
    v = torch.randn(N, T, HV, V, generator=g)
    gg, beta = -torch.rand(N, T, HV, generator=g), torch.rand(N, T, HV, generator=g)

    def kernels_for(h0):
        ops._kernels.clear()
        ops.fused_recurrent_gated_delta_rule(q, k, v, g=gg, beta=beta, initial_state=h0,
                                             output_final_state=True)
        return [dict(key[2:]) for key in ops._kernels]

    ops.set_schedule(launch="programmatic")
    try:
        h0 = torch.randn(N, HV, K, V, generator=g)
        assert [d.get("schedule") for d in kernels_for(h0)] == [
            "#gdn.schedule<launch = programmatic>"]
        assert [d.get("schedule") for d in kernels_for(h0.bfloat16())] == [None]
    finally:
        ops.set_schedule()
        ops._kernels.clear()


@cuda
def test_programmatic_launch_chain_equals_plain_launches():
    """A chain of decodes where each call's q is the previous call's output
    and each call has its own state: kernels compiled for programmatic
    dependent launch (they start while the previous one runs, read their
    state early and wait before reading q) give the same bytes as plain
    launches, eager and replayed from a CUDA graph."""
    sets = [qwen_inputs(8, H=32, HV=32, device="cuda", seed=20 + i) for i in range(4)]
    states0 = [x["state"].clone() for x in sets]
    outs = [torch.empty_like(x["v"]) for x in sets]

    def chain():
        for i, x in enumerate(sets):
            q = x["q"] if i == 0 else outs[i - 1]
            ops.gated_delta_rule_decode_pretranspose(
                q, x["k"], x["v"], x["state"], x["A_log"], x["a"], x["dt_bias"], x["b"],
                output=outs[i])

    def reset():
        for x, s0 in zip(sets, states0):
            x["state"].copy_(s0)
        for o in outs:
            o.fill_(float("nan"))

    def run(programmatic):
        ops.set_schedule(launch=programmatic)
        try:
            chain()  # warm: compiles
            reset()
            chain()
            torch.cuda.synchronize()
            eager = [t.clone() for t in outs + [x["state"] for x in sets]]
            graph, stream = torch.cuda.CUDAGraph(), torch.cuda.Stream()
            with torch.cuda.stream(stream):
                with torch.cuda.graph(graph, stream=stream):
                    chain()
            results = []
            for _ in range(3):
                reset()
                graph.replay()
                torch.cuda.synchronize()
                results.append([t.clone() for t in outs + [x["state"] for x in sets]])
            return eager, results
        finally:
            ops.set_schedule()

    plain, plain_graph = run("ordinary")
    assert all(torch.isfinite(t).all() for t in plain)
    for got in plain_graph:
        assert all(torch.equal(a, b) for a, b in zip(plain, got))
    for when in ("programmatic_at_start", "programmatic_after_recurrence"):
        pdl, pdl_graph = run(when)
        for got in [pdl] + pdl_graph:
            assert all(torch.equal(a, b) for a, b in zip(plain, got))


@cuda
def test_torch_compile_traces_the_op():
    x = qwen_inputs(2, H=2, HV=4, device="cuda", seed=9)
    s0 = x["state"].clone()

    def step(q, k, v, state, A_log, a, dt_bias, b):
        return ops.gated_delta_rule_decode_pretranspose(q, k, v, state, A_log, a, dt_bias, b)[0]

    eager = step(x["q"], x["k"], x["v"], x["state"], x["A_log"], x["a"], x["dt_bias"], x["b"])
    x["state"].copy_(s0)
    compiled = torch.compile(step, fullgraph=True)(
        x["q"], x["k"], x["v"], x["state"], x["A_log"], x["a"], x["dt_bias"], x["b"])
    assert torch.equal(eager, compiled)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("index_dtype", [torch.int32, torch.int64])
@pytest.mark.parametrize("pool_dtype", [torch.float32, torch.bfloat16])
def test_sglang_pool_decode_padding_and_untouched_slots(device, index_dtype, pool_dtype):
    """6-slot pool, state_indices = [3, -1, 0, -1] (docs/math.md §2, issue 5):
    slots 0 and 3 are updated like a plain decode of their rows, the other
    slots stay bit-identical (also when filled with NaN), padding rows are 0."""
    x = qwen_inputs(4, H=2, HV=4, device=device, seed=11)
    g = torch.Generator().manual_seed(12)
    pool = torch.randn(6, 4, 128, 128, generator=g).to(pool_dtype).to(device)
    pool[[1, 2, 4, 5]] = float("nan")
    before = pool.clone()
    idx = torch.tensor([3, -1, 0, -1], dtype=index_dtype, device=device)
    o = ops.fused_sigmoid_gating_delta_rule_update(
        x["A_log"], x["a"], x["dt_bias"], 1.0, 20.0, x["q"], x["k"], x["v"], x["b"],
        pool, idx, use_qk_l2norm_in_kernel=True)
    if device == "cuda":
        torch.cuda.synchronize()
    for s in (1, 2, 4, 5):
        assert torch.equal(pool[s].view(torch.uint8), before[s].view(torch.uint8))
    assert torch.count_nonzero(o[1]) == 0 and torch.count_nonzero(o[3]) == 0
    for row, slot in ((0, 3), (2, 0)):
        ro, rs = recurrent(np64(x["q"][row:row + 1]), np64(x["k"][row:row + 1]),
                           np64(x["v"][row:row + 1]), a=np64(x["a"][row:row + 1]),
                           A_log=np64(x["A_log"]), dt_bias=np64(x["dt_bias"]),
                           b=np64(x["b"][row:row + 1]), initial_state=np64(before[slot:slot + 1]),
                           qk_l2norm=True, layout="vk")
        assert rms_rel(np64(o[row:row + 1]), ro) < 2e-3
        assert rms_rel(np64(pool[slot:slot + 1]), rs) < (1e-5 if pool_dtype == torch.float32 else 4e-3)


@pytest.mark.parametrize("device", DEVICES)
def test_fla_varlen_matches_per_sequence_runs(device):
    """FLA's varlen call: 3 sequences of 2, 0 and 3 tokens packed into B = 1."""
    H, HV, K, V = 1, 2, 64, 32
    g = torch.Generator().manual_seed(21)
    q, k = torch.randn(1, 5, H, K, generator=g), torch.randn(1, 5, H, K, generator=g)
    v = torch.randn(1, 5, HV, V, generator=g)
    gg = torch.log(torch.rand(1, 5, HV, generator=g) * 0.5 + 0.5)
    beta = torch.rand(1, 5, HV, generator=g)
    h0 = torch.randn(3, HV, K, V, generator=g)
    cu = torch.tensor([0, 2, 2, 5], dtype=torch.int32)
    to = lambda t: t.to(device)
    o, ht = ops.fused_recurrent_gated_delta_rule(
        to(q), to(k), to(v), g=to(gg), beta=to(beta), initial_state=to(h0),
        output_final_state=True, use_qk_l2norm_in_kernel=True, cu_seqlens=to(cu))
    for n, (lo, hi) in enumerate(((0, 2), (2, 2), (2, 5))):
        if lo == hi:  # an empty sequence passes its state through
            assert torch.equal(ht[n].cpu(), h0[n])
            continue
        ro, rs = recurrent(np64(q[:, lo:hi]), np64(k[:, lo:hi]), np64(v[:, lo:hi]),
                           g=np64(gg[:, lo:hi]), beta=np64(beta[:, lo:hi]),
                           initial_state=np64(h0[n:n + 1]), qk_l2norm=True)
        assert rms_rel(np64(o[:, lo:hi]), ro) < 1e-4
        assert rms_rel(np64(ht[n:n + 1]), rs) < 1e-5


@pytest.mark.parametrize("device", DEVICES)
def test_sglang_verify_intermediate_states_without_commit(device):
    """T=3 verify: the pool is read only (disable_state_update), the state after
    every token goes to the pool-scoped buffer; padding/no-row sequences write none."""
    x = qwen_inputs(3, T=3, H=2, HV=4, device=device, seed=31)
    g = torch.Generator().manual_seed(32)
    pool = torch.randn(5, 4, 128, 128, generator=g).to(device)
    before = pool.clone()
    idx = torch.tensor([4, -1, 1], dtype=torch.int32, device=device)
    inter = torch.full((6, 3, 4, 128, 128), float("nan"), device=device)
    iidx = torch.tensor([5, 0, -1], dtype=torch.int32, device=device)
    o = ops.fused_sigmoid_gating_delta_rule_update(
        x["A_log"], x["a"], x["dt_bias"], 1.0, 20.0, x["q"], x["k"], x["v"], x["b"], pool, idx,
        use_qk_l2norm_in_kernel=True, disable_state_update=True,
        intermediate_states_buffer=inter, intermediate_state_indices=iidx, cache_steps=3)
    if device == "cuda":
        torch.cuda.synchronize()
    assert torch.equal(pool.view(torch.uint8), before.view(torch.uint8))
    for r in range(5):  # only row 5 (sequence 0) is written
        assert torch.isnan(inter[r]).all()
    for t in range(1, 4):
        _, rs = recurrent(np64(x["q"][:1, :t]), np64(x["k"][:1, :t]), np64(x["v"][:1, :t]),
                          a=np64(x["a"][:1, :t]), A_log=np64(x["A_log"]), dt_bias=np64(x["dt_bias"]),
                          b=np64(x["b"][:1, :t]), initial_state=np64(before[4:5]),
                          qk_l2norm=True, layout="vk")
        assert rms_rel(np64(inter[5:6, t - 1]), rs) < 1e-5
    assert torch.count_nonzero(o[1]) == 0


@pytest.mark.parametrize("device", DEVICES)
def test_flashinfer_mtp_batch_scoped_buffer_and_commit(device):
    """FlashInfer MTP: batch-scoped buffer [B, T, ...] and, with
    disable_state_update=False, the pool slot holds the last token's state."""
    x = qwen_inputs(2, T=2, H=2, HV=4, device=device, seed=41)
    g = torch.Generator().manual_seed(42)
    pool = torch.randn(3, 4, 128, 128, generator=g).to(device)
    before = pool.clone()
    idx = torch.tensor([2, 0], dtype=torch.int64, device=device)
    inter = torch.empty(2, 2, 4, 128, 128, device=device)
    out, ret = ops.gated_delta_rule_mtp(x["q"], x["k"], x["v"], pool, idx, x["A_log"], x["a"],
                                        x["dt_bias"], x["b"], intermediate_states_buffer=inter,
                                        disable_state_update=False)
    assert ret is pool  # FlashInfer 0.7.2 returns (output, initial_state)
    if device == "cuda":
        torch.cuda.synchronize()
    assert torch.equal(pool[1].view(torch.uint8), before[1].view(torch.uint8))
    for row, slot in ((0, 2), (1, 0)):
        ro, rs = recurrent(np64(x["q"][row:row + 1]), np64(x["k"][row:row + 1]),
                           np64(x["v"][row:row + 1]), a=np64(x["a"][row:row + 1]),
                           A_log=np64(x["A_log"]), dt_bias=np64(x["dt_bias"]),
                           b=np64(x["b"][row:row + 1]), initial_state=np64(before[slot:slot + 1]),
                           qk_l2norm=True, layout="vk")
        assert rms_rel(np64(out[row:row + 1]), ro) < 2e-3
        assert rms_rel(np64(pool[slot:slot + 1]), rs) < 1e-5
        assert rms_rel(np64(inter[row:row + 1, 1]), rs) < 1e-5  # after the last token
