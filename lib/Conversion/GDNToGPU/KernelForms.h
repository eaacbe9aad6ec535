//===- KernelForms.h - the kernel forms of gdn.recurrent --------*- C++ -*-===//
//
// Each form builds a whole kernel body from the pieces (KernelContext.h) and
// is the rewrite pattern of gdn.recurrent for the schedules it matches
// (RecurrentToGPU.cpp):
//   TokenLoopKernel        one token after another, from global memory or
//                          staged chunks (TokenLoop.cpp);
//   WarpSpecializedKernel  the staged token loop fed by a producer warp
//                          (producer_stages > 0; WarpSpecialization.cpp);
//   CudaCoreSolveKernel    a staged chunk solved at once in the WY form on
//                          CUDA cores (solve = cuda_cores; ChunkedSolve.cpp);
//   TensorCoreSolveKernel  the same on tensor cores (solve = tensor_cores;
//                          TensorCoreSolve.cpp);
//   WarpSpecializedSolveKernel  the same, each chunk solved by a producer
//                          warpgroup a chunk ahead of the state products
//                          (producer_stages = 2; WarpSpecializedSolve.cpp);
//   MmaDecodeKernel        an e4m3 decode's sums on mma.sync, its update on
//                          packed f16 pairs (reductions = mma; MmaDecode.cpp);
//   ChunkSolvesKernel, SegmentJoinKernel  the launches beside
//                          chunk_parallel's scan (ChunkParallel.cpp,
//                          SegmentScan.cpp).
// Private to convert-gdn-to-gpu.
//
//===----------------------------------------------------------------------===//
#ifndef GDN_LIB_CONVERSION_GDNTOGPU_KERNELFORMS_H
#define GDN_LIB_CONVERSION_GDNTOGPU_KERNELFORMS_H

#include "MmaSync.h"
#include "TokenSteps.h"

#include "mlir/IR/PatternMatch.h"

#include <functional>
#include <string>

namespace mlir {
namespace gdn {
struct GPUTarget;

class TokenLoopKernel : public TokenSteps {
public:
  using TokenSteps::TokenSteps;
  static constexpr StringLiteral kName = "token loop";
  static bool matches(ScheduleAttr s) {
    return *s.getProducerStages() == 0 && !s.chunkedSolve() &&
           !s.mmaReductions();
  }
  void build();

private:
  /// A replay's tokens (setReplay) from `state`: steps [0, L) in groups
  /// whose window loads issue together, each token run while t < count.
  /// Returns the state after.
  SmallVector<Value> replayTokens(SmallVector<Value> state);
};

/// One token of an e4m3 (f8E4M3FN) vk state, S = diag(scale) E (E the e4m3
/// values, a scale a row). A warp holds R / 2 m16n8k16 tiles of 16 rows (R
/// = columns_per_lane): lane 4g + t the rows [v0, v0 + R), v0 = the warp's
/// first + g R, rows v0 + 2i and v0 + 2i + 1 being tile i's rows g and
/// g + 8, and the keys [k0, k0 + K/4), k0 = t K/4 (KernelIndices.cpp). With
/// k̂, q̂ the normalized k and scaled q, d = exp(g) and a_r = d scale_r:
///   A_r = E_r·k̂, B_r = E_r·q̂   on f16 mma.sync (e4m3 is exact in f16;
///                               k̂, q̂ rounded to f16, f32 sums),
///   u_r = beta (v_r - a_r A_r), o_r = a_r B_r + (k̂·q̂) u_r,
///   S'_r = a_r E_r + u_r k̂ = c_r W_r, W_r = (a_r / c_r) E_r + (u_r / c_r) k̂
/// with c_r = 448 a_r + |u_r| >= max |S'_r| (|k̂_i| <= 1), so W is computed
/// on packed f16 pairs within [-1, 1]; then m_r = 448 / max |W_r| (rounded
/// to f16, at most 65504), E'_r = e4m3(W_r m_r) and scale'_r = c_r / m_r.
/// The token's inputs (q, k, their norms and f16 pairs) are a lane's once
/// for its R rows. docs/math.md §6 and docs/cost-model.md#mma-decode.
class MmaDecodeKernel : public TokenSteps {
public:
  using TokenSteps::TokenSteps;
  static constexpr StringLiteral kName = "e4m3 decode on mma";
  static bool matches(ScheduleAttr s) { return s.mmaReductions(); }
  void build();

private:
  /// The lane's R rows of the state: for each row, K / 8 pairs of e4m3
  /// values widened to f16 (pair j: keys k0 + 2j, k0 + 2j + 1), and the row
  /// scales; zeros for a pool's padding row or without initial_state.
  struct Rows {
    SmallVector<SmallVector<Value>> pairs;
    SmallVector<Value> scales;
  };
  Rows loadRows();
  /// x (this lane's K / 4 keys, f32) times `factor` as K / 8 f16 pairs.
  SmallVector<Value> halfPairs(ArrayRef<Value> x, Value factor);
  /// {A, B} of a tile's first row, then of its second, on every lane of
  /// the row group (the rows' f16 pairs `first`, `second`).
  Fragment stateSums(ArrayRef<Value> first, ArrayRef<Value> second,
                     ArrayRef<Value> kHat, ArrayRef<Value> qHat);
  /// A row's new e4m3 values (W m, in memory order) and scale.
  std::pair<Value, Value> requantize(ArrayRef<Value> pairs,
                                     ArrayRef<Value> kHat, Value rowDecayed,
                                     Value u);
};

class WarpSpecializedKernel : public TokenSteps {
public:
  using TokenSteps::TokenSteps;
  static constexpr StringLiteral kName = "warp-specialized token loop";
  static bool matches(ScheduleAttr s) {
    return *s.getProducerStages() > 0 && !s.chunkedSolve();
  }
  /// Warps [0, W) consume: they hold the state tile and run the tokens; warp
  /// W produces: per chunk it waits until ring slot `i % stages` is empty,
  /// lane j issues the bulk async copies (cp.async.bulk, completing on the
  /// slot's `full` mbarrier as transactions) of token j's q and k rows and
  /// the CTA's columns of v, computes the token's gates into the slot and,
  /// where producerNorms holds, every token's norm factors and k̂·q̂
  /// (stageNorms), and every producer lane arrives on `full` (release: its
  /// stores are visible to the consumers' acquiring wait). Consumers wait on
  /// `full` with the chunk's phase parity, run its tokens from the slot and
  /// arrive on `empty`. With consumer_registers the producer is a warpgroup
  /// that gives registers back (setmaxnreg.dec) and the consumers take them
  /// (setmaxnreg.inc).
  void build();

private:
  /// The producer warp's part of chunk [c, c + count) into ring `slot`. Its
  /// first use of a slot waits on parity 1, which a fresh mbarrier reports
  /// complete (the phase before its first).
  void produceChunk(Value c, Value count, Value slot, Value phase);

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
  void stageNorms(Value c, Value count, Value rowBase,
                  function_ref<void()> overlapped);

};

class CudaCoreSolveKernel : public Staging {
public:
  using Staging::Staging;
  static constexpr StringLiteral kName = "WY solve on CUDA cores";
  static bool matches(ScheduleAttr s) {
    return *s.getProducerStages() == 0 && s.chunkedSolve() && !s.tensorCores();
  }
  void build();

private:
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
  /// UT-transform form of the chunked delta rule (docs/math.md §5). With S0
  /// the state at the chunk start, G_i the in-chunk cumulative log gate,
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
};

class TensorCoreSolveKernel : public Staging {
public:
  using Staging::Staging;
  static constexpr StringLiteral kName = "WY solve on tensor cores";
  static bool matches(ScheduleAttr s) {
    return *s.getProducerStages() == 0 && s.tensorCores() && !s.chunkParallel();
  }
  /// The kernel; with a workspace argument after the op's operands, the
  /// scan of chunk_parallel, which reads each chunk's Tm, M and factors
  /// from its record there (ChunkSolvesKernel) instead of solving them.
  void build();

  /// Floats of a chunk's record in chunk_parallel's workspace: Tm and M as
  /// solveStage [2, C, C + 4], token factors 0-2 [3, C] (gamma ik, gamma
  /// iq, ik tok1), gamma_C, 3 floats of padding (16-byte records).
  static int64_t recordFloats(int64_t C) { return 2 * C * (C + 4) + 3 * C + 4; }

  /// Record slots of chunk_parallel's workspace a row: a fixed batch's
  /// records are [N, HV, ceil(T / C)] (row (n, hv), slot the chunk); a
  /// varlen batch's [HV, ceil(T / C) + N], sequence n's chunk i at slot
  /// floor(lo_n / C) + n + i (lo_n its first token, clamped as
  /// KernelMath::emitTokenRange clamps it): the slots of different
  /// sequences differ while cu_seqlens increases, and every slot is under
  /// ceil(T / C) + N whatever it holds (docs/math.md §5). The first
  /// launch's grid is (slots, HV, N), a varlen one's (slots, HV, 1).
  static int64_t recordSlots(RecurrentOp op, int64_t C);
  /// concurrent_solves (a fixed batch): groups of kSolveGroupChunks record
  /// slots a row, each with a count of its chunks' records written, i32
  /// [N, HV, solveGroups] in a workspace after the records'.
  static int64_t solveGroups(RecurrentOp op, int64_t C);

  /// chunk_parallel's context-parallel launches (segments = P > 1,
  /// SegmentScan.cpp, docs/math.md §7): sequence n's tokens in P segments
  /// of segmentTokens each (the last shorter, any of them empty in a short
  /// varlen sequence), the grid's z = n * (segments of the launch) + p.
  enum class SegmentPart {
    none, ///< the whole sequence a CTA
    /// Segments 0 to P - 2, over (V / bc + K / bc blocks, HV, N (P - 1)):
    /// a value block's end state of its segment started from zero (segment
    /// 0: from the initial state, also copied to the workspace's X_0), a
    /// transition block's (past V) the segment's K x K map started from the
    /// identity with v read as zero; each into the segment maps'
    /// workspace, no o, no checkpoints.
    maps,
    /// Segments 0 to P - 1 over (V / bc, HV, N P): the scan from the
    /// segment's start state in the maps' workspace (X_0 the maps' copy of
    /// the initial state, the others SegmentJoinKernel's), o and
    /// checkpoints; the last segment stores the final state.
    scan,
  };
  void setSegmentPart(SegmentPart part) { segmentPart = part; }
  /// The segment maps' workspace, f32 [N P, HV, V + K, K] (vk order,
  /// whatever the op's layout): slot n P + p's rows [0, V) the state
  /// segment p starts from (slot n P: a copy of the initial state; slot
  /// n P + p + 1: segment p's end state, which the join turns into
  /// X_{p+1}), its rows [V, V + K) segment p - 1's transition.
  static MemRefType segmentMapsType(RecurrentOp op, ScheduleAttr s);

protected:
  /// build() of a segment part: the segment's range of chunks, its start
  /// state, the chunks, its end state (SegmentScan.cpp).
  void buildSegment();
  /// The state the CTA's segment starts from (SegmentPart).
  SmallVector<Value> segmentStartState();
  /// The state after the CTA's segment: into the maps, or (the scan's last
  /// segment) the op's final state.
  void storeSegmentEnd(ValueRange state);
  /// Slot n P + p of the segment maps' workspace (segmentMapsType): where
  /// segment p of the CTA's sequence n starts.
  Value segmentMapRow(Value p);

  /// The chunked solve on tensor cores: the same math as
  /// CudaCoreSolveKernel::chunkedSolve in matrix form (docs/math.md §5), on
  /// the chunk's C tokens (rows past `count` zeros). With P = S0ᵀKᵀ and R =
  /// S0ᵀQᵀ ([V, C], raw k and q), Tm = (I + L)⁻¹ diag(beta) (L_ij = beta_i
  /// ik_i ik_j gram0_ij, j < i), M_ij = iq_i ik_j gram1_ij (j <= i),
  /// gamma_i = exp(G_i):
  ///   Uᵀ = (Vᵀ - P diag(gamma ik)) Tmᵀ,
  ///   Oᵀ = R diag(gamma iq) + Uᵀ Mᵀ,
  ///   S_Cᵀ = gamma_C S0ᵀ + Uᵀ diag(ik tok1) K.
  /// Every product is an m16n8k8 tf32 mma.sync with the state tile as
  /// accumulator fragments; operands that are not exact in tf32 are split
  /// into a high and a low part (3xTF32), so the result keeps f32 accuracy.
  SmallVector<Value> tensorCoreSolve(Value c, Value count, ValueRange state);

  /// The Gram matrices (CudaCoreSolveKernel::buildGram's gramStage and
  /// tokenStage[0, 1], from mma products of the staged q and k) and token
  /// factors [5, chunk] (gamma ik, gamma iq, ik tok1, ik, iq). The decays
  /// scale the products below the diagonal from gramStage into
  /// maskedGramStage (in place when they are one buffer). Without
  /// `products`, gramStage already holds the raw products (and tokenStage[2]
  /// q's norms) of this chunk's q and k (sharedGram: another value head's
  /// pass). Ends with a barrier.
  void buildTensorCoreGram(bool products = true);

  /// Thread i < chunk: token i's factors [5, chunk] (gamma ik, gamma iq, ik
  /// tail, ik, iq: gamma = exp(G_i) and tail = exp(G_C - G_i) this thread's,
  /// ik and iq from the Gram's diagonals) and tokenStage[0] = gamma. Ends
  /// with a barrier.
  void storeTokenFactors(Value gamma, Value tail);
  /// Builds `body` under an scf.if on `cond` (no else).
  void ifThen(Value cond, function_ref<void()> body);

  /// KDA (a decay per key) in chunk_parallel's first launch: the Gram
  /// matrices with each key's decay inside the sums, gram0_ij = sum_d
  /// k_i[d] k_j[d] D_ij[d] (j <= i), gram1_ij = sum_d q_i[d] k_j[d]
  /// D_ij[d] (j <= i), D_ij[d] = prod_{l = j+1..i} exp(g_l[d]) formed as a
  /// running product (no exp of differences, nothing past 1), and q_i.q_i,
  /// on CUDA cores; the token factors with gamma = tail = 1 (the decays are
  /// in the scan's operands: decayKeys). docs/math.md §5. Ends with a
  /// barrier.
  void buildKeyDecayGram();

  /// KDA in chunk_parallel's scan, after the chunk's staging barrier: q and
  /// k rows decayed in place to q_i * Gamma_i and k_i * Gamma_i (Gamma_i[d]
  /// = prod_{l <= i} exp(g_l[d])), the update's keys k_i * prod_{l > i}
  /// exp(g_l[d]) into tailStage, Gamma_C into lastDecayStage, each rounded
  /// once to the staged dtype. Ends with a barrier.
  void decayKeys();

  /// Thread j < chunk: column j of Tm and M into solveStage [2, chunk,
  /// chunk + 4]. Ends with a barrier.
  void buildSolveMatrices();

  /// The first float of the record of this CTA's (n, hv) chunk that starts
  /// at token c (recordSlots).
  Value recordOf(Value c);

  /// Sequence n's first slot: floor(lo / C) + n for its first token lo (a
  /// varlen batch; recordSlots).
  Value firstSlot(Value n, Value lo);

  /// The record of the chunk at token c between the workspace and the
  /// staging buffers it mirrors (solveStage, factorStage rows 0-2,
  /// tokenStage[0, C - 1]), over every thread: written by the first launch
  /// (toWorkspace), staged by the scan.
  void copyRecord(Value c, bool toWorkspace);

  /// chunk_parallel's scan stages the chunk's record (copyRecord).
  void stageChunkExtras(Value c) override;

  /// A piece of a chunk's record: `floats` (4 or 1) at element `at` of the
  /// workspace and at `staged` of `stage`; only where `onlyIf` holds (null:
  /// everywhere).
  using RecordPiece =
      function_ref<void(Value stage, SmallVector<Value, 3> staged, Value at,
                        int64_t floats, Value onlyIf)>;
  /// This thread's pieces of the record of the chunk at token c.
  void forEachRecordPiece(Value c, RecordPiece piece);

  /// v's columns permuted by row (a bf16/f16 v, blocks of 64 columns or
  /// more): column col of row j at col ^ (16 ((j / 2) mod 4)), so the X
  /// step's four token rows of a warp read four different banks where they
  /// shared one. Rows 2i and 2i + 1 are permuted alike, and columns 2c and
  /// 2c + 1 (a word), 8c to 8c + 7 (a 16-byte copy) stay together
  /// (docs/cost-model.md#v-swizzle).
  Value stagedColumn(Value buffer, Value row, Value col) override;

  /// With chunk_prefetch_distance = 1, the scan copies the chunk's record
  /// with cp.async (runPrefetchedChunks).
  SmallVector<Value> asyncChunkExtras(Value c, Value issued) override;

  /// concurrent_solves: before the scan stages the first chunk at token c
  /// of a group, every thread polls the group's count (ld.relaxed.gpu,
  /// nanosleep) until it holds each of the group's chunks, then acquires it
  /// (ld.acquire.gpu) (ChunkParallel.cpp).
  void awaitRecordGroup(Value c);
  /// The index of the count of the group of the chunk at token c, and its
  /// slot within its row (a fixed batch).
  std::pair<Value, Value> recordGroup(Value c);

  Value workspace; ///< chunk_parallel's records (a kernel argument), or null
  /// concurrent_solves: the groups' counts (a kernel argument), or null
  Value solveCounts;
  /// The chunk's Tm, M and factors are staged by a producer warpgroup
  /// (WarpSpecializedSolveKernel): the products alone are built here.
  bool solvedAhead = false;
  SegmentPart segmentPart = SegmentPart::none;
  Value segmentMaps; ///< the segment maps' workspace (a kernel argument)
  /// A segment map's transition block (i1, the CTA's), which reads v as
  /// zeros; null outside SegmentPart::maps.
  Value transitionBlock;
};

/// chunk_parallel's context-parallel join (segments = P > 1), between the
/// segment maps and the scan, over (V / kSegmentJoinRows, HV, N) CTAs of
/// kSegmentJoinThreads (ScheduleRules.h): for p = 1 to P - 2 in turn, the
/// start state of segment p + 1, X_{p+1} = A_p X_p + B_p (X_1 = B_0; A_p,
/// B_p the maps of segment p), a CTA's rows over B_p's rows of the segment
/// maps' workspace in place (docs/math.md §7). f32 on CUDA cores: P - 2
/// products of [kSegmentJoinRows, K] by [K, K] a CTA.
class SegmentJoinKernel : public KernelContext {
public:
  using KernelContext::KernelContext;
  static constexpr StringLiteral kName = "context-parallel segment join";
  void build();
};

/// The warp-specialized WY solve (producerSolves: solve = tensor_cores,
/// producer_stages = 2), one launch over (V blocks, HV, N): warps [0, W)
/// consume, holding the state tile as chunk_parallel's scan does; warps
/// [W, W + 4) produce. For chunk i the producer warpgroup waits until ring
/// slot i % 2 is empty, copies the chunk's q, k and the CTA's columns of v
/// into the slot's buffers (cp.async), stages the log gates and betas, and
/// forms the Gram products, decay masks, token factors and the
/// substitution's Tm and M there (TensorCoreSolveKernel's, on named barrier
/// 1 among its 128 threads); every producer thread then arrives on `full`.
/// The consumers wait on `full`, run the chunk's state products from the
/// slot, store its o (and a checkpoint) and arrive on `empty`. So chunk i +
/// 1's solve runs beside chunk i's products, with no record in global
/// memory (docs/cost-model.md#warp-specialized-solve).
class WarpSpecializedSolveKernel : public TensorCoreSolveKernel {
public:
  using TensorCoreSolveKernel::TensorCoreSolveKernel;
  static constexpr StringLiteral kName = "warp-specialized WY solve";
  static bool matches(ScheduleAttr s) { return s.producerSolves(); }
  void build();

private:
  /// The producer warpgroup's part of chunk [c, c + count) into the
  /// buffers of ring `slot` (of `sets`).
  void produceChunk(Value c, Value count, Value slot, Value phase,
                    ArrayRef<ChunkBuffers> sets);
  /// The buffers of ring `slot`: set `slot` of the two `sets`.
  void useSlotBuffers(Value slot, ArrayRef<ChunkBuffers> sets);
};

/// solve = chunk_parallel's first launch, over (record slots, HV, N) (a
/// varlen batch: (slots, HV, 1), each CTA finding its sequence by a binary
/// search of cu_seqlens; a slot past its sequence's chunks does nothing;
/// with sharedGram H for HV, a CTA solving its key head's value heads in
/// turn, docs/cost-model.md#shared-gram):
/// the CTA of chunk i of (n, hv) stages its q, k and log gates, runs the
/// tensor-core Gram pass and the substitution (TensorCoreSolveKernel) and
/// writes Tm, M and the token factors to its record of the workspace (its last
/// kernel argument); TensorCoreSolveKernel's scan then reads them. No chunk
/// waits for another, so the triangular solves leave the scan's critical path
/// (docs/cost-model.md#chunk-parallel-solve). Writes no output of the op.
class ChunkSolvesKernel : public TensorCoreSolveKernel {
public:
  using TensorCoreSolveKernel::TensorCoreSolveKernel;
  static constexpr StringLiteral kName = "chunk-parallel WY solves";
  void build();

private:
  /// The CTA's chunk (its place in the grid, or a persistent CTA's work
  /// item) solved into its record(s). `prefetched`: the group of the
  /// copies issued after this chunk's q and k copies (buildPersistent's
  /// next item), the staging buffers made; else it makes them and copies.
  void solveChunk(Value prefetched = Value());
  /// concurrent_solves: persistent CTAs over every (slot, head, n) work
  /// item, slots outermost, so the scan's next chunks are solved first;
  /// each item's records counted in their groups once written.
  void buildPersistent();
  /// A varlen batch: the sequence whose slots hold record slot x, the last
  /// n with firstSlot(n) <= x, else 0 (ceil(log2 N) steps of loads of
  /// cu_seqlens).
  Value sequenceOfSlot(Value x);
};

/// Where a kernel goes: the kernel module of the op's enclosing module and
/// that module's symbol table (which makes a kernel's name unique).
using KernelModuleOf =
    std::function<std::pair<gpu::GPUModuleOp, SymbolTable *>(Operation *)>;

/// A PTX-safe kernel name for `op`: its enclosing function's name made an
/// identifier ([A-Za-z_][A-Za-z0-9_]*), then `_` and `suffix`; `gdn_` and
/// `suffix` outside a function.
std::string kernelNameFor(Operation *op, StringRef suffix);

/// An empty gpu.func (an entry block, no terminator) of `op` for schedule
/// `s` in its kernel module, its arguments the op's operands and then
/// `workspaces`, named by kernelNameFor(op, suffix), with the launch bounds
/// the schedule needs.
gpu::GPUFuncOp createKernelFunc(Operation *op, ScheduleAttr s,
                                const KernelModuleOf &kernelModuleOf,
                                StringRef suffix, TypeRange workspaces = {});

/// The gpu.func of `op` for schedule `s` (createKernelFunc); `build` fills
/// its body (the builder at the entry block's start, the op's clone there,
/// erased after).
gpu::GPUFuncOp createRecurrentKernel(
    RecurrentOp op, ScheduleAttr s, const KernelModuleOf &kernelModuleOf,
    function_ref<void(OpBuilder &, RecurrentOp, gpu::GPUFuncOp)> build,
    StringRef suffix = "recurrent", TypeRange workspaces = {});

/// The patterns that lower a gdn.recurrent (memref form, in host code, N >
/// 0, with a complete schedule that checkGPUSchedule accepts for `target`) to a
/// kernel of its form and its gpu.launch_func: one pattern a form.
void populateRecurrentToGPUPatterns(RewritePatternSet &patterns,
                                    const GPUTarget &target,
                                    KernelModuleOf kernelModuleOf);

/// Lowers the memref-form `op` with a complete `gdn.schedule`
/// (selectReplaySchedule's) to the token-loop kernel of its recurrence
/// view over a (V blocks, HV, layers * N) grid and its gpu.launch_func
/// (convert-gdn-to-gpu). Failures are diagnostics on the op.
LogicalResult lowerReplayCommitToGPU(ReplayCommitOp op, const GPUTarget &target,
                                     const KernelModuleOf &kernelModuleOf);

} // namespace gdn
} // namespace mlir

#endif // GDN_LIB_CONVERSION_GDNTOGPU_KERNELFORMS_H
