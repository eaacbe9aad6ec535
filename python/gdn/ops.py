"""PyTorch entry points with the signatures of the kernels gdn replaces.

- `fused_recurrent_gated_delta_rule`        FLA (fla.ops.gated_delta_rule)
- `gated_delta_rule_decode_pretranspose`     FlashInfer (flashinfer.gdn_decode)
- `gated_delta_rule_mtp`                     FlashInfer (verify, T > 1)
- `fused_sigmoid_gating_delta_rule_update`   SGLang (decode and verify)
- `commit_accepted`                          after verify: each row's accepted
                                             prefix into the pool (gdn.commit)

`set_schedule` overrides the GPU schedule of the kernels compiled afterwards
(used by the benchmarks' sweeps).

Each validates its arguments (TypeError / ValueError naming the argument,
raised before any launch), then calls the custom op `gdn::recurrent`
(`commit_accepted`: `gdn::commit`), registered with torch.library (fake
implementation included, so torch.compile can trace it). The op launches on
torch.cuda.current_stream() and allocates nothing when the caller passes the
outputs, so it can be captured in a CUDA graph. CPU tensors run the CPU
lowering. Arguments the kernels do not support yet raise NotImplementedError
naming the argument: never a silent fallback.

Math (the gdn.recurrent op's description in GDNOps.td; the team's
REFERENCE.md §1, kept outside this repository): per token, S <- exp(g) S;
u = beta (v - S^T k); S <- S + k u^T; o = S^T q, with q scaled by `scale`
(default K^-0.5) after the optional L2 norm (eps 1e-6 inside the sqrt); fused
gating g = -exp(A_log) softplus(a + dt_bias), beta = sigmoid(b). KDA: the
decay per key channel, S[k, :] <- exp(g[k]) S[k, :] (g or a [B, T, HV, K],
dt_bias [HV * K]); beta may be per value channel (beta or b [B, T, HV, V]).
"""
import ctypes
from typing import Optional

import torch

from . import _check_scale, default_compiler

__all__ = [
    "fused_recurrent_gated_delta_rule",
    "gated_delta_rule_decode_pretranspose",
    "gated_delta_rule_mtp",
    "fused_sigmoid_gating_delta_rule_update",
    "commit_accepted",
]

_DTYPES = {torch.float32: "float32", torch.bfloat16: "bfloat16", torch.float16: "float16"}
_kernels = {}
_schedule = {}


def set_schedule(rows_per_warp=0, warps_per_block=0, v_lanes=0, stage_tokens=0,
                 unroll_tokens=0, overlap_reductions=0, chunked_solve=0,
                 pipeline_stages=0, consumer_registers=0, l2_prefetch_distance=0,
                 programmatic_launch=0):
    """Overrides the GPU schedule of the kernels compiled from now on (0:
    automatic; -1: stage_tokens: no shared-memory staging, unroll_tokens: no
    unrolling). overlap_reductions: a token's K-reductions side by side (1,
    a shorter dependent chain; 2: also two staged tokens a step) or in turn
    (-1, fewer registers); 0: the cost model's choice (side by side unless
    the grid is bandwidth-bound, two a step on tiny grids without
    intermediate states; KDA is always side by side). chunked_solve, pipeline_stages, consumer_registers,
    l2_prefetch_distance, programmatic_launch:
    see gdn.Compiler.compile. Used by the benchmarks to sweep schedules."""
    _schedule.clear()
    given = dict(rows_per_warp=rows_per_warp, warps_per_block=warps_per_block,
                 v_lanes=v_lanes, stage_tokens=stage_tokens, unroll_tokens=unroll_tokens,
                 overlap_reductions=overlap_reductions, chunked_solve=chunked_solve,
                 pipeline_stages=pipeline_stages, consumer_registers=consumer_registers,
                 l2_prefetch_distance=l2_prefetch_distance,
                 programmatic_launch=programmatic_launch)
    if any(given.values()):
        _schedule.update(given)


def _chip(device):
    major, minor = torch.cuda.get_device_capability(device)
    return f"sm_{major}{minor}a" if (major, minor) == (9, 0) else f"sm_{major}{minor}"


def _kernel(device, fresh_early_inputs=False, **desc):
    desc.update(_schedule)
    if fresh_early_inputs:  # written by the kernel just before: no early read
        desc.pop("programmatic_launch", None)
    key = (device.type, device.index) + tuple(sorted(desc.items()))
    k = _kernels.get(key)
    if k is None:
        target = "cuda" if device.type == "cuda" else "cpu"
        chip = _chip(device) if target == "cuda" else None
        if target == "cuda":  # the cost model scales with the device's SMs
            desc.setdefault("sm_count",
                            torch.cuda.get_device_properties(device).multi_processor_count)
        k = default_compiler().compile(target=target, chip=chip, **desc)
        _kernels[key] = k
    return k


@torch.library.custom_op("gdn::recurrent",
                         mutates_args=("state", "intermediate_states", "final_state", "o"))
def recurrent(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
              g: Optional[torch.Tensor], a: Optional[torch.Tensor],
              A_log: Optional[torch.Tensor], dt_bias: Optional[torch.Tensor],
              beta: Optional[torch.Tensor], b: Optional[torch.Tensor],
              state_indices: Optional[torch.Tensor], cu_seqlens: Optional[torch.Tensor],
              intermediate_state_indices: Optional[torch.Tensor],
              initial_state: Optional[torch.Tensor], state: Optional[torch.Tensor],
              intermediate_states: Optional[torch.Tensor],
              final_state: Optional[torch.Tensor], o: torch.Tensor,
              scale: Optional[float], qk_l2norm: bool, state_layout: str,
              allow_neg_eigval: bool = False,
              retrieve_parent_token: Optional[torch.Tensor] = None,
              fresh_early_inputs: bool = False) -> None:
    """The gdn.recurrent op on validated, contiguous tensors. `state` is an
    initial state updated in place; `initial_state` (read) and `final_state`
    (written) are separate buffers. With `state_indices` [N] (int32/int64)
    the states are pools [slots, HV, ...] and row n uses slot
    state_indices[n]; an index < 0 is a padding row (no slot touched, o rows
    zero). o [N, T, HV, V] is written. `retrieve_parent_token` [N, steps]
    (int32/int64, with intermediate_states): EAGLE tree verify, each step
    starts from its parent step's stored state (see the op's description).
    fresh_early_inputs: the caller has just written the initial state or an
    index table with a kernel of its own (a dtype conversion, an arange), so
    this call is never a programmatic launch (set_schedule), whose kernel
    reads those before waiting for the previous kernel."""
    N, T, H, K = q.shape
    HV, V = v.shape[2], v.shape[3]
    if cu_seqlens is not None:  # varlen: N sequences packed into [1, T, ...]
        N = cu_seqlens.shape[0] - 1
    gate = g if g is not None else a
    bt = beta if beta is not None else b
    # KDA: gates per key channel [.., HV, K]; beta per value channel [.., HV, V].
    per_key_decay = gate is not None and gate.dim() == 4
    per_channel_beta = bt is not None and bt.dim() == 4
    pool = state if state is not None else initial_state if initial_state is not None else final_state
    index_dtype = lambda t: "int64" if t.dtype == torch.int64 else "int32"
    # Only the fields that matter (Compiler.compile refuses one set without
    # the field it depends on).
    desc = dict(N=N, T=T, H=H, HV=HV, K=K, V=V, input_dtype=_DTYPES[q.dtype],
                qk_l2norm=qk_l2norm, scale=scale, layout=state_layout)
    if gate is not None:
        desc.update(decay="log_space" if g is not None else "fused_gating",
                    gate_dtype=_DTYPES[gate.dtype], per_key_decay=per_key_decay)
    if bt is not None:
        desc.update(beta="given" if beta is not None else "logits",
                    beta_dtype=_DTYPES[bt.dtype], per_channel_beta=per_channel_beta)
    if allow_neg_eigval:
        desc["allow_neg_eigval"] = True
    if pool is not None:
        desc.update(initial_state=initial_state is not None or state is not None,
                    final_state=final_state is not None or state is not None,
                    state_in_place=state is not None, state_dtype=_DTYPES[pool.dtype])
    if state_indices is not None:
        desc.update(num_slots=pool.shape[0], state_index_dtype=index_dtype(state_indices))
    if cu_seqlens is not None:
        desc["cu_seqlens_dtype"] = index_dtype(cu_seqlens)
    if intermediate_states is not None:
        desc.update(intermediate_rows=intermediate_states.shape[0],
                    intermediate_steps=intermediate_states.shape[1],
                    intermediate_dtype=_DTYPES[intermediate_states.dtype])
        if intermediate_state_indices is not None:
            desc["intermediate_index_dtype"] = index_dtype(intermediate_state_indices)
        if retrieve_parent_token is not None:
            desc["parent_index_dtype"] = index_dtype(retrieve_parent_token)
    kern = _kernel(q.device, fresh_early_inputs, **desc)
    names = ("q", "k", "v", "g", "a", "A_log", "dt_bias", "beta", "b", "state_indices",
             "cu_seqlens", "intermediate_state_indices", "retrieve_parent_token",
             "initial_state", "state", "intermediate_states", "final_state", "o")
    tensors = []
    for name, t in zip(names, (q, k, v, g, a, A_log, dt_bias, beta, b, state_indices,
                               cu_seqlens, intermediate_state_indices, retrieve_parent_token,
                               initial_state, state, intermediate_states, final_state, o)):
        if t is None:
            continue
        if t.is_cuda and t.data_ptr() % 16 != 0:  # 16-byte vector loads and stores
            raise ValueError(f"{name} must be 16-byte aligned (data_ptr % 16 == 0)")
        tensors.append(t)
    ptrs = (ctypes.c_void_p * len(tensors))(*[t.data_ptr() for t in tensors])
    if q.is_cuda:
        kern.launch_raw(ptrs, ctypes.c_void_p(torch.cuda.current_stream(q.device).cuda_stream))
    else:
        from ._capi import check, lib
        check(lib.gdnKernelRunHost(kern._h, ptrs, len(tensors)))


@recurrent.register_fake
def _(q, k, v, g, a, A_log, dt_bias, beta, b, state_indices, cu_seqlens,
      intermediate_state_indices, initial_state, state, intermediate_states, final_state, o,
      scale, qk_l2norm, state_layout, allow_neg_eigval=False, retrieve_parent_token=None,
      fresh_early_inputs=False):
    return None


def _check(name, t, device, shape=None, dtypes=None):
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if t.device != device:
        raise ValueError(f"{name} is on {t.device}, expected {device} (the device of q)")
    if dtypes is not None and t.dtype not in dtypes:
        raise TypeError(f"{name} must have dtype in {[str(d) for d in dtypes]}, got {t.dtype}")
    if shape is not None and tuple(t.shape) != tuple(shape):
        raise ValueError(f"{name} must have shape {list(shape)}, got {list(t.shape)}")
    if not t.is_contiguous():
        raise ValueError(f"{name} must be contiguous")
    return t


_INPUT = (torch.float32, torch.bfloat16, torch.float16)


def _check_qkv(q, k, v):
    if not isinstance(q, torch.Tensor):
        raise TypeError(f"q must be a torch.Tensor, got {type(q).__name__}")
    if q.dim() != 4:
        raise ValueError(f"q must be [B, T, H, K], got shape {list(q.shape)}")
    dev = q.device
    _check("q", q, dev, None, _INPUT)
    _check("k", k, dev, q.shape, (q.dtype,))
    if not isinstance(v, torch.Tensor) or v.dim() != 4:
        raise ValueError("v must be a 4-D tensor [B, T, HV, V]")
    B, T, H, K = q.shape
    if H == 0 or K == 0:
        raise ValueError(f"q must have at least one head and one key channel [B, T, H >= 1, "
                         f"K >= 1], got shape {list(q.shape)}")
    _check("v", v, dev, (B, T, v.shape[2], v.shape[3]), (q.dtype,))
    HV = v.shape[2]
    if HV == 0 or v.shape[3] == 0:
        raise ValueError(f"v must have at least one head and one value channel [B, T, HV >= 1, "
                         f"V >= 1], got shape {list(v.shape)}")
    if HV % H != 0:
        raise ValueError(f"v has HV = {HV} heads, not a multiple of H = {H} (q/k heads)")
    return dev, B, T, H, K, HV, v.shape[3]


def _scale(scale):
    """The scale applied to q: None means K^-0.5; any other real number is
    used as given (FLA's scale=0 gives o = 0). NaN, inf and values past
    float32's range are a ValueError naming scale."""
    if scale is None:
        return None
    if isinstance(scale, torch.Tensor) and scale.numel() == 1:
        scale = scale.item()
    return _check_scale(scale)


def _unsupported(**kwargs):
    for name, value in kwargs.items():
        if value is not None and value is not False:
            raise NotImplementedError(f"gdn: argument '{name}' is not supported yet")


def _no_other_keywords(kwargs):
    """Keywords an entry point does not take: NotImplementedError naming
    them (never a TypeError, never silently ignored)."""
    if kwargs:
        raise NotImplementedError(
            f"gdn: argument {', '.join(repr(k_) for k_ in kwargs)} is not supported yet")


def fused_recurrent_gated_delta_rule(
        q, k, v, g=None, gk=None, gv=None, beta=None, scale=None, initial_state=None,
        output_final_state=False, use_qk_l2norm_in_kernel=False, use_gate_in_kernel=False,
        A_log=None, dt_bias=None, use_beta_sigmoid_in_kernel=False, allow_neg_eigval=False,
        state_v_first=False, cu_seqlens=None, **kwargs):
    """FLA's `fused_recurrent_gated_delta_rule`: q, k [B, T, H, K], v [B, T, HV, V],
    g [B, T, HV] (log-space decay, or the raw gate with use_gate_in_kernel and
    A_log, dt_bias [HV] fp32), or instead gk [B, T, HV, K] (log-space decay
    per key channel, KDA), beta [B, T, HV] or per value channel [B, T, HV, V]
    (or logits with use_beta_sigmoid_in_kernel), initial_state [N, HV, K, V] (read only;
    [N, HV, V, K] with state_v_first; N = B, or with cu_seqlens [N + 1]
    int32/int64 the number of sequences packed into B = 1; tokens outside
    every sequence are left unwritten in o). Returns
    (o [B, T, HV, V] in v's dtype, final_state fp32 or None).
    Nothing to compute (B = 0, T = 0 or cu_seqlens = [0]): nothing is
    compiled or launched; o is the empty (or, for cu_seqlens = [0],
    unwritten) [B, T, HV, V] and the final state, as FLA's, a fp32 copy of
    initial_state, or zeros without one ([0, HV, ...] for N = 0)."""
    state_v_first = state_v_first or bool(kwargs.pop("transpose_state_layout", False))
    _unsupported(gv=gv, **{k_: v_ for k_, v_ in kwargs.items()})
    if allow_neg_eigval and not use_beta_sigmoid_in_kernel:
        raise ValueError("allow_neg_eigval=True needs use_beta_sigmoid_in_kernel=True (FLA's rule)")
    if allow_neg_eigval and beta is None:
        raise ValueError("allow_neg_eigval=True needs beta (logits, beta = 2 sigmoid(beta))")
    scale = _scale(scale)
    dev, B, T, H, K, HV, V = _check_qkv(q, k, v)
    N = _check_cu_seqlens(cu_seqlens, dev, B, T)
    a = None
    if g is not None:
        _check("g", g, dev, (B, T, HV), _INPUT)
        if use_gate_in_kernel:
            if A_log is None or dt_bias is None:
                raise ValueError("use_gate_in_kernel=True needs A_log and dt_bias")
            _check("A_log", A_log, dev, (HV,), (torch.float32,))
            _check("dt_bias", dt_bias, dev, (HV,), (torch.float32,))
            a, g = g, None
    elif use_gate_in_kernel:
        raise ValueError("use_gate_in_kernel=True needs g (the raw gate)")
    if gk is not None:
        if g is not None or a is not None:
            raise NotImplementedError(
                "gdn: argument 'gk' together with 'g' (two decays a token) is not supported yet")
        _check("gk", gk, dev, (B, T, HV, K), _INPUT)
        g = gk  # the op takes the per-key decay on its g operand (by shape)
    if not use_gate_in_kernel:
        A_log = dt_bias = None
    b = None
    if beta is not None:
        if isinstance(beta, torch.Tensor) and beta.dim() == 4:
            _check("beta", beta, dev, (B, T, HV, V), _INPUT)  # per value channel
        else:
            _check("beta", beta, dev, (B, T, HV), _INPUT)
        if use_beta_sigmoid_in_kernel:
            b, beta = beta, None
    layout = "vk" if state_v_first else "kv"
    state_shape = (N, HV, V, K) if state_v_first else (N, HV, K, V)
    converted = False
    if initial_state is not None:
        _check("initial_state", initial_state, dev, state_shape, _INPUT)
    if N == 0 or T == 0:  # no token: the final state is the initial one
        final_state = None
        if output_final_state:
            final_state = (initial_state.to(torch.float32, copy=True)
                           if initial_state is not None else
                           torch.zeros(state_shape, dtype=torch.float32, device=dev))
        return torch.empty_like(v), final_state
    if initial_state is not None and initial_state.dtype != torch.float32:
        # FLA reads any dtype; the final state is fp32
        initial_state, converted = initial_state.float(), True
    o = torch.empty_like(v)
    final_state = (torch.empty(state_shape, dtype=torch.float32, device=dev)
                   if output_final_state else None)
    torch.ops.gdn.recurrent(q, k, v, g, a, A_log, dt_bias, beta, b, None, cu_seqlens, None,
                            initial_state, None, None, final_state, o, scale,
                            bool(use_qk_l2norm_in_kernel), layout, bool(allow_neg_eigval),
                            fresh_early_inputs=converted)
    return o, final_state


def _check_cu_seqlens(cu_seqlens, dev, B, T):
    """The number of sequences: B, or with cu_seqlens [N + 1] (varlen, B == 1)
    N. Sequence n owns packed tokens [cu[n], cu[n + 1]) (the kernels clamp
    each range to [0, T]: offsets out of order or past T never address
    outside the tensors). GDN_VALIDATE_INDICES=1 checks cu[0] == 0,
    non-decreasing offsets and cu[N] == T on the host (synchronises)."""
    if cu_seqlens is None:
        return B
    if not isinstance(cu_seqlens, torch.Tensor) or cu_seqlens.dim() != 1:
        raise ValueError("cu_seqlens must be a 1-D tensor [N + 1]")
    _check("cu_seqlens", cu_seqlens, dev, None, (torch.int32, torch.int64))
    if B != 1:
        raise ValueError(f"cu_seqlens needs packed tokens with batch 1, got batch {B}")
    if cu_seqlens.shape[0] == 0:
        raise ValueError("cu_seqlens must hold N + 1 >= 1 offsets (at least [0]), got an "
                         "empty tensor")
    if _validate_indices():
        cu = cu_seqlens.tolist()
        if cu[0] != 0:
            raise ValueError(f"cu_seqlens[0] must be 0, got {cu[0]}")
        for n in range(1, len(cu)):
            if cu[n] < cu[n - 1]:
                raise ValueError(f"cu_seqlens must be non-decreasing, got cu_seqlens[{n}] = "
                                 f"{cu[n]} < cu_seqlens[{n - 1}] = {cu[n - 1]}")
        if cu[-1] != T:
            raise ValueError(f"cu_seqlens[-1] = {cu[-1]} must be the number of packed tokens "
                             f"T = {T} (q.shape[1])")
    return cu_seqlens.shape[0] - 1


def _check_pool_slots(name, pool, rows):
    """A pool [slots, HV, ...] addressed by `rows` > 0 rows needs a slot (a
    0-slot pool would compile a kernel without one)."""
    if rows and pool.shape[0] == 0:
        raise ValueError(f"{name} has 0 slots; a pool addressed by {rows} rows needs at "
                         "least one (shape [slots >= 1, HV, V, K])")


def _check_fused_gating(dev, B, T, HV, A_log, a, dt_bias, b, K=None, V=None):
    """Fused gating inputs: A_log, dt_bias [HV] fp32; a, b [B, T, HV]. With K
    (KDA): a [B, T, HV, K] and dt_bias [HV * K] (or [HV, K], flattened);
    with V, b may also be per value channel [B, T, HV, V]. Returns the
    dt_bias to pass on (flattened)."""
    _check("A_log", A_log, dev, (HV,), (torch.float32,))
    if K is None:
        _check("a", a, dev, (B, T, HV), _INPUT)
        _check("dt_bias", dt_bias, dev, (HV,), (torch.float32,))
    else:
        _check("a", a, dev, (B, T, HV, K), _INPUT)
        if isinstance(dt_bias, torch.Tensor) and dt_bias.dim() == 2:
            _check("dt_bias", dt_bias, dev, (HV, K), (torch.float32,))
            dt_bias = dt_bias.reshape(HV * K)  # a view: contiguous
        else:
            _check("dt_bias", dt_bias, dev, (HV * K,), (torch.float32,))
    if V is not None and isinstance(b, torch.Tensor) and b.dim() == 4:
        _check("b", b, dev, (B, T, HV, V), _INPUT)
    else:
        _check("b", b, dev, (B, T, HV), _INPUT)
    return dt_bias


def _check_indices(name, t, device, B, validate_slots=None):
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    _check(name, t, device, (B,), (torch.int32, torch.int64))
    if validate_slots is not None and B:
        # Debug aid (GDN_VALIDATE_INDICES=1): synchronises with the device.
        hi = int(t.max())
        if hi >= validate_slots:
            raise ValueError(f"{name} holds slot {hi}, past the pool's {validate_slots} slots")
    return t


def _validate_indices():
    import os
    return os.environ.get("GDN_VALIDATE_INDICES") == "1"


def gated_delta_rule_decode_pretranspose(
        q, k, v, state, A_log, a, dt_bias, b, scale=None, output=None, use_qk_l2norm=True,
        initial_state=None, initial_state_indices=None, output_state_indices=None, **kwargs):
    """FlashInfer's `gated_delta_rule_decode_pretranspose`: q, k [B, 1, H, K],
    v [B, 1, HV, V], A_log, dt_bias [HV] fp32, a, b [B, 1, HV]; either
    state [B, HV, V, K] updated in place, or (state=None) a pool
    initial_state [slots, HV, V, K] updated in place at
    initial_state_indices [B] (int32/int64; < 0: padding row, no slot touched,
    output rows zero). States: fp32, bf16 or fp16 (computed in fp32, rounded
    once on store). Returns (output [B, 1, HV, V], the state or the pool).
    B = 0 (or T = 0): nothing is compiled or launched, the state or pool is
    untouched, output is the empty [B, T, HV, V] (the given one, if any).
    A pool of 0 slots with B > 0 is a ValueError."""
    _no_other_keywords(kwargs)
    if output_state_indices is not None and output_state_indices is not initial_state_indices:
        raise NotImplementedError(
            "gdn: argument 'output_state_indices' (a split read/write pool) is not supported yet")
    dev, B, T, H, K, HV, V = _check_qkv(q, k, v)
    pool_mode = initial_state is not None or initial_state_indices is not None
    if pool_mode:
        if state is not None:
            raise ValueError("pass either state or (initial_state, initial_state_indices), not both")
        if initial_state is None or initial_state_indices is None:
            raise ValueError("a pool needs both initial_state and initial_state_indices")
        target = initial_state
    else:
        if state is None:
            raise ValueError("state is None and no pool (initial_state) is given")
        target = state
    name = "initial_state" if pool_mode else "state"
    if not isinstance(target, torch.Tensor) or target.dim() != 4:
        raise ValueError(f"{name} must be a 4-D tensor [{'slots' if pool_mode else 'B'}, HV, V, K]")
    _check(name, target, dev, ((target.shape[0] if pool_mode else B), HV, V, K), _INPUT)
    indices = None
    if pool_mode:
        _check_pool_slots(name, target, B)
        indices = _check_indices("initial_state_indices", initial_state_indices, dev, B,
                                 target.shape[0] if _validate_indices() else None)
    _check_fused_gating(dev, B, T, HV, A_log, a, dt_bias, b)
    scale = _scale(scale)
    if output is None:
        output = torch.empty_like(v)
    else:
        _check("output", output, dev, v.shape, (v.dtype,))
    if B == 0 or T == 0:  # no token: nothing to launch, the state is unchanged
        return output, target
    torch.ops.gdn.recurrent(q, k, v, None, a, A_log, dt_bias, None, b, indices, None, None,
                            None, target, None, None, output, scale, bool(use_qk_l2norm),
                            "vk")
    return output, target


def fused_sigmoid_gating_delta_rule_update(
        A_log, a, dt_bias, softplus_beta, softplus_threshold, q, k, v, b,
        initial_state_source, initial_state_indices, scale=None,
        use_qk_l2norm_in_kernel=False, cu_seqlens=None, is_kda=False,
        disable_state_update=False, intermediate_states_buffer=None,
        intermediate_state_indices=None, cache_steps=None, retrieve_parent_token=None,
        **kwargs):
    """SGLang's `fused_sigmoid_gating_delta_rule_update` (decode): A_log,
    dt_bias [HV] fp32, a, b [B, T, HV], q, k [B, T, H, K], v [B, T, HV, V];
    is_kda=True (Kimi Delta Attention): a [B, T, HV, K] and dt_bias [HV * K]
    (SGLang's flattened bias; [HV, K] is accepted too), the decay per key
    channel; b may be [B, T, HV, V] (beta per value channel) either way;
    initial_state_source: the pool [slots, HV, V, K] (fp32, bf16 or fp16;
    computed in fp32, rounded once on store), updated in place at
    initial_state_indices [N] (int32/int64; < 0: padding row, no slot touched,
    output rows zero; N = B, or with cu_seqlens [N + 1] for packed tokens
    (B = 1) the number of sequences). Verify:
    intermediate_states_buffer [rows, cache_steps, HV, V, K] receives the state
    after every token at intermediate_state_indices [N] (< 0: none), and
    disable_state_update=True leaves the pool untouched. EAGLE tree verify:
    retrieve_parent_token [N, cache_steps] (int32/int64, needs the buffer)
    names each token's parent step p: step s > 0 starts from the state after
    step p as stored in the buffer (rounded to its dtype) when 0 <= p < s - 1,
    from the carried fp32 state when p = s - 1, and from the pool slot's
    state (a second root) when p < 0 or p >= s (no tree: treated as -1);
    rows without a buffer row (index < 0) ignore the table. Returns
    o [B, T, HV, V] (tokens outside every sequence are left unwritten).
    Nothing to compute (B = 0, T = 0 or cu_seqlens = [0]): nothing is
    compiled or launched, the pool and the buffer are untouched and o is the
    empty (cu_seqlens = [0]: unwritten) [B, T, HV, V]. A pool or buffer of 0
    slots (rows) with N > 0 rows is a ValueError."""
    _no_other_keywords(kwargs)
    if float(softplus_beta) != 1.0:
        raise NotImplementedError("gdn: argument 'softplus_beta' != 1.0 is not supported yet")
    if float(softplus_threshold) != 20.0:
        raise NotImplementedError("gdn: argument 'softplus_threshold' != 20.0 is not supported yet")
    dev, B, T, H, K, HV, V = _check_qkv(q, k, v)
    N = _check_cu_seqlens(cu_seqlens, dev, B, T)
    pool = initial_state_source
    if not isinstance(pool, torch.Tensor) or pool.dim() != 4:
        raise ValueError("initial_state_source must be a 4-D tensor [slots, HV, V, K]")
    _check("initial_state_source", pool, dev, (pool.shape[0], HV, V, K), _INPUT)
    _check_pool_slots("initial_state_source", pool, N)
    indices = _check_indices("initial_state_indices", initial_state_indices, dev, N,
                             pool.shape[0] if _validate_indices() else None)
    dt_bias = _check_fused_gating(dev, B, T, HV, A_log, a, dt_bias, b,
                                  K=K if is_kda else None, V=V)
    inter = intermediate_states_buffer
    inter_idx = None
    if inter is not None:
        if not isinstance(inter, torch.Tensor) or inter.dim() != 5:
            raise ValueError("intermediate_states_buffer must be a 5-D tensor [rows, steps, HV, V, K]")
        _check("intermediate_states_buffer", inter, dev, (inter.shape[0], inter.shape[1], HV, V, K),
               _INPUT)
        if cache_steps is not None and int(cache_steps) != inter.shape[1]:
            raise ValueError(f"cache_steps = {cache_steps} but the buffer has {inter.shape[1]} steps")
        if N and T and 0 in inter.shape[:2]:
            raise ValueError("intermediate_states_buffer must have at least one row and one "
                             f"step for {N} rows of {T} tokens, got shape {list(inter.shape)}")
        if intermediate_state_indices is None:
            raise ValueError("intermediate_states_buffer needs intermediate_state_indices")
        inter_idx = _check_indices("intermediate_state_indices", intermediate_state_indices,
                                   dev, N, inter.shape[0] if _validate_indices() else None)
    elif intermediate_state_indices is not None:
        raise ValueError("intermediate_state_indices needs intermediate_states_buffer")
    parents = retrieve_parent_token
    if parents is not None:
        if inter is None:
            raise ValueError("retrieve_parent_token needs intermediate_states_buffer "
                             "(parent states are read back from it)")
        _check("retrieve_parent_token", parents, dev, (N, inter.shape[1]),
               (torch.int32, torch.int64))
    scale = _scale(scale)
    o = torch.empty_like(v)
    if N == 0 or T == 0:  # no token: nothing to launch, the pool is unchanged
        return o
    # disable_state_update: the pool is only read (no commit).
    read_only = bool(disable_state_update)
    torch.ops.gdn.recurrent(q, k, v, None, a, A_log, dt_bias, None, b, indices, cu_seqlens,
                            inter_idx, pool if read_only else None,
                            None if read_only else pool, inter, None, o, scale,
                            bool(use_qk_l2norm_in_kernel), "vk", False, parents)
    return o


def gated_delta_rule_mtp(
        q, k, v, initial_state, initial_state_indices, A_log, a, dt_bias, b, scale=None,
        output=None, intermediate_states_buffer=None, ssm_state_indices=None,
        disable_state_update=None, use_qk_l2norm=True, output_state_indices=None, **kwargs):
    """FlashInfer's `gated_delta_rule_mtp` (T > 1 verify): q, k [B, T, H, K],
    v [B, T, HV, V], pool initial_state [slots, HV, V, K] read at
    initial_state_indices [B] (< 0: padding, no slot touched, output rows 0)
    and, unless disable_state_update (FlashInfer's default: True), updated in
    place; intermediate_states_buffer [>= B, T, HV, V, K] (batch-scoped: row b)
    receives the state after every token. Returns output [B, T, HV, V].
    B = 0 or T = 0: nothing is compiled or launched, the pool and the buffer
    are untouched, output is the empty [B, T, HV, V] (the given one, if
    any). A pool of 0 slots with B > 0 is a ValueError."""
    _no_other_keywords(kwargs)
    _unsupported(ssm_state_indices=ssm_state_indices)
    if output_state_indices is not None and output_state_indices is not initial_state_indices:
        raise NotImplementedError(
            "gdn: argument 'output_state_indices' (a split read/write pool) is not supported yet")
    dev, B, T, H, K, HV, V = _check_qkv(q, k, v)
    pool = initial_state
    if not isinstance(pool, torch.Tensor) or pool.dim() != 4:
        raise ValueError("initial_state must be a 4-D tensor [slots, HV, V, K]")
    _check("initial_state", pool, dev, (pool.shape[0], HV, V, K), _INPUT)
    _check_pool_slots("initial_state", pool, B)
    indices = _check_indices("initial_state_indices", initial_state_indices, dev, B,
                             pool.shape[0] if _validate_indices() else None)
    _check_fused_gating(dev, B, T, HV, A_log, a, dt_bias, b)
    inter = intermediate_states_buffer
    inter_idx = None
    if inter is not None:
        if not isinstance(inter, torch.Tensor) or inter.dim() != 5 or inter.shape[0] < B:
            raise ValueError("intermediate_states_buffer must be [>= B, T, HV, V, K]")
        if inter.shape[1] != T:
            raise NotImplementedError(
                "gdn: argument 'intermediate_states_buffer' with more than T steps is not supported yet")
        _check("intermediate_states_buffer", inter, dev, (inter.shape[0], T, HV, V, K), _INPUT)
    scale = _scale(scale)
    if output is None:
        output = torch.empty_like(v)
    else:
        _check("output", output, dev, v.shape, (v.dtype,))
    if B == 0 or T == 0:  # no token: nothing to launch, the pool is unchanged
        return output
    if inter is not None and inter.shape[0] != B:
        # rows past B: address rows 0..B-1 through indices
        inter_idx = torch.arange(B, dtype=torch.int32, device=dev)
    read_only = True if disable_state_update is None else bool(disable_state_update)
    torch.ops.gdn.recurrent(q, k, v, None, a, A_log, dt_bias, None, b, indices, None, inter_idx,
                            pool if read_only else None, None if read_only else pool, inter,
                            None, output, scale, bool(use_qk_l2norm),
                            "vk", fresh_early_inputs=inter_idx is not None)
    return output


# ---------------------------------------------------------------------------
# Commit of an accepted prefix (gdn.commit)
# ---------------------------------------------------------------------------

_MLIR_TYPES = {torch.float32: "f32", torch.bfloat16: "bf16", torch.float16: "f16",
               torch.int32: "i32", torch.int64: "i64"}
_commit_kernels = {}


def _memref(shape, dtype):
    return "memref<" + "".join(f"{d}x" for d in shape) + _MLIR_TYPES[dtype] + ">"


def _commit_kernel(intermediate_states, accepted, state, state_indices,
                   intermediate_state_indices):
    """The compiled gdn.commit for these shapes and dtypes (cached): a
    function @gdn_commit whose arguments are the op's operands, in order."""
    device = intermediate_states.device
    operands = [("intermediate_states", intermediate_states), ("accepted", accepted),
                ("state_indices", state_indices),
                ("intermediate_state_indices", intermediate_state_indices),
                ("state", state)]
    operands = [(name, t) for name, t in operands if t is not None]
    key = (device.type, device.index) + tuple(
        (name, tuple(t.shape), t.dtype) for name, t in operands)
    k = _commit_kernels.get(key)
    if k is None:
        types = [(name, _memref(t.shape, t.dtype)) for name, t in operands]
        sig = ", ".join(f"%{name}: {ty}" for name, ty in types)
        body = " ".join(f"{name}(%{name} : {ty})" for name, ty in types)
        # The copy does not depend on the layout as long as the buffer and
        # the pool share one; vk names the last two dimensions [V, K].
        text = (f"func.func @gdn_commit({sig}) {{\n"
                f"  gdn.commit {body} {{state_layout = #gdn.layout<vk>}}\n"
                f"  return\n}}\n")
        target = "cuda" if device.type == "cuda" else "cpu"
        chip = _chip(device) if target == "cuda" else None
        k = default_compiler().compile_text(text, function="gdn_commit", target=target,
                                            chip=chip)
        _commit_kernels[key] = k
    return k, [t for _, t in operands]


@torch.library.custom_op("gdn::commit", mutates_args=("state",))
def commit(intermediate_states: torch.Tensor, accepted: torch.Tensor, state: torch.Tensor,
           state_indices: Optional[torch.Tensor],
           intermediate_state_indices: Optional[torch.Tensor]) -> None:
    """The gdn.commit op on validated, contiguous tensors: for every row n,
    state[slot] <- intermediate_states[row, min(accepted[n], T) - 1] with
    slot = state_indices[n] (or n) and row = intermediate_state_indices[n]
    (or n); rows with slot < 0, row < 0 or accepted[n] <= 0 touch nothing."""
    if accepted.shape[0] == 0:
        return
    # Pointer checks live here, where torch.compile does not trace.
    if state.untyped_storage().data_ptr() == intermediate_states.untyped_storage().data_ptr():
        raise ValueError("state and intermediate_states must not share memory")
    if state.is_cuda:
        for name, t in (("intermediate_states", intermediate_states), ("accepted", accepted),
                        ("state", state), ("state_indices", state_indices),
                        ("intermediate_state_indices", intermediate_state_indices)):
            if t is not None and t.data_ptr() % 16 != 0:
                raise ValueError(f"{name} must be 16-byte aligned (data_ptr % 16 == 0)")
    kern, tensors = _commit_kernel(intermediate_states, accepted, state, state_indices,
                                   intermediate_state_indices)
    ptrs = (ctypes.c_void_p * len(tensors))(*[t.data_ptr() for t in tensors])
    if state.is_cuda:
        kern.launch_raw(ptrs, ctypes.c_void_p(
            torch.cuda.current_stream(state.device).cuda_stream))
    else:
        from ._capi import check, lib
        check(lib.gdnKernelRunHost(kern._h, ptrs, len(tensors)))


@commit.register_fake
def _(intermediate_states, accepted, state, state_indices, intermediate_state_indices):
    return None


def commit_accepted(intermediate_states, accepted, state, state_indices=None,
                    intermediate_state_indices=None, **kwargs):
    """Commits each row's accepted prefix after speculative verify: copies the
    state after row n's last accepted token from the per-token buffer into
    the state pool, in one kernel (no host synchronisation, no allocation:
    CUDA-graph capturable once compiled).

    - intermediate_states [R, T, HV, V, K] (or [R, T, HV, K, V]; the pool
      shares the layout), float32/bfloat16/float16: the verify buffer, row
      intermediate_state_indices[n] (pool-scoped, SGLang) or row n (R = N,
      batch-scoped, FlashInfer);
    - accepted [N], int32/int64: accepted tokens of row n; <= 0 commits
      nothing, > T commits the last stored step (clamped to T);
    - state [slots, HV, ...] (state_indices given) or [N, HV, ...],
      float32/bfloat16/float16, updated in place: slot state_indices[n]
      (< 0: padding row, nothing touched) or n gets step
      min(accepted[n], T) - 1, converted through float32 and rounded once
      when the dtypes differ. Slots no row commits are left bit-identical.

    Indices >= slots or >= R are undefined (GDN_VALIDATE_INDICES=1 checks
    them on the host, which synchronises); two rows naming one slot race.
    N = 0 commits nothing (no kernel is compiled or launched). Returns
    `state`."""
    _no_other_keywords(kwargs)
    if not isinstance(intermediate_states, torch.Tensor):
        raise TypeError("intermediate_states must be a torch.Tensor, got "
                        f"{type(intermediate_states).__name__}")
    if intermediate_states.dim() != 5:
        raise ValueError("intermediate_states must be [R, T, HV, V, K], got shape "
                         f"{list(intermediate_states.shape)}")
    dev = intermediate_states.device
    if intermediate_states.dtype not in _INPUT:
        raise TypeError(f"intermediate_states must have dtype in {[str(d) for d in _INPUT]}, "
                        f"got {intermediate_states.dtype}")
    if not intermediate_states.is_contiguous():
        raise ValueError("intermediate_states must be contiguous")
    R, T, HV, D3, D4 = intermediate_states.shape

    def same_device(name, t):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
        if t.device != dev:
            raise ValueError(f"{name} is on {t.device}, expected {dev} "
                             "(the device of intermediate_states)")

    same_device("accepted", accepted)
    if accepted.dim() != 1:
        raise ValueError(f"accepted must be 1-D [N], got shape {list(accepted.shape)}")
    _check("accepted", accepted, dev, None, (torch.int32, torch.int64))
    N = accepted.shape[0]
    same_device("state", state)
    if state.dim() != 4:
        raise ValueError(f"state must be 4-D [slots, HV, ...], got shape {list(state.shape)}")
    slots = state.shape[0] if state_indices is not None else N
    _check("state", state, dev, (slots, HV, D3, D4), _INPUT)
    if N and min(R, T, HV, D3, D4, slots) == 0:
        raise ValueError("intermediate_states and state must have non-empty dimensions, got "
                         f"{list(intermediate_states.shape)} and {list(state.shape)}")
    validate = _validate_indices()
    if state_indices is not None:
        same_device("state_indices", state_indices)
        _check_indices("state_indices", state_indices, dev, N, slots if validate else None)
    if intermediate_state_indices is not None:
        same_device("intermediate_state_indices", intermediate_state_indices)
        _check_indices("intermediate_state_indices", intermediate_state_indices, dev, N,
                       R if validate else None)
    elif R != N:
        raise ValueError(f"intermediate_states has {R} rows but accepted has {N}: a "
                         "batch-scoped buffer needs one row per row (or pass "
                         "intermediate_state_indices)")
    torch.ops.gdn.commit(intermediate_states, accepted, state, state_indices,
                         intermediate_state_indices)
    return state
