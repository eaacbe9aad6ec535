"""SGLang (sglang 0.5.23): fused_sigmoid_gating_delta_rule_update (decode and
verify, with the ReplaySSM ring-write), fused_recurrent_gated_delta_rule_packed_decode
(packed mixed_qkv decode) and commit_gdn_replayssm_fold_all_layers (the
ReplaySSM commit of all layers)."""
import torch

from . import _custom_ops  # noqa: F401  (registers torch.ops.gdn.recurrent)
from ._checks import (_INPUT, _check, _check_cu_seqlens, _check_fused_gating, _check_indices,
                      _check_pool, _check_qkv, _dense_like, _scale, _unsupported,
                      _validate_indices)
from .quantized import FP8, _state_scale_of, _stochastic_rounding, stochastic_rounding_of
from .replay import _null_blocks, _replay


def _ring(pool, dev, dtype, H, HV, K, V, rawv, rawk, g, beta):
    """SGLang's per-layer ReplaySSM ring views for cache_ring: rawv
    [slots, HV, L, V], rawk [slots, H, L, K] (L = max_cache_len, any
    L >= 1; tokens past L are not stored, as SGLang), g and beta
    [slots, HV, L], with the pool's slots. SGLang's assert on the ranks is a
    ValueError; it stores into any dtype and takes the slot pitch from the
    rings, gdn writes q's dtype (rawk, rawv) and float32 (g, beta) to dense
    rings: anything else is NotImplementedError. Returns (k, v, g, beta)."""
    rings = dict(replayssm_rawv=rawv, replayssm_rawk=rawk, replayssm_g=g, replayssm_beta=beta)
    ranks = dict(replayssm_rawv=4, replayssm_rawk=4, replayssm_g=3, replayssm_beta=3)
    for name, t in rings.items():
        if not isinstance(t, torch.Tensor) or t.dim() != ranks[name]:
            raise ValueError(f"cache_ring expects per-layer ring views: {name} must be a "
                             f"{ranks[name]}-D tensor, got "
                             f"{list(t.shape) if isinstance(t, torch.Tensor) else t!r}")
    if pool is None:
        raise NotImplementedError("gdn: argument 'cache_ring' without initial_state_source (the "
                                  "rings are addressed by the pool's slots) is not supported yet")
    slots, L = pool.shape[0], rawv.shape[2]
    if L == 0:
        raise ValueError("replayssm_rawv must hold at least one step (max_cache_len >= 1), got "
                         f"shape {list(rawv.shape)}")
    shapes = dict(replayssm_rawv=(slots, HV, L, V), replayssm_rawk=(slots, H, L, K),
                  replayssm_g=(slots, HV, L), replayssm_beta=(slots, HV, L))
    for name, t in rings.items():
        want = dtype if name in ("replayssm_rawv", "replayssm_rawk") else torch.float32
        if t.dtype != want:
            raise NotImplementedError(f"gdn: argument '{name}' in {t.dtype} is not supported "
                                      f"yet (gdn writes {want}: q's dtype for rawk and rawv, "
                                      "float32 for g and beta)")
        _check(name, t, dev, shapes[name], (want,), written=True)
    return rawk, rawv, g, beta


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
    (views of a packed projection are read in place through their strides).
    is_kda=True (Kimi Delta Attention): a
    [B, T, HV, K] (or [B * T, HV * K], [B, T, HV * K]) and dt_bias [HV * K]
    (SGLang's flattened bias; [HV, K] is accepted too), the decay per key
    channel; b may be [B, T, HV, V] (beta per value channel, a gdn
    extension) either way. initial_state_source: the pool [slots, HV, V, K]
    (fp32, bf16 or fp16; computed in fp32, rounded once on store), updated
    in place at initial_state_indices [N] (int32/int64; < 0: padding row, no
    slot touched, output rows zero; a float8_e4m3fn pool carries its row
    scales (gdn.ops.quantized_state), updated with it; N = B, or with
    cu_seqlens [N + 1] for
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
    lower_bound * sigmoid(exp(A_log) (a + dt_bias))), cache_ring with
    is_kda or without initial_state_source, match_cutedsl_decode (after SGLang's own ValueError when it is set
    without is_kda or with lower_bound). Unknown keywords are a TypeError,
    as SGLang's fixed signature makes them.
    ReplaySSM ring-write, cache_ring=True (replayssm_* are ignored
    without it, as in SGLang): the s-th token (s < L) of the row with pool
    slot initial_state_indices[n] (< 0: nothing) is stored at step s of
    that slot's rings: replayssm_rawk [slots, H, L, K] (k before the L2
    norm) and replayssm_rawv [slots, HV, L, V] in q's dtype, replayssm_g
    (log decay) and replayssm_beta (sigmoid(b)) [slots, HV, L] float32;
    L (max_cache_len) may exceed T; o and every other write are those of
    the same call without the rings. commit_gdn_replayssm_fold_all_layers
    then replays the accepted prefixes.
    Nothing to compute (B = 0, T = 0 or cu_seqlens = [0]): nothing is
    compiled or launched, the pool and the buffer are untouched and o is the
    empty (cu_seqlens = [0]: unwritten) [B, T, HV, V]. A pool or buffer of 0
    slots (rows) with N > 0 rows is a ValueError."""
    if match_cutedsl_decode and (not is_kda or lower_bound is not None):
        raise ValueError("match_cutedsl_decode is defined for the KDA softplus gate only "
                         "(is_kda=True, lower_bound=None).")
    _unsupported(match_cutedsl_decode=match_cutedsl_decode, lower_bound=lower_bound)
    if cache_ring and is_kda:
        raise NotImplementedError("gdn: argument 'cache_ring' with is_kda (KDA's ring of "
                                  "per-key gates) is not supported yet")
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
    state_scale = _state_scale_of(pool, "initial_state_source")
    A_log, a, dt_bias, b = _check_fused_gating(dev, B, T, HV, A_log, a, dt_bias, b,
                                               K=K if is_kda else None, V=V)
    inter = intermediate_states_buffer
    inter_idx = inter_scale = None
    if inter is not None:
        if not isinstance(inter, torch.Tensor) or inter.dim() != 5:
            raise ValueError("intermediate_states_buffer must be a 5-D tensor [rows, steps, HV, V, K]")
        _check("intermediate_states_buffer", inter, dev, (inter.shape[0], inter.shape[1], HV, V, K),
               _INPUT + (FP8,), written=True, layout="slots")
        inter_scale = _state_scale_of(inter, "intermediate_states_buffer")
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
        if stochastic_rounding_of(inter):
            raise NotImplementedError(
                "gdn: retrieve_parent_token with an intermediate_states_buffer allocated with "
                "stochastic_rounding=True is not supported (the tree reads its rounded "
                "parents back)")
        if inter is None:
            raise ValueError("retrieve_parent_token needs intermediate_states_buffer "
                             "(parent states are read back from it)")
        _check("retrieve_parent_token", parents, dev, (N, inter.shape[1]),
               (torch.int32, torch.int64), strided=True)
    windows = (None,) * 4
    if cache_ring:
        windows = _ring(pool, dev, q.dtype, H, HV, K, V, replayssm_rawv, replayssm_rawk,
                        replayssm_g, replayssm_beta)
    scale = _scale(scale)
    o = _dense_like(v)
    if N == 0 or T == 0:  # no token: nothing to launch, the pool is unchanged
        return o
    o_out = o
    if inter is not None and cu_seqlens is None and inter.shape[1] != T:
        # SGLang writes step t of a row at its buffer row's step t, whatever
        # the buffer's step count; the op takes another step count for packed
        # tokens only: the B rows as B sequences of T tokens (views).
        cu_seqlens = torch.arange(0, (B + 1) * T, T, dtype=torch.int32, device=dev)
        fresh = True
        # (reshape: a strided input view may need a copy; o is dense)
        packed = lambda t: t.reshape(1, B * T, *t.shape[2:])
        q, k, v, a, b, o = (packed(t) for t in (q, k, v, a, b, o))
    # disable_state_update: the pool is only read (no commit).
    read_only = bool(disable_state_update)
    torch.ops.gdn.recurrent(q, k, v, None, a, A_log, dt_bias, None, b, indices, cu_seqlens,
                            inter_idx, pool if read_only else None,
                            None if read_only else pool, inter, None, o, *windows, state_scale,
                            None, None, inter_scale, None, scale,
                            bool(use_qk_l2norm_in_kernel), "vk", False, parents,
                            fresh_early_inputs=fresh,
                            stochastic_rounding=_stochastic_rounding(
                                None if read_only else pool, inter))
    return o_out


def fused_recurrent_gated_delta_rule_packed_decode(
        mixed_qkv, a, b, A_log, dt_bias, scale, initial_state, out, ssm_state_indices,
        use_qk_l2norm_in_kernel=False):
    """SGLang's `fused_recurrent_gated_delta_rule_packed_decode` (sglang 0.5.23;
    GDN decode, one token a row, fused gating): mixed_qkv [B, 2 H K + HV V],
    the conv1d output read as SGLang's kernel reads it: q = columns
    [0, H K) as [H, K], k = [H K, 2 H K), v = [2 H K, 2 H K + HV V) as
    [HV, V] (H inferred from the width; the column slices are read in
    place, no copy); a, b [B, HV]; A_log, dt_bias [HV] (float32, bfloat16
    or float16, converted to float32); scale (None: K^-0.5); initial_state
    the pool [slots, HV, V, K] (HV, V, K are read from it; float32,
    bfloat16, float16, or float8_e4m3fn with its row scales attached,
    gdn.ops.quantized_state, rounded stochastically if it was allocated so;
    the slots of a float pool may have a pitch) updated in place at ssm_state_indices [B]
    (int32/int64; < 0: padding, no slot touched, output row 0); out
    [B, 1, HV, V] (mixed_qkv's dtype) written in place. g = -exp(A_log)
    softplus(a + dt_bias) (threshold 20), beta = sigmoid(b). Returns (out,
    initial_state), as SGLang. SGLang's ValueErrors for malformed shapes are
    kept; an out that is not dense is a ValueError. B = 0: nothing is
    launched."""
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
    state_scale = _state_scale_of(pool, "initial_state")
    indices = _check_indices("ssm_state_indices", ssm_state_indices, dev, B,
                             pool.shape[0] if _validate_indices() else None)
    A_log, a, dt_bias, b = _check_fused_gating(dev, B, 1, HV, A_log, a, dt_bias, b)
    scale = _scale(scale)
    out = _check("out", out, dev, (B, 1, HV, V), None, written=True)
    if B == 0:
        return out, initial_state
    torch.ops.gdn.recurrent(q, k, v, None, a, A_log, dt_bias, None, b, indices, None, None,
                            None, pool, None, None, out, None, None, None, None, state_scale,
                            None, None, None, None, scale, bool(use_qk_l2norm_in_kernel), "vk",
                            stochastic_rounding=_stochastic_rounding(pool))
    return out, initial_state


def commit_gdn_replayssm_fold_all_layers(
        checkpoint_state, rawv_cache, rawk_cache, g_cache, beta_cache, ssm_state_indices,
        accept_lens, max_cache_len, num_k_heads, mamba_track_indices=None,
        mamba_steps_to_track=None, use_qk_l2norm_in_kernel=True, null_block_id=-1):
    """SGLang's `commit_gdn_replayssm_fold_all_layers` (sglang 0.5.23,
    gdn_replayssm_spec_fold.py): after the verify of every layer with
    cache_ring=True, replays each request's accepted prefix from the rings
    into every layer's checkpoint, in place, in one launch
    (gdn.ops.replay_commit).
    - checkpoint_state [layers, slots, HV, V, K] (SGLang's pool layout),
      float32/bfloat16/float16 (replayed in float32, rounded once on store);
    - rawv_cache [layers, slots, HV, L, V], rawk_cache [layers, slots, H, L, K]
      (one dtype, the verify's q dtype), g_cache, beta_cache
      [layers, slots, HV, L] float32; dense (SGLang also takes strided
      layers and slots: a strided ring is a ValueError here);
    - ssm_state_indices, accept_lens [B] int32/int64: row n replays
      min(accept_lens[n], L) tokens onto slot ssm_state_indices[n] (SGLang
      reads past the ring for accept_lens > L); slots <= null_block_id (and
      < 0) and accept_lens <= 0 are no-ops;
    - max_cache_len: L, num_k_heads: H (the rings' own sizes; a different
      value is a ValueError, SGLang would read other ring entries).
    use_qk_l2norm_in_kernel must match the verify. mamba_track_indices /
    mamba_steps_to_track (an extra checkpoint of a track slot):
    NotImplementedError naming them. Errors before any launch: TypeError
    for dtypes, ValueError for shapes, devices and contiguity, each naming
    the argument. B = 0: nothing is launched. Returns None."""
    _unsupported(mamba_track_indices=mamba_track_indices,
                 mamba_steps_to_track=mamba_steps_to_track)
    for name, t, rank in (("checkpoint_state", checkpoint_state, 5), ("rawk_cache", rawk_cache, 5)):
        if not isinstance(t, torch.Tensor) or t.dim() != rank:
            raise ValueError(f"{name} must be a {rank}-D tensor [layers, slots, ...]")
    if int(max_cache_len) != rawk_cache.shape[3]:
        raise ValueError(f"max_cache_len = {max_cache_len} must be the rings' step count "
                         f"rawk_cache.shape[3] = {rawk_cache.shape[3]}")
    if int(num_k_heads) != rawk_cache.shape[2]:
        raise ValueError(f"num_k_heads = {num_k_heads} must be rawk_cache.shape[2] = "
                         f"{rawk_cache.shape[2]}")
    _replay(rawk_cache, rawv_cache, g_cache, beta_cache, accept_lens, checkpoint_state,
            _null_blocks("ssm_state_indices", ssm_state_indices, null_block_id),
            use_qk_l2norm_in_kernel, "vk",
            dict(k="rawk_cache", v="rawv_cache", g="g_cache", beta="beta_cache",
                 accepted="accept_lens", state="checkpoint_state", indices="ssm_state_indices"))
