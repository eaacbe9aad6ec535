"""FLA (fla-core 0.6.0): chunk_gated_delta_rule (fla.ops.gated_delta_rule)
and chunk_kda (fla.ops.kda), the prefill entry points, with FLA's
signatures.

Both run the one gdn.recurrent op of fused_recurrent_gated_delta_rule /
fused_recurrent_kda (gdn.ops.fla); its cost model picks the form
(docs/cost-model.md): for a fixed batch of T > 16 bf16/f16 tokens, every
16-token chunk's WY solve in a first launch, then the state scan, on
tensor cores (solve = chunk_parallel), with bf16 q and k the scan's
products on bf16 mma and the rest one tf32 mma a product (precision =
bf16, the fp32 final state within 2.5e-3 of fp64 and o within 3.7e-3,
the chunked anchors' accuracy; with f16 q and k precision = tf32;
docs/math.md §5); for 8 < T <= 16 one chunk on tensor cores with 3xTF32 products; for
a varlen batch of prefills (at least 8 tokens a sequence on average) the
tensor-core solve chunk by chunk; KDA (a decay per key) at K = 128
chunk_parallel for T >= 32, or T > 16 off the tiny grid, and varlen
batches of 64 tokens a sequence on average (docs/cost-model.md#kda-chunks);
else the token loop.
All are rewritings of the one recurrence, so the results agree to the
products' rounding. What only drives FLA's chunked
kernels (chunk_size, chunk_indices, cu_seqlens_cpu, disable_recompute,
safe_gate on precomputed gates, use_graph, max_num_seqs) does not change the
result and is ignored; what gdn cannot compute raises NotImplementedError
naming it (cp_context, return_intermediate_states, KDA's lower_bound gate).
Keywords FLA reads from **kwargs (transpose_state_layout, chunk_size,
use_gate_in_kernel, A_log, dt_bias; head_first for GDN) are read the same
way; any other keyword is ignored, as FLA ignores it."""
from ._checks import _unsupported
from .fla import _transpose_state_layout, fused_recurrent_gated_delta_rule, fused_recurrent_kda


def _chunk_size(kwargs, allowed):
    """FLA's chunk_size keyword: validated as FLA does, then unused (gdn's
    cost model picks its own chunk, 16 tokens on tensor cores)."""
    chunk_size = kwargs.pop("chunk_size", 64)
    if chunk_size not in allowed:
        raise ValueError(f"`chunk_size` must be one of {allowed}, got {chunk_size}.")


def chunk_gated_delta_rule(
        q, k, v, g, beta, scale=None, initial_state=None, output_final_state=False,
        use_qk_l2norm_in_kernel=False, use_beta_sigmoid_in_kernel=False, allow_neg_eigval=False,
        state_v_first=False, cu_seqlens=None, cu_seqlens_cpu=None, chunk_indices=None,
        cp_context=None, **kwargs):
    """FLA's `chunk_gated_delta_rule` (fla-core 0.6.0), computed by
    gdn.ops.fused_recurrent_gated_delta_rule (the form above): q, k
    [B, T, H, K], v [B, T, HV, V] (HV a multiple of H), g [B, T, HV] the
    log-space decay (or, with the keyword use_gate_in_kernel=True, the raw
    gate: g = -exp(A_log) softplus(g + dt_bias), A_log [HV] required, dt_bias
    [HV] optional, both keywords), beta [B, T, HV] (logits with
    use_beta_sigmoid_in_kernel; 2 sigmoid(beta) with allow_neg_eigval),
    initial_state [N, HV, K, V] ([N, HV, V, K] with state_v_first; read
    only, any float dtype), cu_seqlens [N + 1] int32/int64 with B = 1.
    Returns (o [B, T, HV, V] in v's dtype, final_state float32 or None).

    Ignored, as they do not change the result: cu_seqlens_cpu (a host copy
    of cu_seqlens), chunk_indices (derived from cu_seqlens) and the keyword
    chunk_size (ValueError unless 16, 32 or 64, as FLA). cp_context (context
    parallelism) raises NotImplementedError. The keyword head_first raises
    DeprecationWarning, as FLA 0.6.0 does; other unknown keywords are
    ignored."""
    state_v_first = _transpose_state_layout(state_v_first, kwargs)
    if "head_first" in kwargs:
        raise DeprecationWarning(
            "head_first has been removed. Inputs must be in `[B, T, H, ...]` format.")
    _chunk_size(kwargs, (16, 32, 64))
    _unsupported(cp_context=cp_context)
    return fused_recurrent_gated_delta_rule(
        q, k, v, g=g, beta=beta, scale=scale, initial_state=initial_state,
        output_final_state=output_final_state, use_qk_l2norm_in_kernel=use_qk_l2norm_in_kernel,
        use_gate_in_kernel=kwargs.get("use_gate_in_kernel", False), A_log=kwargs.get("A_log"),
        dt_bias=kwargs.get("dt_bias"), use_beta_sigmoid_in_kernel=use_beta_sigmoid_in_kernel,
        allow_neg_eigval=allow_neg_eigval, state_v_first=state_v_first, cu_seqlens=cu_seqlens)


def chunk_kda(
        q, k, v, g, beta, scale=None, initial_state=None, output_final_state=False,
        use_qk_l2norm_in_kernel=False, use_gate_in_kernel=False, use_beta_sigmoid_in_kernel=False,
        allow_neg_eigval=False, safe_gate=False, lower_bound=None, disable_recompute=False,
        return_intermediate_states=False, state_v_first=False, cu_seqlens=None,
        cu_seqlens_cpu=None, cp_context=None, use_graph=False, max_num_seqs=None, **kwargs):
    """FLA's `chunk_kda` (fla-core 0.6.0, Kimi Delta Attention), computed by
    gdn.ops.fused_recurrent_kda (its cost model's form: chunk_parallel for
    several chunks, else token by token): q, k [B, T, H, K], v
    [B, T, HV, V], g [B, T, HV, K] the log-space decay per key channel (or,
    with use_gate_in_kernel, the raw gate: g = -exp(A_log) softplus(g +
    dt_bias) with the keywords A_log [HV] (required, ValueError as FLA) and
    dt_bias [HV * K] (optional)), beta [B, T, HV] (logits with
    use_beta_sigmoid_in_kernel), initial_state [N, HV, K, V] (read only;
    FLA asserts float32, gdn takes any float dtype), cu_seqlens [N + 1] with
    B = 1. Returns (o [B, T, HV, V] in v's dtype, zero-initialised with
    cu_seqlens, as FLA's; final_state float32 or None).

    Ignored, as they do not change the result: disable_recompute (a
    backward-pass memory trade), safe_gate without use_gate_in_kernel (FLA's
    fast path for gates the caller already bounded), cu_seqlens_cpu,
    use_graph, max_num_seqs and the keyword chunk_size (ValueError unless 32
    or 64, as FLA). NotImplementedError: lower_bound with use_gate_in_kernel
    (FLA's gate lower_bound * sigmoid(exp(A_log) (g + dt_bias)), after
    FLA's ValueErrors for safe_gate without lower_bound or outside
    [-5, 0)), return_intermediate_states=True (the per-chunk states) and
    cp_context."""
    state_v_first = _transpose_state_layout(state_v_first, kwargs)
    _unsupported(cp_context=cp_context)
    A_log = dt_bias = None
    if use_gate_in_kernel:
        A_log, dt_bias = kwargs.get("A_log"), kwargs.get("dt_bias")
        if A_log is None and lower_bound is None:
            raise ValueError("`A_log` must be provided when `use_gate_in_kernel=True` and "
                             "`lower_bound` is not set.")
    _chunk_size(kwargs, (32, 64))
    if safe_gate and use_gate_in_kernel:
        if lower_bound is None:
            raise ValueError("`lower_bound` must be specified when `safe_gate=True` and "
                             "`use_gate_in_kernel=True`.")
        if not -5 <= lower_bound < 0:
            raise ValueError(f"`lower_bound` must be in the safe range [-5, 0), got {lower_bound}.")
    _unsupported(return_intermediate_states=return_intermediate_states)
    # lower_bound with use_gate_in_kernel: NotImplementedError from fused_recurrent_kda.
    return fused_recurrent_kda(
        q, k, v, g, beta, A_log=A_log, dt_bias=dt_bias, scale=scale,
        initial_state=initial_state, output_final_state=output_final_state,
        use_qk_l2norm_in_kernel=use_qk_l2norm_in_kernel, use_gate_in_kernel=use_gate_in_kernel,
        use_beta_sigmoid_in_kernel=use_beta_sigmoid_in_kernel, allow_neg_eigval=allow_neg_eigval,
        lower_bound=lower_bound, state_v_first=state_v_first, cu_seqlens=cu_seqlens)
