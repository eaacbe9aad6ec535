//===- Staging.h - the tokens' inputs in shared memory ----------*- C++ -*-===//
//
// Staged kernels (staged_tokens > 0) read a chunk of tokens' q, k, v and
// gates into shared memory at once, spread over every thread of the CTA,
// so the recurrence pays one memory latency a chunk instead of one a token.
// The buffers, the copies, the gates computed once a CTA, and the loop over
// chunks with a form's solve at its named point. Private to
// convert-gdn-to-gpu (KernelContext.h).
//
//===----------------------------------------------------------------------===//
#ifndef GDN_LIB_CONVERSION_GDNTOGPU_STAGING_H
#define GDN_LIB_CONVERSION_GDNTOGPU_STAGING_H

#include "TileIO.h"

#include <tuple>

namespace mlir {
namespace gdn {

class Staging : public TileIO {
public:
  using TileIO::TileIO;
  virtual ~Staging() = default;

protected:
  /// A form's work on a staged chunk: tokens [c, c + count) from the
  /// staging buffers, given the state before; returns the state after.
  using ChunkSolve =
      function_ref<SmallVector<Value>(Value c, Value count, ValueRange state)>;

  /// The shared-memory buffers of a chunk of tokens (of `stages` chunks, a
  /// producer's ring), as StagingLayout.h describes them: q, k, v, the
  /// gates, and what the tree, a producer's norms or a solve form add.
  void createStagingBuffers();

  /// A staged form's body after its state loads: creates the staging
  /// buffers, runs every chunk through `solve` (runStagedChunks) and stores
  /// the final state.
  void runStagedForm(ValueRange state, ChunkSolve solve) {
    createStagingBuffers();
    storeState(runStagedChunks(state, solve));
  }

  /// Every chunk of the sequence through `solve`, from `state` (empty: not
  /// loaded yet, then loaded once the first chunk's copies are issued);
  /// returns the state after the last. One chunk without a loop when a
  /// fixed T fits in one.
  SmallVector<Value> runStagedChunks(ValueRange state, ChunkSolve solve);

  /// Tokens [c, c + count): stages them, waits for the CTA, `solve`, and
  /// (more chunks to come) waits until every warp is done with the buffers.
  SmallVector<Value> chunk(Value c, Value count, ValueRange state,
                           ChunkSolve solve);

  /// The gates of tokens [c, c + count), as the form stages them: log gates
  /// for a chunked solve, the gates themselves for the token loop, none for
  /// chunk_parallel's scan (its record has them).
  void stageChunkGates(Value c, Value count);

  /// A staged chunk's solve: waits for the CTA, `solve`, the checkpoint at
  /// its end and (more chunks to come) waits until every warp is done with
  /// the buffers.
  SmallVector<Value> solveStaged(Value c, Value count, ValueRange state,
                                 ChunkSolve solve);

  /// The checkpoint at the end of chunk [c, c + count): `state` after it
  /// (TileIO::storeCheckpoint's count of the sequence's tokens done).
  void storeChunkCheckpoint(Value c, Value count, ValueRange state) {
    if (!chunkCheckpoints)
      return;
    storeCheckpoint(
        arith::SubIOp::create(b, loc, arith::AddIOp::create(b, loc, c, count),
                              tokenLo),
        state);
  }
  /// Indices of token t's q or k row at column col, and of its v row at
  /// the CTA's column col.
  SmallVector<Value> qkIndex(Value t, Value col) {
    return {tokenRow, t, h, col};
  }
  SmallVector<Value> vIndex(Value t, Value col) {
    return {tokenRow, t, hv, arith::AddIOp::create(b, loc, vSource0, col)};
  }

  /// What a form stages beside a chunk's q, k, v and gates (issued with
  /// them, before the CTA waits): nothing but for chunk_parallel's scan.
  virtual void stageChunkExtras(Value c) {}

  /// The buffers a chunk_prefetch_distance = 1 scan keeps two of: what a
  /// chunk's copies write and its solve reads.
  struct ChunkBuffers {
    Value q, k, v, solve, factors, tokens;
  };
  ChunkBuffers chunkBuffers() const {
    return {qStage, kStage, vStage, solveStage, factorStage, tokenStage};
  }
  /// A second set of them, beside createStagingBuffers' (static shared
  /// memory).
  ChunkBuffers createChunkBuffers();
  void useChunkBuffers(const ChunkBuffers &x) {
    std::tie(qStage, kStage, vStage, solveStage, factorStage, tokenStage) =
        std::tie(x.q, x.k, x.v, x.solve, x.factors, x.tokens);
  }

  /// chunk_prefetch_distance = 1: every chunk through `solve` from two sets
  /// of buffers, the next chunk's copies (cp.async, asyncChunkCopies) in
  /// flight into one set while the chunk in the other is solved, so no
  /// chunk waits for its loads but the first
  /// (docs/cost-model.md#chunk-prefetch).
  SmallVector<Value> runPrefetchedChunks(ValueRange state, ChunkSolve solve);

  /// The tokens of the chunk at token c: staged_tokens, fewer at the
  /// sequence's end (hi).
  Value chunkCount(Value c);
  /// `copies` (cp.async tokens) committed as one group; its token.
  Value asyncGroup(ValueRange copies);
  /// Waits until every cp.async copy this thread issued has landed (before
  /// a CTA exits with copies into buffers nobody reads).
  void drainAsyncCopies();

  /// The cp.async copies of the chunk at token c (count tokens, the rows
  /// past them zero-filled) into the current buffers (useChunkBuffers):
  /// q, k, the CTA's columns of v and asyncChunkExtras. Returns their
  /// tokens.
  SmallVector<Value> asyncChunkCopies(Value c, Value count);

  /// The q and k rows of tokens [c, c + count) as cp.async copies into
  /// qStage and kStage (asyncRows); returns their tokens.
  SmallVector<Value> asyncQKCopies(Value c, Value count);

  /// The column at which element `col` of row `row` of the staged buffer
  /// `buffer` lives: `col` itself, but for a form that permutes a buffer's
  /// columns by row (TensorCoreSolveKernel's v). Every store into a staged
  /// buffer and every load of a permuted one goes through it.
  virtual Value stagedColumn(Value buffer, Value row, Value col) { return col; }

  /// What a prefetching form copies beside q, k and v, as cp.async copies
  /// (their tokens): chunk_parallel's scan, the chunk's record. `issued` is
  /// the token of a copy of this chunk already issued, which a copy under a
  /// condition passes on where it does not run.
  virtual SmallVector<Value> asyncChunkExtras(Value c, Value issued) {
    return {};
  }

  /// Set `second` of two: `y` where `second` holds, else `x`.
  ChunkBuffers selectChunkBuffers(Value second, const ChunkBuffers &x,
                                  const ChunkBuffers &y);

  /// A producer's ring of producer_stages slots: the mbarriers `full` (a
  /// slot's chunk staged: `producers` arrivals a phase) and `empty` (its
  /// chunk consumed: `consumers` arrivals), initialized by thread 0 before
  /// a CTA barrier.
  void createRing(int64_t producers, int64_t consumers);
  /// Waits until the mbarrier of ring `slot` in `bars` completes the phase
  /// of parity `phase` (mbarrier.try_wait.parity in a loop; acquire).
  void wait(Value bars, Value slot, Value phase);
  /// This thread arrives on the mbarrier of ring `slot` in `bars` (release:
  /// its shared-memory accesses before are visible to a thread whose wait
  /// sees the phase complete).
  void arrive(Value bars, Value slot);
  /// The consumers' loop over a producer's ring, from `state`: for each
  /// chunk [c, c + count) waits until its `slot` is full, runs it (`run`:
  /// the state before to the state after), stores the checkpoint at its
  /// end and arrives on the slot's `empty`. Returns the last state.
  SmallVector<Value> consumeRing(
      ValueRange state,
      function_ref<SmallVector<Value>(Value c, Value count, Value slot,
                                      ValueRange state)>
          run);
  /// The shared-memory address of mbarrier `bars[slot]`.
  Value barrierAt(Value bars, Value slot) {
    return sharedAddress(bars, {slot});
  }
  Value full, empty; ///< the ring's mbarriers of full / empty slots

  /// Item i of a chunk's rows copied in vectors of `vec`, `perRow` a row:
  /// its row j, first column, and whether j < count.
  std::tuple<Value, Value, Value> stagedItem(Value i, int64_t perRow,
                                             int64_t vec, Value count);

  /// Rows [c, c + count) of `src` into `dst` [chunk, width] as cp.async
  /// copies of 16 bytes (stageRows' vectors), the rows past `count` zeros
  /// (a source size of 0); returns their tokens.
  SmallVector<Value>
  asyncRows(Value src, Value dst, int64_t width, Value c, Value count,
            function_ref<SmallVector<Value>(Value, Value)> idx);

  /// Copies the q and k rows of tokens [c, c + count) into qStage and
  /// kStage (rows past `count` zeros with a chunked solve).
  void stageQK(Value c, Value count);

  /// for c in [tokenLo, hi) step chunk, with the chunk's token count and,
  /// with a producer's ring, its slot (i % stages of chunk i) and phase
  /// parity ((i / stages) % 2, i32).
  SmallVector<Value> forEachChunk(
      ValueRange init,
      function_ref<SmallVector<Value>(Value, Value, Value, Value, ValueRange)>
          body);

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

  /// The gates of tokens [c, c + count) into staging rows [rowBase, rowBase
  /// + count), computed by `threads` threads of which this is `thread`.
  void stageGates(Value c, Value count, Value rowBase, Value thread,
                  int64_t threads);

  /// `body(t, row)` for thread `thread` < count: token t = c + thread, at
  /// staging row rowBase + thread.
  void forTokenOfThread(Value c, Value count, Value rowBase, Value thread,
                        function_ref<void(Value, Value)> body);

  /// Chunked solve: thread j < chunk stages token j's log gate g_j and
  /// beta_j, or zeros past `count` (such a token then neither decays nor
  /// updates anything).
  void stageLogGates(Value c, Value count);

  /// Thread j < chunk stores `values(c + j)` (f32 each) at [j] of the
  /// matching `buffers`, or zeros past `count`.
  void stageTokenScalars(Value c, Value count, ArrayRef<Value> buffers,
                         function_ref<SmallVector<Value>(Value)> values);

  /// chunk_parallel with a per-key decay (KDA): every thread stages some
  /// (token, key) decays exp(g) of tokens [c, c + count) into decayStage
  /// [chunk, K], 1 past `count` (a token there does not decay the state);
  /// with `betas`, thread j < chunk also token j's beta, 0 past `count`.
  void stageKeyDecays(Value c, Value count, bool betas);

  /// The rows of the chunked solve: the chunk, or T when every token fits
  /// in one (fixed T).
  int64_t solveRows();

  /// This lane's KL entries of staged q or k at chunk row j, widened to f32.
  SmallVector<Value> loadStagedKeyChunk(Value stage, Value j) {
    return extractAll(m.toF32(loadVector(stage, {j, k0}, kPerLane)));
  }

  Value qStage, kStage, vStage, decayStage, betaStage; ///< staging buffers
  Value sourceStage;           ///< staged parent sources (EAGLE tree)
  Value normStage; ///< a producer's norm factors (producerNorms), or null
  Value gramStage, tokenStage; ///< chunked solve: Gram matrices, decays, norms
  /// The tensor-core solve's Gram matrices with the decays (L and M's
  /// entries): gramStage itself, or with sharedGram a buffer of its own.
  Value maskedGramStage;
  Value solveStage, factorStage; ///< tensor cores: Tm and M, token factors
  /// chunk_parallel with a per-key decay (KeyDecayChunks.cpp): the update's
  /// decayed keys, each key's decay over the chunk.
  Value tailStage, lastDecayStage;
  Value blockV0; ///< first V column of the CTA
  /// First column of the v rows the CTA stages: blockV0, but block 0's in
  /// a segment map's transition block, past V, which reads v as zeros
  /// (SegmentScan.cpp).
  Value vSource0;
  /// Whether chunk ends store checkpoints: not in a segment map's launch,
  /// whose states are not the sequence's (SegmentScan.cpp).
  bool chunkCheckpoints = true;
};

} // namespace gdn
} // namespace mlir

#endif // GDN_LIB_CONVERSION_GDNTOGPU_STAGING_H
