"""replay_commit: after a replayed speculative verify (gdn.recurrent with
replay windows, the state only read), each row's accepted prefix replayed
from the windows onto its checkpoint, for every layer in one kernel (the
gdn::replay_commit op)."""
import torch

from . import _custom_ops  # noqa: F401  (registers torch.ops.gdn.replay_commit)
from ._checks import _INPUT, _check, _check_indices, _validate_indices
from .quantized import FP8, state_scale_of

_INDEX = (torch.int32, torch.int64)


def _tensor(name, t, dev=None, of=None):
    """t as a tensor on `dev` (the device of the argument named `of`), else
    TypeError / ValueError naming it."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if dev is not None and t.device != dev:
        raise ValueError(f"{name} is on {t.device}, expected {dev} (the device of {of})")
    return t


def replay_commit(k_window, v_window, g_window, beta_window, accepted, state,
                  state_indices=None, qk_l2norm=True, layout="vk",
                  retrieve_parent_token=None):
    """Commits each row's accepted prefix after a replayed verify: replays
    the first min(accepted[n], L) tokens of row n from the windows onto its
    checkpoint, in place, for every layer, in one kernel (no host
    synchronisation, no allocation: CUDA-graph capturable once compiled).
    The verify that fills the windows is a gdn.recurrent with k_window ...
    beta_window and the state only read (gated_delta_rule_mtp with
    cache_replayssm=True, fused_sigmoid_gating_delta_rule_update with
    cache_ring=True).

    Shapes, with an optional leading layer dimension LY shared by all five
    (windows and state all 5-D / 4-D, or all without it: one layer):
    - k_window [LY, slots, H, L, K], v_window [LY, slots, HV, L, V]:
      float32/bfloat16/float16, one dtype (the verify's q dtype): the raw
      k (before the L2 norm) and v of each row's tokens;
    - g_window, beta_window [LY, slots, HV, L], float32: each token's log
      decay and beta;
    - accepted [N], int32/int64: accepted tokens of row n; <= 0 replays
      nothing, > L replays all L;
    - state [LY, slots, HV, V, K] (layout "vk") or [LY, slots, HV, K, V]
      ("kv"), float32/bfloat16/float16 (or float8_e4m3fn with row scales
      attached: gdn.ops.quantized_state), updated in place: slot
      state_indices[n] (int32/int64 [N]; < 0 a padding row, nothing
      touched) or, without state_indices (slots = N), slot n. The replay
      runs in float32 and rounds once on store; a slot no row replays is
      left bit-identical, and window entries past a row's prefix are never
      read.
    EAGLE tree (the verify had retrieve_parent_token): pass the same table,
    retrieve_parent_token [N, P] (int32/int64, 1 <= P <= min(L, 64), the
    parent step of each of the row's first P tokens, < 0 for a child of the
    checkpoint); accepted[n] then names the row's last accepted token,
    step min(accepted[n], P) - 1 (as for commit_accepted: 1 + its index), and
    the row replays the path from the checkpoint to it, root first (steps
    off the path are never read; a parent >= its step ends the path).
    qk_l2norm: k is L2-normalized in the replay (as in the verify; it must
    match). H divides HV. All tensors dense (contiguous) on one device, on
    the GPU 16-byte aligned.

    Errors (before any launch): TypeError for a non-tensor or a wrong dtype,
    ValueError for shapes, devices, contiguity, a layout other than "vk" /
    "kv", and state sharing memory with a window; each names the argument.
    A slot >= slots is a padding row too (the kernels bound it;
    GDN_VALIDATE_INDICES=1 refuses it on the host, which synchronises);
    two rows naming one slot race. N = 0
    replays nothing (no kernel is compiled or launched). Returns `state`."""
    return _replay(k_window, v_window, g_window, beta_window, accepted, state, state_indices,
                   qk_l2norm, layout, _NAMES, retrieve_parent_token)


_NAMES = dict(k="k_window", v="v_window", g="g_window", beta="beta_window", accepted="accepted",
              state="state", indices="state_indices", parents="retrieve_parent_token")

# The most steps a tree's parent table may name (gdn.replay_commit's
# kMaxTreeSteps: a path is a 64-bit mask of steps).
_MAX_TREE_STEPS = 64


def _replay(k_window, v_window, g_window, beta_window, accepted, state, state_indices,
            qk_l2norm, layout, names, parents=None):
    """replay_commit with the errors naming the arguments as the caller's
    signature does (`names`: role -> argument name; the anchors' entry
    points call theirs rawk_cache, accept_lens, ...)."""
    n = names
    if layout not in ("vk", "kv"):
        raise ValueError(f"layout must be 'vk' or 'kv', got {layout!r}")
    kw = _tensor(n["k"], k_window)
    dev = kw.device
    if kw.dim() not in (4, 5):
        raise ValueError(f"{n['k']} must be [layers, slots, H, L, K] (or [slots, H, L, K]), "
                         f"got shape {list(kw.shape)}")
    layered = kw.dim() == 5
    lead = lambda t: t if layered else t.unsqueeze(0)  # noqa: E731  (one layer: [1, ...])
    vw, gw, bw, st = (_tensor(n[r], t, dev, n["k"]) for r, t in (
        ("v", v_window), ("g", g_window), ("beta", beta_window), ("state", state)))
    LY, slots, H, L, K = lead(kw).shape
    prefix = [LY, slots] if layered else [slots]
    for role, t, rank in (("v", vw, 5), ("g", gw, 4), ("beta", bw, 4), ("state", st, 5)):
        if t.dim() != rank - (not layered):
            raise ValueError(f"{n[role]} must have {rank - (not layered)} dimensions, as "
                             f"{n['k']} {list(kw.shape)} has {kw.dim()}; got shape "
                             f"{list(t.shape)}")
    HV, V = vw.shape[-3], vw.shape[-1]
    _check(n["k"], kw, dev, None, _INPUT)
    _check(n["v"], vw, dev, prefix + [HV, L, V], (kw.dtype,))
    _check(n["g"], gw, dev, prefix + [HV, L], (torch.float32,))
    _check(n["beta"], bw, dev, prefix + [HV, L], (torch.float32,))
    if min(LY, slots, H, L, K, HV, V) == 0:
        raise ValueError(f"the windows must have non-empty dimensions, got {n['k']} "
                         f"{list(kw.shape)} and {n['v']} {list(vw.shape)}")
    if HV % H:
        raise ValueError(f"{n['v']} has HV = {HV} heads, not a multiple of {n['k']}'s H = {H}")
    _tensor(n["accepted"], accepted, dev, n["k"])
    if accepted.dim() != 1:
        raise ValueError(f"{n['accepted']} must be 1-D [N], got shape {list(accepted.shape)}")
    _check(n["accepted"], accepted, dev, None, _INDEX)
    N = accepted.shape[0]
    tail = [HV, V, K] if layout == "vk" else [HV, K, V]
    _check(n["state"], st, dev, prefix + tail, _INPUT + (FP8,), written=True)
    scale = None
    if st.dtype == FP8:  # its row scales, attached (gdn.ops.quantized_state)
        try:
            scale = state_scale_of(lead(st), layout)
        except ValueError as e:
            raise ValueError(f"{n['state']}: {e}") from None
    if state_indices is not None:
        _tensor(n["indices"], state_indices, dev, n["k"])
        _check_indices(n["indices"], state_indices, dev, N,
                       slots if _validate_indices() else None)
    elif N != slots:
        raise ValueError(f"the windows have {slots} slots but {n['accepted']} has {N} rows: "
                         f"without {n['indices']} row n is slot n")
    if parents is not None:
        _tensor(n["parents"], parents, dev, n["k"])
        P = parents.shape[-1] if parents.dim() == 2 else 0
        if parents.dim() != 2 or parents.shape[0] != N or not 1 <= P <= min(L, _MAX_TREE_STEPS):
            raise ValueError(f"{n['parents']} must be [N, P] with N = {N} and 1 <= P <= "
                             f"min(L, {_MAX_TREE_STEPS}) = {min(L, _MAX_TREE_STEPS)}, got shape "
                             f"{list(parents.shape)}")
        parents = _check(n["parents"], parents, dev, [N, P], _INDEX, copy=True)
    if N == 0:
        return state
    torch.ops.gdn.replay_commit(lead(kw), lead(vw), lead(gw), lead(bw), accepted, lead(st),
                                state_indices, scale, bool(qk_l2norm), layout, parents)
    return state


def _null_blocks(name, indices, null_block_id):
    """The anchors' slot table with the reserved slots (<= null_block_id)
    as -1, the padding the op skips: a new tensor, masked on the device (no
    host synchronisation), when null_block_id >= 0; else `indices` itself
    (an index < 0 is skipped already)."""
    if null_block_id < 0 or not isinstance(indices, torch.Tensor):
        return indices  # (a non-tensor: replay_commit's TypeError names it)
    if indices.dim() != 1 or indices.dtype not in _INDEX:
        raise ValueError(f"{name} must be a 1-D int32/int64 tensor, got shape "
                         f"{list(indices.shape)} and dtype {indices.dtype}")
    return indices.masked_fill(indices <= null_block_id, -1)
