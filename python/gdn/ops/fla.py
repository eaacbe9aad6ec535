"""FLA (fla-core 0.6.0): fused_recurrent_gated_delta_rule
(fla.ops.gated_delta_rule) and fused_recurrent_kda (fla.ops.kda)."""
import warnings

import torch

from . import _custom_ops  # noqa: F401  (registers torch.ops.gdn.recurrent)
from ._checks import (_INPUT, _check, _check_cu_seqlens, _check_qkv, _dense_like, _f32_param,
                      _scale, _unsupported)


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
        beta = _check("beta", beta, dev, (B, T, HV, V), _INPUT, copy=True, layout="tokens")
    else:
        beta = _check("beta", beta, dev, (B, T, HV), _INPUT, copy=True, layout="tokens")
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
        # A slot-pitched view is read in place, unless the op also writes a
        # final state: the two states share one layout, and FLA's final state
        # is a new dense tensor.
        given = initial_state
        initial_state = _check("initial_state", initial_state, dev, state_shape, _INPUT,
                               copy=True, layout=None if output_final_state else "slots")
        fresh = fresh or initial_state is not given
    new_o = (lambda t: _dense_like(t).zero_()) if zero_o else _dense_like
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
                            initial_state, None, None, final_state, o, None, None, None,
                            None, None, None, None, None, None, scale,
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
    use_gate_in_kernel, A_log and dt_bias are ignored. Strided views are
    accepted: q, k, v of a fused projection, g, gk and beta are read in
    place where the kernels can address them (innermost dimension dense),
    initial_state too when only its rows have a pitch; other views (A_log,
    dt_bias, cu_seqlens, odd strides) are copied. gv, and gk together with
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
        g = _check("g", g, dev, (B, T, HV), _INPUT, copy=True, layout="tokens")
        if use_gate_in_kernel:
            a, g = g, None
    if gk is not None:
        if g is not None or a is not None:
            raise NotImplementedError(
                "gdn: argument 'gk' together with 'g' (two decays a token) is not supported yet")
        g = _check("gk", gk, dev, (B, T, HV, K), _INPUT, copy=True, layout="tokens")  # per key: by shape
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
    NotImplementedError. Strided views: as fused_recurrent_gated_delta_rule
    (read in place where the kernels can address them, else copied)."""
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
    g = _check("g", g, dev, (B, T, HV, K), _INPUT, copy=True, layout="tokens")
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
