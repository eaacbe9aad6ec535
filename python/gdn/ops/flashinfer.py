"""FlashInfer (flashinfer-python 0.7.2, flashinfer.gdn_decode):
gated_delta_rule_decode_pretranspose, gated_delta_rule_decode (K-major
state), gated_delta_rule_mtp (verify, T > 1; ReplaySSM windows with
cache_replayssm) and gated_delta_rule_replayssm_commit (the ReplaySSM
commit of all layers)."""
import torch

from . import _custom_ops  # noqa: F401  (registers torch.ops.gdn.recurrent)
from ._checks import (_INPUT, _check, _check_fused_gating, _check_indices, _check_pool,
                      _check_qkv, _scale, _unsupported, _validate_indices)
from .quantized import _state_scale_of
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
    _check("intermediate_states_buffer", inter, dev, (inter.shape[0], inter.shape[1], HV, V, K),
           _INPUT, written=True, layout="slots")
    return inter.view(-1)[:B * T * HV * V * K].view(B, T, HV, V, K)


def _check_output(output, v):
    if output is None:
        return torch.empty_like(v)
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
    inter = None
    if buffer is not None:
        inter = _flashinfer_buffer(buffer, dev, B, T, HV, V, K)
    scale = _scale(scale)
    output = _check_output(output, v)
    if B == 0 or T == 0:  # no token: nothing to launch, the state is unchanged
        return output, state
    kw, vw, gw, bw = windows or (None,) * 4
    torch.ops.gdn.recurrent(q, k, v, None, a, A_log, dt_bias, None, b, indices, None, None,
                            state if read_only else None, None if read_only else state,
                            inter, None, output, kw, vw, gw, bw, state_scale, scale,
                            bool(use_qk_l2norm),
                            "vk")
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
    copies it in and out) is not supported yet; strided q, k, v, a, b,
    A_log, dt_bias are copied today. B = 0: nothing is launched."""
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
                            state_scale, scale, bool(use_qk_l2norm), "kv")
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

