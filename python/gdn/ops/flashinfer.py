"""FlashInfer (flashinfer-python 0.7.2, flashinfer.gdn_decode):
gated_delta_rule_decode_pretranspose, gated_delta_rule_decode (K-major
state), gated_delta_rule_mtp (verify, T > 1; ReplaySSM windows with
cache_replayssm) and gated_delta_rule_replayssm_commit (the ReplaySSM
commit of all layers); and flashinfer.gdn_prefill's chunk_gated_delta_rule
(packed varlen prefill with prefix-cache checkpoints; gdn.ops re-exports it
as flashinfer_chunk_gated_delta_rule, since gdn.ops.chunk_gated_delta_rule
is FLA's)."""
import numbers

import torch

from . import _custom_ops  # noqa: F401  (registers torch.ops.gdn.recurrent)
from ._checks import (_INPUT, _check, _check_cu_seqlens, _check_fused_gating, _check_indices,
                      _check_pool, _check_qkv, _dense_like, _scale, _unsupported,
                      _validate_indices)
from .quantized import FP8, _scales_attached, _state_scale_of, _stochastic_rounding
from .replay import _null_blocks, _replay


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
    # Contiguous: its flat steps are what FlashInfer's kernels address (a
    # view with a row pitch has no flat steps).
    _check("intermediate_states_buffer", inter, dev, (inter.shape[0], inter.shape[1], HV, V, K),
           _INPUT + (FP8,), written=True)
    return inter.view(-1)[:B * T * HV * V * K].view(B, T, HV, V, K)


def _check_output(output, v):
    if output is None:
        return _dense_like(v)
    return _check("output", output, v.device, v.shape, (v.dtype,), written=True)


def _run(q, k, v, state, indices, A_log, a, dt_bias, b, scale, output, buffer, read_only,
         use_qk_l2norm, windows=None, state_name="initial_state"):
    """The shared tail of the vk entry points on checked q, k, v and state
    (or pool, with `indices`): checks the gates, the verify buffer, scale,
    output and the row scales of a float8_e4m3fn state (`state_name`'s), then
    runs the op (state read only, or updated in place; with `windows`, the
    checked replay windows (k, v, g, beta), also written).
    Returns (output, state); B = 0 or T = 0 launch nothing."""
    B, T, HV, V = v.shape
    K = q.shape[3]
    dev = q.device
    state_scale = _state_scale_of(state, state_name)
    A_log, a, dt_bias, b = _check_fused_gating(dev, B, T, HV, A_log, a, dt_bias, b)
    inter = inter_scale = None
    if buffer is not None:
        inter = _flashinfer_buffer(buffer, dev, B, T, HV, V, K)
        inter_scale = _state_scale_of(inter, "intermediate_states_buffer")
    scale = _scale(scale)
    output = _check_output(output, v)
    if B == 0 or T == 0:  # no token: nothing to launch, the state is unchanged
        return output, state
    kw, vw, gw, bw = windows or (None,) * 4
    torch.ops.gdn.recurrent(q, k, v, None, a, A_log, dt_bias, None, b, indices, None, None,
                            state if read_only else None, None if read_only else state,
                            inter, None, output, kw, vw, gw, bw, state_scale, None, None,
                            inter_scale, None, scale,
                            bool(use_qk_l2norm),
                            "vk", stochastic_rounding=_stochastic_rounding(
                                None if read_only else state, inter))
    return output, state


_REPLAYSSM = ("replayssm_rawv", "replayssm_rawk", "replayssm_g", "replayssm_beta")


def _replayssm_windows(buffers, q, pool_size, HV, V):
    """FlashInfer's ReplaySSM windows, checked as FlashInfer asserts them (a
    ValueError naming the buffer): rawv [pool, HV, T, V], rawk [pool, H, T, K]
    in q's dtype (FlashInfer: bfloat16; its float16 inputs are cached as
    bfloat16, which gdn does not do: NotImplementedError), g and beta
    [pool, HV, T] float32, contiguous, on q's device, all four given.
    Returns them as (k, v, g, beta), the op's order."""
    missing = [name for name in _REPLAYSSM if buffers[name] is None]
    if missing:
        raise ValueError(f"cache_replayssm=True requires replayssm_rawv/rawk/g/beta; missing "
                         f"{', '.join(missing)}")
    B, T, H, K = q.shape
    expected = {"replayssm_rawv": (pool_size, HV, T, V), "replayssm_rawk": (pool_size, H, T, K),
                "replayssm_g": (pool_size, HV, T), "replayssm_beta": (pool_size, HV, T)}
    for name, shape in expected.items():
        t = buffers[name]
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
        dtype = q.dtype if name in ("replayssm_rawv", "replayssm_rawk") else torch.float32
        if tuple(t.shape) != shape:
            raise ValueError(f"{name} must have shape {list(shape)}, got {list(t.shape)}")
        if t.dtype != dtype:
            if dtype == torch.float16 and t.dtype == torch.bfloat16:
                raise NotImplementedError(
                    f"gdn: argument '{name}' in bfloat16 with float16 inputs (FlashInfer "
                    "caches them converted) is not supported yet: gdn's windows hold q's dtype")
            raise ValueError(f"{name} must have dtype {dtype}, got {t.dtype}")
        if t.device != q.device:
            raise ValueError(f"{name} device {t.device} != q device {q.device}")
        if not t.is_contiguous():
            raise ValueError(f"{name} must be a contiguous per-layer ReplaySSM view")
        _check(name, t, q.device, shape, (dtype,), written=True)
    return tuple(buffers[name] for name in ("replayssm_rawk", "replayssm_rawv", "replayssm_g",
                                            "replayssm_beta"))


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
    States: fp32, bf16 or fp16 (computed in fp32, rounded once on store),
    or float8_e4m3fn with row scales attached (gdn.ops.quantized_state).
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
    a and b are read in place where the kernels can address them (else
    copied, as A_log and dt_bias); a pool whose slots have a pitch is
    written in place; another strided state, buffer or output (written in
    place) is an error naming it (NotImplementedError and ValueError).
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
        target = _check("state", state, dev, (B, HV, V, K), _INPUT + (torch.float8_e4m3fn,),
                        written=True, layout="slots")
        indices = None
    return _run(q, k, v, target, indices, A_log, a, dt_bias, b, scale, output,
                intermediate_states_buffer, bool(disable_state_update), use_qk_l2norm,
                state_name="initial_state" if pool_mode else "state")


def gated_delta_rule_decode(
        q, k, v, state, A_log, a, dt_bias, b, scale=None, output=None, use_qk_l2norm=True,
        backend="auto"):
    """FlashInfer's `gated_delta_rule_decode` (flashinfer-python 0.7.2; K-major
    state, no transpose): q, k [B, T, H, K], v [B, T, HV, V] (T = 1 decode;
    T > 1 also runs), A_log [HV], dt_bias [HV] (float32, bfloat16 or
    float16, converted to float32), a, b [B, T, HV], state [B, HV, K, V]
    (fp32, bf16 or fp16; the op's "kv" layout; or float8_e4m3fn with row
    scales [B, HV, V] attached: gdn.ops.quantize_state(..., layout="kv"))
    updated in place, the scales too. backend:
    "auto" / "flashinfer" (gdn's kernel), "cake_gdn": NotImplementedError,
    anything else ValueError. Returns (output [B, T, HV, V] in v's dtype
    (the given one, written in place), state). A strided state (FlashInfer
    copies it in and out) is not supported yet; strided q, k, v, a and b
    are read in place where the kernels can address them, else copied (as
    A_log and dt_bias). B = 0: nothing is launched."""
    _flashinfer_backend(backend, ("auto", "flashinfer", "cake_gdn"))
    q, k, v, dev, B, T, H, K, HV, V = _check_qkv(q, k, v)
    if not isinstance(state, torch.Tensor) or state.dim() != 4:
        raise ValueError("state must be a 4-D tensor [B, HV, K, V]")
    state = _check("state", state, dev, (B, HV, K, V), _INPUT + (torch.float8_e4m3fn,),
                   written=True, layout="slots")
    state_scale = _state_scale_of(state, "state", "kv")
    A_log, a, dt_bias, b = _check_fused_gating(dev, B, T, HV, A_log, a, dt_bias, b)
    scale = _scale(scale)
    output = _check_output(output, v)
    if B == 0 or T == 0:
        return output, state
    torch.ops.gdn.recurrent(q, k, v, None, a, A_log, dt_bias, None, b, None, None, None,
                            None, state, None, None, output, None, None, None, None,
                            state_scale, None, None, None, None, scale, bool(use_qk_l2norm), "kv",
                            stochastic_rounding=_stochastic_rounding(state))
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
    scatter) and output_state_indices other than initial_state_indices
    raise NotImplementedError; replayssm_* buffers without cache_replayssm
    are a ValueError (FlashInfer refuses them).
    cache_replayssm=True (ReplaySSM verify; gdn takes any T >= 1 and every
    GPU gdn supports, and the CPU): the pool is only read and, instead of
    per-token states, row initial_state_indices[n] (< 0: nothing) of the
    windows receives each token's raw inputs: replayssm_rawk
    [slots, H, T, K] (k before the L2 norm) and replayssm_rawv
    [slots, HV, T, V], both in q's dtype (bfloat16 as FlashInfer asserts;
    float32 inputs: float32; bfloat16 windows with float16 inputs:
    NotImplementedError), replayssm_g [slots, HV, T] (log decay) and
    replayssm_beta [slots, HV, T] (sigmoid(b)), float32, contiguous; the
    output is the one of the same call without the windows, bit for bit.
    As FlashInfer asserts (ValueError): disable_state_update=True (or
    None), no intermediate_states_buffer, no ssm_state_indices, all four
    buffers of those shapes and dtypes, a pool of at least one slot.
    gated_delta_rule_replayssm_commit (or gdn.ops.replay_commit) then
    replays the accepted prefixes onto the pool.
    B = 0 or T = 0: nothing is compiled or launched, the pool and the buffer
    are untouched, output is the empty [B, T, HV, V] (the given one, if
    any). A pool of 0 slots with B > 0 is a ValueError."""
    buffers = dict(replayssm_rawv=replayssm_rawv, replayssm_rawk=replayssm_rawk,
                   replayssm_g=replayssm_g, replayssm_beta=replayssm_beta)
    read_only = True if disable_state_update is None else bool(disable_state_update)
    if cache_replayssm:  # FlashInfer's asserts, in its order
        if not read_only:
            raise ValueError("ReplaySSM verify must leave the checkpoint frozen "
                             "(disable_state_update=True)")
        if intermediate_states_buffer is not None:
            raise ValueError("ReplaySSM replaces full intermediate-state snapshots "
                             "(intermediate_states_buffer must be None)")
        if ssm_state_indices is not None:
            raise ValueError("ReplaySSM and per-token state scatter (ssm_state_indices) are "
                             "mutually exclusive")
    else:
        given = [name for name, t in buffers.items() if t is not None]
        if given:
            raise ValueError(f"{', '.join(given)}: replayssm_* buffers require "
                             "cache_replayssm=True")
    _unsupported(ssm_state_indices=ssm_state_indices)
    if output_state_indices is not None and output_state_indices is not initial_state_indices:
        raise NotImplementedError(
            "gdn: argument 'output_state_indices' (a split read/write pool) is not supported yet")
    q, k, v, dev, B, T, H, K, HV, V = _check_qkv(q, k, v)
    pool = _check_pool("initial_state", initial_state, dev, HV, V, K, B)
    indices = _check_indices("initial_state_indices", initial_state_indices, dev, B,
                             pool.shape[0] if _validate_indices() else None)
    windows = None
    if cache_replayssm:
        if pool.shape[0] == 0:
            raise ValueError("ReplaySSM requires at least one checkpoint slot")
        windows = _replayssm_windows(buffers, q, pool.shape[0], HV, V)
    return _run(q, k, v, pool, indices, A_log, a, dt_bias, b, scale, output,
                intermediate_states_buffer, read_only, use_qk_l2norm, windows)


def gated_delta_rule_replayssm_commit(
        checkpoint_state, rawv_cache, rawk_cache, g_cache, beta_cache, state_indices,
        accept_lens, *, track_state_indices=None, track_steps=None, use_qk_l2norm=True,
        null_block_id=-1, backend="auto"):
    """FlashInfer's `gated_delta_rule_replayssm_commit` (flashinfer-python
    0.7.2): after gated_delta_rule_mtp(cache_replayssm=True) of every layer,
    replays each request's accepted prefix into every layer's checkpoint, in
    place, in one launch (gdn.ops.replay_commit; any GPU gdn supports, and
    the CPU).
    - checkpoint_state [layers, slots, HV, V, K] (K-last), float32 as
      FlashInfer (bfloat16 and float16 too: replayed in float32, rounded
      once on store);
    - rawv_cache [layers, slots, HV, T, V], rawk_cache [layers, slots, H, T, K]
      (one dtype, the verify's q dtype: bfloat16 as FlashInfer), g_cache,
      beta_cache [layers, slots, HV, T] float32; all contiguous;
    - state_indices [B], accept_lens [B]: int32 as FlashInfer (int64 too);
      row n replays min(accept_lens[n], T) tokens onto slot state_indices[n];
      slots <= null_block_id (>= -1) and accept_lens <= 0 are no-ops (a slot
      no live row names stays bit-identical).
    use_qk_l2norm must match the verify. backend: "auto", "simt" and
    "tcgen05" all run gdn's kernel (float32 arithmetic); any other value is
    a ValueError (as FlashInfer). track_state_indices / track_steps (saving
    an extra checkpoint): NotImplementedError naming them.
    Errors before any launch: ValueError for shapes, devices, contiguity,
    null_block_id < -1, as FlashInfer (whose TypeError for dtypes is kept);
    each names the argument. Live slots must be unique and in range (the
    caller's contract, as in FlashInfer). B = 0: nothing is launched.
    Returns None."""
    if backend not in ("auto", "simt", "tcgen05"):
        raise ValueError("backend must be auto, simt, or tcgen05")
    _unsupported(track_state_indices=track_state_indices, track_steps=track_steps)
    for name, t in (("checkpoint_state", checkpoint_state), ("rawk_cache", rawk_cache)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if rawk_cache.dim() != 5:
        raise ValueError("rawk_cache must be [layers, slots, H, T, K]")
    if checkpoint_state.dim() != 5:
        raise ValueError("checkpoint_state must be [layers, slots, HV, V, K]")
    if null_block_id < -1:
        raise ValueError("null_block_id must be >= -1")
    _replay(rawk_cache, rawv_cache, g_cache, beta_cache, accept_lens, checkpoint_state,
            _null_blocks("state_indices", state_indices, null_block_id), use_qk_l2norm, "vk",
            dict(k="rawk_cache", v="rawv_cache", g="g_cache", beta="beta_cache",
                 accepted="accept_lens", state="checkpoint_state", indices="state_indices"))



# FlashInfer 0.7.2's prefill: its backends, its chunk (checkpoints fall on
# multiples of it) and the fp8 state dtypes it takes and gdn does not.
_PREFILL_BACKENDS = ("auto", "flashinfer", "cake_gdn", "cudnn")
_PREFILL_CHUNK = 64
_FP8 = (torch.float8_e4m3fn, torch.float8_e5m2)


def _tokens(name, t, heads_name):
    """A packed token tensor [total, heads, dim] (3-D), else the error
    naming it."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if t.dim() != 3:
        raise ValueError(f"{name} must be [total_seq_len, {heads_name}, head_size] (packed "
                         f"tokens, 3-D), got shape {list(t.shape)}")
    return t


def _prefill_heads(q, k, v):
    """FlashInfer's head configurations, q [total, hq, K], k [total, hk, K],
    v [total, hv, V]: equal heads, GVA (hq == hk, hv a multiple) or GQA
    (hk == hv, hq a multiple; output head i reads k and v head
    i // (hq / hk), as FlashInfer's kernels). GQA repeats k and v to hq heads
    (a copy each), so the op sees H = hq, HV = max(hq, hv). Returns (k, v)."""
    (total, hq, K), (hk, hv) = q.shape, (k.shape[1], v.shape[1])
    for name, t, dim in (("k", k, K), ("v", v, None)):
        if t.shape[0] != total or (dim is not None and t.shape[2] != dim):
            what = f"[{total}, num_k_heads, {K}]" if dim else f"[{total}, num_v_heads, head_size]"
            raise ValueError(f"{name} must be {what} (q's tokens{' and head size' if dim else ''}"
                             f"), got shape {list(t.shape)}")
    if min(hq, hk, hv) < 1:
        raise ValueError(f"q, k and v need at least one head each, got q {list(q.shape)}, "
                         f"k {list(k.shape)}, v {list(v.shape)}")
    if hq == hk and hv % hq == 0:
        return k, v
    if hk == hv and hq % hk == 0:
        return k.repeat_interleave(hq // hk, dim=1), v.repeat_interleave(hq // hk, dim=1)
    raise ValueError(f"unsupported head configuration: q has {hq} heads, k {hk}, v {hv}; "
                     "FlashInfer takes hq == hk with hv a multiple of hq (GVA) or hk == hv "
                     "with hq a multiple of hk (GQA)")


def _check_max_seqlen(max_seqlen, total, num_seqs):
    """FlashInfer's checks of max_seqlen (a host-side bound on the longest
    sequence, which only sizes its context-parallel grids): ValueError as
    FlashInfer raises them; the value is not used otherwise."""
    bound = total if max_seqlen is None else max_seqlen
    if type(bound) is not int or bound < 0:
        raise ValueError("max_seqlen must be a nonnegative integer")
    if total and bound == 0:
        raise ValueError("max_seqlen must be positive when q is nonempty")
    if bound < (total + num_seqs - 1) // num_seqs:
        raise ValueError("max_seqlen cannot be smaller than ceil(total_seq_len / num_seqs)")
    if bound > total:
        raise ValueError("max_seqlen cannot exceed total_seq_len")


def _checkpoint_interval(every, state_checkpoints, checkpoint_cu_starts):
    """checkpoint_every_n_tokens as an int, checked as FlashInfer checks it
    first (ValueError naming it: negative, not a multiple of 64; the buffers
    missing when > 0, given when 0); a non-integer is a TypeError."""
    if isinstance(every, bool) or not isinstance(every, numbers.Integral):
        raise TypeError(f"checkpoint_every_n_tokens must be an int, got {type(every).__name__}")
    every = int(every)
    if every < 0:
        raise ValueError(f"checkpoint_every_n_tokens must be non-negative, got {every}")
    if every >= 2**63:  # the kernel's interval is an int64
        raise ValueError(f"checkpoint_every_n_tokens must be below 2**63, got {every}")
    if every == 0:
        if state_checkpoints is not None or checkpoint_cu_starts is not None:
            raise ValueError("state_checkpoints and checkpoint_cu_starts must be None when "
                             "checkpoint_every_n_tokens == 0")
        return 0
    if every % _PREFILL_CHUNK:
        raise ValueError(f"checkpoint_every_n_tokens must be a multiple of the chunk size "
                         f"({_PREFILL_CHUNK}), got {every}")
    missing = [name for name, t in (("state_checkpoints", state_checkpoints),
                                    ("checkpoint_cu_starts", checkpoint_cu_starts)) if t is None]
    if missing:
        raise ValueError(f"state_checkpoints and checkpoint_cu_starts must both be provided "
                         f"when checkpoint_every_n_tokens > 0; missing {', '.join(missing)}")
    return every


def _check_checkpoint_rows(starts, cu_seqlens, every, rows):
    """Debug aid (GDN_VALIDATE_INDICES=1; synchronises with the device):
    sequence n's len_n // every checkpoints need rows [starts[n], starts[n]
    + len_n // every) inside [starts[n], starts[n + 1]) and [0, rows), with
    starts non-decreasing; else ValueError naming checkpoint_cu_starts or
    state_checkpoints (without validation the op clamps the rows and drops
    the checkpoints that do not fit, writing no row outside the buffer)."""
    s, cu = starts.tolist(), cu_seqlens.tolist()
    if s[0] < 0:
        raise ValueError(f"checkpoint_cu_starts[0] = {s[0]} must be >= 0")
    for n in range(len(s) - 1):
        if s[n + 1] < s[n]:
            raise ValueError(f"checkpoint_cu_starts must be non-decreasing, got "
                             f"checkpoint_cu_starts[{n + 1}] = {s[n + 1]} < "
                             f"checkpoint_cu_starts[{n}] = {s[n]}")
        need = (cu[n + 1] - cu[n]) // every
        if s[n + 1] - s[n] < need:
            raise ValueError(f"checkpoint_cu_starts gives sequence {n} ({cu[n + 1] - cu[n]} "
                             f"tokens) {s[n + 1] - s[n]} rows for its {need} checkpoints, one "
                             f"every {every} tokens")
    if s[-1] > rows:
        raise ValueError(f"state_checkpoints has {rows} rows, checkpoint_cu_starts[-1] = "
                         f"{s[-1]} asks for more")


def _prefill_checkpoints(state_checkpoints, checkpoint_cu_starts, every, dev, N, HV, V, K,
                         cu_seqlens):
    """FlashInfer's prefix-cache checkpoints (every: the checked
    checkpoint_every_n_tokens), checked (ValueError / TypeError naming the
    argument; unscaled float8 buffers: NotImplementedError): returns
    (checkpoint_offsets, state_checkpoints, interval, copied,
    checkpoint_scale) for the op, (None, None, 0, False, None) without
    checkpoints or with a buffer of 0 rows (nothing can be written).
    float8_e4m3fn checkpoints are gdn's, with row scales attached
    (gdn.ops.quantized_state; checkpoint_scale their scales, written with
    them); FlashInfer's unscaled float8 ones: NotImplementedError."""
    if every == 0:
        return None, None, 0, False, None
    if not isinstance(state_checkpoints, torch.Tensor):
        raise TypeError(f"state_checkpoints must be a torch.Tensor, got "
                        f"{type(state_checkpoints).__name__}")
    checkpoint_scale = None
    if _scales_attached(state_checkpoints):
        checkpoint_scale = _state_scale_of(state_checkpoints, "state_checkpoints")
    elif state_checkpoints.dtype in _FP8:
        raise NotImplementedError(
            f"gdn: argument 'state_checkpoints' in {state_checkpoints.dtype} without row scales "
            "(FlashInfer's unscaled float8) is not supported: gdn takes float32, bfloat16, "
            "float16, or float8_e4m3fn with its row scales attached (gdn.ops.quantized_state)")
    if state_checkpoints.dim() != 4:
        raise ValueError(f"state_checkpoints must be 4D [total_checkpoints, num_sab_heads, "
                         f"head_size, head_size] ([C, HV, V, K]), got {state_checkpoints.dim()}D")
    _check("state_checkpoints", state_checkpoints, dev,
           (state_checkpoints.shape[0], HV, V, K),
           _INPUT + ((FP8,) if checkpoint_scale is not None else ()), written=True)
    if not isinstance(checkpoint_cu_starts, torch.Tensor) or checkpoint_cu_starts.dim() != 1:
        raise ValueError("checkpoint_cu_starts must be a 1-D tensor [num_seqs + 1]")
    given = checkpoint_cu_starts
    offsets = _check("checkpoint_cu_starts", checkpoint_cu_starts, dev, (N + 1,),
                     (torch.int32, torch.int64), copy=True)
    if _validate_indices():
        _check_checkpoint_rows(offsets, cu_seqlens, every, state_checkpoints.shape[0])
    if state_checkpoints.shape[0] == 0:
        return None, None, 0, False, None
    return offsets, state_checkpoints, every, offsets is not given, checkpoint_scale


def _check_alpha(g):
    """Debug aid (GDN_VALIDATE_INDICES=1; synchronises with the device):
    alpha outside [0, 1] (NaN included) is a ValueError naming g, its first
    such element as [token, head]."""
    bad = ~((g >= 0) & (g <= 1))
    if bool(bad.any()):
        t, h = (int(i) for i in bad.nonzero()[0])
        raise ValueError(f"g (alpha, the linear decay) must lie in [0, 1], got g[{t}, {h}] = "
                         f"{float(g[t, h])} (log(alpha) would make the state NaN or grow)")


def _same_view(a, b):
    """a and b address the same elements the same way (one buffer updated
    in place), e.g. output_state is initial_state."""
    return a is b or (a.data_ptr() == b.data_ptr() and a.dtype == b.dtype
                      and a.shape == b.shape and a.stride() == b.stride())


def chunk_gated_delta_rule(
        q, k, v, g=None, beta=None, scale=None, initial_state=None, output_final_state=False,
        cu_seqlens=None, use_qk_l2norm_in_kernel=False, output=None, output_state=None,
        state_checkpoints=None, checkpoint_cu_starts=None, checkpoint_every_n_tokens=0,
        use_cp="auto", state_indices=None, _cp_chunk_len=None, backend="auto",
        max_seqlen=None):
    """FlashInfer's `chunk_gated_delta_rule` (flashinfer-python 0.7.2,
    flashinfer.gdn_prefill; gdn.ops.flashinfer_chunk_gated_delta_rule):
    packed varlen prefill, run by gdn's gdn.recurrent kernel (the same
    recurrence, token by token; on the CPU too).

    - q [total, hq, K], k [total, hk, K], v [total, hv, V]: packed tokens of
      one dtype (float32, bfloat16 or float16); heads equal, GVA (hq == hk,
      hv a multiple of hq) or GQA (hk == hv, hq a multiple of hk; k and v
      are then repeated to hq heads, a copy). HV = max(hq, hv) (FlashInfer's
      num_sab_heads) state and output heads.
    - cu_seqlens [N + 1] int32/int64, required (N >= 1; equal neighbours are
      empty sequences): sequence n owns tokens [cu[n], cu[n + 1]).
    - g [total, HV]: alpha, the linear decay in [0, 1] a token (FlashInfer's
      forget gate; float32, bfloat16 or float16); None: 1 (no decay). gdn's
      op takes log(alpha) (computed here, float32; alpha = 0 decays fully).
      The domain is the caller's contract, as in FlashInfer (whose kernels
      take log2(alpha + 1e-10) unchecked): alpha < 0 or NaN makes the
      sequence's outputs and states NaN, alpha > 1 grows the state. The
      values are not checked on the device (that would synchronise);
      GDN_VALIDATE_INDICES=1 refuses alpha outside [0, 1] on the host
      (ValueError naming g; synchronises).
    - beta [total, HV]: float32 (bfloat16 / float16 too); None: 1.
    - scale: None or 0 (FlashInfer's rule) is K^-0.5; NaN / inf: ValueError.
    - use_qk_l2norm_in_kernel: q and k L2-normalised per head (eps 1e-6).
    - States [.., HV, V, K] (V-major, FlashInfer's layout) in float32,
      bfloat16 or float16 (computed in float32, rounded once on store);
      float8_e4m3fn / float8_e5m2 states: NotImplementedError naming the
      argument. Without state_indices: initial_state [N, HV, V, K] (read;
      None: zeros) and output_state [N, HV, V, K] (written; allocated in
      float32 when output_final_state and not given; written whenever
      given, as FlashInfer's SM90 kernel; in place when it is
      initial_state). With state_indices [N] (int32/int64): initial_state
      and output_state are pools [slots, HV, V, K], sequence n reads slot
      state_indices[n] and writes its final state to the same slot of
      output_state (in place when output_state is initial_state; two pools
      need the same slot count, else NotImplementedError); an index < 0 is a
      padding row (no slot touched, output rows zero, no checkpoints);
      output_final_state with state_indices needs output_state (ValueError,
      as FlashInfer). Indices must be unique and below the pool's slots (the
      caller's contract, as in FlashInfer; GDN_VALIDATE_INDICES=1 checks
      both). Without initial_state and output_state, state_indices addresses
      nothing: it is checked and unused (a negative index is then no padding
      row: every sequence runs from zeros). An initial_state of another
      dtype or layout than output_state is first converted (a copy).
      Strided pools whose slots have a pitch are read and written in place.
    - output [total, HV, V] in q's dtype: written in place when given, else
      allocated.
    - Checkpoints (prefix caching): checkpoint_every_n_tokens > 0, a
      multiple of 64 (FlashInfer's chunk; else ValueError naming it), with
      state_checkpoints [C, HV, V, K] (float32, bfloat16 or float16, dense,
      written; or float8_e4m3fn with row scales attached by
      gdn.ops.quantized_state, each stored row quantized with its scale as
      a pool's final state is, stochastically where the buffer asks for it;
      FlashInfer's unscaled float8 buffers: NotImplementedError) and
      checkpoint_cu_starts [N + 1] (int32/int64): sequence n
      stores its state after token (j + 1) * checkpoint_every_n_tokens in
      row checkpoint_cu_starts[n] + j while that row is below
      checkpoint_cu_starts[n + 1] (the caller sets their difference to
      len_n // checkpoint_every_n_tokens); rows outside [0, C) are never
      written, other rows keep their contents (both starts are clamped
      to [0, C] first, the op's rule: a negative start counts from row 0),
      so a checkpoint that does not fit is dropped; GDN_VALIDATE_INDICES=1
      refuses that instead (ValueError naming checkpoint_cu_starts or
      state_checkpoints: starts negative or decreasing, fewer rows than a
      sequence's checkpoints, or past C; synchronises).
      ValueError naming the argument when checkpoint_every_n_tokens > 0 and either buffer is
      missing or misshapen, or when 0 and either is given.
    - use_cp ("auto", True, False; else ValueError as FlashInfer),
      _cp_chunk_len and max_seqlen only steer FlashInfer's context-parallel
      routing and do not change the result: ignored (max_seqlen is checked
      as FlashInfer checks it: ValueError).
    - backend: "auto" / "flashinfer" run gdn's kernel; "cake_gdn" / "cudnn"
      (specific FlashInfer implementations): NotImplementedError; anything
      else ValueError, as FlashInfer.

    Returns output, or (output, final_state) with output_final_state:
    final_state is output_state (the pool itself with state_indices) or the
    float32 [N, HV, V, K] allocated. Every check is on the host, before any
    launch (TypeError / ValueError naming the argument; NotImplementedError
    for what gdn cannot honour); inputs that require grad (with grad
    enabled): NotImplementedError (no backward pass). total = 0: the final
    states are the initial ones (no token runs)."""
    _flashinfer_backend(backend, _PREFILL_BACKENDS)
    if use_cp not in ("auto", True, False):
        raise ValueError(f'use_cp must be "auto", True, or False, got {use_cp!r}')
    every = _checkpoint_interval(checkpoint_every_n_tokens, state_checkpoints,
                                 checkpoint_cu_starts)
    for name, t in (("initial_state", initial_state), ("output_state", output_state)):
        if isinstance(t, torch.Tensor) and t.dtype in _FP8:
            raise NotImplementedError(
                f"gdn: argument '{name}' in {t.dtype} (FlashInfer's unscaled fp8 state) is not "
                "supported yet; gdn's prefill takes float32, bfloat16 or float16 states")
    q = _tokens("q", q, "num_q_heads")
    k = _tokens("k", k, "num_k_heads")
    v = _tokens("v", v, "num_v_heads")
    if cu_seqlens is None:
        raise ValueError("cu_seqlens is required (varlen mode): [num_seqs + 1] int32/int64")
    k, v = _prefill_heads(q, k, v)
    q, k, v, dev, _, total, H, K, HV, V = _check_qkv(q.unsqueeze(0), k.unsqueeze(0),
                                                     v.unsqueeze(0))
    cu_seqlens, N, fresh = _check_cu_seqlens(cu_seqlens, dev, 1, total)
    if N <= 0:
        raise ValueError("cu_seqlens must contain at least two entries")
    _check_max_seqlen(max_seqlen, total, N)
    offsets, checkpoints, interval, copied, checkpoint_scale = _prefill_checkpoints(
        state_checkpoints, checkpoint_cu_starts, every, dev, N, HV, V, K, cu_seqlens)
    fresh = fresh or copied
    if g is not None:
        if not isinstance(g, torch.Tensor):
            raise TypeError(f"g must be a torch.Tensor, got {type(g).__name__}")
        g = _check("g", g, dev, (total, HV), _INPUT, copy=True)
        if _validate_indices():
            _check_alpha(g)
        g = torch.log(g.float()).unsqueeze(0)  # alpha -> gdn's log-space decay
    if beta is not None:
        if not isinstance(beta, torch.Tensor):
            raise TypeError(f"beta must be a torch.Tensor, got {type(beta).__name__}")
        beta = _check("beta", beta, dev, (total, HV), _INPUT, copy=True,
                      layout="tokens").unsqueeze(0)
    scale = _scale(scale)
    if scale == 0.0:  # FlashInfer: 0 means the default, as None
        scale = None
    if output is None:
        output = torch.empty(total, HV, V, dtype=q.dtype, device=dev)
    else:
        if not isinstance(output, torch.Tensor):
            raise TypeError(f"output must be a torch.Tensor, got {type(output).__name__}")
        output = _check("output", output, dev, (total, HV, V), (q.dtype,), written=True)

    # The states: sequence-ordered [N, HV, V, K], or pools with state_indices.
    if state_indices is not None:
        indices = _check_indices("state_indices", state_indices, dev, N)
        if output_final_state and output_state is None:
            raise ValueError(
                "state_indices requires an explicit output_state pool sized like the state "
                "pool ([N_pool, H, V, K]); refusing to auto-allocate a compact [num_seqs, ...] "
                "tensor that would be indexed out of bounds.")
        if initial_state is not None:
            _check_pool("initial_state", initial_state, dev, HV, V, K, N)
        if output_state is not None:
            _check_pool("output_state", output_state, dev, HV, V, K, N)
        if (initial_state is not None and output_state is not None
                and initial_state.shape[0] != output_state.shape[0]):
            raise NotImplementedError(
                f"gdn: argument 'output_state' as a pool of {output_state.shape[0]} slots "
                f"apart from initial_state's {initial_state.shape[0]} is not supported yet "
                "(pools of one slot count, or output_state is initial_state)")
        pool = initial_state if initial_state is not None else output_state
        if pool is None:
            indices = None  # no state to address: state_indices is checked, unused
        elif _validate_indices() and N:
            _check_indices("state_indices", indices, dev, N, pool.shape[0])
            seen = {}
            for n, slot in enumerate(indices.tolist()):
                if slot >= 0 and seen.setdefault(slot, n) != n:
                    raise ValueError(f"state_indices holds slot {slot} for sequences "
                                     f"{seen[slot]} and {n}: two sequences would write one "
                                     "pool row (the ids must be unique)")
    else:
        indices = None
        shape = (N, HV, V, K)
        if initial_state is not None:
            given = initial_state
            initial_state = _check("initial_state", initial_state, dev, shape, _INPUT, copy=True,
                                   layout="slots")
            fresh = fresh or initial_state is not given
        if output_state is not None:
            output_state = _check("output_state", output_state, dev, shape, _INPUT, written=True,
                                  layout="slots")
        elif output_final_state:
            output_state = torch.empty(shape, dtype=torch.float32, device=dev)
    in_place = (initial_state is not None and output_state is not None
                and _same_view(initial_state, output_state))
    read = initial_state
    if read is not None and output_state is not None and not in_place and (
            read.dtype != output_state.dtype or read.stride() != output_state.stride()):
        # the op takes one state dtype and layout: the read-only state converted
        read = torch.empty_strided(output_state.shape, output_state.stride(),
                                   dtype=output_state.dtype, device=dev).copy_(read)
        fresh = True

    o = output.unsqueeze(0)
    if total == 0:  # the op needs a token: one that belongs to no sequence
        q, k = q.new_zeros(1, 1, H, K), k.new_zeros(1, 1, H, K)
        v, o = v.new_zeros(1, 1, HV, V), v.new_zeros(1, 1, HV, V)
        g = None if g is None else g.new_zeros(1, 1, HV)
        beta = None if beta is None else beta.new_zeros(1, 1, HV)
        cu_seqlens, fresh = torch.zeros_like(cu_seqlens), True
        offsets, checkpoints, interval, checkpoint_scale = None, None, 0, None
    torch.ops.gdn.recurrent(
        q, k, v, g, None, None, None, beta, None, indices, cu_seqlens, None,
        None if in_place else read, output_state if in_place else None, None,
        None if in_place else output_state, o, None, None, None, None, None, offsets,
        checkpoints, None, checkpoint_scale, scale, bool(use_qk_l2norm_in_kernel), "vk",
        fresh_early_inputs=fresh, checkpoint_interval=interval,
        stochastic_rounding=_stochastic_rounding(checkpoints))
    if output_final_state:
        return output, output_state
    return output
