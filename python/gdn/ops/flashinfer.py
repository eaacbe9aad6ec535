"""FlashInfer (flashinfer-python 0.7.2, flashinfer.gdn_decode):
gated_delta_rule_decode_pretranspose, gated_delta_rule_decode (K-major
state), gated_delta_rule_mtp (verify, T > 1)."""
import torch

from . import _custom_ops  # noqa: F401  (registers torch.ops.gdn.recurrent)
from ._checks import (_INPUT, _check, _check_fused_gating, _check_indices, _check_pool,
                      _check_qkv, _scale, _unsupported, _validate_indices)


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
         use_qk_l2norm):
    """The shared tail of the vk entry points on checked q, k, v and state
    (or pool, with `indices`): checks the gates, the verify buffer, scale and
    output, then runs the op (state read only, or updated in place).
    Returns (output, state); B = 0 or T = 0 launch nothing."""
    B, T, HV, V = v.shape
    K = q.shape[3]
    dev = q.device
    A_log, a, dt_bias, b = _check_fused_gating(dev, B, T, HV, A_log, a, dt_bias, b)
    inter = None
    if buffer is not None:
        inter = _flashinfer_buffer(buffer, dev, B, T, HV, V, K)
    scale = _scale(scale)
    output = _check_output(output, v)
    if B == 0 or T == 0:  # no token: nothing to launch, the state is unchanged
        return output, state
    torch.ops.gdn.recurrent(q, k, v, None, a, A_log, dt_bias, None, b, indices, None, None,
                            state if read_only else None, None if read_only else state,
                            inter, None, output, scale, bool(use_qk_l2norm), "vk")
    return output, state


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
        target = _check("state", state, dev, (B, HV, V, K), _INPUT, written=True, layout="slots")
        indices = None
    return _run(q, k, v, target, indices, A_log, a, dt_bias, b, scale, output,
                intermediate_states_buffer, bool(disable_state_update), use_qk_l2norm)


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
    state = _check("state", state, dev, (B, HV, K, V), _INPUT, written=True, layout="slots")
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
    read_only = True if disable_state_update is None else bool(disable_state_update)
    return _run(q, k, v, pool, indices, A_log, a, dt_bias, b, scale, output,
                intermediate_states_buffer, read_only, use_qk_l2norm)
