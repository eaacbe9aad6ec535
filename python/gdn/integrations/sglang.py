"""SGLang (sglang 0.5.23): gdn's kernels as a linear-attention kernel backend
named "gdn", chosen per phase as SGLang's own backends are:

    sglang serve --model-path Qwen/Qwen3-Next-80B-A3B-Instruct \\
        --linear-attn-decode-backend gdn          # decode and (following it) verify

(docs/sglang.md). SGLang 0.5.23 runs the GDN layers (Qwen3-Next, Qwen3.5) in
GDNAttnBackend and the KDA layers (Kimi Linear) in KDAAttnBackend
(sglang.srt.layers.attention.linear.{gdn,kda}_backend); each holds a kernel
dispatcher (GDNKernelDispatcher, KDAKernelDispatcher) with one kernel object
per phase, subclasses of LinearAttnKernelBase (…linear.kernels.kernel_backend)
with the methods decode, extend (prefill), target_verify (speculative verify)
and optionally packed_decode. The phase's kernel comes from
--linear-attn-backend (all phases), --linear-attn-decode-backend,
--linear-attn-prefill-backend and --linear-attn-verify-backend, whose values
SGLang maps to its enum LinearAttnKernelBackend (an unknown value maps to
CUSTOM) and whose CLI choices out-of-tree code may extend
(sglang.srt.arg_groups.choices.add_linear_attn_kernel_backend_choices). The
dispatchers have no registry: they raise for CUSTOM. `register()` therefore
adds the choice "gdn" and wraps the two dispatchers' __init__ so that the
phases configured "gdn" get GDNKernel / KDAKernel (the other phases keep
SGLang's kernels). SGLang loads it in every one of its processes as a
general plugin (entry point group "sglang.srt.plugins", name "gdn", declared
by gdn-mlir's pyproject.toml: `plugin`).

Which phases run gdn: those whose value is "gdn" (--linear-attn-backend
gives the default of the three); verify also when
--linear-attn-verify-backend is unset and decode is gdn (as SGLang's unset
verify follows a FlashInfer decode).

What runs (the SGLang entry point semantics of gdn.ops, docs/anchors.md):
- GDN decode: packed_decode -> gdn.ops.fused_recurrent_gated_delta_rule_packed_decode;
  decode -> gdn.ops.fused_sigmoid_gating_delta_rule_update (cu_seqlens).
- GDN verify (chain and EAGLE tree): fused_sigmoid_gating_delta_rule_update
  with the per-token buffer, disable_state_update=True (SGLang itself commits
  the accepted prefix after verify).
- GDN prefill: extend -> gdn.ops.sglang_chunk_gated_delta_rule (SGLang's
  chunk_gated_delta_rule) on the pool in place, in the cost model's varlen
  form (tensor cores for prefills of at least 8 tokens a sequence).
- KDA (Kimi Linear) decode, verify and prefill:
  fused_sigmoid_gating_delta_rule_update(is_kda=True), the pool updated in
  place (prefill too: SGLang passes the raw gates).
Not supported (NotImplementedError naming it, or SGLang's own refusal): the
KDA safe gate (lower_bound: SGLang's KDA dispatcher refuses it for decode and
verify and sends that prefill to Triton), ReplaySSM (SGLang allows it with
Triton/Helion decode only), per-chunk prefill states for the mamba radix
track (--mamba-radix-cache-strategy extra_buffer with a gdn prefill:
refused when the runner resolves its backends; the default no_buffer
works), a page-major (strided) state pool (SGLang refuses gdn decode and
prefill with --enable-page-major-kv-layout), GDN multi-item scoring (SGLang
refuses a prefill other than its Triton one for it).

Importing this module imports neither gdn.ops nor any sglang module other
than the kernel base class (when sglang is installed); the kernels load
gdn.ops when built."""
import functools
import logging

try:  # SGLang's abstract kernel base, where sglang is installed and imports
    from sglang.srt.layers.attention.linear.kernels.kernel_backend import (
        LinearAttnKernelBase as _KernelBase)
    _SGLANG_ERROR = None
except Exception as e:  # noqa: BLE001  (absent or broken: the classes still work standalone)
    _KernelBase, _SGLANG_ERROR = object, e

__all__ = ["BACKEND", "GDNKernel", "KDAKernel", "register", "plugin"]

BACKEND = "gdn"
_log = logging.getLogger(__name__)

# SGLang's fused gating constants (every 0.5.23 backend passes these)
_SOFTPLUS_BETA, _SOFTPLUS_THRESHOLD = 1.0, 20.0


def _ops():
    import gdn.ops
    return gdn.ops


def _rows(query_start_loc):
    """Sequences in the batch: query_start_loc [N + 1] int32 (SGLang's
    cu_seqlens). SGLang's index tables can be longer (CUDA-graph padding,
    the verify row table sized to the pool); its kernels read their first N
    entries, so do these."""
    return query_start_loc.shape[0] - 1


def _refuse(**kwargs):
    """Keywords SGLang passes that gdn cannot honour when set."""
    for name, value in kwargs.items():
        if value is not None and value is not False:
            raise NotImplementedError(
                f"gdn: SGLang argument '{name}' is not supported by the gdn kernel backend "
                "yet")


class GDNKernel(_KernelBase):
    """GDN (Qwen3-Next, Qwen3.5) in SGLang 0.5.23's LinearAttnKernelBase
    interface. Shapes as GDNAttnBackend passes them (N sequences, T packed
    tokens, H q/k heads, HV value heads, head sizes K, V; x's dtype the
    model's, e.g. bf16): ssm_states the layer's pool [slots, HV, V, K]
    (float32 by default, --mamba-ssm-dtype), updated in place at
    cache_indices [>= N] int32 (< 0, or past the pool's slots: a padding
    row, nothing written; GDN_VALIDATE_INDICES=1 refuses the latter);
    query_start_loc [N + 1] int32; A_log [HV] float32; dt_bias [HV] in the
    model's dtype. Every method returns o [1, T, HV, V] in q's dtype (a
    view for packed_decode), as SGLang's Triton kernel does."""

    uses_state_checkpoints = False
    supports_fused_chain_verify = False
    # verify may pass q, k, v as strided views of the packed projection
    # (gdn reads or copies them), sparing SGLang's split kernel
    supports_strided_target_verify_qkv = True
    supports_track_state_snapshot = False
    supports_packed_decode = True

    def __init__(self):
        self.ops = _ops()

    def packed_decode(self, mixed_qkv, a, b, *, A_log, dt_bias, scale, ssm_states,
                      cache_indices, num_v_heads, head_v_dim, **kwargs):
        """One token a sequence: mixed_qkv [N, 2 H K + HV V] (the conv1d
        output), a, b [N, HV]. The ReplaySSM ring arguments (replayssm_*) are
        None unless --enable-linear-replayssm, which SGLang allows only with
        Triton/Helion decode."""
        _refuse(**{k_: v_ for k_, v_ in kwargs.items() if k_.startswith("replayssm_")})
        N = mixed_qkv.shape[0]
        out = mixed_qkv.new_empty(N, 1, num_v_heads, head_v_dim)
        self.ops.fused_recurrent_gated_delta_rule_packed_decode(
            mixed_qkv, a, b, A_log, dt_bias, scale, ssm_states, out, cache_indices[:N],
            use_qk_l2norm_in_kernel=True)
        return out.transpose(0, 1)

    def decode(self, q, k, v, a, b, *, A_log, dt_bias, ssm_states, cache_indices,
               query_start_loc, **kwargs):
        """q, k [1, N, H, K], v [1, N, HV, V] (views of the packed
        projection), a, b [N, HV]: one token a sequence."""
        N = _rows(query_start_loc)
        return self.ops.fused_sigmoid_gating_delta_rule_update(
            A_log, a, dt_bias, _SOFTPLUS_BETA, _SOFTPLUS_THRESHOLD, q, k, v, b, ssm_states,
            cache_indices[:N], use_qk_l2norm_in_kernel=True, cu_seqlens=query_start_loc)

    def extend(self, q, k, v, g, beta, *, ssm_states, cache_indices, query_start_loc,
               inplace_update=True, **kwargs):
        """Prefill: q, k [1, T, H, K], v [1, T, HV, V], g [1, T, HV] float32
        (the log-space decay SGLang's fused_gdn_gating computed), beta
        [1, T, HV] (sigmoid(b)). Sequence n starts from slot
        cache_indices[n] (SGLang zeroes a new request's slot; < 0: a padding
        row) and its final state is written back unless inplace_update is
        False (GDN multi-item scoring), as SGLang's Triton extend does:
        gdn.ops.sglang_chunk_gated_delta_rule on the pool in place (the cost
        model's varlen form, no copy of the slots, no host
        synchronisation). Returns (o, None, None): no per-chunk states h, so
        the mamba radix track (extra_buffer strategy) cannot snapshot;
        SGLang's own assertion stops such a batch."""
        _refuse(track_state=kwargs.get("track_state"),
                num_state_checkpoints=kwargs.get("num_state_checkpoints") or None)
        N = _rows(query_start_loc)
        o, _, _ = self.ops.sglang_chunk_gated_delta_rule(
            q, k, v, g, beta, initial_state=ssm_states, initial_state_indices=cache_indices[:N],
            cu_seqlens=query_start_loc, use_qk_l2norm_in_kernel=True,
            inplace_update=inplace_update)
        return o, None, None

    def target_verify(self, A_log, dt_bias, q, k, v, a, b, *, ssm_states, cache_indices,
                      query_start_loc, intermediate_states_buffer, intermediate_state_indices,
                      cache_steps, retrieve_parent_token, **kwargs):
        """Speculative verify: q, k [1, T, H, K], v [1, T, HV, V] (strided
        views; T = sum of the draft lengths), a, b [T, HV];
        intermediate_states_buffer [rows, steps, HV, V, K] (the pool's
        dtype) receives the state after token t of sequence n at
        [intermediate_state_indices[n], t]; the pool is only read;
        retrieve_parent_token [>= N, steps] (EAGLE tree) or None (chain).
        stable_rows (pipeline-parallel rows) only changes which rows SGLang
        chose; ignored."""
        N = _rows(query_start_loc)
        parents = retrieve_parent_token
        if parents is not None:
            parents = parents[:N]
        return self.ops.fused_sigmoid_gating_delta_rule_update(
            A_log, a, dt_bias, _SOFTPLUS_BETA, _SOFTPLUS_THRESHOLD, q, k, v, b, ssm_states,
            cache_indices[:N], use_qk_l2norm_in_kernel=True, cu_seqlens=query_start_loc,
            disable_state_update=True, intermediate_states_buffer=intermediate_states_buffer,
            intermediate_state_indices=intermediate_state_indices[:N], cache_steps=cache_steps,
            retrieve_parent_token=parents)


class KDAKernel(_KernelBase):
    """KDA (Kimi Linear) in SGLang 0.5.23's LinearAttnKernelBase interface,
    as KDAAttnBackend calls it: a the raw forget gate ([N, HV K] at decode
    and verify, [1, T, HV, K] at prefill), b the raw beta [1, T, HV],
    A_log [1, 1, HV, 1], dt_bias [HV K]; the pool and indices as GDNKernel.
    The decay is per key channel: g = -exp(A_log) softplus(a + dt_bias).
    lower_bound (the safe gate) raises NotImplementedError (SGLang's KDA
    dispatcher refuses it for non-Triton decode and verify kernels itself,
    and routes such prefill to Triton: supports_safe_gate is False)."""

    uses_state_checkpoints = False
    supports_fused_chain_verify = False
    supports_track_state_snapshot = False
    supports_safe_gate = False
    # gdn has no KDA packed-decode entry point: SGLang splits q, k, v and
    # calls decode()
    supports_packed_decode = False

    def __init__(self):
        self.ops = _ops()

    def _run(self, A_log, a, dt_bias, q, k, v, b, ssm_states, cache_indices, query_start_loc,
             lower_bound, **verify):
        N = _rows(query_start_loc)
        return self.ops.fused_sigmoid_gating_delta_rule_update(
            A_log, a, dt_bias, _SOFTPLUS_BETA, _SOFTPLUS_THRESHOLD, q, k, v, b, ssm_states,
            cache_indices[:N], use_qk_l2norm_in_kernel=True, cu_seqlens=query_start_loc,
            is_kda=True, lower_bound=lower_bound, **verify)

    def decode(self, q, k, v, a, b, *, A_log, dt_bias, ssm_states, cache_indices,
               query_start_loc, lower_bound=None, **kwargs):
        """q, k [1, N, H, K], v [1, N, HV, V]: one token a sequence."""
        return self._run(A_log, a, dt_bias, q, k, v, b, ssm_states, cache_indices,
                         query_start_loc, lower_bound)

    def extend(self, q, k, v, g, beta, *, ssm_states, cache_indices, query_start_loc,
               A_log=None, dt_bias=None, lower_bound=None, beta_is_raw=False,
               return_intermediate_states=False, **kwargs):
        """Prefill with the gates in the kernel (SGLang 0.5.23 passes g = the
        raw gate a, A_log, dt_bias and beta_is_raw=True), token by token, the
        pool updated in place. Returns o [1, T, HV, V]. The per-chunk states
        for the mamba radix track (return_intermediate_states, the
        extra_buffer strategy) are not supported."""
        _refuse(return_intermediate_states=return_intermediate_states,
                track_state=kwargs.get("track_state"),
                num_state_checkpoints=kwargs.get("num_state_checkpoints") or None)
        if A_log is None or not beta_is_raw:
            raise NotImplementedError(
                "gdn: KDA prefill with precomputed gates (A_log=None or beta_is_raw=False) is "
                "not supported by the gdn kernel backend yet")
        return self._run(A_log, g, dt_bias, q, k, v, beta, ssm_states, cache_indices,
                         query_start_loc, lower_bound)

    def target_verify(self, A_log, dt_bias, q, k, v, a, b, *, ssm_states, cache_indices,
                      query_start_loc, intermediate_states_buffer, intermediate_state_indices,
                      cache_steps, retrieve_parent_token, lower_bound=None, cache_ring=False,
                      **kwargs):
        """As GDNKernel.target_verify, per key channel. cache_ring (the
        ReplaySSM ring write) raises NotImplementedError."""
        N = _rows(query_start_loc)
        parents = retrieve_parent_token
        if parents is not None:
            parents = parents[:N]
        return self._run(A_log, a, dt_bias, q, k, v, b, ssm_states, cache_indices,
                         query_start_loc, lower_bound, disable_state_update=True,
                         intermediate_states_buffer=intermediate_states_buffer,
                         intermediate_state_indices=intermediate_state_indices[:N],
                         cache_steps=cache_steps, retrieve_parent_token=parents,
                         cache_ring=cache_ring)


# ---------------------------------------------------------------------------
# selection: the CLI choice and the dispatchers

_GDN_DISPATCHER = ("sglang.srt.layers.attention.linear.gdn_backend", "GDNKernelDispatcher",
                   GDNKernel)
_KDA_DISPATCHER = ("sglang.srt.layers.attention.linear.kda_backend", "KDAKernelDispatcher",
                   KDAKernel)
_RESOLVE = "sglang.srt.layers.attention.linear.utils.resolve_linear_attn_backends"


def gdn_phases():
    """The phases ("decode", "prefill", "verify") configured "gdn" in the
    running SGLang config (get_exec().mamba): a phase's own flag, else
    --linear-attn-backend; verify unset follows a gdn decode."""
    from sglang.srt.runtime_context import get_exec

    m = get_exec().mamba
    decode = m.linear_attn_decode_backend or m.linear_attn_backend
    prefill = m.linear_attn_prefill_backend or m.linear_attn_backend
    verify = m.linear_attn_verify_backend or (BACKEND if decode == BACKEND else None)
    return {p for p, name in (("decode", decode), ("prefill", prefill), ("verify", verify))
            if name == BACKEND}


def _wrap_dispatcher(cls, kernel_cls, kda):
    """Wraps cls.__init__(decode_backend, prefill_backend, verify_backend):
    SGLang's __init__ runs with TRITON in place of the gdn phases (it raises
    for CUSTOM), then those phases' kernels are replaced by one kernel_cls."""
    original = cls.__init__
    if getattr(original, "_gdn_wrapped", False):
        return

    @functools.wraps(original)
    def __init__(self, decode_backend, prefill_backend, verify_backend=None, *args, **kwargs):
        from sglang.srt.layers.attention.linear.utils import LinearAttnKernelBackend

        phases = gdn_phases()
        triton = LinearAttnKernelBackend.TRITON
        original(self, triton if "decode" in phases else decode_backend,
                 triton if "prefill" in phases else prefill_backend,
                 triton if "verify" in phases else verify_backend, *args, **kwargs)
        if not phases:
            return
        kernel = kernel_cls()
        if "decode" in phases:
            self.decode_kernel = kernel
            self.supports_packed_decode = kernel.supports_packed_decode
            if kda:
                self.supports_packed_decode_safe_gate = False
        if "prefill" in phases:
            self.extend_kernel = kernel
        if "verify" in phases:
            self.verify_kernel = kernel
            if not kda:  # tree verify too (SGLang sends trees to Triton otherwise)
                self.tree_verify_kernel = kernel
                self.verify_kernel_is_flashinfer = False
        _log.info("gdn-mlir: %s runs gdn's kernels for %s", cls.__name__,
                  ", ".join(sorted(phases)))

    __init__._gdn_wrapped = True
    cls.__init__ = __init__


_FLAGS = ("linear_attn_backend", "linear_attn_decode_backend", "linear_attn_prefill_backend",
          "linear_attn_verify_backend")


def _add_to_loaded_choices():
    """ServerArgs (when already imported) holds its fields' choices
    evaluated: the verify flag's is a copy of the shared list plus
    "nv_cutedsl", made at import, so extending the shared list misses it.
    Adds "gdn" to each of the four flags' choices there."""
    import sys

    server_args = sys.modules.get("sglang.srt.server_args")
    if server_args is None:  # built later, from the extended list
        return
    annotations = getattr(server_args.ServerArgs, "__annotations__", {})
    for flag in _FLAGS:
        for meta in getattr(annotations.get(flag), "__metadata__", ()):
            choices = getattr(meta, "choices", None)
            if isinstance(choices, list) and BACKEND not in choices:
                choices.append(BACKEND)


def _patch_dispatchers(only_loaded=False):
    """Wraps both dispatchers; with only_loaded, those whose module is
    already imported (importing them pulls in SGLang's model runner)."""
    import importlib
    import sys

    for module, name, kernel_cls in (_GDN_DISPATCHER, _KDA_DISPATCHER):
        if only_loaded and module not in sys.modules:
            continue
        _wrap_dispatcher(getattr(importlib.import_module(module), name), kernel_cls,
                         kda=kernel_cls is KDAKernel)


def _refuse_radix_track(backends):
    """A prefill on gdn under --mamba-radix-cache-strategy extra_buffer (or
    extra_buffer_lazy), with the radix cache in use: NotImplementedError
    naming both, before any request. That strategy snapshots per-chunk
    prefill states, which gdn's prefill does not return; SGLang's argument
    check only looks for its Triton backend, so the combination passed it
    and ended at an assertion in the first tracked prefill."""
    if "prefill" not in gdn_phases():  # (backends name every plugin "custom")
        return
    from sglang.srt.runtime_context import get_exec

    mamba = get_exec().mamba
    strategy = getattr(mamba, "mamba_radix_cache_strategy", None)
    if strategy in ("extra_buffer", "extra_buffer_lazy") and getattr(
            mamba, "uses_mamba_radix_cache", True) is not False:
        raise NotImplementedError(
            f"gdn: --mamba-radix-cache-strategy {strategy} needs per-chunk prefill states, "
            "which gdn's prefill does not return: use --linear-attn-prefill-backend triton "
            "(gdn keeps decode and verify) or --mamba-radix-cache-strategy no_buffer")


def _after_resolve(result, *args, **kwargs):
    """AFTER hook on resolve_linear_attn_backends, which the model runner
    calls right before it builds GDNAttnBackend / KDAAttnBackend (their
    modules are imported by then): wraps the dispatchers in that process,
    and refuses a gdn prefill the radix cache's track cannot use."""
    _patch_dispatchers()
    _refuse_radix_track(result)
    return result


def plugin():
    """SGLang general plugin (entry point "sglang.srt.plugins" gdn): adds the
    choice and registers the hook; SGLang's load_plugins() applies it."""
    register(apply_hooks=False)


_hook_registered = False


def register(apply_hooks=True):
    """Makes "gdn" a value of --linear-attn-backend,
    --linear-attn-{decode,prefill,verify}-backend (call before SGLang parses
    its arguments) and wraps SGLang's GDN/KDA kernel dispatchers so the
    phases configured gdn run GDNKernel / KDAKernel: now where their modules
    are imported, else when the runner resolves its backends (an AFTER hook
    on resolve_linear_attn_backends in SGLang's HookRegistry, applied now
    unless apply_hooks=False). Idempotent. SGLang starts its scheduler
    processes with spawn: a call in the launching process does not reach
    them; the entry point does (pip install gdn-mlir). Raises ImportError
    (with the reason) where sglang does not import."""
    global _hook_registered
    if _SGLANG_ERROR is not None:
        raise ImportError("gdn.integrations.sglang.register needs sglang 0.5.23, which does not "
                          f"import here: {type(_SGLANG_ERROR).__name__}: {_SGLANG_ERROR}"
                          ) from _SGLANG_ERROR
    from sglang.srt.arg_groups.choices import (LINEAR_ATTN_KERNEL_BACKEND_CHOICES,
                                               add_linear_attn_kernel_backend_choices)
    from sglang.srt.plugins.hook_registry import HookRegistry, HookType

    if BACKEND not in LINEAR_ATTN_KERNEL_BACKEND_CHOICES:
        add_linear_attn_kernel_backend_choices([BACKEND])
    _add_to_loaded_choices()
    _patch_dispatchers(only_loaded=True)
    if not _hook_registered:
        HookRegistry.register(_RESOLVE, _after_resolve, HookType.AFTER)
        _hook_registered = True
    if apply_hooks:
        HookRegistry.apply_hooks()
