//===- GDNOps.td - gdn dialect operations ------------------*- tablegen -*-===//
#ifndef GDN_OPS_TD
#define GDN_OPS_TD

include "gdn/Dialect/GDN/IR/GDNDialect.td"
include "gdn/Dialect/GDN/IR/GDNAttrs.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/OpBase.td"

class GDN_Op<string mnemonic, list<Trait> traits = []>
    : Op<GDN_Dialect, mnemonic, traits>;

/// An operand of gdn.recurrent: a ranked tensor (tensor form) or a memref
/// (memref form); the verifier checks that one op does not mix the two.
def GDN_TensorOrMemRef : AnyTypeOf<[AnyRankedTensor, AnyMemRef],
                                   "ranked tensor or memref">;

def GDN_RecurrentOp : GDN_Op<"recurrent", [
    AttrSizedOperandSegments,
    DestinationStyleOpInterface,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "gated delta rule recurrence over T tokens";
  let description = [{
    Runs the Gated Delta Rule recurrence for N sequences of T tokens each and
    writes the per-token outputs `o`. All arithmetic is fp32 regardless of the
    storage dtypes. For sequence n, value head hv (q/k head h = hv / (HV / H))
    and token t, with the head's state S of shape [K, V]:

    1. if `qk_l2norm`: q ← q / sqrt(Σ q² + 1e-6), k ← k / sqrt(Σ k² + 1e-6);
    2. q ← q · scale (default scale = K^-0.5; only q is scaled, after the norm);
    3. decay S ← exp(g) · S, with g given (`g`, log space, ≤ 0) or fused gating
       g = −exp(A_log[hv]) · softplus(a + dt_bias[hv]) where softplus(x) =
       log(1 + exp(x)) for x ≤ 20 and x otherwise; no decay when neither is given.
       KDA (Kimi Delta Attention), chosen by the shape of `g` or `a`
       ([N, T, HV, K]): the decay is per key channel, S[k, :] ← exp(g[k]) ·
       S[k, :], with g[k] given or g[k] = −exp(A_log[hv]) · softplus(a[k] +
       dt_bias[hv · K + k]) (dt_bias flattened to [HV · K], as SGLang's KDA
       passes it); in the `vk` storage this scales key column k;
    4. u = β · (v − Sᵀk), with β given (`beta`), sigmoid(`b`) (logits), or 1;
       with `allow_neg_eigval` (logits only) β = 2 · sigmoid(b), so the
       transition I − β k kᵀ may have a negative eigenvalue (FLA's
       allow_neg_eigval). β is per head ([N, T, HV]) or, by the shape of
       `beta` or `b` ([N, T, HV, V]), per value channel: u[v] = β[v] · (v[v]
       − (Sᵀk)[v]);
    5. S ← S + k uᵀ;
    6. o = Sᵀq, stored in v's dtype.

    Closed form: S_t = exp(g_t)(I − β_t k_t k_tᵀ) S_{t−1} + β_t k_t v_tᵀ,
    o_t = S_tᵀ q_t (FLA `fused_recurrent_gated_delta_rule`, SGLang
    `fused_sigmoid_gating_delta_rule_update`).

    Operands (all static). Memref layouts (OperandLayouts.h): every layout
    is strided with static strides and a static offset (a multiple of the
    alignment below; the kernels take the buffer's base address); strides of
    size-1 dimensions are ignored.
    `q`, `k`, `v`, `g`, `a`, `beta`, `b` (read only) may have any strides
    >= 0 with the innermost one 1, each a multiple of min(16 bytes, the
    innermost dimension's largest power-of-two divisor) in elements: views of
    a fused qkv projection or of SGLang's `mixed_qkv`, read in place. The
    states and `intermediate_states` may give their leading dimension (slot
    or row) a pitch (same multiple, at least a slot's elements, so slots do
    not overlap) with the other dimensions dense: a [slots, HV, V, K] view of
    a larger per-slot record. `o`, `A_log`, `dt_bias` and the index tables
    are dense. An operand's other layouts are a diagnostic.
    - `q`, `k`: [N, T, H, K], bf16/f16/f32; `v`: [N, T, HV, V], same dtype;
      HV must be a multiple of H;
    - `g`: [N, T, HV]; or `a`: [N, T, HV] with `A_log`: [HV] and `dt_bias`:
      [HV] (all three, f32 for A_log/dt_bias). Per key channel (KDA): `g`
      [N, T, HV, K]; or `a` [N, T, HV, K] with `A_log` [HV] and `dt_bias`
      [HV · K];
    - `beta` or `b`: [N, T, HV], or per value channel [N, T, HV, V];
    - `initial_state` (read) and `final_state` (written), [N, HV, K, V]
      for `state_layout = #gdn.layout<kv>` or [N, HV, V, K] for
      `#gdn.layout<vk>`, f32, bf16 or f16, or f8E4M3FN with `state_scale`
      (both the same dtype; loaded and
      widened to f32, computed in f32, rounded once on store); no initial
      state means S starts at zero.
      `initial_state` and `final_state` may alias exactly (same buffer); any
      other overlap is undefined. The exact alias is an in-place update: every
      kernel reads the part of the state it owns before writing it;
    - `state_scale` (optional, memref form; a quantized state): the states
      are then f8E4M3FN (e4m3, finite, max 448) and this f32 [N, HV, V] (a
      pool's [S, HV, V], dense) holds a scale a state row, that is a head's V
      column v over all K keys, whatever the layout: S[k, v] = e4m3 x
      state_scale[., hv, v]. The state is widened to f32 on load and, on
      store, every row is quantized once: amax = max_k |S[k, v]|,
      state_scale = amax / 448, e4m3 = round-to-nearest-even, saturating, of
      S[k, v] x (448 / amax) (amax = 0: scale 0, elements 0; amax below
      2^-119, whose 448 / amax overflows f32: elements 0);
      docs/math.md §6. Read with `initial_state`, written with
      `final_state`; with both they must be one buffer (in place). Padding
      rows touch neither. `intermediate_states` have their own dtype and,
      when f8E4M3FN, their own scales (`intermediate_state_scale`);
    - `stochastic_rounding` (unit attribute; needs an f8E4M3FN final state
      or f8E4M3FN `intermediate_states`): every e4m3 store rounds
      S[k, v] x (448 / amax) to one of its two neighbouring e4m3 values,
      the upper with probability equal to its distance from the lower over
      their spacing, instead of to the nearest: unbiased on average over
      values, one spacing of error at most. The random
      bits are a hash of the value's f32 bits and its element's position,
      so the op stays deterministic (docs/math.md §6). Not for f8E4M3FN
      `intermediate_states` with `retrieve_parent_token` (a tree reads its
      rounded parents back);
    - `state_indices` (optional): [N], i32 or i64. The states are then a
      pool [S, HV, ...] (any S >= 1) and sequence n reads and writes slot
      state_indices[n]. Padding contract (SGLang's): an index < 0 marks a
      padding row: no slot is read or written for it and its output rows are
      zero. An index >= S is a padding row too (the kernels compare
      0 <= index < S, so no table reaches outside the pool; the Python
      entry points can also validate indices on the host); two rows with
      the same slot race.
    - `cu_seqlens` (optional, varlen): [N + 1], i32 or i64, non-decreasing
      from 0. The token tensors are then packed, [1, total, ...], and
      sequence n owns tokens [cu_seqlens[n], cu_seqlens[n + 1]); empty
      sequences are legal (state copied through unchanged), N = 0 runs
      nothing, tokens past cu_seqlens[N] are neither read nor written.
      Contract: cu_seqlens[0] = 0, non-decreasing, cu_seqlens[N] <= total
      (the Python entry points check it, with cu_seqlens[N] = total, under
      GDN_VALIDATE_INDICES=1). Whatever it holds, no kernel reads or writes
      outside the packed tokens: each sequence's range is clamped to
      lo = clamp(cu_seqlens[n], 0, total), hi = clamp(cu_seqlens[n + 1], lo,
      total), so a decreasing entry is an empty sequence and overlapping
      ranges (which break the contract) compute their tokens twice.
    - `intermediate_states` (optional, memref form; speculative verify): the
      state after each token, [R, steps, HV, V, K] (vk) or [R, steps, HV, K, V]
      (kv), f32/bf16/f16, or f8E4M3FN with `intermediate_state_scale`
      [R, steps, HV, V] f32 (a scale a stored row, quantized on every store
      as `state_scale` is; a tree's parent state is read back as e4m3 x
      scale). Sequence n writes row n (batch-scoped, R = N,
      FlashInfer) or row `intermediate_state_indices`[n] (pool-scoped,
      SGLang; < 0: no write); step s holds the state after the sequence's
      s-th token (steps = T, or for varlen the longest sequence: later tokens
      are not stored). Padding rows (state_indices < 0) write nothing. No
      `final_state` operand means no commit: the pool stays untouched.
    - `retrieve_parent_token` (optional, needs `intermediate_states`; EAGLE
      tree verify, SGLang's table): [N, steps], i32 or i64. The tokens of a
      sequence form a tree rather than a chain: step s (the sequence's s-th
      token, 0 < s < steps) with parent p = retrieve_parent_token[n, s]
      starts from
      * the carried state (the state after step s - 1) when p = s - 1 (a
        chain, computed without rounding);
      * the state after step p as stored in intermediate_states[row, p],
        i.e. rounded to the buffer's dtype, when 0 <= p < s - 1 (SGLang reads
        it back the same way);
      * the initial state (zero without one), as step 0 does, when p < 0: a
        second root;
      * p >= s is not a tree (undefined); the kernels treat it as p = -1 (a
        root), so no parent index can read outside the steps already stored.
      Step 0 always starts from the initial state (its entry is ignored). A
      sequence without a buffer row (intermediate_state_indices < 0) has no
      stored states to reload: its table is ignored and its tokens run as a
      chain, as in SGLang; padding rows stay padding. With `cu_seqlens`, row n
      describes the sequence's own steps and tokens past `steps` (not stored)
      run as a chain. The final state (if any) is the state after the last
      token, whichever branch that token is on; o and the stored states of
      every token follow from the state it started from. Unlike SGLang,
      which reloads every parent from the buffer, a chain step keeps the fp32
      state: identical for f32 buffers, one rounding less for bf16/f16.
    - `k_window`, `v_window`, `g_window`, `beta_window` (optional, all four
      together, memref form; replayed verify, FlashInfer's ReplaySSM and
      SGLang's ring-write layout): the token inputs a later
      `gdn.replay_commit` replays, instead of per-token states. Shapes
      [slots, H, L, K] and [slots, HV, L, V] in q's dtype, [slots, HV, L]
      and [slots, HV, L] in f32, dense; slots = the pool's (N without a
      pool), L >= 1 steps. Sequence n writes row state_indices[n] (n without
      a pool; padding rows write nothing), and for its s-th token (s < L;
      later tokens are not stored) k_window[row, h, s] = k as given (before
      the L2 norm), v_window[row, hv, s] = v, g_window[row, hv, s] = the
      token's log decay g in f32 (the given g, or the fused gate; 0 without
      decay) and beta_window[row, hv, s] = its beta in f32 (as step 4
      computes it). Per-head decay and beta only. With an EAGLE tree the
      windows hold every draft token at its step (the tree's parent states
      still come from `intermediate_states`) and the commit replays the
      accepted path (`gdn.replay_commit`, `retrieve_parent_token`). Nothing
      else changes: o and every other write are those of the op without
      the windows, and exp(g_window) is the decay step 3 applies, so the
      replay of a prefix recomputes its states exactly
      (`gdn.replay_commit`).
    - `state_checkpoints`, `checkpoint_offsets` and the attribute
      `checkpoint_interval` (all three together, memref form; prefix-cache
      checkpoints, FlashInfer's state_checkpoints / checkpoint_cu_starts /
      checkpoint_every_n_tokens): `state_checkpoints` is [C, HV, V, K] (vk)
      or [C, HV, K, V] (kv), f32/bf16/f16, or f8E4M3FN with
      `checkpoint_scale` [C, HV, V] f32 (each stored row quantized as a
      final state is, docs/math.md §6), dense; `checkpoint_offsets` is
      [N + 1], i32 or i64. Sequence n stores the state after its
      ((j + 1) · checkpoint_interval)-th token (j = 0, 1, ...) in row
      offsets[n] + j, for as long as that row is below offsets[n + 1]
      (the caller sets offsets[n + 1] - offsets[n] = its length //
      checkpoint_interval); no row outside [0, C) is ever written: rows are
      clamped like cu_seqlens' ranges, lo = clamp(offsets[n], 0, C), hi =
      clamp(offsets[n + 1], lo, C). Padding rows (state_indices < 0) write
      none. checkpoint_interval >= 1 tokens (GPU kernels that stage
      tokens need a multiple of their staged_tokens). Not with an EAGLE
      tree or replay windows.
    - `o`: [N, T, HV, V] in v's dtype.

    Example (Kimi Linear KDA decode: per-key fused gating, per-head beta
    logits, H = HV = 32, K = V = 128):

    ```mlir
    gdn.recurrent q(%q : memref<8x1x32x128xbf16>) k(%k : memref<8x1x32x128xbf16>)
        v(%v : memref<8x1x32x128xbf16>)
        a(%a : memref<8x1x32x128xbf16>) A_log(%A_log : memref<32xf32>)
        dt_bias(%dt_bias : memref<4096xf32>) b(%b : memref<8x1x32xbf16>)
        initial_state(%s : memref<8x32x128x128xf32>)
        final_state(%s : memref<8x32x128x128xf32>)
        o(%o : memref<8x1x32x128xbf16>)
        {qk_l2norm, state_layout = #gdn.layout<vk>}
    ```

    The op has two forms, like linalg's destination-style ops:
    - **memref form** (what the lowerings consume): every operand is a memref,
      `o` and `final_state` are written, and the op has no results;
    - **tensor form** (value semantics, for ML compilers): every operand is a
      ranked tensor; `final_state` (optional) and `o` are the destinations
      ("inits") and the op returns their new values, tied 1:1 to the inits in
      operand order: `(final_state, o)` when there is a final state, `(o)`
      otherwise. Without a pool or cu_seqlens the op writes its inits in
      full and never reads them, so `tensor.empty` is a fine init; with
      either, what it does not write (unnamed slots, padding rows, tokens
      past the sequences) keeps the init's values. `--one-shot-bufferize` turns the tensor form into the
      memref form; passing the same tensor as `initial_state` and
      `final_state` lets it update the state buffer in place.

    Example (Qwen3-Next decode, one tensor-parallel rank of H=16, HV=32):

    ```mlir
    gdn.recurrent q(%q : memref<8x1x16x128xbf16>) k(%k : memref<8x1x16x128xbf16>)
        v(%v : memref<8x1x32x128xbf16>)
        a(%a : memref<8x1x32xbf16>) A_log(%A_log : memref<32xf32>)
        dt_bias(%dt_bias : memref<32xf32>) b(%b : memref<8x1x32xbf16>)
        initial_state(%s : memref<8x32x128x128xf32>)
        final_state(%s : memref<8x32x128x128xf32>)
        o(%o : memref<8x1x32x128xbf16>)
        {qk_l2norm, state_layout = #gdn.layout<vk>}
    ```

    The same in tensor form, with the state updated in place after
    bufferization:

    ```mlir
    %new_s, %o = gdn.recurrent q(%q : tensor<8x1x16x128xbf16>)
        k(%k : tensor<8x1x16x128xbf16>) v(%v : tensor<8x1x32x128xbf16>)
        a(%a : tensor<8x1x32xbf16>) A_log(%A_log : tensor<32xf32>)
        dt_bias(%dt_bias : tensor<32xf32>) b(%b : tensor<8x1x32xbf16>)
        initial_state(%s : tensor<8x32x128x128xf32>)
        final_state(%s : tensor<8x32x128x128xf32>)
        o(%o_init : tensor<8x1x32x128xbf16>)
        {qk_l2norm, state_layout = #gdn.layout<vk>}
        -> tensor<8x32x128x128xf32>, tensor<8x1x32x128xbf16>
    ```
  }];

  let arguments = (ins
    Arg<GDN_TensorOrMemRef, "queries [N, T, H, K]">:$q,
    Arg<GDN_TensorOrMemRef, "keys [N, T, H, K]">:$k,
    Arg<GDN_TensorOrMemRef, "values [N, T, HV, V]">:$v,
    Arg<Optional<GDN_TensorOrMemRef>, "log-space decay [N, T, HV] or per key [N, T, HV, K]">:$g,
    Arg<Optional<GDN_TensorOrMemRef>, "gating input [N, T, HV] or per key [N, T, HV, K]">:$a,
    Arg<Optional<GDN_TensorOrMemRef>, "log of the decay rate [HV]">:$A_log,
    Arg<Optional<GDN_TensorOrMemRef>, "gating bias [HV], or [HV * K] with a per-key 'a'">:$dt_bias,
    Arg<Optional<GDN_TensorOrMemRef>, "write strength [N, T, HV] or per value channel [N, T, HV, V]">:$beta,
    Arg<Optional<GDN_TensorOrMemRef>, "write-strength logits [N, T, HV] or [N, T, HV, V]">:$b,
    Arg<Optional<GDN_TensorOrMemRef>, "pool slot of each sequence [N] (i32 or i64; < 0: padding)">:$state_indices,
    Arg<Optional<GDN_TensorOrMemRef>, "sequence starts in packed tokens [N + 1] (i32 or i64)">:$cu_seqlens,
    Arg<Optional<GDN_TensorOrMemRef>, "row of each sequence in intermediate_states [N] (i32 or i64; < 0: none)">:$intermediate_state_indices,
    Arg<Optional<GDN_TensorOrMemRef>, "parent step of each token [N, steps] (i32 or i64; EAGLE tree)">:$retrieve_parent_token,
    Arg<Optional<GDN_TensorOrMemRef>, "first checkpoint row of each sequence [N + 1] (i32 or i64)">:$checkpoint_offsets,
    Arg<Optional<GDN_TensorOrMemRef>, "initial state">:$initial_state,
    Arg<Optional<GDN_TensorOrMemRef>, "state after every token [R, steps, HV, ...] (written)">:$intermediate_states,
    Arg<Optional<GDN_TensorOrMemRef>, "scales of f8E4M3FN intermediate_states [R, steps, HV, V] f32 (written)">:$intermediate_state_scale,
    Arg<Optional<GDN_TensorOrMemRef>, "replay window of raw k [slots, H, L, K] (written)">:$k_window,
    Arg<Optional<GDN_TensorOrMemRef>, "replay window of raw v [slots, HV, L, V] (written)">:$v_window,
    Arg<Optional<GDN_TensorOrMemRef>, "replay window of log decays [slots, HV, L] f32 (written)">:$g_window,
    Arg<Optional<GDN_TensorOrMemRef>, "replay window of betas [slots, HV, L] f32 (written)">:$beta_window,
    Arg<Optional<GDN_TensorOrMemRef>, "state every checkpoint_interval tokens [C, HV, ...] (written)">:$state_checkpoints,
    Arg<Optional<GDN_TensorOrMemRef>, "scales of f8E4M3FN state_checkpoints [C, HV, V] f32 (written)">:$checkpoint_scale,
    Arg<Optional<GDN_TensorOrMemRef>, "scales of an f8E4M3FN state [N or slots, HV, V] f32 (read, written with final_state)">:$state_scale,
    Arg<Optional<GDN_TensorOrMemRef>, "final state (destination)">:$final_state,
    Arg<GDN_TensorOrMemRef, "output [N, T, HV, V] (destination)">:$o,
    OptionalAttr<F32Attr>:$scale,
    UnitAttr:$qk_l2norm,
    UnitAttr:$allow_neg_eigval,
    OptionalAttr<I64Attr>:$checkpoint_interval,
    DefaultValuedAttr<GDN_StateLayoutAttr, "::mlir::gdn::StateLayout::kv">:$state_layout,
    UnitAttr:$stochastic_rounding
  );
  // Tensor form: the new values of the inits (final_state if given, then o);
  // memref form: none.
  let results = (outs Variadic<AnyRankedTensor>:$result_tensors);

  let assemblyFormat = [{
    `q` `(` $q `:` type($q) `)`
    `k` `(` $k `:` type($k) `)`
    `v` `(` $v `:` type($v) `)`
    (`g` `(` $g^ `:` type($g) `)`)?
    (`a` `(` $a^ `:` type($a) `)`)?
    (`A_log` `(` $A_log^ `:` type($A_log) `)`)?
    (`dt_bias` `(` $dt_bias^ `:` type($dt_bias) `)`)?
    (`beta` `(` $beta^ `:` type($beta) `)`)?
    (`b` `(` $b^ `:` type($b) `)`)?
    (`state_indices` `(` $state_indices^ `:` type($state_indices) `)`)?
    (`cu_seqlens` `(` $cu_seqlens^ `:` type($cu_seqlens) `)`)?
    (`intermediate_state_indices` `(` $intermediate_state_indices^ `:` type($intermediate_state_indices) `)`)?
    (`retrieve_parent_token` `(` $retrieve_parent_token^ `:` type($retrieve_parent_token) `)`)?
    (`checkpoint_offsets` `(` $checkpoint_offsets^ `:` type($checkpoint_offsets) `)`)?
    (`initial_state` `(` $initial_state^ `:` type($initial_state) `)`)?
    (`intermediate_states` `(` $intermediate_states^ `:` type($intermediate_states) `)`)?
    (`intermediate_state_scale` `(` $intermediate_state_scale^ `:` type($intermediate_state_scale) `)`)?
    (`k_window` `(` $k_window^ `:` type($k_window) `)`)?
    (`v_window` `(` $v_window^ `:` type($v_window) `)`)?
    (`g_window` `(` $g_window^ `:` type($g_window) `)`)?
    (`beta_window` `(` $beta_window^ `:` type($beta_window) `)`)?
    (`state_checkpoints` `(` $state_checkpoints^ `:` type($state_checkpoints) `)`)?
    (`checkpoint_scale` `(` $checkpoint_scale^ `:` type($checkpoint_scale) `)`)?
    (`state_scale` `(` $state_scale^ `:` type($state_scale) `)`)?
    (`final_state` `(` $final_state^ `:` type($final_state) `)`)?
    `o` `(` $o `:` type($o) `)`
    attr-dict
    (`->` type($result_tensors)^)?
  }];

  let hasVerifier = 1;

  let extraClassDeclaration = [{
    /// Shape facts of a verified op. N sequences, T tokens, H q/k heads,
    /// HV value heads, K key width, V value width.
    /// With cu_seqlens (varlen), N is the number of sequences and T the
    /// number of packed tokens (the token tensors are [1, T, ...]).
    struct Dims { int64_t N, T, H, HV, K, V; };
    bool isVarlen() { return getCuSeqlens() != nullptr; }
    Dims getDims();
    /// A state operand is f8E4M3FN with a scale a (row, head, V column):
    /// the state (`state_scale`), the per-token states
    /// (`intermediate_state_scale`) or the checkpoints
    /// (`checkpoint_scale`).
    bool hasScaledState() {
      return getStateScale() != nullptr ||
             getIntermediateStateScale() != nullptr ||
             getCheckpointScale() != nullptr;
    }
    /// The scale applied to q: the `scale` attribute, or K^-0.5.
    float getScaleOrDefault();
    bool hasFusedGating() { return getA() != nullptr; }
    /// KDA: the decay is per key channel (`g` or `a` is [N, T, HV, K]).
    bool hasPerKeyDecay();
    /// beta per value channel (`beta` or `b` is [N, T, HV, V]).
    bool hasPerChannelBeta();
    bool isVKLayout() { return getStateLayout() == ::mlir::gdn::StateLayout::vk; }
    /// States addressed through a pool: sequence n uses slot state_indices[n].
    bool hasStatePool() { return getStateIndices() != nullptr; }
    /// The op writes its inits (final_state, o) only in part: pool slots no
    /// sequence names and padding rows keep their values, and so do o's
    /// tokens past a varlen batch's sequences.
    bool writesInitsInPart() { return hasStatePool() || isVarlen(); }
    /// EAGLE tree verify: tokens start from their parent's state.
    bool hasParentTable() { return getRetrieveParentToken() != nullptr; }
    /// Prefix-cache checkpoints: the state every checkpoint_interval tokens
    /// into state_checkpoints (all three given together).
    bool hasCheckpoints() { return getStateCheckpoints() != nullptr; }
    /// Replayed verify: the op writes each token's raw k, v and gates into
    /// the replay windows (all four are given together).
    bool hasReplayWindows() { return getKWindow() != nullptr; }

    /// DestinationStyleOpInterface: the inits are `final_state` (if given)
    /// and `o`, the last operands. The range spans two operand segments: set
    /// its operands, but do not resize it.
    ::mlir::MutableOperandRange getDpsInitsMutable();
    /// The result tied to the `o` init, or null in memref form.
    ::mlir::Value getOResult();
    /// The result tied to the `final_state` init, or null in memref form or
    /// without a final state.
    ::mlir::Value getFinalStateResult();
    /// Succeeds on the memref form; on the tensor form, reports that
    /// `consumer` (a pass name) needs the memref form and fails.
    ::llvm::LogicalResult requireMemRefForm(::llvm::StringRef consumer);
  }];
}

def GDN_CommitOp : GDN_Op<"commit", [
    AttrSizedOperandSegments,
    DestinationStyleOpInterface,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "commit the state after each row's accepted prefix into the state pool";
  let description = [{
    After speculative verify (a `gdn.recurrent` with `intermediate_states` and
    no `final_state`), copies, for every row n of N, the state after its last
    accepted token from the per-token buffer into the state pool:

        a    = min(accepted[n], T)                 (clamped, see below)
        slot = state_indices[n]                    (n without the operand)
        irow = intermediate_state_indices[n]       (n without the operand)
        if slot >= 0 and irow >= 0 and a >= 1:
          state[slot, :, :, :] <- intermediate_states[irow, a - 1, :, :, :]

    Contract:
    - a row with slot < 0 or irow < 0 (padding) or accepted[n] <= 0 (nothing
      accepted) reads and writes nothing; slots that no row names are never
      touched, so the rest of the pool stays bit-identical;
    - accepted[n] > T is clamped to T (the last stored step is committed), so
      no count can make the op read past the buffer;
    - slot >= slots or irow >= R skips the row like a negative one, as for
      `gdn.recurrent` (the Python entry point can validate on the host); two
      rows naming the same slot race; `state` must not overlap
      `intermediate_states`;
    - the state may have another dtype than the buffer: each element is
      widened to f32 and rounded once (round to nearest even) to the state's
      dtype; equal dtypes copy bits unchanged. An f8E4M3FN pool (with
      `state_scale`) is quantized a row at a time as every store of a
      quantized state is (docs/math.md §6): the committed step's f32 values
      give each row's amax, scale = amax / 448 into `state_scale[slot, hv,
      v]`, and the elements times 448 / amax rounded to e4m3.

    Nothing depends on host-side values (`accepted` and the indices are read
    by the kernel), so one compiled op serves every step and can be captured
    in a CUDA graph.

    Operands (static). Memref layouts: `intermediate_states` and `state` may
    give their leading dimension a pitch, as in gdn.recurrent; the index
    tables are dense.
    - `intermediate_states`: [R, T, HV, V, K] for `state_layout =
      #gdn.layout<vk>` or [R, T, HV, K, V] for `#gdn.layout<kv>` (the
      default), f32, bf16 or f16, or f8E4M3FN with
      `intermediate_state_scale`; R = N without `intermediate_state_indices`
      (batch-scoped, FlashInfer), any R >= 1 with it (pool-scoped, SGLang);
    - `accepted`: [N], i32 or i64, the number of accepted tokens of row n;
    - `state_indices` (optional): [N], i32 or i64; the state is then a pool
      [slots, HV, ...] (slots >= 1), else [N, HV, ...];
    - `intermediate_state_indices` (optional): [N], i32 or i64;
    - `intermediate_state_scale` (optional, memref form): the buffer is then
      f8E4M3FN and this f32 [R, T, HV, V] holds a scale a stored row (S =
      e4m3 x scale, docs/math.md §6). Into an f8E4M3FN pool the commit
      copies the e4m3 bits and the row scales unchanged; into any other
      pool it stores e4m3 x scale rounded once;
    - `state_scale` (optional, memref form; an f8E4M3FN pool): [slots or
      N, HV, V] f32, the pool's row scales, written with the committed
      slots; the GPU lowering takes layout vk only;
    - `state`: the pool, in the layout of `intermediate_states`, f32, bf16 or
      f16, or f8E4M3FN with `state_scale` (the destination).

    Like `gdn.recurrent` the op has a memref form (no results, what the
    lowerings take) and a tensor form (destination style: `state` is the
    init and the op returns its new value, equal to the init except in the
    committed slots; `--one-shot-bufferize` gives the memref form and updates
    the pool in place when it can).

    Example (SGLang: bf16 pool and buffer, 8 rows, T = 4):

    ```mlir
    gdn.commit intermediate_states(%buf : memref<9x4x32x128x128xbf16>)
        accepted(%accepted : memref<8xi32>)
        state_indices(%slots : memref<8xi32>)
        intermediate_state_indices(%rows : memref<8xi32>)
        state(%pool : memref<64x32x128x128xbf16>)
        {state_layout = #gdn.layout<vk>}
    ```

    Tensor form:

    ```mlir
    %new_pool = gdn.commit intermediate_states(%buf : tensor<8x4x32x128x128xf32>)
        accepted(%accepted : tensor<8xi64>) state_indices(%slots : tensor<8xi64>)
        state(%pool : tensor<64x32x128x128xf32>)
        {state_layout = #gdn.layout<vk>} -> tensor<64x32x128x128xf32>
    ```
  }];

  let arguments = (ins
    Arg<GDN_TensorOrMemRef, "state after every token [R, T, HV, ...] (read)">:$intermediate_states,
    Arg<GDN_TensorOrMemRef, "accepted tokens of each row [N] (i32 or i64)">:$accepted,
    Arg<Optional<GDN_TensorOrMemRef>, "pool slot of each row [N] (i32 or i64; < 0: padding)">:$state_indices,
    Arg<Optional<GDN_TensorOrMemRef>, "row of each row in intermediate_states [N] (i32 or i64; < 0: none)">:$intermediate_state_indices,
    Arg<Optional<GDN_TensorOrMemRef>, "scales of f8E4M3FN intermediate_states [R, T, HV, V] f32 (read)">:$intermediate_state_scale,
    Arg<Optional<GDN_TensorOrMemRef>, "scales of an f8E4M3FN pool [slots or N, HV, V] f32 (written in part)">:$state_scale,
    Arg<GDN_TensorOrMemRef, "state pool [slots, HV, ...] (destination, written in part)">:$state,
    DefaultValuedAttr<GDN_StateLayoutAttr, "::mlir::gdn::StateLayout::kv">:$state_layout
  );
  // Tensor form: the new state; memref form: none.
  let results = (outs Variadic<AnyRankedTensor>:$result_tensors);

  let assemblyFormat = [{
    `intermediate_states` `(` $intermediate_states `:` type($intermediate_states) `)`
    `accepted` `(` $accepted `:` type($accepted) `)`
    (`state_indices` `(` $state_indices^ `:` type($state_indices) `)`)?
    (`intermediate_state_indices` `(` $intermediate_state_indices^ `:` type($intermediate_state_indices) `)`)?
    (`intermediate_state_scale` `(` $intermediate_state_scale^ `:` type($intermediate_state_scale) `)`)?
    (`state_scale` `(` $state_scale^ `:` type($state_scale) `)`)?
    `state` `(` $state `:` type($state) `)`
    attr-dict
    (`->` type($result_tensors)^)?
  }];

  let hasVerifier = 1;

  let extraClassDeclaration = [{
    /// Shape facts of a verified op: N rows, T steps of the buffer, R buffer
    /// rows, `slots` state rows (N without a pool), HV heads, K, V.
    struct Dims { int64_t N, T, R, slots, HV, K, V; };
    Dims getDims();
    bool isVKLayout() { return getStateLayout() == ::mlir::gdn::StateLayout::vk; }
    bool hasStatePool() { return getStateIndices() != nullptr; }

    /// DestinationStyleOpInterface: the init is `state`, the last operand.
    ::mlir::MutableOperandRange getDpsInitsMutable() { return getStateMutable(); }
    /// Succeeds on the memref form; on the tensor form, reports that
    /// `consumer` (a pass name) needs the memref form and fails.
    ::llvm::LogicalResult requireMemRefForm(::llvm::StringRef consumer);
  }];
}

def GDN_ReplayCommitOp : GDN_Op<"replay_commit", [
    AttrSizedOperandSegments,
    DestinationStyleOpInterface,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "replay each row's accepted prefix onto its checkpoint, for every layer";
  let description = [{
    Replayed speculative verify, second half. The verify (a `gdn.recurrent`
    with the replay windows and no `final_state`) left each layer's
    checkpoint untouched and wrote every draft token's raw inputs into
    per-slot windows; once the accepted counts are known, this op advances,
    for every layer l and row n of N, the checkpoint by the row's accepted
    prefix, in place, in one launch:

        a    = min(accepted[n], L)                 (clamped, see below)
        slot = state_indices[n]                    (n without the operand)
        if slot >= 0 and a >= 1:
          for s in [0, a):  the gdn.recurrent token (steps 1, 3, 4, 5) with
            k = k_window[l, slot, h, s] (L2-normalized if qk_l2norm),
            v = v_window[l, slot, hv, s], decay exp(g_window[l, slot, hv, s])
            and beta = beta_window[l, slot, hv, s], on
            S = state[l, slot, hv] (widened to f32, rounded once on store).

    EAGLE trees (`retrieve_parent_token`, the verify's parent table): the
    tokens of a row form a tree and a = accepted[n] (clamped to [0, P])
    names its last accepted token, step a - 1, as for `gdn.commit`; the
    row replays the path from the checkpoint to that step, root first,
    instead of the steps [0, a):

        path = {a - 1}; s = a - 1
        while s > 0 and 0 <= retrieve_parent_token[n, s] < s:
          s = retrieve_parent_token[n, s]; path += {s}
        for s in path, in increasing order: the token above.

    Step 0 and a step whose parent is < 0 start from the checkpoint (a
    root); p >= s is not a tree (undefined) and ends the path there, as in
    `gdn.recurrent`, so no entry can make the op read outside the table or
    loop. Steps off the path are never read.

    Exactness: the committed state is the state the plain `gdn.recurrent`
    of the same a tokens (of a tree: of the path's tokens) would leave: bit for bit with an f32 state when
    both kernels run the token loop with the same mapping and reductions
    (the CPU loops always; on the GPU the replay takes the token-loop
    schedule gdn-select-schedule gives its layer-0 view, L tokens of `slots`
    sequences, over any parameters its `gdn.schedule` pins), else within
    the arithmetic's rounding (f32 sums in another order); a bf16/f16 state is
    rounded once, after the last replayed token, as that decode's final
    state. The verify's windows hold exactly what its recurrence used
    (gdn.recurrent, `k_window`).

    Contract:
    - a row with slot < 0 (padding) or accepted[n] <= 0 reads and writes
      nothing: that checkpoint stays bit-identical, as does every slot no
      row names; window entries past a row's prefix are never read (NaN
      there changes nothing);
    - accepted[n] > L is clamped to L;
    - slot >= slots skips the row like a negative one, as for
      `gdn.recurrent`; two rows naming the same slot race; `state` must not
      overlap the windows.

    Nothing depends on host-side values, so one compiled op serves every
    step and can be captured in a CUDA graph.

    Operands (static, dense). `layers` >= 1 is a leading dimension of
    every window and of the state (FlashInfer's and SGLang's all-layer
    caches; one layer is [1, ...]); slots >= 1; H divides HV.
    - `k_window`: [layers, slots, H, L, K]; `v_window`: [layers, slots, HV,
      L, V]; bf16, f16 or f32, the same dtype;
    - `g_window`, `beta_window`: [layers, slots, HV, L], f32;
    - `accepted`: [N], i32 or i64; `state_indices` (optional): [N], i32 or
      i64 (without it slots = N and row n is slot n);
    - `retrieve_parent_token` (optional, EAGLE tree): [N, P], i32 or i64,
      1 <= P <= min(L, 64): the parent step of each of the first P window
      steps of row n (SGLang's table, as given to the verify);
    - `state_scale` (optional, memref form; f8E4M3FN checkpoints):
      [layers, slots, HV, V] f32, one scale a state row, read and written
      with the checkpoints as by `gdn.recurrent`'s (docs/math.md §6);
    - `state`: [layers, slots, HV, V, K] for `state_layout =
      #gdn.layout<vk>` or [layers, slots, HV, K, V] for `#gdn.layout<kv>`
      (the default), f32, bf16 or f16, or f8E4M3FN with `state_scale` (the
      destination).

    Like `gdn.commit` the op has a memref form (no results) and a tensor
    form (`state` is the init; the op returns its new value).

    Example (Qwen3-Next, 48 layers, a 64-slot bf16-input pool, T = 4):

    ```mlir
    gdn.replay_commit k_window(%k : memref<48x64x16x4x128xbf16>)
        v_window(%v : memref<48x64x32x4x128xbf16>)
        g_window(%g : memref<48x64x32x4xf32>)
        beta_window(%beta : memref<48x64x32x4xf32>)
        accepted(%accepted : memref<8xi32>) state_indices(%slots : memref<8xi32>)
        state(%s : memref<48x64x32x128x128xf32>)
        {qk_l2norm, state_layout = #gdn.layout<vk>}
    ```
  }];

  let arguments = (ins
    Arg<GDN_TensorOrMemRef, "raw k of each step [layers, slots, H, L, K]">:$k_window,
    Arg<GDN_TensorOrMemRef, "raw v of each step [layers, slots, HV, L, V]">:$v_window,
    Arg<GDN_TensorOrMemRef, "log decay of each step [layers, slots, HV, L] f32">:$g_window,
    Arg<GDN_TensorOrMemRef, "beta of each step [layers, slots, HV, L] f32">:$beta_window,
    Arg<GDN_TensorOrMemRef, "accepted tokens of each row [N] (i32 or i64)">:$accepted,
    Arg<Optional<GDN_TensorOrMemRef>, "pool slot of each row [N] (i32 or i64; < 0: padding)">:$state_indices,
    Arg<Optional<GDN_TensorOrMemRef>, "parent step of each window step [N, P] (i32 or i64; EAGLE tree)">:$retrieve_parent_token,
    Arg<Optional<GDN_TensorOrMemRef>, "scales of f8E4M3FN checkpoints [layers, slots, HV, V] f32 (read and written in part)">:$state_scale,
    Arg<GDN_TensorOrMemRef, "checkpoints [layers, slots, HV, ...] (destination, written in part)">:$state,
    UnitAttr:$qk_l2norm,
    DefaultValuedAttr<GDN_StateLayoutAttr, "::mlir::gdn::StateLayout::kv">:$state_layout
  );
  // Tensor form: the new state; memref form: none.
  let results = (outs Variadic<AnyRankedTensor>:$result_tensors);

  let assemblyFormat = [{
    `k_window` `(` $k_window `:` type($k_window) `)`
    `v_window` `(` $v_window `:` type($v_window) `)`
    `g_window` `(` $g_window `:` type($g_window) `)`
    `beta_window` `(` $beta_window `:` type($beta_window) `)`
    `accepted` `(` $accepted `:` type($accepted) `)`
    (`state_indices` `(` $state_indices^ `:` type($state_indices) `)`)?
    (`retrieve_parent_token` `(` $retrieve_parent_token^ `:` type($retrieve_parent_token) `)`)?
    (`state_scale` `(` $state_scale^ `:` type($state_scale) `)`)?
    `state` `(` $state `:` type($state) `)`
    attr-dict
    (`->` type($result_tensors)^)?
  }];

  let hasVerifier = 1;

  let extraClassDeclaration = [{
    /// The most steps a tree's parent table may name (a path is an i64
    /// mask of steps in both lowerings).
    static constexpr int64_t kMaxTreeSteps = 64;
    /// EAGLE tree commit: rows replay a path of their tree.
    bool hasParentTable() { return getRetrieveParentToken() != nullptr; }
    /// Shape facts of a verified op: `layers`, N rows, `slots`, L window
    /// steps, H, HV, K, V.
    struct Dims { int64_t layers, N, slots, L, H, HV, K, V; };
    Dims getDims();
    bool isVKLayout() { return getStateLayout() == ::mlir::gdn::StateLayout::vk; }
    bool hasStatePool() { return getStateIndices() != nullptr; }

    /// DestinationStyleOpInterface: the init is `state`, the last operand.
    ::mlir::MutableOperandRange getDpsInitsMutable() { return getStateMutable(); }
    /// Succeeds on the memref form; on the tensor form, reports that
    /// `consumer` (a pass name) needs the memref form and fails.
    ::llvm::LogicalResult requireMemRefForm(::llvm::StringRef consumer);
  }];
}

#endif // GDN_OPS_TD
