"""PyTorch entry points with the signatures of the kernels gdn replaces
(argument for argument, defaults, return values and in-place behaviour of
the anchors named below; docs/anchors.md lists every argument and what gdn
does with it).

- `fused_recurrent_gated_delta_rule`        FLA 0.6.0 (fla.ops.gated_delta_rule)
- `fused_recurrent_kda`                     FLA 0.6.0 (fla.ops.kda)
- `gated_delta_rule_decode_pretranspose`     FlashInfer 0.7.2 (flashinfer.gdn_decode)
- `gated_delta_rule_decode`                  FlashInfer 0.7.2 (K-major state)
- `gated_delta_rule_mtp`                     FlashInfer 0.7.2 (verify, T > 1)
- `fused_sigmoid_gating_delta_rule_update`   SGLang 0.5.23 (decode and verify)
- `fused_recurrent_gated_delta_rule_packed_decode`
                                             SGLang 0.5.23 (packed mixed_qkv decode)
- `commit_accepted`                          after verify: each row's accepted
                                             prefix into the pool (gdn.commit)

`set_schedule` overrides the GPU schedule of the kernels compiled afterwards
(used by the benchmarks' sweeps).

Each validates its arguments (TypeError / ValueError naming the argument,
raised before any launch), then calls the custom op `gdn::recurrent`
(`commit_accepted`: `gdn::commit`), registered with torch.library (fake
implementation included, so torch.compile can trace it). The op launches on
torch.cuda.current_stream() and allocates nothing when the caller passes the
outputs (and contiguous inputs in the dtypes the kernels take: copies and
conversions are captured too), so it can be captured in a CUDA graph. CPU tensors run the CPU
lowering. Arguments the kernels do not support yet raise NotImplementedError
naming the argument: never a silent fallback. Unknown keywords: ignored by
the FLA entry points, as FLA ignores them; a TypeError for the others, whose
anchors have fixed signatures. Read-only inputs that are strided views (q, k,
v of a fused projection, gates, A_log, dt_bias, cu_seqlens) are copied to
contiguous tensors today, until the kernels take strides; a tensor the kernel
writes in place (a state, a pool, a buffer, an output) is never copied: a
strided one raises an error that is both a NotImplementedError and a
ValueError.

Math (the gdn.recurrent op's description in GDNOps.td; the team's
REFERENCE.md §1, kept outside this repository): per token, S <- exp(g) S;
u = beta (v - S^T k); S <- S + k u^T; o = S^T q, with q scaled by `scale`
(default K^-0.5) after the optional L2 norm (eps 1e-6 inside the sqrt); fused
gating g = -exp(A_log) softplus(a + dt_bias), beta = sigmoid(b). KDA: the
decay per key channel, S[k, :] <- exp(g[k]) S[k, :] (g or a [B, T, HV, K],
dt_bias [HV * K]); beta may be per value channel (beta or b [B, T, HV, V]).
"""
import ctypes
import math
import warnings
from typing import Optional

import torch

from . import _check_scale, default_compiler

__all__ = [
    "fused_recurrent_gated_delta_rule",
    "fused_recurrent_kda",
    "gated_delta_rule_decode_pretranspose",
    "gated_delta_rule_decode",
    "gated_delta_rule_mtp",
    "fused_sigmoid_gating_delta_rule_update",
    "fused_recurrent_gated_delta_rule_packed_decode",
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


class _StridedInPlace(NotImplementedError, ValueError):
    """A non-contiguous view the anchor takes through its strides and gdn does
    not: a tensor the kernel writes in place (a state, a pool, a buffer, an
    output; gdn never copies those) or SGLang's strided
    retrieve_parent_token. Not supported yet (NotImplementedError) and, as
    before, the tensor must be contiguous (ValueError)."""


def _check(name, t, device, shape=None, dtypes=None, copy=False, written=False,
           strided=False):
    """Checks t's type, device, dtype and shape (TypeError / ValueError naming
    it) and returns it. A non-contiguous t is, with copy (a read-only input,
    as FLA's input_guard makes it contiguous), returned as a contiguous copy;
    with written (written in place) or strided (an anchor takes it strided) a
    _StridedInPlace; else a ValueError."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if t.device != device:
        raise ValueError(f"{name} is on {t.device}, expected {device} (the device of q)")
    if dtypes is not None and t.dtype not in dtypes:
        raise TypeError(f"{name} must have dtype in {[str(d) for d in dtypes]}, got {t.dtype}")
    if shape is not None and tuple(t.shape) != tuple(shape):
        raise ValueError(f"{name} must have shape {list(shape)}, got {list(t.shape)}")
    if not t.is_contiguous():
        if copy:
            return t.contiguous()
        if written or strided:
            raise _StridedInPlace(
                f"gdn: argument '{name}' is a strided view{' written in place' if written else ''}"
                f", which is not supported yet ({name} must be contiguous)")
        raise ValueError(f"{name} must be contiguous")
    return t


_INPUT = (torch.float32, torch.bfloat16, torch.float16)


def _check_qkv(q, k, v):
    """q, k [B, T, H, K], v [B, T, HV, V] of one dtype. Views (a fused
    projection's slices) are copied to contiguous tensors until the kernels
    take strides. Returns (q, k, v, device, B, T, H, K, HV, V)."""
    if not isinstance(q, torch.Tensor):
        raise TypeError(f"q must be a torch.Tensor, got {type(q).__name__}")
    if q.dim() != 4:
        raise ValueError(f"q must be [B, T, H, K], got shape {list(q.shape)}")
    dev = q.device
    q = _check("q", q, dev, None, _INPUT, copy=True)
    k = _check("k", k, dev, q.shape, (q.dtype,), copy=True)
    if not isinstance(v, torch.Tensor) or v.dim() != 4:
        raise ValueError("v must be a 4-D tensor [B, T, HV, V]")
    B, T, H, K = q.shape
    if H == 0 or K == 0:
        raise ValueError(f"q must have at least one head and one key channel [B, T, H >= 1, "
                         f"K >= 1], got shape {list(q.shape)}")
    v = _check("v", v, dev, (B, T, v.shape[2], v.shape[3]), (q.dtype,), copy=True)
    HV = v.shape[2]
    if HV == 0 or v.shape[3] == 0:
        raise ValueError(f"v must have at least one head and one value channel [B, T, HV >= 1, "
                         f"V >= 1], got shape {list(v.shape)}")
    if HV % H != 0:
        raise ValueError(f"v has HV = {HV} heads, not a multiple of H = {H} (q/k heads)")
    return q, k, v, dev, B, T, H, K, HV, v.shape[3]


def _f32_param(name, t, dev, shape, flat=False):
    """A gating parameter (A_log, dt_bias) in float32, bfloat16 or float16 as
    the contiguous float32 tensor the kernels take (the anchors' kernels
    convert on load; here a conversion kernel runs first). flat: any shape of
    that many elements is accepted (the anchors read it flat, e.g. Kimi
    Linear's A_log [1, 1, HV, 1])."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if flat and t.numel() == math.prod(shape) and tuple(t.shape) != tuple(shape):
        t = t.reshape(shape)
    t = _check(name, t, dev, shape, _INPUT, copy=True)
    return t if t.dtype == torch.float32 else t.float()


def _per_token(t, B, T, tail):
    """SGLang's flattened token tensors as [B, T, *tail]: [B * T, prod(tail)]
    (a and b of SGLang 0.5.23's GDN and KDA decode, 2-D) and, with a tail of
    two dimensions, [B, T, prod(tail)] (KDA's a [B, T, HV * K]). A view when
    t is contiguous. Anything else is returned as it is (and checked later)."""
    if not isinstance(t, torch.Tensor):
        return t
    n = math.prod(tail)
    if (t.dim() == 2 and tuple(t.shape) == (B * T, n)) or (
            len(tail) > 1 and t.dim() == 3 and tuple(t.shape) == (B, T, n)):
        return t.reshape(B, T, *tail)
    return t


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
    """Keywords commit_accepted does not take: NotImplementedError naming
    them (never a TypeError, never silently ignored)."""
    if kwargs:
        raise NotImplementedError(
            f"gdn: argument {', '.join(repr(k_) for k_ in kwargs)} is not supported yet")


# ---------------------------------------------------------------------------
# FLA: fused_recurrent_gated_delta_rule, fused_recurrent_kda
# ---------------------------------------------------------------------------

def _transpose_state_layout(state_v_first, kwargs):
    """FLA's deprecated alias `transpose_state_layout` of state_v_first, as
    FLA 0.6.0 treats it: a DeprecationWarning, a ValueError with
    state_v_first=True too."""
    if "transpose_state_layout" in kwargs:
        if state_v_first:
            raise ValueError("Cannot pass both `state_v_first` and the deprecated "
                             "`transpose_state_layout`.")
        warnings.warn("`transpose_state_layout` is deprecated and renamed to `state_v_first`.",
                      DeprecationWarning, stacklevel=3)
        state_v_first = kwargs.pop("transpose_state_layout")
    return state_v_first


def _fla_beta(beta, logits, dev, B, T, HV, V, dtype, required=False):
    """FLA's beta [B, T, HV] or per value channel [B, T, HV, V] (logits with
    use_beta_sigmoid_in_kernel). None (GDN): beta = 1 or, as logits, FLA's
    ones, i.e. sigmoid(1). Returns (beta, b) for the op."""
    if beta is None and not required:
        if not logits:
            return None, None
        beta = torch.ones(B, T, HV, dtype=dtype, device=dev)
    elif isinstance(beta, torch.Tensor) and beta.dim() == 4:
        beta = _check("beta", beta, dev, (B, T, HV, V), _INPUT, copy=True)
    else:
        beta = _check("beta", beta, dev, (B, T, HV), _INPUT, copy=True)
    return (None, beta) if logits else (beta, None)


def _fla_run(q, k, v, g, a, A_log, dt_bias, beta, b, scale, initial_state, output_final_state,
             use_qk_l2norm_in_kernel, allow_neg_eigval, state_v_first, cu_seqlens, N, fresh,
             zero_o=False):
    """The FLA entry points' common tail: the read-only initial state, the
    final state (fp32, new), o, and the op."""
    dev = q.device
    HV, K, V = v.shape[2], q.shape[3], v.shape[3]
    layout = "vk" if state_v_first else "kv"
    state_shape = (N, HV, V, K) if state_v_first else (N, HV, K, V)
    if initial_state is not None:  # read only: a view is copied, as FLA's input_guard does
        given = initial_state
        initial_state = _check("initial_state", initial_state, dev, state_shape, _INPUT,
                               copy=True)
        fresh = fresh or initial_state is not given
    new_o = torch.zeros_like if zero_o else torch.empty_like
    if N == 0 or q.shape[1] == 0:  # no token: the final state is the initial one
        final_state = None
        if output_final_state:
            final_state = (initial_state.to(torch.float32, copy=True)
                           if initial_state is not None else
                           torch.zeros(state_shape, dtype=torch.float32, device=dev))
        return new_o(v), final_state
    if initial_state is not None and initial_state.dtype != torch.float32:
        # FLA reads any dtype; the final state is fp32
        initial_state, fresh = initial_state.float(), True
    o = new_o(v)
    final_state = (torch.empty(state_shape, dtype=torch.float32, device=dev)
                   if output_final_state else None)
    torch.ops.gdn.recurrent(q, k, v, g, a, A_log, dt_bias, beta, b, None, cu_seqlens, None,
                            initial_state, None, None, final_state, o, scale,
                            bool(use_qk_l2norm_in_kernel), layout, bool(allow_neg_eigval),
                            fresh_early_inputs=fresh)
    return o, final_state


def fused_recurrent_gated_delta_rule(
        q, k, v, g=None, gk=None, gv=None, beta=None, scale=None, initial_state=None,
        output_final_state=False, use_qk_l2norm_in_kernel=False, use_gate_in_kernel=False,
        A_log=None, dt_bias=None, use_beta_sigmoid_in_kernel=False, allow_neg_eigval=False,
        state_v_first=False, cu_seqlens=None, **kwargs):
    """FLA's `fused_recurrent_gated_delta_rule` (fla-core 0.6.0): q, k
    [B, T, H, K], v [B, T, HV, V], g [B, T, HV] (log-space decay, or the raw
    gate with use_gate_in_kernel: g = -exp(A_log) softplus(g + dt_bias),
    A_log [HV] required, dt_bias [HV] optional, both float32, bfloat16 or
    float16 and converted to float32), or instead gk [B, T, HV, K] (log-space
    decay per key channel, KDA), beta [B, T, HV] or per value channel
    [B, T, HV, V] (logits with use_beta_sigmoid_in_kernel; 2 sigmoid(beta)
    with allow_neg_eigval; None: 1, or as FLA, sigmoid(1) with
    use_beta_sigmoid_in_kernel), initial_state [N, HV, K, V] (read only;
    [N, HV, V, K] with state_v_first; any float dtype; N = B, or with
    cu_seqlens [N + 1] int32/int64 the number of sequences packed into
    B = 1; tokens outside every sequence are left unwritten in o). Returns
    (o [B, T, HV, V] in v's dtype, final_state fp32 or None).

    As FLA: unknown keyword arguments are ignored (Hugging Face transformers
    passes use_cache=..., output_router_logits=...); transpose_state_layout is
    FLA's deprecated alias of state_v_first (DeprecationWarning); without
    use_gate_in_kernel, A_log and dt_bias are ignored. Read-only inputs that
    are strided views (q, k, v of a fused projection, g, gk, beta, A_log,
    dt_bias, cu_seqlens, initial_state) are accepted and copied to contiguous
    tensors today, until the kernels take strides. gv, and gk together with
    g, raise NotImplementedError.
    Nothing to compute (B = 0, T = 0 or cu_seqlens = [0]): nothing is
    compiled or launched; o is the empty (or, for cu_seqlens = [0],
    unwritten) [B, T, HV, V] and the final state, as FLA's, a fp32 copy of
    initial_state, or zeros without one ([0, HV, ...] for N = 0)."""
    state_v_first = _transpose_state_layout(state_v_first, kwargs)
    # Any other keyword is ignored, as FLA ignores it.
    _unsupported(gv=gv)
    if allow_neg_eigval and not use_beta_sigmoid_in_kernel:
        raise ValueError("allow_neg_eigval=True needs use_beta_sigmoid_in_kernel=True (FLA's rule)")
    scale = _scale(scale)
    q, k, v, dev, B, T, H, K, HV, V = _check_qkv(q, k, v)
    cu_seqlens, N, fresh = _check_cu_seqlens(cu_seqlens, dev, B, T)
    a = None
    if use_gate_in_kernel:
        if A_log is None:
            raise ValueError("A_log must be provided when use_gate_in_kernel=True")
        if g is None:
            raise ValueError("g (the raw pre-activation gate) must be provided when "
                             "use_gate_in_kernel=True")
        A_log = _f32_param("A_log", A_log, dev, (HV,), flat=True)
        dt_bias = (torch.zeros(HV, dtype=torch.float32, device=dev) if dt_bias is None else
                   _f32_param("dt_bias", dt_bias, dev, (HV,), flat=True))
    else:
        A_log = dt_bias = None  # FLA ignores them without use_gate_in_kernel
    if g is not None:
        g = _check("g", g, dev, (B, T, HV), _INPUT, copy=True)
        if use_gate_in_kernel:
            a, g = g, None
    if gk is not None:
        if g is not None or a is not None:
            raise NotImplementedError(
                "gdn: argument 'gk' together with 'g' (two decays a token) is not supported yet")
        g = _check("gk", gk, dev, (B, T, HV, K), _INPUT, copy=True)  # per key: by shape
    beta, b = _fla_beta(beta, use_beta_sigmoid_in_kernel, dev, B, T, HV, V, q.dtype)
    return _fla_run(q, k, v, g, a, A_log, dt_bias, beta, b, scale, initial_state,
                    output_final_state, use_qk_l2norm_in_kernel, allow_neg_eigval,
                    state_v_first, cu_seqlens, N, fresh)


def fused_recurrent_kda(
        q, k, v, g, beta, A_log=None, dt_bias=None, scale=None, initial_state=None,
        output_final_state=False, use_qk_l2norm_in_kernel=False, use_gate_in_kernel=False,
        use_beta_sigmoid_in_kernel=False, allow_neg_eigval=False, lower_bound=None,
        state_v_first=False, cu_seqlens=None, **kwargs):
    """FLA's `fused_recurrent_kda` (fla-core 0.6.0, Kimi Delta Attention): q, k
    [B, T, H, K], v [B, T, HV, V], g [B, T, HV, K] the log-space decay per
    key channel or, with use_gate_in_kernel, the raw gate: g = -exp(A_log)
    softplus(g + dt_bias) with A_log [HV] (None: FLA's constant 1.0, i.e.
    -e softplus) and dt_bias [HV * K] or [HV, K] (None: no bias), float32,
    bfloat16 or float16, converted to float32; beta [B, T, HV] or per value
    channel [B, T, HV, V] (logits with use_beta_sigmoid_in_kernel, 2
    sigmoid(beta) with allow_neg_eigval), initial_state [N, HV, K, V] (read
    only; [N, HV, V, K] with state_v_first; any float dtype; N = B or, with
    cu_seqlens [N + 1], the number of sequences packed into B = 1).
    Returns (o [B, T, HV, V] in v's dtype, as FLA's zero-initialised: tokens
    outside every sequence are 0; final_state fp32 or None).

    As FLA: unknown keyword arguments are ignored; transpose_state_layout is
    the deprecated alias of state_v_first; A_log, dt_bias and lower_bound are
    ignored without use_gate_in_kernel. lower_bound with use_gate_in_kernel
    (FLA's safe gate, lower_bound * sigmoid(exp(A_log) (g + dt_bias))) raises
    NotImplementedError. Strided read-only inputs are copied today, as in
    fused_recurrent_gated_delta_rule."""
    state_v_first = _transpose_state_layout(state_v_first, kwargs)
    # Any other keyword is ignored, as FLA ignores it.
    if allow_neg_eigval and not use_beta_sigmoid_in_kernel:
        raise ValueError("allow_neg_eigval=True needs use_beta_sigmoid_in_kernel=True (FLA's rule)")
    if use_gate_in_kernel and lower_bound is not None:
        raise NotImplementedError(
            "gdn: argument 'lower_bound' (the safe gate lower_bound * sigmoid(exp(A_log) * "
            "(g + dt_bias))) is not supported yet")
    scale = _scale(scale)
    q, k, v, dev, B, T, H, K, HV, V = _check_qkv(q, k, v)
    cu_seqlens, N, fresh = _check_cu_seqlens(cu_seqlens, dev, B, T)
    g = _check("g", g, dev, (B, T, HV, K), _INPUT, copy=True)
    a = None
    if use_gate_in_kernel:
        A_log = (torch.ones(HV, dtype=torch.float32, device=dev) if A_log is None else
                 _f32_param("A_log", A_log, dev, (HV,), flat=True))
        if dt_bias is None:
            dt_bias = torch.zeros(HV * K, dtype=torch.float32, device=dev)
        elif isinstance(dt_bias, torch.Tensor) and dt_bias.dim() == 2:
            dt_bias = _f32_param("dt_bias", dt_bias, dev, (HV, K)).reshape(HV * K)
        else:
            dt_bias = _f32_param("dt_bias", dt_bias, dev, (HV * K,))
        a, g = g, None
    else:
        A_log = dt_bias = None
    beta, b = _fla_beta(beta, use_beta_sigmoid_in_kernel, dev, B, T, HV, V, q.dtype,
                        required=True)
    return _fla_run(q, k, v, g, a, A_log, dt_bias, beta, b, scale, initial_state,
                    output_final_state, use_qk_l2norm_in_kernel, allow_neg_eigval,
                    state_v_first, cu_seqlens, N, fresh, zero_o=cu_seqlens is not None)


def _check_cu_seqlens(cu_seqlens, dev, B, T):
    """(cu_seqlens, number of sequences, copied): B, or with cu_seqlens
    [N + 1] (varlen, B == 1) N. Sequence n owns packed tokens
    [cu[n], cu[n + 1]) (the kernels clamp each range to [0, T]: offsets out
    of order or past T never address outside the tensors). A strided view is
    copied (copied: True). GDN_VALIDATE_INDICES=1 checks cu[0] == 0,
    non-decreasing offsets and cu[N] == T on the host (synchronises)."""
    if cu_seqlens is None:
        return None, B, False
    if not isinstance(cu_seqlens, torch.Tensor) or cu_seqlens.dim() != 1:
        raise ValueError("cu_seqlens must be a 1-D tensor [N + 1]")
    given = cu_seqlens
    cu_seqlens = _check("cu_seqlens", cu_seqlens, dev, None, (torch.int32, torch.int64),
                        copy=True)
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
    return cu_seqlens, cu_seqlens.shape[0] - 1, cu_seqlens is not given


def _check_pool_slots(name, pool, rows):
    """A pool [slots, HV, ...] addressed by `rows` > 0 rows needs a slot (a
    0-slot pool would compile a kernel without one)."""
    if rows and pool.shape[0] == 0:
        raise ValueError(f"{name} has 0 slots; a pool addressed by {rows} rows needs at "
                         "least one (shape [slots >= 1, HV, V, K])")


def _check_pool(name, pool, dev, HV, V, K, rows, what="slots"):
    """A state pool [slots, HV, V, K] written (or read) in place."""
    if not isinstance(pool, torch.Tensor) or pool.dim() != 4:
        raise ValueError(f"{name} must be a 4-D tensor [{what}, HV, V, K]")
    _check(name, pool, dev, (pool.shape[0], HV, V, K), _INPUT, written=True)
    _check_pool_slots(name, pool, rows)
    return pool


def _check_fused_gating(dev, B, T, HV, A_log, a, dt_bias, b, K=None, V=None):
    """Fused gating inputs: A_log, dt_bias [HV] (any shape of HV elements),
    both float32, bfloat16 or float16 (converted to float32); a, b
    [B, T, HV] (or SGLang's 2-D [B * T, HV]). With K (KDA): a [B, T, HV, K]
    (or [B * T, HV * K], [B, T, HV * K]) and dt_bias [HV * K] (or [HV, K],
    flattened); with V, b may also be per value channel [B, T, HV, V].
    Strided read-only views are copied. Returns (A_log, a, dt_bias, b) to
    pass on."""
    A_log = _f32_param("A_log", A_log, dev, (HV,), flat=True)
    if K is None:
        a = _check("a", _per_token(a, B, T, (HV,)), dev, (B, T, HV), _INPUT, copy=True)
        dt_bias = _f32_param("dt_bias", dt_bias, dev, (HV,), flat=True)
    else:
        a = _check("a", _per_token(a, B, T, (HV, K)), dev, (B, T, HV, K), _INPUT, copy=True)
        if isinstance(dt_bias, torch.Tensor) and dt_bias.dim() == 2:
            dt_bias = _f32_param("dt_bias", dt_bias, dev, (HV, K)).reshape(HV * K)
        else:
            dt_bias = _f32_param("dt_bias", dt_bias, dev, (HV * K,))
    if V is not None and isinstance(b, torch.Tensor) and b.dim() == 4:
        b = _check("b", b, dev, (B, T, HV, V), _INPUT, copy=True)
    else:
        b = _check("b", _per_token(b, B, T, (HV,)), dev, (B, T, HV), _INPUT, copy=True)
    return A_log, a, dt_bias, b


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


# ---------------------------------------------------------------------------
# FlashInfer: gated_delta_rule_decode_pretranspose, gated_delta_rule_decode,
# gated_delta_rule_mtp
# ---------------------------------------------------------------------------

def _flashinfer_backend(backend, names):
    """FlashInfer's backend selector: an unknown name is its ValueError; "auto"
    and "flashinfer" select the generic implementation, which here is gdn's;
    a specific other implementation cannot be honoured."""
    if backend not in names:
        raise ValueError(f"unsupported GDN backend: {backend!r}")
    if backend not in ("auto", "flashinfer"):
        raise NotImplementedError(
            f"gdn: argument 'backend' = {backend!r} (a specific FlashInfer implementation) is "
            "not supported yet; gdn runs its own kernel for 'auto' and 'flashinfer'")


def _flashinfer_buffer(inter, dev, B, T, HV, V, K):
    """FlashInfer's intermediate_states_buffer [>= B, >= T, HV, V, K] (written
    in place, contiguous as FlashInfer asserts). FlashInfer's kernels write
    the state after token t of row n at flat step n * T + t of the buffer
    (rows of T steps from its start, whatever its step count), so the op gets
    exactly that prefix, viewed as [B, T, HV, V, K]."""
    if (not isinstance(inter, torch.Tensor) or inter.dim() != 5 or inter.shape[0] < B
            or inter.shape[1] < T):
        raise ValueError("intermediate_states_buffer must be [>= B, >= T, HV, V, K]")
    _check("intermediate_states_buffer", inter, dev, (inter.shape[0], inter.shape[1], HV, V, K),
           _INPUT, written=True)
    return inter.view(-1)[:B * T * HV * V * K].view(B, T, HV, V, K)


def _check_output(output, v):
    if output is None:
        return torch.empty_like(v)
    return _check("output", output, v.device, v.shape, (v.dtype,), written=True)


def gated_delta_rule_decode_pretranspose(
        q, k, v, state, A_log, a, dt_bias, b, scale=None, output=None, use_qk_l2norm=True,
        initial_state=None, initial_state_indices=None, output_state_indices=None,
        intermediate_states_buffer=None, disable_state_update=False, backend="auto"):
    """FlashInfer's `gated_delta_rule_decode_pretranspose` (flashinfer-python
    0.7.2): q, k [B, T, H, K], v [B, T, HV, V] (T = 1 decode; T > 1 as
    FlashInfer's MTP route), A_log [HV], dt_bias [HV] (float32, bfloat16 or
    float16, converted to float32), a, b [B, T, HV]; either state
    [B, HV, V, K] updated in place, or (state=None) a pool initial_state
    [slots, HV, V, K] updated in place at initial_state_indices [B]
    (int32/int64; < 0: padding row, no slot touched, output rows zero).
    States: fp32, bf16 or fp16 (computed in fp32, rounded once on store).
    T > 1 only (T = 1: ValueError, as FlashInfer): intermediate_states_buffer
    [>= B, >= T, HV, V, K] receives the state after every token (row n,
    step t at flat step n * T + t, as FlashInfer's kernels write it) and
    disable_state_update=True leaves the state or pool untouched.
    backend: "auto" / "flashinfer" (gdn's kernel); "cake_gdn" / "rubin":
    NotImplementedError; anything else ValueError. output [B, T, HV, V] in
    v's dtype, written in place when given.
    Returns (output, the state or the pool). A split read/write pool
    (output_state_indices other than initial_state_indices) and a uGPU pool
    (5-D initial_state) raise NotImplementedError; strided views of q, k, v,
    a, b, A_log, dt_bias are copied today; a strided state, pool, buffer or
    output (written in place) is not supported yet.
    B = 0 (or T = 0): nothing is compiled or launched, the state or pool is
    untouched, output is the empty [B, T, HV, V] (the given one, if any).
    A pool of 0 slots with B > 0 is a ValueError."""
    if output_state_indices is not None and output_state_indices is not initial_state_indices:
        raise NotImplementedError(
            "gdn: argument 'output_state_indices' (a split read/write pool) is not supported yet")
    _flashinfer_backend(backend, ("auto", "flashinfer", "cake_gdn", "rubin"))
    q, k, v, dev, B, T, H, K, HV, V = _check_qkv(q, k, v)
    if T == 1 and intermediate_states_buffer is not None:
        raise ValueError("intermediate_states_buffer is supported only for T > 1")
    if T == 1 and disable_state_update:
        raise ValueError("disable_state_update is supported only for T > 1")
    pool_mode = initial_state is not None or initial_state_indices is not None
    if pool_mode:
        if state is not None:
            raise ValueError("pass either state or (initial_state, initial_state_indices), not both")
        if initial_state is None or initial_state_indices is None:
            raise ValueError("a pool needs both initial_state and initial_state_indices")
        if isinstance(initial_state, torch.Tensor) and initial_state.dim() == 5:
            raise NotImplementedError(
                "gdn: argument 'initial_state' as a uGPU pool [slots, HV, 2, V // 2, K] "
                "(ugpu_state_pool) is not supported yet")
        target = _check_pool("initial_state", initial_state, dev, HV, V, K, B)
        indices = _check_indices("initial_state_indices", initial_state_indices, dev, B,
                                 target.shape[0] if _validate_indices() else None)
    else:
        if state is None:
            raise ValueError("state is None and no pool (initial_state) is given")
        if not isinstance(state, torch.Tensor) or state.dim() != 4:
            raise ValueError("state must be a 4-D tensor [B, HV, V, K]")
        target = _check("state", state, dev, (B, HV, V, K), _INPUT, written=True)
        indices = None
    A_log, a, dt_bias, b = _check_fused_gating(dev, B, T, HV, A_log, a, dt_bias, b)
    inter = None
    if intermediate_states_buffer is not None:
        inter = _flashinfer_buffer(intermediate_states_buffer, dev, B, T, HV, V, K)
    scale = _scale(scale)
    output = _check_output(output, v)
    if B == 0 or T == 0:  # no token: nothing to launch, the state is unchanged
        return output, target
    read_only = bool(disable_state_update)
    torch.ops.gdn.recurrent(q, k, v, None, a, A_log, dt_bias, None, b, indices, None, None,
                            target if read_only else None, None if read_only else target,
                            inter, None, output, scale, bool(use_qk_l2norm), "vk")
    return output, target


def gated_delta_rule_decode(
        q, k, v, state, A_log, a, dt_bias, b, scale=None, output=None, use_qk_l2norm=True,
        backend="auto"):
    """FlashInfer's `gated_delta_rule_decode` (flashinfer-python 0.7.2; K-major
    state, no transpose): q, k [B, T, H, K], v [B, T, HV, V] (T = 1 decode;
    T > 1 also runs), A_log [HV], dt_bias [HV] (float32, bfloat16 or
    float16, converted to float32), a, b [B, T, HV], state [B, HV, K, V]
    (fp32, bf16 or fp16; the op's "kv" layout) updated in place. backend:
    "auto" / "flashinfer" (gdn's kernel), "cake_gdn": NotImplementedError,
    anything else ValueError. Returns (output [B, T, HV, V] in v's dtype
    (the given one, written in place), state). A strided state (FlashInfer
    copies it in and out) is not supported yet; strided q, k, v, a, b,
    A_log, dt_bias are copied today. B = 0: nothing is launched."""
    _flashinfer_backend(backend, ("auto", "flashinfer", "cake_gdn"))
    q, k, v, dev, B, T, H, K, HV, V = _check_qkv(q, k, v)
    if not isinstance(state, torch.Tensor) or state.dim() != 4:
        raise ValueError("state must be a 4-D tensor [B, HV, K, V]")
    state = _check("state", state, dev, (B, HV, K, V), _INPUT, written=True)
    A_log, a, dt_bias, b = _check_fused_gating(dev, B, T, HV, A_log, a, dt_bias, b)
    scale = _scale(scale)
    output = _check_output(output, v)
    if B == 0 or T == 0:
        return output, state
    torch.ops.gdn.recurrent(q, k, v, None, a, A_log, dt_bias, None, b, None, None, None,
                            None, state, None, None, output, scale, bool(use_qk_l2norm), "kv")
    return output, state


def gated_delta_rule_mtp(
        q, k, v, initial_state, initial_state_indices, A_log, a, dt_bias, b, scale=None,
        output=None, intermediate_states_buffer=None, ssm_state_indices=None,
        disable_state_update=None, use_qk_l2norm=True, output_state_indices=None,
        cache_replayssm=False, replayssm_rawv=None, replayssm_rawk=None, replayssm_g=None,
        replayssm_beta=None):
    """FlashInfer's `gated_delta_rule_mtp` (flashinfer-python 0.7.2; T > 1
    verify): q, k [B, T, H, K], v [B, T, HV, V], pool initial_state
    [slots, HV, V, K] read at initial_state_indices [B] (< 0: padding, no
    slot touched, output rows 0) and, unless disable_state_update (None, the
    default, is True as in FlashInfer 0.7.2), updated in place;
    intermediate_states_buffer [>= B, >= T, HV, V, K] (batch-scoped, written
    as FlashInfer's kernels write it: the state after token t of row n at
    flat step n * T + t) receives the state after every token. A_log, dt_bias
    [HV] in float32, bfloat16 or float16 (converted to float32).
    Returns (output [B, T, HV, V], initial_state) as FlashInfer does; the
    pool is the same object, updated in place. ssm_state_indices (per-token
    scatter), cache_replayssm, and output_state_indices other than
    initial_state_indices raise NotImplementedError; replayssm_* buffers
    without cache_replayssm are a ValueError (FlashInfer refuses them).
    B = 0 or T = 0: nothing is compiled or launched, the pool and the buffer
    are untouched, output is the empty [B, T, HV, V] (the given one, if
    any). A pool of 0 slots with B > 0 is a ValueError."""
    _unsupported(ssm_state_indices=ssm_state_indices, cache_replayssm=cache_replayssm)
    buffers = dict(replayssm_rawv=replayssm_rawv, replayssm_rawk=replayssm_rawk,
                   replayssm_g=replayssm_g, replayssm_beta=replayssm_beta)
    given = [name for name, t in buffers.items() if t is not None]
    if given:
        raise ValueError(f"{', '.join(given)}: replayssm_* buffers require cache_replayssm=True")
    if output_state_indices is not None and output_state_indices is not initial_state_indices:
        raise NotImplementedError(
            "gdn: argument 'output_state_indices' (a split read/write pool) is not supported yet")
    q, k, v, dev, B, T, H, K, HV, V = _check_qkv(q, k, v)
    pool = _check_pool("initial_state", initial_state, dev, HV, V, K, B)
    indices = _check_indices("initial_state_indices", initial_state_indices, dev, B,
                             pool.shape[0] if _validate_indices() else None)
    A_log, a, dt_bias, b = _check_fused_gating(dev, B, T, HV, A_log, a, dt_bias, b)
    inter = None
    if intermediate_states_buffer is not None:
        inter = _flashinfer_buffer(intermediate_states_buffer, dev, B, T, HV, V, K)
    scale = _scale(scale)
    output = _check_output(output, v)
    if B == 0 or T == 0:  # no token: nothing to launch, the pool is unchanged
        return output, pool
    read_only = True if disable_state_update is None else bool(disable_state_update)
    torch.ops.gdn.recurrent(q, k, v, None, a, A_log, dt_bias, None, b, indices, None, None,
                            pool if read_only else None, None if read_only else pool, inter,
                            None, output, scale, bool(use_qk_l2norm), "vk")
    return output, pool


# ---------------------------------------------------------------------------
# SGLang: fused_sigmoid_gating_delta_rule_update,
# fused_recurrent_gated_delta_rule_packed_decode
# ---------------------------------------------------------------------------

def fused_sigmoid_gating_delta_rule_update(
        A_log, a, dt_bias, softplus_beta, softplus_threshold, q, k, v, b,
        initial_state_source, initial_state_indices, scale=None,
        use_qk_l2norm_in_kernel=False, cu_seqlens=None, is_kda=False, lower_bound=None,
        disable_state_update=False, intermediate_states_buffer=None,
        intermediate_state_indices=None, cache_steps=None, retrieve_parent_token=None,
        cache_ring=False, replayssm_rawv=None, replayssm_rawk=None, replayssm_g=None,
        replayssm_beta=None, match_cutedsl_decode=False):
    """SGLang's `fused_sigmoid_gating_delta_rule_update` (sglang 0.5.23; decode
    and verify), its full signature: A_log [HV] (any shape of HV elements,
    e.g. Kimi Linear's [1, 1, HV, 1]), dt_bias [HV] (float32, bfloat16 or
    float16, converted to float32), a, b [B, T, HV] or SGLang's 2-D
    [B * T, HV] (viewed as [B, T, HV]), q, k [B, T, H, K], v [B, T, HV, V]
    (views of a packed projection are accepted and copied today, until the
    kernels take strides). is_kda=True (Kimi Delta Attention): a
    [B, T, HV, K] (or [B * T, HV * K], [B, T, HV * K]) and dt_bias [HV * K]
    (SGLang's flattened bias; [HV, K] is accepted too), the decay per key
    channel; b may be [B, T, HV, V] (beta per value channel, a gdn
    extension) either way. initial_state_source: the pool [slots, HV, V, K]
    (fp32, bf16 or fp16; computed in fp32, rounded once on store), updated
    in place at initial_state_indices [N] (int32/int64; < 0: padding row, no
    slot touched, output rows zero; N = B, or with cu_seqlens [N + 1] for
    packed tokens (B = 1) the number of sequences); None, as in SGLang:
    every row starts from a zero state and no state is written (the indices
    are then not read). Verify: intermediate_states_buffer
    [rows, steps, HV, V, K] receives the state after every token (step t of
    row intermediate_state_indices[n], < 0: none; SGLang's addressing, also
    when steps != T) and disable_state_update=True leaves the pool
    untouched; cache_steps is ignored (SGLang uses it only to choose a
    launch configuration). EAGLE tree verify: retrieve_parent_token
    [N, steps] (int32/int64, needs the buffer) names each token's parent
    step p: step s > 0 starts from the state after step p as stored in the
    buffer (rounded to its dtype) when 0 <= p < s - 1, from the carried fp32
    state when p = s - 1, and from the pool slot's state (a second root) when
    p < 0 or p >= s (no tree: treated as -1); rows without a buffer row
    (index < 0) ignore the table. Returns o [B, T, HV, V] (tokens outside
    every sequence are left unwritten).
    Not supported yet (NotImplementedError naming them): softplus_beta !=
    1.0, softplus_threshold != 20.0, lower_bound (SGLang's KDA safe gate
    lower_bound * sigmoid(exp(A_log) (a + dt_bias))), cache_ring (the
    ReplaySSM ring-write; replayssm_* are ignored without it, as in SGLang),
    match_cutedsl_decode (after SGLang's own ValueError when it is set
    without is_kda or with lower_bound). Unknown keywords are a TypeError,
    as SGLang's fixed signature makes them.
    Nothing to compute (B = 0, T = 0 or cu_seqlens = [0]): nothing is
    compiled or launched, the pool and the buffer are untouched and o is the
    empty (cu_seqlens = [0]: unwritten) [B, T, HV, V]. A pool or buffer of 0
    slots (rows) with N > 0 rows is a ValueError."""
    if match_cutedsl_decode and (not is_kda or lower_bound is not None):
        raise ValueError("match_cutedsl_decode is defined for the KDA softplus gate only "
                         "(is_kda=True, lower_bound=None).")
    _unsupported(match_cutedsl_decode=match_cutedsl_decode, lower_bound=lower_bound,
                 cache_ring=cache_ring)
    if float(softplus_beta) != 1.0:
        raise NotImplementedError("gdn: argument 'softplus_beta' != 1.0 is not supported yet")
    if float(softplus_threshold) != 20.0:
        raise NotImplementedError("gdn: argument 'softplus_threshold' != 20.0 is not supported yet")
    q, k, v, dev, B, T, H, K, HV, V = _check_qkv(q, k, v)
    cu_seqlens, N, fresh = _check_cu_seqlens(cu_seqlens, dev, B, T)
    pool = initial_state_source
    indices = None
    if pool is not None:
        pool = _check_pool("initial_state_source", pool, dev, HV, V, K, N)
        indices = _check_indices("initial_state_indices", initial_state_indices, dev, N,
                                 pool.shape[0] if _validate_indices() else None)
    A_log, a, dt_bias, b = _check_fused_gating(dev, B, T, HV, A_log, a, dt_bias, b,
                                               K=K if is_kda else None, V=V)
    inter = intermediate_states_buffer
    inter_idx = None
    if inter is not None:
        if not isinstance(inter, torch.Tensor) or inter.dim() != 5:
            raise ValueError("intermediate_states_buffer must be a 5-D tensor [rows, steps, HV, V, K]")
        _check("intermediate_states_buffer", inter, dev, (inter.shape[0], inter.shape[1], HV, V, K),
               _INPUT, written=True)
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
               (torch.int32, torch.int64), strided=True)
    scale = _scale(scale)
    o = torch.empty_like(v)
    if N == 0 or T == 0:  # no token: nothing to launch, the pool is unchanged
        return o
    o_out = o
    if inter is not None and cu_seqlens is None and inter.shape[1] != T:
        # SGLang writes step t of a row at its buffer row's step t, whatever
        # the buffer's step count; the op takes another step count for packed
        # tokens only: the B rows as B sequences of T tokens (views).
        cu_seqlens = torch.arange(0, (B + 1) * T, T, dtype=torch.int32, device=dev)
        fresh = True
        packed = lambda t: t.view(1, B * T, *t.shape[2:])
        q, k, v, a, b, o = (packed(t) for t in (q, k, v, a, b, o))
    # disable_state_update: the pool is only read (no commit).
    read_only = bool(disable_state_update)
    torch.ops.gdn.recurrent(q, k, v, None, a, A_log, dt_bias, None, b, indices, cu_seqlens,
                            inter_idx, pool if read_only else None,
                            None if read_only else pool, inter, None, o, scale,
                            bool(use_qk_l2norm_in_kernel), "vk", False, parents,
                            fresh_early_inputs=fresh)
    return o_out


def fused_recurrent_gated_delta_rule_packed_decode(
        mixed_qkv, a, b, A_log, dt_bias, scale, initial_state, out, ssm_state_indices,
        use_qk_l2norm_in_kernel=False):
    """SGLang's `fused_recurrent_gated_delta_rule_packed_decode` (sglang 0.5.23;
    GDN decode, one token a row, fused gating): mixed_qkv [B, 2 H K + HV V],
    the conv1d output read as SGLang's kernel reads it: q = columns
    [0, H K) as [H, K], k = [H K, 2 H K), v = [2 H K, 2 H K + HV V) as
    [HV, V] (H inferred from the width; the column slices are copied today,
    until the kernels take strides); a, b [B, HV]; A_log, dt_bias [HV]
    (float32, bfloat16 or float16, converted to float32); scale (None:
    K^-0.5); initial_state the pool [slots, HV, V, K] (HV, V, K are read from
    it) updated in place at ssm_state_indices [B] (int32/int64; < 0: padding,
    no slot touched, output row 0); out [B, 1, HV, V] (mixed_qkv's dtype)
    written in place. g = -exp(A_log) softplus(a + dt_bias) (threshold 20),
    beta = sigmoid(b). Returns (out, initial_state), as SGLang. SGLang's
    ValueErrors for malformed shapes are kept; a strided pool or out
    (written in place) is not supported yet. B = 0: nothing is launched."""
    def tensor(name, t):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
        return t

    for name, t in (("mixed_qkv", mixed_qkv), ("a", a), ("b", b), ("A_log", A_log),
                    ("dt_bias", dt_bias), ("initial_state", initial_state), ("out", out),
                    ("ssm_state_indices", ssm_state_indices)):
        tensor(name, t)
    if mixed_qkv.ndim != 2:
        raise ValueError(f"`mixed_qkv` must be a 2D tensor (got ndim={mixed_qkv.ndim}).")
    if a.ndim != 2 or b.ndim != 2:
        raise ValueError(f"`a` and `b` must be 2D tensors (got a.ndim={a.ndim}, b.ndim={b.ndim}).")
    if ssm_state_indices.ndim != 1:
        raise ValueError("`ssm_state_indices` must be 1D for packed decode (got "
                         f"ndim={ssm_state_indices.ndim}).")
    dev = mixed_qkv.device
    if any(t.device != dev for t in (a, b, A_log, dt_bias, initial_state, out,
                                     ssm_state_indices)):
        raise ValueError("All inputs must be on the same device.")
    B = mixed_qkv.shape[0]
    if a.shape[0] != B or b.shape[0] != B:
        raise ValueError(f"Mismatched batch sizes: mixed_qkv.shape[0]={B}, "
                         f"a.shape[0]={a.shape[0]}, b.shape[0]={b.shape[0]}.")
    if initial_state.ndim != 4:
        raise ValueError(f"`initial_state` must be a 4D tensor (got ndim={initial_state.ndim}).")
    HV, V, K = initial_state.shape[-3:]
    if a.shape[1] != HV or b.shape[1] != HV:
        raise ValueError(f"`a`/`b` must have shape [B, HV] with HV={HV} (got "
                         f"a.shape={tuple(a.shape)}, b.shape={tuple(b.shape)}).")
    if A_log.numel() != HV or dt_bias.numel() != HV:
        raise ValueError(f"`A_log` and `dt_bias` must have {HV} elements (got "
                         f"A_log.numel()={A_log.numel()}, dt_bias.numel()={dt_bias.numel()}).")
    if tuple(out.shape) != (B, 1, HV, V):
        raise ValueError(f"`out` must have shape {(B, 1, HV, V)} (got out.shape={tuple(out.shape)}).")
    qkv_dim = mixed_qkv.shape[1]
    qk_dim = qkv_dim - HV * V
    if qk_dim <= 0 or qk_dim % 2 != 0:
        raise ValueError(f"Invalid packed `mixed_qkv` last dim={qkv_dim} for HV={HV}, V={V}.")
    q_dim = qk_dim // 2
    if K == 0 or q_dim % K != 0:
        raise ValueError(f"Invalid packed Q size {q_dim}: must be divisible by K={K}.")
    H = q_dim // K
    if H <= 0 or HV % H != 0:
        raise ValueError(f"Invalid head config inferred from mixed_qkv: H={H}, HV={HV}.")
    if out.dtype != mixed_qkv.dtype:
        raise NotImplementedError(
            f"gdn: argument 'out' in {out.dtype}, not mixed_qkv's {mixed_qkv.dtype}, is not "
            "supported yet")
    q = mixed_qkv[:, :q_dim].reshape(B, 1, H, K)
    k = mixed_qkv[:, q_dim:qk_dim].reshape(B, 1, H, K)
    v = mixed_qkv[:, qk_dim:].reshape(B, 1, HV, V)
    q, k, v, dev, B, T, H, K, HV, V = _check_qkv(q, k, v)
    pool = _check_pool("initial_state", initial_state, dev, HV, V, K, B)
    indices = _check_indices("ssm_state_indices", ssm_state_indices, dev, B,
                             pool.shape[0] if _validate_indices() else None)
    A_log, a, dt_bias, b = _check_fused_gating(dev, B, 1, HV, A_log, a, dt_bias, b)
    scale = _scale(scale)
    out = _check("out", out, dev, (B, 1, HV, V), None, written=True)
    if B == 0:
        return out, initial_state
    torch.ops.gdn.recurrent(q, k, v, None, a, A_log, dt_bias, None, b, indices, None, None,
                            None, pool, None, None, out, scale, bool(use_qk_l2norm_in_kernel),
                            "vk")
    return out, initial_state


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
