"""CPU tests of the Python package over the C API (numpy only; run in CI)."""
import numpy as np
import pytest

import gdn
from inputs import TINY_RECURRENT
from reference import recurrent, rms_rel, verify_tree


def fill(kernel, rng, dtype=np.float32):
    arrays = []
    for name, nbytes in kernel.arguments:
        dt = np.float32 if name in ("A_log", "dt_bias", "state", "initial_state",
                                    "final_state") else dtype
        a = rng.standard_normal(nbytes // np.dtype(dt).itemsize).astype(dt)
        if name == "A_log":
            a = np.log(rng.uniform(1, 16, a.shape)).astype(dt)
        if name in ("o", "final_state"):
            a[:] = np.nan
        arrays.append(a)
    return arrays


def test_version():
    assert gdn.version() == "0.1.0"


def test_a_cached_kernel_reuses_its_argument_tables():
    """A compile the C API answers from its cache does not read the argument
    tables again (they are the first Kernel's); another target, shape or
    compiler reads its own. The compiler holds no Kernel, so a dropped
    compiler is freed at once, not by the cyclic GC."""
    import gc
    import weakref
    c = gdn.Compiler()
    shape = dict(N=1, T=1, H=1, HV=1, K=32, V=8)
    k = c.compile(**shape)
    assert c.compile(**shape).arguments is k.arguments
    assert c.compile(**shape, target="cuda").arguments is not k.arguments
    assert c.compile(**{**shape, "N": 2}).arguments is not k.arguments
    assert gdn.Compiler().compile(**shape).arguments is not k.arguments
    text = c.compile_text(TINY_RECURRENT)
    assert c.compile_text(TINY_RECURRENT).arguments is text.arguments
    other = gdn.Compiler()
    other.compile(**shape)
    gone = weakref.ref(other)
    gc.disable()
    try:
        del other
        assert gone() is None
    finally:
        gc.enable()


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_fused_gating_in_place_vk_matches_reference(dtype):
    N, T, H, HV, K, V = 2, 3, 2, 4, 64, 16
    c = gdn.Compiler()
    name = "float32" if dtype == np.float32 else "float16"
    kern = c.compile(N=N, T=T, H=H, HV=HV, K=K, V=V, input_dtype=name, gate_dtype=name,
                     decay="fused_gating", beta="logits", qk_l2norm=True, layout="vk",
                     initial_state=True, final_state=True, state_in_place=True)
    assert [n for n, _ in kern.arguments] == ["q", "k", "v", "a", "A_log", "dt_bias", "b",
                                             "state", "o"]
    rng = np.random.default_rng(0)
    q, k, v, a, A_log, dt_bias, b, state, o = fill(kern, rng, dtype)
    shp = lambda x, s: x.reshape(s)
    q4, k4 = shp(q, (N, T, H, K)), shp(k, (N, T, H, K))
    v4, a3, b3 = shp(v, (N, T, HV, V)), shp(a, (N, T, HV)), shp(b, (N, T, HV))
    s0 = shp(state, (N, HV, V, K)).copy()
    ro, rs = recurrent(q4, k4, v4, a=a3, A_log=A_log, dt_bias=dt_bias, b=b3,
                       initial_state=s0, qk_l2norm=True, layout="vk")
    kern.run_host([q, k, v, a, A_log, dt_bias, b, state, o])
    tol_o = 2e-3 if dtype == np.float32 else 3e-3
    assert rms_rel(o.reshape(N, T, HV, V), ro) < tol_o
    assert rms_rel(state.reshape(N, HV, V, K), rs) < 1e-5


def test_log_space_separate_states_kv_matches_reference():
    N, T, H, HV, K, V = 1, 4, 1, 2, 32, 8
    kern = gdn.Compiler().compile(N=N, T=T, H=H, HV=HV, K=K, V=V, input_dtype="float32",
                                  decay="log_space", beta="given", scale=0.3,
                                  initial_state=True, final_state=True)
    rng = np.random.default_rng(1)
    q, k, v, g, beta, h0, ht, o = fill(kern, rng)
    g[:] = np.log(rng.uniform(0.5, 1.0, g.shape))
    beta[:] = rng.uniform(0, 1, beta.shape)
    h0_copy = h0.copy()
    kern.run_host([q, k, v, g, beta, h0, ht, o])
    ro, rs = recurrent(q.reshape(N, T, H, K), k.reshape(N, T, H, K), v.reshape(N, T, HV, V),
                       g=g.reshape(N, T, HV), beta=beta.reshape(N, T, HV),
                       initial_state=h0.reshape(N, HV, K, V), scale=0.3)
    assert np.array_equal(h0, h0_copy), "the initial state must stay untouched"
    assert rms_rel(o.reshape(N, T, HV, V), ro) < 1e-5
    assert rms_rel(ht.reshape(N, HV, K, V), rs) < 1e-5


def test_a_written_buffer_that_shares_memory_is_refused():
    """run_host's arrays go to one run that reads and writes them: an
    output that shares memory with another argument (an initial state a row
    before the final state in one array, o beside v) read its own writes,
    silently. A ValueError naming both now, and nothing runs."""
    N, T, H, HV, K, V = 2, 2, 1, 2, 32, 8
    kern = gdn.Compiler().compile(N=N, T=T, H=H, HV=HV, K=K, V=V, input_dtype="float32",
                                  decay="log_space", beta="given",
                                  initial_state=True, final_state=True)
    q, k, v, g, beta, h0, ht, o = fill(kern, np.random.default_rng(3))
    row = HV * K * V
    both = np.zeros(3 * row, np.float32)
    with pytest.raises(ValueError, match="argument 'final_state', which the kernel writes, "
                                         "shares memory with argument 'initial_state'"):
        kern.run_host([q, k, v, g, beta, both[:2 * row], both[row:], o])
    assert not both.any(), "a refused run wrote its final state"
    beside = np.zeros(v.size + o.size - 1, np.float32)
    with pytest.raises(ValueError, match="argument 'o', which the kernel writes, shares "
                                         "memory with argument 'v'"):
        kern.run_host([q, k, beside[:v.size], g, beta, h0, ht, beside[v.size - 1:]])
    apart = np.zeros(4 * row, np.float32)  # one allocation, the states side by side
    kern.run_host([q, k, v, g, beta, apart[:2 * row], apart[2 * row:], o])
    assert apart[2 * row:].any(), "the final state was written"


def test_compile_text_and_cuda_ptx_without_gpu():
    text = TINY_RECURRENT
    c = gdn.Compiler()
    kern = c.compile_text(text, target="cuda")
    assert ".target sm_90a" in kern.ptx
    assert [n for n, _ in kern.arguments] == ["q", "k", "v", "o"]
    cpu = c.compile_text(text, function="f")
    assert cpu.ptx is None


def test_schedule_options_reach_the_kernel():
    """The C API's schedule reaches the cost model: the device's SM count
    (sm_count) and pinned warps; bad values are errors naming the field or
    the parameter."""
    c = gdn.Compiler()
    desc = dict(N=8, T=1, H=16, HV=32, K=128, V=128, input_dtype="bfloat16", layout="vk",
                initial_state=True, final_state=True, state_in_place=True, target="cuda")
    assert ".maxntid 32, 1, 1" in c.compile(**desc).ptx        # 132 SMs: one-warp CTAs
    assert ".maxntid 128, 1, 1" in c.compile(sm_count=264, **desc).ptx
    assert ".maxntid 64, 1, 1" in c.compile(schedule={"warps": 2}, **desc).ptx
    with pytest.raises(gdn.GDNError, match=r"sm_count must be in \[0, 4096\], got -1"):
        c.compile(sm_count=-1, **desc)
    with pytest.raises(gdn.GDNError, match=r"sm_count must be in \[0, 4096\], got 2147483647"):
        c.compile(sm_count=2**31 - 1, **desc)
    with pytest.raises(gdn.GDNError, match=r"staged_tokens = -2 must be in \[0, 1048576\]"):
        c.compile(schedule={"staged_tokens": -2}, **desc)
    # The attribute's text works as well as the dict, and is the same kernel.
    assert c.compile(schedule="#gdn.schedule<warps = 2>", **desc).ptx == \
        c.compile(schedule={"warps": 2}, **desc).ptx


def test_producer_warp_and_chunked_solve_reach_the_kernel():
    """producer_stages, consumer_registers and solve reach the
    kernel (PTX, no GPU needed): a producer's bulk copies and mbarriers,
    setmaxnreg under a warpgroup producer, the chunked solve's barrier-only
    form and its tensor-core form (mma.sync, chosen for T = 12); where they
    cannot apply, errors that say why."""
    c = gdn.Compiler()
    desc = dict(N=8, T=4, H=16, HV=32, K=128, V=128, input_dtype="bfloat16", layout="vk",
                initial_state=True, final_state=True, state_in_place=True, target="cuda")
    plain = c.compile(**desc).ptx
    assert "cp.async.bulk" not in plain and "mbarrier" not in plain
    ws = c.compile(schedule={"producer_stages": 2}, **desc).ptx
    assert "cp.async.bulk.shared::cluster.global" in ws and "mbarrier.try_wait.parity" in ws
    regs = c.compile(schedule={"producer_stages": 2, "consumer_registers": 128, "warps": 4,
                               "columns_per_lane": 2}, **desc).ptx
    assert "setmaxnreg.inc.sync.aligned.u32 \t128;" in regs and ".minnctapersm 1" in regs
    assert c.compile(schedule={"solve": "cuda_cores"}, **desc).ptx != plain
    assert "mma.sync" not in plain
    tc = c.compile(schedule={"solve": "tensor_cores"}, **desc).ptx
    assert tc.count("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32") > 0
    # chunk_parallel: every chunk's solve in a launch of its own, then the
    # scan; the workspace between them is gdnKernelLaunch's.
    cp = c.compile(schedule={"solve": "chunk_parallel"}, **{**desc, "T": 40})
    assert [name for name, _ in cp.launches] == ["gdn_recurrent_chunk_solves",
                                                "gdn_recurrent_recurrent"]
    # T = 12: the cost model takes the tensor cores itself; token_by_token
    # keeps the loop.
    t12 = {**desc, "T": 12}
    assert "mma.sync" in c.compile(**t12).ptx
    assert "mma.sync" not in c.compile(schedule={"solve": "token_by_token"}, **t12).ptx
    with pytest.raises(gdn.GDNError, match="columns_per_lane must be 2 or 4 and lanes_along_v 8") as e:
        c.compile(schedule={"solve": "tensor_cores", "columns_per_lane": 8}, **desc)
    assert "see current operation" not in str(e.value)  # no generic dump of the op
    with pytest.raises(gdn.GDNError, match="needs staged tokens"):
        c.compile(schedule={"producer_stages": 2, "staged_tokens": 0}, **desc)
    with pytest.raises(gdn.GDNError, match="solve = cuda_cores needs the final state only"):
        c.compile(schedule={"solve": "cuda_cores"}, intermediate_rows=8, intermediate_steps=4,
                  **{**desc, "final_state": False, "state_in_place": False})
    with pytest.raises(gdn.GDNError, match="is not a #gdn.schedule"):
        c.compile(schedule={"solve": "three"}, **desc)


def test_two_tokens_a_step_reach_the_kernel():
    """reductions = token_pairs reaches the kernel (PTX, no GPU needed): two
    staged tokens a step hold more registers' worth of sums, so the PTX
    differs from the one-token loop; chosen by itself on a tiny grid (MTP
    N = 1) but not with intermediate states (verify N = 1); an unknown case
    is refused."""
    c = gdn.Compiler()
    mtp = dict(N=1, T=4, H=16, HV=32, K=128, V=128, input_dtype="bfloat16", layout="vk",
               initial_state=True, final_state=True, state_in_place=True, target="cuda")
    one = c.compile(schedule={"reductions": "side_by_side"}, **mtp).ptx
    two = c.compile(schedule={"reductions": "token_pairs"}, **mtp).ptx
    assert one != two
    assert c.compile(**mtp).ptx == two  # the cost model's choice at N = 1
    verify = {**mtp, "final_state": False, "state_in_place": False,
              "intermediate_rows": 1, "intermediate_steps": 4}
    assert c.compile(**verify).ptx == c.compile(schedule={"reductions": "side_by_side"},
                                                 **verify).ptx
    with pytest.raises(gdn.GDNError, match="is not a #gdn.schedule"):
        c.compile(schedule={"reductions": "three_at_once"}, **mtp)


def test_l2_prefetch_reaches_the_kernel():
    """state_prefetch_distance reaches the kernel (PTX, no GPU needed): chosen
    for the bandwidth-bound bf16 decode (N = 64), not at N = 1, off with 0,
    pinned on an f32 decode; refused with staged tokens and below 0."""
    c = gdn.Compiler()
    desc = dict(N=64, T=1, H=16, HV=32, K=128, V=128, input_dtype="bfloat16", layout="vk",
                state_dtype="bfloat16", initial_state=True, final_state=True,
                state_in_place=True, target="cuda")
    prefetch = "cp.async.bulk.prefetch.L2.global"
    assert prefetch in c.compile(**desc).ptx
    assert prefetch not in c.compile(schedule={"state_prefetch_distance": 0}, **desc).ptx
    assert prefetch not in c.compile(**{**desc, "N": 1}).ptx
    f32 = {**desc, "state_dtype": "float32"}
    assert prefetch not in c.compile(**f32).ptx
    assert prefetch in c.compile(schedule={"state_prefetch_distance": 512}, **f32).ptx
    with pytest.raises(gdn.GDNError, match="state_prefetch_distance = 512 needs a kernel "
                                           "without staged tokens"):
        c.compile(schedule={"state_prefetch_distance": 512}, **{**desc, "T": 4})
    with pytest.raises(gdn.GDNError, match=r"state_prefetch_distance = -2 must be in \[0,"):
        c.compile(schedule={"state_prefetch_distance": -2}, **desc)


def test_l2_prefetch_of_staged_inputs_on_tensor_cores():
    """On the tensor-core solve of one chunk (FLA-style T = 12)
    input_prefetch_distance prefetches a later CTA's q, k, v rows and gates
    (prefetch.global.L2, 8 lines a token): chosen at N = 64 (2048 CTAs), not
    at N = 8 (256, all resident), off with 0, pinned at N = 8; refused with cu_seqlens and,
    where LLVM cannot select it (it aborted the process), below sm_90."""
    c = gdn.Compiler()
    desc = dict(N=64, T=12, H=16, HV=32, K=128, V=128, input_dtype="bfloat16",
                beta_dtype="bfloat16", decay="log_space", beta="given", qk_l2norm=True,
                initial_state=True, final_state=True, target="cuda")
    prefetch = "prefetch.global.L2"
    ptx = c.compile(**desc).ptx
    assert "mma.sync" in ptx and ptx.count(prefetch) == 8
    assert prefetch not in c.compile(schedule={"input_prefetch_distance": 0}, **desc).ptx
    assert prefetch not in c.compile(**{**desc, "N": 8}).ptx
    assert c.compile(schedule={"input_prefetch_distance": 7},
                     **{**desc, "N": 8}).ptx.count(prefetch) == 8
    sm80 = c.compile(chip="sm_80", **desc).ptx
    assert "mma.sync" in sm80 and prefetch not in sm80
    with pytest.raises(gdn.GDNError, match=r"needs prefetch.global.L2 \(sm_90 on\)"):
        c.compile(chip="sm_86", schedule={"input_prefetch_distance": 7}, **desc)
    with pytest.raises(gdn.GDNError, match="needs the tensor-core solve of a single chunk"):
        c.compile(schedule={"input_prefetch_distance": 7, "solve": "tensor_cores"},
                  cu_seqlens_dtype="int32",
                  **{**desc, "N": 2, "T": 24})


def test_programmatic_launch_reaches_the_kernel():
    """launch = programmatic* reaches the kernel (PTX, no GPU needed): it lets
    the next kernel launch and waits for the previous one; programmatic lets
    it launch after the recurrence with a producer warp (T = 12, N = 1), like
    programmatic_after_recurrence, and at the start without one, like
    programmatic_at_start; never by default; refused on sm_80 (no
    griddepcontrol) and for an unknown mode."""
    launch = lambda mode: {"launch": mode}
    c = gdn.Compiler()
    desc = dict(N=1, T=12, H=16, HV=32, K=128, V=128, input_dtype="bfloat16",
                decay="log_space", beta="given", qk_l2norm=True, initial_state=True,
                final_state=True, target="cuda")
    ptx = c.compile(schedule=launch("programmatic"), **desc).ptx
    assert ptx.count("griddepcontrol.wait;") == 2  # the consumers and the producer
    late = c.compile(schedule=launch("programmatic_after_recurrence"), **desc).ptx  # after the recurrence
    assert late == ptx
    assert late.index("griddepcontrol.wait;") < late.index("griddepcontrol.launch_dependents;")
    early = c.compile(schedule=launch("programmatic_at_start"), **desc).ptx  # at the start
    assert early.index("griddepcontrol.launch_dependents;") < early.index("griddepcontrol.wait;")
    decode = {**desc, "T": 1}
    assert c.compile(schedule=launch("programmatic"), **decode).ptx == c.compile(
        schedule=launch("programmatic_at_start"), **decode).ptx
    assert "griddepcontrol" not in c.compile(**desc).ptx
    assert "griddepcontrol" not in c.compile(schedule=launch("ordinary"), **desc).ptx
    with pytest.raises(gdn.GDNError, match="needs griddepcontrol"):
        c.compile(schedule=launch("programmatic"), chip="sm_80", **desc)
    with pytest.raises(gdn.GDNError, match="is not a #gdn.schedule"):
        c.compile(schedule=launch("programmatic_twice"), **desc)


def test_integers_that_do_not_fit_the_c_fields_are_errors():
    """Every integer keyword goes through a C int or int64 field: a value
    that does not fit is a ValueError naming it (ctypes alone would keep the
    low bits: 2**32 + 1 became a prefetch distance of 1), a non-integer a
    TypeError; a schedule parameter too large for the attribute is
    gdn.GDNError."""
    c = gdn.Compiler()
    desc = dict(N=1, T=1, H=1, HV=1, K=32, V=8)
    with pytest.raises(ValueError, match=r"sm_count = 4294967297 does not fit "
                                         r"the C API's 32-bit field"):
        c.compile(sm_count=2**32 + 1, **desc)
    with pytest.raises(gdn.GDNError, match=r"state_prefetch_distance = 4294967297 must be in"):
        c.compile(schedule={"state_prefetch_distance": 2**32 + 1}, **desc)
    with pytest.raises(gdn.GDNError, match="is not a #gdn.schedule"):
        c.compile(schedule={"columns_per_lane": 2**64}, **desc)
    with pytest.raises(TypeError, match="schedule parameter warps must be an int"):
        c.compile(schedule={"warps": 2.5}, **desc)
    with pytest.raises(ValueError, match="N = 18446744073709551616 does not fit the C API's "
                                         "64-bit field"):
        c.compile(**{**desc, "N": 2**64})
    with pytest.raises(TypeError, match="K must be an integer, got 32.5"):
        c.compile(**{**desc, "K": 32.5})
    # numpy integers are integers: N = 2 doubles the q argument's bytes.
    one, two = c.compile(**desc), c.compile(**{**desc, "N": np.int64(2)})
    assert dict(two.arguments)["q"] == 2 * dict(one.arguments)["q"]


def test_errors_are_python_exceptions_naming_the_argument():
    c = gdn.Compiler()
    kern = c.compile(N=1, T=1, H=1, HV=1, K=32, V=8, input_dtype="float32")
    arrays = fill(kern, np.random.default_rng(2))
    with pytest.raises(ValueError, match="expected 4 arguments"):
        kern.run_host(arrays[:3])
    with pytest.raises(ValueError, match="argument 'v' has 16 bytes, expected 32"):
        kern.run_host([arrays[0], arrays[1], arrays[2][:4], arrays[3]])
    with pytest.raises(ValueError, match="argument 'q' must be C-contiguous"):
        kern.run_host([np.zeros(64, np.float32)[::2], *arrays[1:]])
    with pytest.raises(TypeError, match="argument 'q' must be a numpy array"):
        kern.run_host([[0.0] * 32, *arrays[1:]])
    with pytest.raises(ValueError, match="input_dtype must be one of"):
        c.compile(N=1, T=1, H=1, HV=1, K=32, V=8, input_dtype="int8")
    with pytest.raises(gdn.GDNError, match="HV = 3 must be a multiple of"):
        c.compile(N=1, T=1, H=2, HV=3, K=32, V=8)
    with pytest.raises(gdn.GDNError, match="did not parse or verify"):
        c.compile_text("not mlir")
    with pytest.raises(gdn.GDNError, match="compiled for the CPU"):
        kern.launch([16] * 4)


def test_launch_without_gpu_is_a_clear_error():
    import ctypes
    try:
        ctypes.CDLL("libcuda.so.1")
        pytest.skip("a CUDA driver is present (GPU tests cover launches)")
    except OSError:
        pass
    kern = gdn.Compiler().compile(N=1, T=1, H=1, HV=1, K=32, V=8, input_dtype="float32",
                                  target="cuda")
    with pytest.raises(gdn.GDNError, match="CUDA") as e:
        kern.launch([16] * 4)  # never dereferenced: there is no driver
    assert e.value.status == 4


def test_gate_and_beta_dtypes_are_independent():
    # g in fp32 with beta in fp16 (FLA's usual mix): each buffer is read in its own dtype.
    N, T, H, HV, K, V = 1, 2, 1, 2, 32, 8
    kern = gdn.Compiler().compile(N=N, T=T, H=H, HV=HV, K=K, V=V, input_dtype="float32",
                                  decay="log_space", gate_dtype="float32",
                                  beta="given", beta_dtype="float16", final_state=True)
    sizes = dict(kern.arguments)
    assert sizes["g"] == N * T * HV * 4 and sizes["beta"] == N * T * HV * 2
    rng = np.random.default_rng(5)
    q, k, v = (rng.standard_normal(sizes[n] // 4).astype(np.float32) for n in "qkv")
    g = np.log(rng.uniform(0.5, 1, N * T * HV)).astype(np.float32)
    beta = rng.uniform(0, 1, N * T * HV).astype(np.float16)
    ht = np.full(sizes["final_state"] // 4, np.nan, np.float32)
    o = np.full(sizes["o"] // 4, np.nan, np.float32)
    kern.run_host([q, k, v, g, beta, ht, o])
    ro, rs = recurrent(q.reshape(N, T, H, K), k.reshape(N, T, H, K), v.reshape(N, T, HV, V),
                       g=g.reshape(N, T, HV), beta=beta.astype(np.float64).reshape(N, T, HV))
    assert rms_rel(o.reshape(N, T, HV, V), ro) < 1e-5


def test_pool_through_the_c_api():
    # 5 slots, indices [-1, 3] (issue 5): slot 4, the last, and the others
    # stay bit-identical; the padding row outputs zeros.
    N, T, H, HV, K, V = 2, 1, 1, 2, 32, 8
    kern = gdn.Compiler().compile(N=N, T=T, H=H, HV=HV, K=K, V=V, input_dtype="float32",
                                  decay="log_space", beta="given", initial_state=True,
                                  final_state=True, state_in_place=True, num_slots=5,
                                  state_index_dtype="int64")
    assert [n for n, _ in kern.arguments] == ["q", "k", "v", "g", "beta", "state_indices",
                                             "state", "o"]
    rng = np.random.default_rng(3)
    q, k = rng.standard_normal((2, N * T * H * K)).astype(np.float32)
    v = rng.standard_normal(N * T * HV * V).astype(np.float32)
    g = np.log(rng.uniform(0.5, 1, N * T * HV)).astype(np.float32)
    beta = rng.uniform(0, 1, N * T * HV).astype(np.float32)
    idx = np.array([-1, 3], np.int64)
    pool = rng.standard_normal(5 * HV * K * V).astype(np.float32)
    before = pool.copy()
    o = np.full(N * T * HV * V, np.nan, np.float32)
    kern.run_host([q, k, v, g, beta, idx, pool, o])
    slot = HV * K * V
    for s in (0, 1, 2, 4):
        assert np.array_equal(pool[s * slot:(s + 1) * slot].view(np.int32),
                              before[s * slot:(s + 1) * slot].view(np.int32))
    assert not np.any(o[:T * HV * V])
    ro, rs = recurrent(q.reshape(N, T, H, K)[1:], k.reshape(N, T, H, K)[1:],
                       v.reshape(N, T, HV, V)[1:], g=g.reshape(N, T, HV)[1:],
                       beta=beta.reshape(N, T, HV)[1:],
                       initial_state=before[3 * slot:4 * slot].reshape(1, HV, K, V))
    assert rms_rel(o.reshape(N, T, HV, V)[1:], ro) < 1e-5
    assert rms_rel(pool[3 * slot:4 * slot].reshape(1, HV, K, V), rs) < 1e-5


def test_f16_state_rounds_once_on_store():
    N, T, H, HV, K, V = 1, 3, 1, 1, 32, 8
    kern = gdn.Compiler().compile(N=N, T=T, H=H, HV=HV, K=K, V=V, input_dtype="float32",
                                  decay="log_space", beta="given", initial_state=True,
                                  final_state=True, state_in_place=True, state_dtype="float16")
    sizes = dict(kern.arguments)
    assert sizes["state"] == HV * K * V * 2
    rng = np.random.default_rng(9)
    q, k = rng.standard_normal((2, N * T * H * K)).astype(np.float32)
    v = rng.standard_normal(N * T * HV * V).astype(np.float32)
    g = np.log(rng.uniform(0.5, 1, N * T * HV)).astype(np.float32)
    beta = rng.uniform(0, 1, N * T * HV).astype(np.float32)
    state = rng.standard_normal(HV * K * V).astype(np.float16)
    s0 = state.astype(np.float64)
    o = np.full(N * T * HV * V, np.nan, np.float32)
    kern.run_host([q, k, v, g, beta, state, o])
    ro, rs = recurrent(q.reshape(N, T, H, K), k.reshape(N, T, H, K), v.reshape(N, T, HV, V),
                       g=g.reshape(N, T, HV), beta=beta.reshape(N, T, HV),
                       initial_state=s0.reshape(N, HV, K, V))
    assert rms_rel(o.reshape(N, T, HV, V), ro) < 1e-5  # o from the fp32 state
    err = rms_rel(state.astype(np.float64).reshape(N, HV, K, V), rs)
    assert 1e-5 < err < 1e-3, err  # stored in fp16: rounded, within fp16 precision


def test_varlen_through_the_c_api():
    # 3 sequences of 1, 0 and 2 tokens packed into 4 tokens (the last unused).
    H, HV, K, V, T = 1, 1, 32, 8, 4
    kern = gdn.Compiler().compile(N=3, T=T, H=H, HV=HV, K=K, V=V, input_dtype="float32",
                                  decay="log_space", beta="given", initial_state=True,
                                  final_state=True, cu_seqlens_dtype="int64")
    sizes = dict(kern.arguments)
    assert [n for n, _ in kern.arguments] == ["q", "k", "v", "g", "beta", "cu_seqlens",
                                             "initial_state", "final_state", "o"]
    assert sizes["q"] == T * K * 4 and sizes["cu_seqlens"] == 4 * 8
    rng = np.random.default_rng(4)
    q, k = rng.standard_normal((2, T * K)).astype(np.float32)
    v = rng.standard_normal(T * V).astype(np.float32)
    g = np.log(rng.uniform(0.5, 1, T)).astype(np.float32)
    beta = rng.uniform(0, 1, T).astype(np.float32)
    cu = np.array([0, 1, 1, 3], np.int64)
    h0 = rng.standard_normal(3 * K * V).astype(np.float32)
    ht = np.full(3 * K * V, np.nan, np.float32)
    o = np.full(T * V, np.nan, np.float32)
    kern.run_host([q, k, v, g, beta, cu, h0, ht, o])
    assert np.isnan(o[3 * V:]).all(), "the token past cu_seqlens[N] stays untouched"
    assert np.array_equal(ht[K * V:2 * K * V], h0[K * V:2 * K * V])  # empty sequence
    for n, (lo, hi) in enumerate(((0, 1), (1, 3))):
        sn = (0, 2)[n]
        ro, rs = recurrent(q.reshape(1, T, H, K)[:, lo:hi], k.reshape(1, T, H, K)[:, lo:hi],
                           v.reshape(1, T, HV, V)[:, lo:hi], g=g.reshape(1, T, HV)[:, lo:hi],
                           beta=beta.reshape(1, T, HV)[:, lo:hi],
                           initial_state=h0.reshape(3, HV, K, V)[sn:sn + 1])
        assert rms_rel(o.reshape(1, T, HV, V)[:, lo:hi], ro) < 1e-5
        assert rms_rel(ht.reshape(3, HV, K, V)[sn:sn + 1], rs) < 1e-5


def test_verify_intermediate_states_through_the_c_api():
    # SGLang-style verify: pool read at state_indices, not written (no final
    # state); per-token states into a pool-scoped buffer at its own indices.
    N, T, H, HV, K, V, S = 2, 3, 1, 1, 32, 8, 4
    kern = gdn.Compiler().compile(N=N, T=T, H=H, HV=HV, K=K, V=V, input_dtype="float32",
                                  decay="log_space", beta="given", initial_state=True,
                                  num_slots=S, state_index_dtype="int32", intermediate_rows=S,
                                  intermediate_steps=T, intermediate_index_dtype="int32")
    assert [n for n, _ in kern.arguments] == [
        "q", "k", "v", "g", "beta", "state_indices", "intermediate_state_indices",
        "initial_state", "intermediate_states", "o"]
    rng = np.random.default_rng(8)
    q, k = rng.standard_normal((2, N * T * H * K)).astype(np.float32)
    v = rng.standard_normal(N * T * HV * V).astype(np.float32)
    g = np.log(rng.uniform(0.5, 1, N * T * HV)).astype(np.float32)
    beta = rng.uniform(0, 1, N * T * HV).astype(np.float32)
    idx = np.array([2, 0], np.int32)
    iidx = np.array([3, -1], np.int32)
    pool = rng.standard_normal(S * HV * K * V).astype(np.float32)
    pool_before = pool.copy()
    inter = np.full(S * T * HV * K * V, np.nan, np.float32)
    o = np.full(N * T * HV * V, np.nan, np.float32)
    kern.run_host([q, k, v, g, beta, idx, iidx, pool, inter, o])
    assert np.array_equal(pool.view(np.int32), pool_before.view(np.int32)), "no commit"
    blk = T * HV * K * V
    for r in (0, 1, 2):  # rows no sequence writes stay untouched (NaN)
        assert np.isnan(inter[r * blk:(r + 1) * blk]).all()
    # Row 3 holds sequence 0's states after tokens 1, 2, 3 (from slot 2).
    for t in range(1, T + 1):
        _, rs = recurrent(q.reshape(N, T, H, K)[:1, :t], k.reshape(N, T, H, K)[:1, :t],
                          v.reshape(N, T, HV, V)[:1, :t], g=g.reshape(N, T, HV)[:1, :t],
                          beta=beta.reshape(N, T, HV)[:1, :t],
                          initial_state=pool_before.reshape(S, HV, K, V)[2:3])
        got = inter.reshape(S, T, HV, K, V)[3, t - 1]
        assert rms_rel(got[None], rs) < 1e-5


def test_eagle_tree_through_the_c_api():
    # EAGLE tree verify: parent_index_dtype adds retrieve_parent_token [N, steps]
    # after intermediate_state_indices. Batch-scoped f32 buffer, kv layout,
    # committed final state; row 0 a branching tree, row 1 a second root and a
    # parent past its step (a root as well).
    N, T, H, HV, K, V = 2, 4, 1, 2, 32, 8
    kern = gdn.Compiler().compile(N=N, T=T, H=H, HV=HV, K=K, V=V, input_dtype="float32",
                                  decay="log_space", beta="given", initial_state=True,
                                  final_state=True, intermediate_rows=N, intermediate_steps=T,
                                  parent_index_dtype="int64")
    assert [n for n, _ in kern.arguments] == [
        "q", "k", "v", "g", "beta", "retrieve_parent_token", "initial_state",
        "intermediate_states", "final_state", "o"]
    assert dict(kern.arguments)["retrieve_parent_token"] == N * T * 8
    rng = np.random.default_rng(9)
    q, k = rng.standard_normal((2, N, T, H, K)).astype(np.float32)
    v = rng.standard_normal((N, T, HV, V)).astype(np.float32)
    g = np.log(rng.uniform(0.5, 1, (N, T, HV))).astype(np.float32)
    beta = rng.uniform(0, 1, (N, T, HV)).astype(np.float32)
    parents = np.array([[-1, 0, 0, 1], [-1, 0, -1, 7]], np.int64)
    h0 = rng.standard_normal((N, HV, K, V)).astype(np.float32)
    inter = np.full((N, T, HV, K, V), np.nan, np.float32)
    ht = np.full((N, HV, K, V), np.nan, np.float32)
    o = np.full((N, T, HV, V), np.nan, np.float32)
    kern.run_host([q, k, v, g, beta, parents, h0, inter, ht, o])
    ro, rstates, rfinal = verify_tree(q, k, v, parents, g=g, beta=beta, initial_state=h0)
    assert rms_rel(o, ro) < 1e-5
    assert rms_rel(inter, rstates) < 1e-5
    assert rms_rel(ht, rfinal) < 1e-5
    # The tree matters: the plain chain differs by far more than the tolerance.
    chain, _ = recurrent(q, k, v, g=g, beta=beta, initial_state=h0)
    assert rms_rel(o, chain) > 1e-2
    with pytest.raises(ValueError, match="parent_index_dtype = 'int32' needs intermediate_rows"):
        gdn.Compiler().compile(N=N, T=T, H=H, HV=HV, K=K, V=V, input_dtype="float32",
                               parent_index_dtype="int32")


def test_chip_for_device_reads_the_target_table():
    """gdnChipForDevice maps a compute capability to the chip gdn builds for
    (the arch-specific variant where the table has one) and None where it has
    no row; the torch ops pick their chip through it."""
    from gdn._capi import lib
    assert lib.gdnChipForDevice(9, 0) == b"sm_90a"
    assert lib.gdnChipForDevice(8, 0) == b"sm_80"
    assert lib.gdnChipForDevice(10, 0) == b"sm_100a"
    assert lib.gdnChipForDevice(7, 5) is None
    assert lib.gdnChipForDevice(-1, 99) is None


def test_cuda_kernel_lists_its_launches():
    # Compiling for CUDA needs no GPU; launch_raw issues these in order.
    k = gdn.Compiler().compile(N=1, T=1, H=1, HV=1, K=32, V=8, target="cuda")
    assert len(k.launches) == 1
    name, ptx = k.launches[0]
    assert f".entry {name}(" in ptx
    assert ptx == k.ptx
    cpu = gdn.Compiler().compile(N=1, T=1, H=1, HV=1, K=32, V=8, target="cpu")
    assert cpu.launches is None
