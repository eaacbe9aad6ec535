"""SGLang (sglang 0.5.23): chunk_gated_delta_rule
(sglang.kernels.ops.attention.fla.chunk), the GDN prefill (extend) of its
Triton backend, on a state pool read and written in place.

gdn.ops exports it as `sglang_chunk_gated_delta_rule` (the name
chunk_gated_delta_rule there is FLA's). It runs the one gdn.recurrent op on
the pool itself, at the indices, with the varlen form the cost model picks
(a varlen batch of prefills on tensor cores, docs/cost-model.md): no copy
of the slots, no host synchronisation."""
import torch

from . import _custom_ops  # noqa: F401  (registers torch.ops.gdn.recurrent)
from ._checks import (_INPUT, _check, _check_cu_seqlens, _check_indices, _check_pool, _check_qkv,
                      _dense_like, _scale, _validate_indices)
from .fla import _fla_beta
from .quantized import _state_scale_of, _stochastic_rounding


def chunk_gated_delta_rule(q, k, v, g, beta, scale=None, initial_state=None,
                           initial_state_indices=None, cu_seqlens=None, head_first=False,
                           use_qk_l2norm_in_kernel=False, inplace_update=True):
    """SGLang's `chunk_gated_delta_rule` (sglang 0.5.23,
    sglang.kernels.ops.attention.fla.chunk), as its Triton GDN backend's
    extend calls it.

    - q, k [B, T, H, K], v [B, T, HV, V] (HV a multiple of H; float32,
      bfloat16 or float16, one dtype; views of a fused projection are read
      in place); with cu_seqlens [N + 1] (int32/int64) B must be 1 and the N
      sequences are packed along T (else N = B).
    - g [B, T, HV]: the log-space decay; beta [B, T, HV] (or per value
      channel [B, T, HV, V]); any float dtype.
    - scale: None is K^-0.5.
    - initial_state [slots, HV, V, K] (float32, bfloat16, float16, or
      float8_e4m3fn with its row scales attached; the slots of a float pool
      may have a pitch):
      with initial_state_indices [N] (int32/int64) a pool, sequence n
      starting from slot initial_state_indices[n] (an index < 0 is a padding
      row: it starts from zero, touches no slot and its o rows are zero,
      where SGLang's kernel computes them from zero); without indices one
      state a sequence, [N, HV, V, K]. None: every sequence starts from
      zero and nothing is written.
    - inplace_update: the final state of sequence n is written back where it
      started (the slot or row), rounded once to the pool's dtype; False:
      the states are only read (SGLang's GDN multi-item scoring).
    - head_first=True raises DeprecationWarning, as SGLang.
    - use_qk_l2norm_in_kernel: q and k L2-normalised per head (eps 1e-6).

    Returns (o [B, T, HV, V] in q's dtype, None, None). SGLang's third value
    is every chunk's starting state h [B, chunks, HV, V, K], which only its
    mamba radix track (extra_buffer) reads; gdn forms no per-chunk states.
    Errors before any launch: ValueError for SGLang's own shape rules (B != 1
    with cu_seqlens; initial_state_indices not [N]) and every other shape,
    TypeError for dtypes, each naming the argument. Nothing to compute
    (T = 0 or N = 0): nothing is launched."""
    if head_first:
        raise DeprecationWarning(
            "head_first is deprecated and will be removed in a future version. "
            "Please use head_first=False for now instead.")
    scale = _scale(scale)
    q, k, v, dev, B, T, H, K, HV, V = _check_qkv(q, k, v)
    if cu_seqlens is not None and B != 1:
        raise ValueError(f"The batch size is expected to be 1 rather than {B} when using "
                         "`cu_seqlens`. Please flatten variable-length inputs before processing.")
    cu_seqlens, N, fresh = _check_cu_seqlens(cu_seqlens, dev, B, T)
    g = _check("g", g, dev, (B, T, HV), _INPUT, copy=True, layout="tokens")
    beta, _ = _fla_beta(beta, False, dev, B, T, HV, V, q.dtype, required=True)
    pool = indices = state_scale = None
    if initial_state is not None:
        pool = _check_pool("initial_state", initial_state, dev, HV, V, K, N)
        if initial_state_indices is not None:
            indices = _check_indices("initial_state_indices", initial_state_indices, dev, N,
                                     pool.shape[0] if _validate_indices() else None)
        elif pool.shape[0] != N:
            raise ValueError(f"initial_state without initial_state_indices must hold one state "
                             f"a sequence, [{N}, {HV}, {V}, {K}], got {list(pool.shape)}")
        state_scale = _state_scale_of(pool, "initial_state")
    elif initial_state_indices is not None:
        _check_indices("initial_state_indices", initial_state_indices, dev, N)
    o = _dense_like(v)
    if N == 0 or T == 0:
        return o, None, None
    written = pool if inplace_update else None
    torch.ops.gdn.recurrent(q, k, v, g, None, None, None, beta, None, indices, cu_seqlens, None,
                            None if written is not None else pool, written, None, None, o,
                            None, None, None, None, state_scale, None, None, None, None, scale,
                            bool(use_qk_l2norm_in_kernel), "vk", fresh_early_inputs=fresh,
                            stochastic_rounding=_stochastic_rounding(written))
    return o, None, None
