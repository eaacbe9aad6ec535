"""Quantized (float8_e4m3fn) states: a state row is a head's V column over
all K keys, S[k, v] = e4m3[k, v] x scale[v] (docs/math.md §6), and the
scales live beside the pool: `quantized_state` allocates a pool with its
scales attached to the pool's storage (held until detach_state_scale), so that
the anchors' entry points
(whose signatures have no scale argument) take a float8_e4m3fn pool as they
take a bfloat16 one, and so does any view of it (a layer of an all-layer
cache, a range of slots). `attach_state_scale` attaches the scales of a pool
allocated elsewhere. `quantize_state` / `dequantize_state` convert a state
to e4m3 with scales and back, exactly as the kernels round. A pool or
per-token buffer may also ask for stochastic rounding
(`stochastic_rounding=True` on attach_state_scale / quantized_state, read
back with `stochastic_rounding_of`; docs/math.md §6): the SGLang and
FlashInfer recurrence entry points then round every e4m3 store of the call
stochastically (the pool's and an fp8 per-token buffer's alike, when either
asks); commits (commit_accepted, replay_commit) round to nearest."""
import operator

import torch

FP8 = torch.float8_e4m3fn
E4M3_MAX = 448.0  # the largest finite e4m3 (KernelMath::kE4M3Max)
# The least row max that is quantized (KernelMath::kE4M3MinAmax): below it
# 448 / amax would overflow float32 and 0 x inf store NaN.
E4M3_MIN_AMAX = 2.0 ** -119

# Storage address -> (the flat float32 scales of the attached pool, K (one
# scale a K elements: a row), the pool, stochastic rounding of its stores
# (bool), its layout ("vk" or "kv")). The entry holds the pool, so its
# address is not reused while the entry exists (detach_state_scale drops it).
_scales = {}


def _storage_key(t):
    return t.untyped_storage().data_ptr()


def _check_layout(layout):
    """"vk" or "kv", else a ValueError naming layout (another name would
    silently be read as "kv")."""
    if layout not in ("vk", "kv"):
        raise ValueError(f"layout must be 'vk' or 'kv', got {layout!r}")


def attach_state_scale(pool, state_scale, stochastic_rounding=False, layout="vk"):
    """Attaches `state_scale` as the row scales of `pool`'s storage and
    returns pool. pool: float8_e4m3fn, [..., HV, V, K] ("vk") or
    [..., HV, K, V] ("kv", say so with `layout`), contiguous; state_scale:
    float32 [..., HV, V] (the same leading dimensions), contiguous, on
    pool's device, updated in place by every kernel that writes the pool.
    Views of pool (slots, layers) then find their scales (TypeError /
    ValueError naming the argument otherwise); a view that reaches past
    pool, or is read in the other layout, is a ValueError (with K = V the
    two layouts have the same shape, and reading one as the other would be
    silently wrong). stochastic_rounding: the recurrence entry points that
    write the pool round the call's e4m3 stores stochastically instead of
    to nearest (docs/math.md §6); commits still round to nearest."""
    _check_layout(layout)
    for name, t in (("pool", pool), ("state_scale", state_scale)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
        if not t.is_contiguous():
            raise ValueError(f"{name} must be contiguous")
    if pool.dtype != FP8:
        raise TypeError(f"pool must be float8_e4m3fn, got {pool.dtype}")
    if state_scale.dtype != torch.float32:
        raise TypeError(f"state_scale must be float32, got {state_scale.dtype}")
    if state_scale.device != pool.device:
        raise ValueError(f"state_scale is on {state_scale.device}, pool on {pool.device}")
    rows = (tuple(pool.shape[:-1]) if layout == "vk"
            else tuple(pool.shape[:-2]) + tuple(pool.shape[-1:]))
    if pool.dim() < 3 or pool.numel() == 0 or tuple(state_scale.shape) != rows:
        # the same element count in another shape would be read flat: silently wrong
        raise ValueError(f"state_scale {list(state_scale.shape)} must hold one scale a row "
                         f"of pool {list(pool.shape)}: {list(rows)} ([..., HV, V] for "
                         f"[..., HV, V, K], {layout})")
    K = pool.numel() // state_scale.numel()
    if pool.storage_offset() != 0 or state_scale.storage_offset() != 0:
        raise ValueError("attach the scales to the whole pool (storage offset 0), not a view")
    if not isinstance(stochastic_rounding, bool):
        raise TypeError(f"stochastic_rounding must be a bool, got "
                        f"{type(stochastic_rounding).__name__}")
    _scales[_storage_key(pool)] = (state_scale.reshape(-1), K, pool, stochastic_rounding,
                                   layout)
    return pool


def detach_state_scale(pool):
    """Forgets the scales attached to pool's storage (and the reference that
    kept it alive); a no-op when none are attached."""
    _scales.pop(_storage_key(pool), None)


def quantized_state(shape, device=None, layout="vk", stochastic_rounding=False):
    """A zero float8_e4m3fn pool of `shape` ([..., HV, V, K] for "vk",
    [..., HV, K, V] for "kv") with its zero float32 row scales attached
    (attach_state_scale, with `stochastic_rounding`); returns the pool
    (`state_scale_of(pool)` gives the scales). Every dimension must be at
    least 1 (ValueError naming shape): an empty pool has no storage to
    attach scales to."""
    try:
        shape = tuple(operator.index(x) for x in shape)
    except TypeError:
        raise TypeError(f"shape must be a sequence of ints, got {shape!r}") from None
    if len(shape) < 3 or layout not in ("vk", "kv"):
        raise ValueError(f"shape must be [..., HV, V, K] and layout 'vk' or 'kv', got {shape} "
                         f"and {layout!r}")
    if min(shape) < 1:
        raise ValueError(f"shape must have every dimension >= 1 (an empty pool has no "
                         f"storage to attach its scales to), got {list(shape)}")
    rows = shape[:-2] + ((shape[-2],) if layout == "vk" else (shape[-1],))
    pool = torch.zeros(shape, dtype=FP8, device=device)
    return attach_state_scale(pool, torch.zeros(rows, dtype=torch.float32, device=device),
                              stochastic_rounding, layout)


def state_scale_of(pool, layout="vk"):
    """The row scales of a float8_e4m3fn `pool` or a view of one (its slots
    or a layer): float32 [..., HV, V] viewing the attached scales, so
    writing them writes the pool's. ValueError when none are attached, and
    for a view whose rows are not the pool's: a "vk" view must start at a
    row, a "kv" view at a head and keep the pool's V columns (a scale
    belongs to a column there)."""
    _check_layout(layout)
    if not isinstance(pool, torch.Tensor) or pool.dim() < 3:
        raise ValueError(f"pool must be a tensor [..., HV, V, K] ('vk') or [..., HV, K, V] "
                         f"('kv'), got {list(pool.shape) if isinstance(pool, torch.Tensor) else pool!r}")
    entry = _scales.get(_storage_key(pool))
    if entry is None:
        raise ValueError("this float8_e4m3fn state has no row scales attached: allocate it "
                         "with gdn.ops.quantized_state or attach them with "
                         "gdn.ops.attach_state_scale(pool, state_scale)")
    flat, K, attached_layout = entry[0], entry[1], entry[4]
    if layout != attached_layout:
        raise ValueError(f"the pool's scales were attached for layout {attached_layout!r}, "
                         f"and it is read as {layout!r}: its rows would be read across "
                         "(quantize_state / quantized_state / attach_state_scale take the "
                         "layout)")
    V = pool.shape[-2] if layout == "vk" else pool.shape[-1]
    inner = pool.stride()[-2:]
    if ((pool.shape[-1] > 1 and inner[1] != 1)
            or (pool.shape[-2] > 1 and inner[0] != pool.shape[-1])):
        # E.g. a transposed view: its rows would be scaled across (with
        # K = V the shape alone cannot tell).
        raise ValueError(f"the view {list(pool.shape)} (strides {list(pool.stride())}) does "
                         "not hold the pool's rows in its two inner dimensions (dense, the "
                         "last with stride 1)")
    if pool.shape[-2] * pool.shape[-1] != K * V:
        raise ValueError(f"the attached scales have one a {K} elements; a view "
                         f"{list(pool.shape)} ({layout}) has rows of {pool.shape[-2] * pool.shape[-1] // V}")
    # "vk": one scale a K elements (a row), so the view's element offset and
    # strides over K are its scales'. "kv": a head's K x V block holds V
    # scales, one a column of stride V, so the view must keep the pool's V
    # columns and start at a head (a view a row into one read the next
    # column's scales).
    unit, per = K, 1
    if layout == "kv":
        columns = entry[2].shape[-1]
        if pool.shape[-1] != columns:
            raise ValueError(f"the view {list(pool.shape)} ('kv') has {pool.shape[-1]} value "
                             f"columns where the pool has {columns}: its columns' scales "
                             "would be read across")
        unit, per = K * columns, columns
    strides = pool.stride()[:-2]
    if pool.storage_offset() % unit or any(s % unit for s in strides):
        raise ValueError(f"the view {list(pool.shape)} of the pool does not start at a "
                         f"{'row' if layout == 'vk' else 'head'}")
    shape = tuple(pool.shape[:-2]) + (V,)
    row_strides = [s // unit * per for s in strides] + [1]
    first = pool.storage_offset() // unit * per
    # The view's rows must lie within the attached pool's: a view of the
    # same storage past it (a pool attached as a prefix of its storage)
    # would read and write memory past the scales.
    last = first + sum((n - 1) * st for n, st in zip(shape, row_strides))
    if pool.numel() and last >= flat.numel():
        raise ValueError(f"the view {list(pool.shape)} reaches rows {first}..{last} of a "
                         f"pool with {flat.numel()} rows attached (attach the scales of the "
                         "whole storage)")
    return flat.as_strided(shape, row_strides, first)


def stochastic_rounding_of(state):
    """Whether the kernels round stores into `state` (a float8_e4m3fn pool
    or a view of one) stochastically: as attached (attach_state_scale);
    False for any other tensor, None, or a pool without scales."""
    if not isinstance(state, torch.Tensor) or state.dtype != FP8:
        return False
    entry = _scales.get(_storage_key(state))
    return bool(entry and entry[3])


def _scales_attached(t):
    """Whether `t` is a float8_e4m3fn tensor (or a view of one) with row
    scales attached (quantized_state, attach_state_scale)."""
    return isinstance(t, torch.Tensor) and t.dtype == FP8 and _storage_key(t) in _scales


def _stochastic_rounding(*written):
    """For the entry points: whether a call rounds its e4m3 stores
    stochastically: when any float8_e4m3fn buffer it writes asks for it."""
    return any(stochastic_rounding_of(t) for t in written)


def _state_scale_of(state, name, layout="vk"):
    """For the entry points: None for a state that is not float8_e4m3fn,
    else its attached scales [rows, HV, V] (ValueError naming `name`)."""
    if state is None or state.dtype != FP8:
        return None
    try:
        scale = state_scale_of(state, layout)
    except ValueError as e:
        raise ValueError(f"{name}: {e}") from None
    if not scale.is_contiguous():
        # The kernels take the scales dense [rows, HV, V]: a view with a
        # slot (row) pitch, e.g. one layer of a [slots, layers, ...] pool,
        # would have them read and written at other slots' scales.
        from ._checks import _StridedInPlace
        raise _StridedInPlace(
            f"gdn: argument '{name}' is a float8_e4m3fn view whose row scales are strided "
            f"(strides {list(scale.stride())}); the kernels take a quantized state's scales "
            "dense, so a float8_e4m3fn state with a slot pitch is not supported yet")
    return scale


def quantize_state(state, layout="vk"):
    """(e4m3 pool, float32 scales) of a float32/bfloat16/float16 `state`
    [..., HV, V, K] ("vk") or [..., HV, K, V] ("kv"), rounded as the kernels
    store a state: per row amax = max_k |S|, scale = amax / 448, e4m3 =
    round-to-nearest-even of S x (448 / amax), all in float32 (a row of
    zeros, or of amax below 2^-119: elements 0). The pool comes with the scales attached.
    Another dtype (float64, an e4m3 pool, integers) is a TypeError naming
    state; an empty dimension a ValueError naming state (an empty pool has
    no storage to attach scales to). Any strides are read."""
    if not isinstance(state, torch.Tensor) or state.dim() < 3:
        raise ValueError("state must be a tensor [..., HV, V, K]")
    _check_layout(layout)
    if state.dtype not in (torch.float32, torch.bfloat16, torch.float16):
        raise TypeError(f"state must be float32, bfloat16 or float16, got {state.dtype}")
    if state.numel() == 0:
        dims = "[..., HV, V, K]" if layout == "vk" else "[..., HV, K, V]"
        raise ValueError(f"state must have every dimension >= 1 ({dims}, {layout}), got "
                         f"shape {list(state.shape)}")
    s = state.float()
    k_dim = -1 if layout == "vk" else -2
    amax = s.abs().amax(dim=k_dim, keepdim=True)
    # IEEE divisions by a tensor, as the kernels divide (torch's CUDA
    # division by a Python scalar multiplies by its rounded reciprocal).
    e4m3_max = torch.full_like(amax, E4M3_MAX)
    scale = amax / e4m3_max
    inv = torch.where(amax >= E4M3_MIN_AMAX, e4m3_max / amax, torch.zeros_like(amax))
    pool = (s * inv).to(FP8).contiguous()
    scales = scale.squeeze(k_dim).contiguous()
    return attach_state_scale(pool, scales, layout=layout), scales


def dequantize_state(pool, layout="vk", state_scale=None):
    """float32 e4m3 x the row scale, [..., HV, V, K] ("vk") or
    [..., HV, K, V] ("kv"); the scales attached to pool unless given
    (float32 [..., HV, V], pool's leading dimensions, on pool's device).
    pool: float8_e4m3fn, any strides with state_scale given (else a view
    state_scale_of accepts); empty dimensions give an empty result. As
    attach_state_scale: another pool or state_scale dtype is a TypeError
    naming it (a float64 state_scale would make the result float64), a
    misshapen one a ValueError naming it."""
    _check_layout(layout)
    if not isinstance(pool, torch.Tensor) or pool.dim() < 3:
        raise ValueError(f"pool must be a tensor [..., HV, V, K] ('vk') or [..., HV, K, V] "
                         f"('kv'), got {list(pool.shape) if isinstance(pool, torch.Tensor) else pool!r}")
    if pool.dtype != FP8:
        raise TypeError(f"pool must be float8_e4m3fn, got {pool.dtype}")
    if state_scale is not None:
        if not isinstance(state_scale, torch.Tensor):
            raise TypeError(f"state_scale must be a torch.Tensor, got "
                            f"{type(state_scale).__name__}")
        if state_scale.dtype != torch.float32:
            raise TypeError(f"state_scale must be float32, got {state_scale.dtype}")
        if state_scale.device != pool.device:
            raise ValueError(f"state_scale is on {state_scale.device}, pool on {pool.device}")
        rows = tuple(pool.shape[:-2]) + (pool.shape[-2] if layout == "vk" else pool.shape[-1],)
        if tuple(state_scale.shape) != rows:
            raise ValueError(f"state_scale must have shape {list(rows)} (one scale a row of "
                             f"pool {list(pool.shape)}, {layout}), got {list(state_scale.shape)}")
    scale = state_scale_of(pool, layout) if state_scale is None else state_scale
    k_dim = -1 if layout == "vk" else -2
    return pool.float() * scale.unsqueeze(k_dim)
