//===- StagingLayout.h - the shared memory of a staged kernel ---*- C++ -*-===//
//
// The one description of a staged kernel's shared-memory buffers: the cost
// model sums it for its budget (ScheduleShapes.cpp) and the kernel
// allocates it (Staging::createStagingBuffers), so the two cannot drift.
// Private to convert-gdn-to-gpu and the cost model.
//
//===----------------------------------------------------------------------===//
#ifndef GDN_LIB_CONVERSION_GDNTOGPU_STAGINGLAYOUT_H
#define GDN_LIB_CONVERSION_GDNTOGPU_STAGINGLAYOUT_H

#include "gdn/Conversion/GDNToGPU/Schedule.h"

#include <optional>

namespace mlir {
namespace gdn {

/// One buffer: its shape and element type.
struct StagingBuffer {
  SmallVector<int64_t, 3> shape;
  Type elementType;
  /// Its size in bytes.
  int64_t bytes() const;
};

/// The buffers of `chunk` staged tokens a slot, `slots` slots one after
/// another along the token rows (a producer's ring; 1 without one), in the
/// order the kernel allocates them:
///   q, k       [rows, K (+ 16 bytes on tensor cores: the 8 rows an mma
///              fragment reads start in 8 different banks)], q's dtype;
///   v          [rows, the CTA's V columns], v's dtype;
///   decay      [rows] f32, or [rows, K] with a per-key decay (KDA);
///   beta       [rows] f32, or [rows, V columns] with a per-channel beta;
///   source     [rows] i32, an EAGLE tree's parent sources;
///   norms      [rows, 4] f32, a producer's norm factors (producerNorms);
///   gram       [2, chunk, chunk] and tokens [3, chunk] f32, the chunked
///              solve's Gram matrices and per-token decays and norms;
///   maskedGram [2, chunk, chunk] f32 with sharedGram: the Gram matrices
///              with a value head's decays, the raw ones kept in gram;
///   solve      [2, chunk, chunk + 4] and factors [5, chunk] f32, the
///              tensor-core solve's matrices and token factors;
///   tailKeys   [rows, q's row] q's dtype and lastDecay [K] f32,
///              chunk_parallel with a per-key decay (KDA,
///              KeyDecayChunks.cpp): the update's keys decayed to the
///              chunk's end, each key's decay over the chunk.
/// `op` may be in either form (the cost model runs before bufferization).
struct StagingLayout {
  StagingBuffer q, k, v, decay, beta;
  std::optional<StagingBuffer> source, norms, gram, maskedGram, tokens, solve,
      factors;
  std::optional<StagingBuffer> tailKeys, lastDecay;

  /// Every buffer in allocation order.
  SmallVector<const StagingBuffer *> buffers() const;
  /// Their total size in bytes.
  int64_t bytes() const;
  /// The same with each buffer starting on `alignment` bytes, as the kernel
  /// allocates them.
  int64_t alignedBytes(int64_t alignment) const;
  /// The buffers a chunk_prefetch_distance = 1 scan keeps a second set of
  /// (Staging::ChunkBuffers: q, k, v, solve, factors, tokens), aligned so.
  int64_t chunkSetBytes(int64_t alignment) const;
  /// The buffers and that second set (alignedBytes + chunkSetBytes).
  int64_t prefetchedBytes(int64_t alignment) const;
};

StagingLayout stagingLayout(RecurrentOp op, ScheduleAttr s, int64_t chunk,
                            int64_t slots);

/// Whether chunk_parallel's first launch of `chunk`-token chunks solves the
/// chunks of all HV / H value heads of a key head in one CTA (HV > H, no
/// per-key decay, chunks of at most 32 tokens, whose maskedGram is at most
/// 8 KiB): q and k staged, and their Gram products K Kᵀ and Q Kᵀ formed,
/// once for the value heads that share them, each value head's decays
/// applied into maskedGram (ChunkSolvesKernel::build;
/// docs/cost-model.md#shared-gram). The layout is the union of both
/// launches' buffers, so the scan's budget counts maskedGram too (ptxas
/// drops it from the scan, which never touches it).
bool sharedGram(RecurrentOp op, ScheduleAttr s, int64_t chunk);

} // namespace gdn
} // namespace mlir

#endif // GDN_LIB_CONVERSION_GDNTOGPU_STAGINGLAYOUT_H
