"""PyTorch entry points with the signatures of the kernels gdn replaces
(argument for argument, defaults, return values and in-place behaviour of
the anchors named below; docs/anchors.md lists every argument and what gdn
does with it).

- `fused_recurrent_gated_delta_rule`        FLA 0.6.0 (fla.ops.gated_delta_rule)
- `fused_recurrent_kda`                     FLA 0.6.0 (fla.ops.kda)
- `chunk_gated_delta_rule`, `chunk_kda`      FLA 0.6.0's prefill signatures
                                             (the cost model's chunked forms
                                             for long T)
- `gated_delta_rule_decode_pretranspose`     FlashInfer 0.7.2 (flashinfer.gdn_decode)
- `gated_delta_rule_decode`                  FlashInfer 0.7.2 (K-major state)
- `gated_delta_rule_mtp`                     FlashInfer 0.7.2 (verify, T > 1)
- `flashinfer_chunk_gated_delta_rule`        FlashInfer 0.7.2's prefill
                                             (flashinfer.gdn_prefill
                                             .chunk_gated_delta_rule, packed
                                             varlen, prefix-cache checkpoints;
                                             also gdn.ops.flashinfer
                                             .chunk_gated_delta_rule: the
                                             name chunk_gated_delta_rule here
                                             is FLA's)
- `fused_sigmoid_gating_delta_rule_update`   SGLang 0.5.23 (decode and verify)
- `fused_recurrent_gated_delta_rule_packed_decode`
                                             SGLang 0.5.23 (packed mixed_qkv decode)
- `sglang_chunk_gated_delta_rule`            SGLang 0.5.23's prefill
                                             (sglang.kernels.ops.attention
                                             .fla.chunk.chunk_gated_delta_rule,
                                             on the pool in place)
- `gated_delta_rule_replayssm_commit`        FlashInfer 0.7.2 (ReplaySSM commit)
- `commit_gdn_replayssm_fold_all_layers`     SGLang 0.5.23 (ReplaySSM commit)
- `commit_accepted`                          after verify: each row's accepted
                                             prefix into the pool (gdn.commit)
- `replay_commit`                            after a replayed verify (windows
                                             of raw inputs, no per-token
                                             states): each row's accepted
                                             prefix replayed onto the pool,
                                             all layers in one launch
                                             (gdn.replay_commit)

Quantized states (quantized): `quantized_state` allocates a float8_e4m3fn
pool with its float32 row scales attached (S = e4m3 x the scale of its row,
a head's V column: docs/math.md §6), which the vk entry points of SGLang and
FlashInfer then take like any pool, views of it included
(`attach_state_scale` for a pool allocated elsewhere, `state_scale_of`,
`quantize_state` / `dequantize_state` to convert). torch.ops.gdn.recurrent
takes the scales as its `state_scale` argument.

`set_schedule` overrides the GPU schedule of the kernels compiled afterwards
(used by the benchmarks' sweeps).

Each validates its arguments (TypeError / ValueError naming the argument,
raised before any launch), then calls the custom op `gdn::recurrent`
(`commit_accepted`: `gdn::commit`; the replay commits:
`gdn::replay_commit`), registered with torch.library (fake
implementation included, so torch.compile can trace it). The op launches on
torch.cuda.current_stream() and allocates nothing when the caller passes the
outputs (and inputs the kernels read in place, in the dtypes they take:
copies and conversions are captured too), so it can be captured in a CUDA
graph. CPU tensors run the CPU
lowering. Arguments the kernels do not support yet raise NotImplementedError
naming the argument: never a silent fallback. Unknown keywords: ignored by
the FLA entry points, as FLA ignores them; a TypeError for the others, whose
anchors have fixed signatures. Strided views are read in place where the kernels
can address them (q, k, v and the gates of a fused projection, e.g.
SGLang's mixed_qkv; states, pools and buffers whose slots are views of a
larger record: docs/DESIGN.md, "Strided operands"); other read-only views
(A_log, dt_bias, cu_seqlens, odd strides) are copied; a tensor the kernel
writes in place (a state, a pool, a buffer, an output) is never copied: one
the kernels cannot address raises an error that is both a
NotImplementedError and a ValueError.

Math (the gdn.recurrent op's description in GDNOps.td; docs/math.md §1):
per token, S <- exp(g) S;
u = beta (v - S^T k); S <- S + k u^T; o = S^T q, with q scaled by `scale`
(default K^-0.5) after the optional L2 norm (eps 1e-6 inside the sqrt); fused
gating g = -exp(A_log) softplus(a + dt_bias), beta = sigmoid(b). KDA: the
decay per key channel, S[k, :] <- exp(g[k]) S[k, :] (g or a [B, T, HV, K],
dt_bias [HV * K]); beta may be per value channel (beta or b [B, T, HV, V]).

The package, one concern a module: _custom_ops (the custom ops
gdn::recurrent, gdn::commit and gdn::replay_commit, their kernel caches,
set_schedule), _checks (the argument checks the entry points share), fla,
sglang, flashinfer (each anchor's entry points; fla_chunk: FLA's chunk
signatures; sglang_chunk: SGLang's), accepted (commit_accepted), replay (replay_commit) and
quantized (float8_e4m3fn states). No backward pass yet: an input that requires grad (with
grad enabled) is a NotImplementedError naming it. Import the entry
points from gdn.ops, which re-exports them.
"""
from ._custom_ops import commit, recurrent, set_schedule  # noqa: F401  (the ops, as before)
from ._custom_ops import _kernels  # noqa: F401  (the kernel cache; the tests read and clear it)
from .accepted import commit_accepted
from .fla import fused_recurrent_gated_delta_rule, fused_recurrent_kda
from .fla_chunk import chunk_gated_delta_rule, chunk_kda
from .flashinfer import chunk_gated_delta_rule as flashinfer_chunk_gated_delta_rule
from .flashinfer import (gated_delta_rule_decode, gated_delta_rule_decode_pretranspose,
                         gated_delta_rule_mtp, gated_delta_rule_replayssm_commit)
from .quantized import (attach_state_scale, dequantize_state, detach_state_scale,
                        quantize_state, quantized_state, state_scale_of,
                        stochastic_rounding_of)
from .replay import replay_commit
from .sglang import (commit_gdn_replayssm_fold_all_layers,
                     fused_recurrent_gated_delta_rule_packed_decode,
                     fused_sigmoid_gating_delta_rule_update)
from .sglang_chunk import chunk_gated_delta_rule as sglang_chunk_gated_delta_rule

__all__ = [
    "fused_recurrent_gated_delta_rule",
    "fused_recurrent_kda",
    "chunk_gated_delta_rule",
    "chunk_kda",
    "gated_delta_rule_decode_pretranspose",
    "gated_delta_rule_decode",
    "gated_delta_rule_mtp",
    "gated_delta_rule_replayssm_commit",
    "flashinfer_chunk_gated_delta_rule",
    "fused_sigmoid_gating_delta_rule_update",
    "fused_recurrent_gated_delta_rule_packed_decode",
    "sglang_chunk_gated_delta_rule",
    "commit_gdn_replayssm_fold_all_layers",
    "commit_accepted",
    "replay_commit",
    "quantized_state",
    "attach_state_scale",
    "detach_state_scale",
    "state_scale_of",
    "stochastic_rounding_of",
    "quantize_state",
    "dequantize_state",
]
