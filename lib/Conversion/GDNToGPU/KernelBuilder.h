//===- KernelBuilder.h - the body of a gdn.recurrent GPU kernel -*- C++ -*-===//
//
// One CTA per (sequence n, value head hv, block of V columns). The 32 lanes
// of a warp are split into `lanesV` groups along V and lanesK = 32 / lanesV
// along K: lane l = kLane * lanesV + vLane owns the R value columns
// [v0, v0 + R) and the KL = K / lanesK key rows [kLane * KL, (kLane + 1) * KL)
// of the state, with v0 = block * BV + warp * R * lanesV + vLane * R. The
// state tile S[r][j] (R * KL fp32 values a thread) stays in registers for the
// whole token loop. Per token, every reduction over K (Sᵀk, Sᵀq, the L2 norms)
// is a per-lane partial sum and a butterfly shuffle tree over the kLane bits,
// so every lane ends with the full sum and the rank-1 update needs no
// communication.
//
// State traffic is coalesced in both layouts. `vk` ([V, K], K contiguous):
// each lane loads vector<KL> along K per row (lanesV = 1 for decode, 2 or 4
// for staged kernels: 16-byte bf16 rows, shallower trees), a warp reads
// whole rows. `kv` ([K, V], V contiguous): lanesV = 4 with R = 4 (R = 2 on
// tiny staged grids), each lane loads vector<R> along V per key row, and the
// lanes of a key row read contiguous sectors.
//
// Private to convert-gdn-to-gpu: KernelBuilder.cpp builds the kernel (state
// tile, tokens, staging), WarpSpecialization.cpp its producer warp and ring
// (schedule `producer_stages`), ChunkedSolve.cpp the chunked (WY) solve
// (`solve = cuda_cores`), TensorCoreSolve.cpp its tensor-core form
// (`solve = tensor_cores`, with its own mapping: see there) and
// KernelFeatures.cpp the programmatic-launch and L2 prefetch hooks.
//
//===----------------------------------------------------------------------===//
#ifndef GDN_LIB_CONVERSION_GDNTOGPU_KERNELBUILDER_H
#define GDN_LIB_CONVERSION_GDNTOGPU_KERNELBUILDER_H

#include "gdn/Conversion/GDNToGPU/Schedule.h"
#include "gdn/Conversion/KernelMath.h"
#include "gdn/Dialect/GDN/IR/GDNOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"

#include <array>
#include <optional>

namespace mlir {
namespace gdn {

/// Builds the body of one gdn.recurrent kernel into `kernel` (a gpu.func
/// whose arguments are the op's operands, `op` its clone inside) for
/// schedule `s`. Method names follow the kernel's stages.
class KernelBuilder {
  using Schedule = GPUSchedule;

public:
  KernelBuilder(OpBuilder &b, Location loc, RecurrentOp op, Schedule s,
                gpu::GPUFuncOp kernel)
      : b(b), loc(loc), op(op), s(s), d(op.getDims()),
        m(b, loc, KernelMath::Flavor::GPU), kernel(kernel) {}

  void build();

private:
  /// Unrolled tokens overlap the next token's shared-memory loads, norms and
  /// gates with this token's dependent chain, at the cost of code size.
  void unrollTokenLoops();
  /// Schedule state_prefetch_distance > 0: thread 0 issues one bulk prefetch
  /// into L2 (cp.async.bulk.prefetch.L2) of the initial-state tile
  /// (blockRows() rows of K, contiguous in vk) of the CTA that many CTAs
  /// later in launch order, if the grid has one (and, with a pool, its slot
  /// is >= 0). Called after the CTA's own state loads are issued.
  void prefetchLaterState(Value tid, Value vBlock);
  /// Schedule input_prefetch_distance > 0 (the tensor-core solve of a single
  /// chunk): thread t < T prefetches into L2 (prefetch.global.L2, a 128-byte
  /// line each) token t's q, k and v rows and gates of the CTA that many CTAs
  /// later in launch order, if the grid has one, before this CTA's own loads.
  void prefetchLaterInputs(Value tid, Value vBlock);
  /// Opens `if (tid < threads && the CTA `distance` later exists)` at the
  /// builder (the caller restores the insertion point) and returns that
  /// CTA's (V block, hv, n).
  std::array<Value, 3> laterBlock(Value tid, Value vBlock, int64_t threads,
                                  int64_t distance);
  /// Schedule launch = programmatic*: griddepcontrol.wait, where a thread has
  /// issued its initial-state loads and reads or writes nothing else yet (the
  /// previous kernel of the stream has then finished and its writes are
  /// visible).
  void waitForPreviousGrid();
  /// griddepcontrol.launch_dependents (the first thread of a CTA to run it
  /// counts for the CTA): at the kernel's start or, once the recurrence is
  /// done, before the final state store (GPUSchedule::programmaticLaunch).
  void launchDependents();

  /// The warp-specialized kernel (s.stages > 0). Warps [0, W) consume: they
  /// hold the state tile and run the tokens; warp W produces: per chunk it
  /// waits until ring slot `i % stages` is empty, lane j issues the bulk
  /// async copies (cp.async.bulk, completing on the slot's `full` mbarrier
  /// as transactions) of token j's q and k rows and the CTA's columns of v,
  /// computes the token's gates into the slot and, where producerNorms
  /// holds, every token's norm factors and k̂·q̂ (stageNorms), and every
  /// producer lane arrives on `full` (release: its stores are visible to the
  /// consumers' acquiring wait). Consumers wait on `full` with the chunk's
  /// phase parity, run its tokens from the slot and arrive on `empty`. With
  /// consumer_registers the producer is a warpgroup that gives registers
  /// back (setmaxnreg.dec) and the consumers take them (setmaxnreg.inc).
  void buildWarpSpecialized(Value tid, Value warp, Value lane, Value vBlock,
                            Value hi);

  /// for c in [tokenLo, hi) step chunk, with the chunk's token count and,
  /// with a producer's ring, its slot (i % stages of chunk i) and phase
  /// parity ((i / stages) % 2, i32).
  SmallVector<Value> forEachChunk(
      Value hi, ValueRange init,
      function_ref<SmallVector<Value>(Value, Value, Value, Value, ValueRange)>
          body);

  /// The producer warp's part of chunk [c, c + count) into ring `slot`. Its
  /// first use of a slot waits on parity 1, which a fresh mbarrier reports
  /// complete (the phase before its first).
  void produceChunk(Value c, Value count, Value slot, Value phase, Value lane);

  /// The producer warp's norm factors of tokens [c, c + count) into rows
  /// [rowBase, rowBase + count) of normStage, as tokenNorms computes them
  /// from q and k in global memory (the bulk copies into the slot may still
  /// be in flight). The lanes split into groups of L (a power of two, the
  /// most that still gives every token of the chunk a group in one pass,
  /// and at most 128 bytes of q a lane); a group splits K, sums with
  /// log2(L) shuffle levels, and its first lane stores the token's row.
  /// Every load is issued first (tokens past `count` read token c + count -
  /// 1 and store nothing), then `overlapped` (the wait for the slot, the
  /// copies and gates), then the arithmetic and the stores.
  void stageNorms(Value c, Value count, Value rowBase, Value lane,
                  function_ref<void()> overlapped);

  /// Waits until the mbarrier of ring `slot` in `bars` completes the phase
  /// of parity `phase` (mbarrier.try_wait.parity in a loop).
  void wait(Value bars, Value slot, Value phase);

  /// The shared-memory address of mbarrier `bars[slot]`.
  Value barrierAt(Value bars, Value slot) {
    return sharedAddress(bars, {slot});
  }

  /// The address of element `idx` of `mem` (a dense buffer) as an integer.
  Value byteAddress(Value mem, ValueRange idx);
  Value sharedAddress(Value mem, ValueRange idx);
  /// The same shared memory in the shared::cluster window, which holds the
  /// CTA's own shared::cta window (PTX ISA, state spaces): the bulk copy's
  /// PTX 8.0 form takes that (its shared::cta form needs PTX 8.6).
  Value clusterAddress(Value mem, ValueRange idx);
  Value globalAddress(Value mem, ValueRange idx);
  /// base + x, or x itself when base is the constant 0 (the kernels without
  /// a producer keep their staging rows unshifted).
  Value plus(Value base, Value x) {
    if (getConstantIntValue(base) == 0)
      return x;
    return arith::AddIOp::create(b, loc, base, x);
  }
  Value i32(int64_t c) { return m.i32(c); }
  static int64_t elementBytes(Value x) {
    return cast<MemRefType>(x.getType()).getElementTypeBitWidth() / 8;
  }

  /// The element type of `g` or `a`.
  Type gateElementType() {
    Value gate = op.getG() ? op.getG() : op.getA();
    return cast<MemRefType>(gate.getType()).getElementType();
  }

  Value &at(SmallVectorImpl<Value> &tile, int64_t r, int64_t j) {
    return tile[r * s.kPerLane + j];
  }
  Value offset(Value base, int64_t i) {
    return i == 0 ? base : arith::AddIOp::create(b, loc, base, m.index(i));
  }
  SmallVector<Value> extractAll(Value vec);
  Value loadVector(Value src, ValueRange idx, int64_t count);
  void storeVector(ArrayRef<Value> elements, Value dst, ValueRange idx);

  /// Butterfly all-reduce over the lanes that share this lane's V columns
  /// (the kLane bits): every one of them gets the sum over K.
  Value warpSum(Value x) { return butterflySum(x, kWarpSize / 2, s.lanesV); }

  /// Butterfly all-reduce with the lane offsets from, from / 2, ..., to
  /// (powers of two; x itself when from < to).
  Value butterflySum(Value x, int64_t from, int64_t to);

  /// A token's L2-norm factors ik = 1 / |k| and iq = scale / |q| (1 and
  /// scale without qk_l2norm; eps 1e-6 inside the sqrt) and kq = k̂·q̂ = ik iq
  /// k·q. They do not depend on the state.
  struct TokenNorms {
    Value ik, iq, kq;
  };
  /// The norms from this lane's entries of k and q, with `sum` the
  /// reduction of a partial sum over the rest of the token's lanes.
  TokenNorms tokenNorms(ArrayRef<Value> kf, ArrayRef<Value> qf,
                        function_ref<Value(Value)> sum);

  /// This lane's tile of the state at `prefix` + (V, K positions), widened
  /// to f32: 16-byte loads along the contiguous dimension, the exact
  /// elements storeTile writes.
  SmallVector<Value> loadTile(Value src, SmallVector<Value> prefix);

  /// `prefix` followed by x and y: the index of a state tile element.
  static SmallVector<Value> withIndices(ArrayRef<Value> prefix, Value x,
                                        Value y);

  /// S <- initial state (or 0), 16-byte loads along the contiguous dimension.
  /// A pool's padding row (slot < 0) starts from 0: behind a branch, or
  /// (`branchless`) by loading slot 0 and selecting 0, which keeps the
  /// kernel's entry one block that ptxas can schedule across.
  SmallVector<Value> loadState(bool branchless = false);

  void storeState(ValueRange results) {
    if (s.programmaticLaunch == GPUSchedule::kLaunchAfterRecurrence)
      launchDependents();
    if (Value fin = op.getFinalState())
      storeTile(results, fin, {stateRow, hv}, valid);
  }

  /// The state after token t into intermediate_states[row, t - lo, hv, ...]
  /// (verify), skipped for padding rows, rows without a slot and, in varlen,
  /// steps past the buffer.
  void storeIntermediate(Value t, ValueRange tile);

  /// EAGLE tree: the state token t starts from, given its i32 `source`
  /// (KernelMath::emitParentSource): the carried tile, the parent's stored
  /// state intermediate_states[row, p] (this thread reads back exactly the
  /// elements it stored at step p, so program order suffices: no barrier),
  /// or the initial state (a root).
  SmallVector<Value> startState(Value source, ValueRange carried);

  /// Stores the tile at `prefix` + (this lane's V and K positions), in the
  /// layout, 16-byte vectors along the contiguous dimension; under `cond`.
  void storeTile(ValueRange results, Value dst, SmallVector<Value> prefix,
                 Value cond);

  /// This lane's KL entries of q or k for token t, widened to f32.
  SmallVector<Value> loadKeyChunk(Value src, Value t) {
    return extractAll(
        m.toF32(loadVector(src, {tokenRow, t, h, k0}, s.kPerLane)));
  }
  SmallVector<Value> loadStagedKeyChunk(Value stage, Value j) {
    return extractAll(m.toF32(loadVector(stage, {j, k0}, s.kPerLane)));
  }

  /// The shared-memory buffers of one chunk of tokens (of `stages` chunks,
  /// one after another, with a producer warp): q and k [chunk, K],
  /// this CTA's V columns of v [chunk, BV] (input dtypes), exp(g) [chunk]
  /// or per key [chunk, K] and beta [chunk] or per value channel
  /// [chunk, BV] (f32), and with a tree each token's parent source [chunk]
  /// (i32). Where producerNorms holds the producer warp adds each token's
  /// norm factors [chunk, 4] (f32 ik, iq, k̂·q̂ and a pad: one 16-byte
  /// load a token, see stageNorms). The chunked solve stages the log gate g
  /// [chunk] instead of exp(g) and adds the Gram matrices [2, chunk, chunk]
  /// and the per-token decays and norms [3, chunk] (f32, see buildGram).
  void createStagingBuffers(Value tid, Value vBlock);

  /// Copies rows [c, c + count) of `src` (a [.., T, .., width] slice at
  /// `idx(t, col)`) into `dst` [chunk, width]: 16-byte vectors spread over
  /// every thread of the CTA, all issued before anyone waits.
  void stageRows(Value src, Value dst, int64_t width, Value c, Value count,
                 function_ref<SmallVector<Value>(Value, Value)> idx);

  /// The general form: `load(t, col, vec)` gives the vector of `vec` values
  /// of token t at columns [col, col + vec) to store (vectors of 16 bytes of
  /// `srcType`) at row `rowBase` + (t - c) of `dst`, spread over `threads`
  /// threads of which this is `thread`.
  void stageRows(Type srcType, Value dst, int64_t width, Value c, Value count,
                 Value rowBase, Value thread, int64_t threads,
                 function_ref<Value(Value, Value, int64_t)> load);

  /// exp(g) of token t for the `count` key channels [col, col + count)
  /// (KDA): exp(g[k]), or exp(-exp(A_log[hv]) softplus(a[k] + dt_bias[hv *
  /// K + k])), from 16-byte vector loads of g or a (and dt_bias).
  SmallVector<Value> perKeyDecay(Value t, Value col, int64_t count);

  /// beta of token t for the `count` V columns [col, col + count) (beta per
  /// value channel), from a vector load of beta or b.
  SmallVector<Value> perChannelBeta(Value t, Value col, int64_t count);

  Value fromElements(ArrayRef<Value> elements);

  /// Tokens [c, c + count) through shared memory; returns the state after.
  SmallVector<Value> chunk(Value c, Value count, ValueRange state);

  /// The gates of tokens [c, c + count) into staging rows [rowBase, rowBase
  /// + count), computed by `threads` threads of which this is `thread`.
  void stageGates(Value c, Value count, Value rowBase, Value thread,
                  int64_t threads);

  /// `body(t, row)` for thread `thread` < count: token t = c + thread, at
  /// staging row rowBase + thread.
  void forTokenOfThread(Value c, Value count, Value rowBase, Value thread,
                        function_ref<void(Value, Value)> body);

  /// Tokens [c, c + count) from staging rows [rowBase, rowBase + count);
  /// returns the state after.
  SmallVector<Value> runChunk(Value c, Value count, Value rowBase,
                              ValueRange state);

  /// Chunked solve: thread j < chunk stages token j's log gate g_j and
  /// beta_j, or zeros past `count` (such a token then neither decays nor
  /// updates anything).
  void stageLogGates(Value c, Value count);

  /// The rows of the chunked solve: the chunk, or T when every token fits
  /// in one (fixed T).
  int64_t solveRows();

  /// The chunk's Gram matrices, once a CTA from the staged q, k and log
  /// gates g (rows past `count` are zeros, g = 0): the threads split the
  /// (i, j) pairs, each a full K-long dot product from shared memory. With
  /// d(i, j) = exp(g_{j+1} + ... + g_i) = exp(G_i - G_j) (G the in-chunk
  /// cumulative log gate, summed directly, so a -inf gate gives 0, never a
  /// NaN from -inf - -inf):
  ///   gram[0, i, j] = d(i, j) k_i.k_j (j < i), gram[0, i, i] = k_i.k_i,
  ///   gram[1, i, j] = d(i, j) q_i.k_j (j <= i),
  ///   tok[0, i] = exp(G_i), tok[1, i] = exp(G_last - G_i), tok[2, i] = q_i.q_i
  /// all on the raw (un-normalized, unscaled) q and k.
  void buildGram();

  /// Tokens [c, c + count) of a staged chunk solved at once in the WY /
  /// UT-transform form of the chunked delta rule (FLA's
  /// chunk_gated_delta_rule; Yang et al. 2024, "Parallelizing Linear
  /// Transformers with the Delta Rule over Sequence Length"). With S0 the
  /// state at the chunk start, G_i the in-chunk cumulative log gate,
  /// k̂_i = ik_i k_i and q̂_i = iq_i scale q_i (ik, iq the L2-norm factors, 1
  /// without qk_l2norm), unrolling the per-token rule gives
  ///   S_i = exp(G_i) S0 + sum_{j<=i} exp(G_i - G_j) k̂_j u_jᵀ, so
  ///   u_i = beta_i (v_i - exp(G_i) S0ᵀk̂_i
  ///                 - sum_{j<i} exp(G_i - G_j) (k̂_i.k̂_j) u_j),
  ///   o_i = exp(G_i) S0ᵀq̂_i + sum_{j<=i} exp(G_i - G_j) (q̂_i.k̂_j) u_j,
  ///   S_C = exp(G_C) S0 + sum_j exp(G_C - G_j) k̂_j u_jᵀ.
  /// The Gram terms come from buildGram (once a CTA, raw q and k); S0ᵀk_i
  /// and S0ᵀq_i of every token are independent shuffle trees that run side
  /// by side; the forward substitution is per V column, in registers, on
  /// w_j = ik_j u_j:
  ///   w_i = ik_i beta_i (v_i - ik_i (exp(G_i) S0ᵀk_i + sum_{j<i} gram0_ij
  ///   w_j)), o_i = iq_i (exp(G_i) S0ᵀq_i + sum_{j<=i} gram1_ij w_j), S_C =
  ///   exp(G_C) S0 + sum_j tok1_j k_j w_jᵀ   (C FMAs an element).
  /// Rows past `count` hold zeros with g = beta = 0: w = 0 there, so they
  /// change nothing, and their outputs are not stored.
  SmallVector<Value> chunkedSolve(Value c, Value count, ValueRange state);

  /// The chunked solve on tensor cores (schedule solve = tensor_cores): the
  /// same math as chunkedSolve, in matrix form on the chunk's C tokens
  /// (rows past `count` zeros). With P = S0ᵀKᵀ and R = S0ᵀQᵀ ([V, C], raw
  /// k and q), Tm = (I + L)⁻¹ diag(beta) (L_ij = beta_i ik_i ik_j gram0_ij,
  /// j < i), M_ij = iq_i ik_j gram1_ij (j <= i), gamma_i = exp(G_i):
  ///   Uᵀ = (Vᵀ - P diag(gamma ik)) Tmᵀ,
  ///   Oᵀ = R diag(gamma iq) + Uᵀ Mᵀ,
  ///   S_Cᵀ = gamma_C S0ᵀ + Uᵀ diag(ik tok1) K.
  /// Every product is an m16n8k8 tf32 mma.sync with the state tile as
  /// accumulator fragments; operands that are not exact in tf32 are split
  /// into a high and a low part (3xTF32), so the result keeps f32 accuracy.
  SmallVector<Value> tensorCoreSolve(Value c, Value count, ValueRange state);

  /// The tensor-core solve's Gram matrices (buildGram's gramStage and
  /// tokenStage[0, 1], from mma products of the staged q and k) and token
  /// factors [5, chunk] (gamma ik, gamma iq, ik tok1, ik, iq). Ends with a
  /// barrier.
  void buildTensorCoreGram();

  /// Thread j < chunk: column j of Tm and M into solveStage [2, chunk,
  /// chunk + 4]. Ends with a barrier.
  void buildSolveMatrices();

  /// The state tile as m16n8k8 accumulator fragments: with (g, t) = (lane /
  /// 4, lane % 4), element r * K/4 + j is S[key 8 (j / 2) + 2t + j % 2]
  /// [column v0 + 8r] (v0 = the warp's first column + g).
  SmallVector<Value> loadFragments(Value src, SmallVector<Value> prefix);
  void storeFragments(ArrayRef<Value> tile, Value dst,
                      SmallVector<Value> prefix);

  /// The i32 parent source of token t (KernelMath::emitParentSource).
  Value parentSource(Value t) {
    return m.emitParentSource(op, n, arith::SubIOp::create(b, loc, t, tokenLo),
                              interValid);
  }

  /// A token's inputs at token t (or staged at chunk row j), f32: this
  /// lane's entries of k and q, its V columns of v, the decay (this lane's
  /// keys with a per-key decay, else one value) and beta (its columns with a
  /// per-channel beta, else one value).
  struct TokenInputs {
    SmallVector<Value> kf, qf, vf, decay, beta;
  };
  TokenInputs loadToken(Value t, Value j);

  /// The norm factors of a token: staged by the producer (normStage) at row
  /// j, else from this warp's lanes (tokenNorms).
  TokenNorms normsAt(Value j, const TokenInputs &in);

  /// x and y (this lane's keys) times the token's per-key decay (themselves
  /// with one decay a head, which factors out of the sums instead).
  std::pair<SmallVector<Value>, SmallVector<Value>>
  decayed(const TokenInputs &in, ArrayRef<Value> x, ArrayRef<Value> y);

  /// For each x of `xs` (this lane's keys), Sᵀx per V column of the lane,
  /// summed over the token's lanes: all the shuffle trees side by side.
  SmallVector<SmallVector<Value>> stateSums(SmallVector<Value> &S,
                                            ArrayRef<SmallVector<Value>> xs);

  /// The factors of a token's state sums: ik and iq, times the decay when
  /// it is one value a head (which the sums then leave out).
  struct Factors {
    Value fk, fq;
  };
  Factors factors(const TokenInputs &in, const TokenNorms &norms);

  /// The side-by-side token given its state sums A = Sᵀ(D k), B = Sᵀ(D q)
  /// (D omitted for one decay a head): u = beta (v - ik A), S <- D S + k̂ uᵀ,
  /// o = iq B + (k̂·q̂) u, stored. Returns u per column.
  SmallVector<Value> advance(Value t, SmallVector<Value> &S,
                             const TokenInputs &in, const TokenNorms &norms,
                             const Factors &f, ArrayRef<Value> A,
                             ArrayRef<Value> B);

  /// Staged tokens t and t + 1 (rows j, j + 1) with every state sum of both
  /// on the state before t (pairTokens): one shuffle tree deep for the two.
  SmallVector<Value> tokenPair(Value t, Value j, ValueRange carried);

  /// One token: S <- exp(g) S; u = beta (v - Sᵀk); S <- S + k uᵀ; o = Sᵀq.
  /// Inputs come from global memory at token t, or staged at chunk row j;
  /// in the side-by-side form the norm factors (tokenNorms) too, where the
  /// producer warp staged them (normStage), else from this warp's lanes.
  SmallVector<Value> token(Value t, Value j, ValueRange carried);

  /// The same token with its steps in turn, as the math reads: normalize q
  /// and k, S <- exp(g) S, A = Sᵀk, S <- S + k uᵀ, o = Sᵀq. Three shuffle
  /// trees deep, but fewer live registers, which pays once the grid is
  /// bandwidth-bound. Per-head decay and beta only.
  SmallVector<Value> tokenInTurn(Value t, SmallVector<Value> S,
                                 SmallVector<Value> kf, SmallVector<Value> qf,
                                 Value decay, Value beta, ArrayRef<Value> vf);

  /// o[t] for this lane's R columns (zeros for a padding row), written by the
  /// lanes of key group 0 (all lanes hold the sums).
  void storeOutputs(Value t, SmallVector<Value> outputs);

  OpBuilder &b;
  Location loc;
  RecurrentOp op;
  Schedule s;
  RecurrentOp::Dims d;
  KernelMath m;
  Value kLane, n, hv, h, v0, k0;
  Value stateRow, valid; ///< state row (n or its pool slot); pool row is real
  Value tokenRow;        ///< batch row of the token tensors (n, or 0 varlen)
  Value tokenLo;         ///< first token of the sequence along T
  Value interRow, interValid; ///< intermediate_states row, and whether to write
  gpu::GPUFuncOp kernel;
  Value qStage, kStage, vStage, decayStage, betaStage; ///< staging buffers
  Value sourceStage;           ///< staged parent sources (EAGLE tree)
  Value normStage; ///< a producer's norm factors (producerNorms), or null
  Value gramStage, tokenStage; ///< chunked solve: Gram matrices, decays, norms
  Value solveStage, factorStage; ///< tensor cores: Tm and M, token factors
  Value mmaLane;                 ///< tensor cores: the lane in the warp
  Value full, empty; ///< a producer's ring: mbarriers of full / empty slots
  Value threadId, blockV0; ///< thread in the CTA; first V column of the CTA
  SmallVector<scf::ForOp> tokenLoops; ///< staged token loops, to unroll
  /// The single token's inputs, loaded before a pool's state (build());
  /// token() takes them instead of loading.
  std::optional<TokenInputs> firstToken;
  bool tokenFirst = false; ///< a pool's single token loads before its state
};

} // namespace gdn
} // namespace mlir

#endif // GDN_LIB_CONVERSION_GDNTOGPU_KERNELBUILDER_H
