"""commit_accepted: after speculative verify, each row's accepted prefix
from the per-token buffer into the state pool (the gdn::commit op)."""
import torch

from . import _custom_ops  # noqa: F401  (registers torch.ops.gdn.commit)
from ._checks import _INPUT, _check, _check_indices, _validate_indices, _view_strides
from .quantized import FP8, _state_scale_of


def _no_other_keywords(kwargs):
    """Keywords commit_accepted does not take: NotImplementedError naming
    them (never a TypeError, never silently ignored)."""
    if kwargs:
        raise NotImplementedError(
            f"gdn: argument {', '.join(repr(k_) for k_ in kwargs)} is not supported yet")


def commit_accepted(intermediate_states, accepted, state, state_indices=None,
                    intermediate_state_indices=None, layout="vk", **kwargs):
    """Commits each row's accepted prefix after speculative verify: copies the
    state after row n's last accepted token from the per-token buffer into
    the state pool, in one kernel (no host synchronisation, no allocation:
    CUDA-graph capturable once compiled).

    - intermediate_states [R, T, HV, V, K] (layout "vk") or [R, T, HV, K, V]
      ("kv"; the pool shares the layout), float32/bfloat16/float16, or
      float8_e4m3fn with row scales attached (gdn.ops.quantized_state of
      its shape): the verify buffer, row intermediate_state_indices[n]
      (pool-scoped, SGLang) or row n (R = N, batch-scoped, FlashInfer);
    - accepted [N], int32/int64: accepted tokens of row n; <= 0 commits
      nothing, > T commits the last stored step (clamped to T);
    - state [slots, HV, ...] (state_indices given) or [N, HV, ...],
      float32/bfloat16/float16, updated in place: slot state_indices[n]
      (< 0: padding row, nothing touched) or n gets step
      min(accepted[n], T) - 1, converted through float32 and rounded once
      when the dtypes differ. Slots no row commits are left bit-identical.
      A float8_e4m3fn pool (gdn.ops.quantized_state) gets the step
      quantized a row at a time as quantize_state does (layout "vk" on the
      GPU), its attached row scales with it; from a float8_e4m3fn buffer
      it gets the e4m3 bits and the step's row scales unchanged, and any
      other pool gets e4m3 x scale rounded once.

    A slot >= slots or a row >= R is a padding row too (the kernels bound
    them; GDN_VALIDATE_INDICES=1 refuses them on the host, which
    synchronises); two rows naming one slot race.
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
    if layout not in ("vk", "kv"):
        raise ValueError(f"layout must be 'vk' or 'kv', got {layout!r}")
    if intermediate_states.dtype not in _INPUT + (FP8,):
        raise TypeError("intermediate_states must have dtype in "
                        f"{[str(d) for d in _INPUT + (FP8,)]}, got {intermediate_states.dtype}")
    if _view_strides(intermediate_states, "slots") is False:
        raise ValueError("intermediate_states must be contiguous, or a view whose rows have a "
                         f"pitch (the rest dense), got strides {list(intermediate_states.stride())}")
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
    state_scale = _state_scale_of(state, "state", layout)
    _check("state", state, dev, (slots, HV, D3, D4),
           _INPUT if state_scale is None else (FP8,), layout="slots")
    V = D3 if layout == "vk" else D4
    if state_scale is not None:
        _check("state's row scales", state_scale, dev, (slots, HV, V), (torch.float32,))
    inter_scale = _state_scale_of(intermediate_states, "intermediate_states", layout)
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
                         intermediate_state_indices, state_scale, inter_scale, layout)
    return state
