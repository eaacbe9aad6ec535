//===- ScheduleLegality.cpp - what a gdn.recurrent kernel can take --------===//
//
// The legality of a complete #gdn.schedule for one op and chip: one check a
// rule, each with its diagnostic on the op, run in a fixed order (the first
// that fails is reported). They read only the complete schedule, so a pinned
// parameter and one the cost model chose are checked alike; both
// gdn-select-schedule (after the cost model) and convert-gdn-to-gpu (before
// it builds the kernel) run them through checkGPUSchedule.
//
//===----------------------------------------------------------------------===//
#include "ScheduleRules.h"
#include "gdn/Conversion/GDNToGPU/GPUTarget.h"
#include "gdn/Dialect/GDN/IR/GDNOps.h"

#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <limits>
#include <string>

using namespace mlir;
using namespace mlir::gdn;

namespace {
/// Shared memory a CTA's staging buffers or ring may take on `target`.
int64_t sharedBytesFor(const GPUTarget &target) {
  return target.maxSharedBytes - kSharedReserveBytes;
}

/// The refusal every check starts with.
InFlightDiagnostic refuse(RecurrentOp op) {
  return op.emitOpError() << "cannot be lowered to the GPU: ";
}

/// The tensor-core solve's mma.sync takes tf32 operands from sm_80 on.
LogicalResult checkTensorCoreChip(RecurrentOp op, ScheduleAttr s,
                                  const GPUTarget &target) {
  if (!s.tensorCores() || target.mmaSyncTF32)
    return success();
  return refuse(op) << "solve = tensor_cores needs mma.sync with tf32 "
                       "operands (sm_80 on), not "
                    << target.chip;
}

/// The tensor-core solve holds 16 or 32 V columns of a warp as one or two
/// row tiles of m16n8k8 accumulator fragments (TensorCoreSolve.cpp).
LogicalResult checkTensorCoreMapping(RecurrentOp op, ScheduleAttr s,
                                     const GPUTarget &) {
  if (!s.tensorCores() ||
      ((*s.getColumnsPerLane() == 2 || *s.getColumnsPerLane() == 4) &&
       *s.getLanesAlongV() == 8))
    return success();
  return refuse(op) << "solve = tensor_cores maps 16 or 32 V columns to a "
                       "warp: columns_per_lane must be 2 or 4 and "
                       "lanes_along_v 8 (or both left to the cost model), not "
                    << *s.getColumnsPerLane() << " and " << *s.getLanesAlongV();
}

/// An f8E4M3FN state converts pairs with cvt e4m3x2 (sm_89 on).
LogicalResult checkScaledState(RecurrentOp op, ScheduleAttr,
                               const GPUTarget &target) {
  if (!op.hasScaledState())
    return success();
  if (!target.e4m3Conversions)
    return refuse(op) << "an f8E4M3FN state needs cvt with e4m3x2 operands "
                         "(sm_89 on), not "
                      << target.chip;
  return success();
}

/// reductions = mma is one kernel form (MmaDecode.cpp): an e4m3 vk decode
/// of one token, q and k L2-normalized (|k̂| <= 1 bounds the f16 update), a
/// decay and a beta a head, whole m16n8k16 tiles of 16 rows (2 columns a
/// lane a tile, 8 lanes along V) and of keys (K / 4 keys a lane, 16 or 32).
LogicalResult checkMmaReductions(RecurrentOp op, ScheduleAttr s,
                                 const GPUTarget &target) {
  if (!s.mmaReductions())
    return success();
  auto d = op.getDims();
  auto why = [&]() {
    return refuse(op) << "reductions = mma (the e4m3 decode on mma.sync) ";
  };
  Value fin = op.getFinalState(), init = op.getInitialState();
  auto e4m3 = [](Value x) {
    return !x || isa<Float8E4M3FNType>(
                     cast<ShapedType>(x.getType()).getElementType());
  };
  if (!fin || !e4m3(fin) || !e4m3(init))
    return why() << "needs an f8E4M3FN final_state (and initial_state, if "
                    "any)";
  if (d.T != 1 || op.isVarlen())
    return why() << "decodes one token a sequence (T = 1, no cu_seqlens), "
                    "not T = "
                 << d.T << (op.isVarlen() ? " varlen" : "");
  if (!op.isVKLayout())
    return why() << "needs the vk state layout";
  if (!op.getQkL2norm())
    return why() << "needs qk_l2norm (its f16 operands are the normalized "
                    "q and k)";
  if (op.hasPerKeyDecay() || op.hasPerChannelBeta())
    return why() << "takes a decay and a beta a head, not KDA's per-key "
                    "decay or a per-channel beta";
  if (op.getIntermediateStates() || op.hasCheckpoints() ||
      op.hasParentTable() || op.hasReplayWindows())
    return why() << "writes the final state only (no intermediate states, "
                    "checkpoints, tree or replay windows)";
  if (op.getStochasticRounding())
    return why() << "rounds to nearest (no stochastic_rounding)";
  int64_t R = *s.getColumnsPerLane();
  if (*s.getLanesAlongV() != 8 || R < 2 || R > 16 || !llvm::isPowerOf2_64(R))
    return why() << "maps whole 16-row tiles to a warp: lanes_along_v must "
                    "be 8 and columns_per_lane 2, 4, 8 or 16 (1 to 8 tiles; "
                    "or both left to the cost model), not "
                 << R << " and " << *s.getLanesAlongV();
  if (d.K % 64 != 0 || d.K > 128)
    return why() << "needs K = 64 or 128 (whole m16n8k16 tiles, 16 or 32 "
                    "keys a lane), not "
                 << d.K;
  // 16 rows of 32 keys a lane spill (ptxas: 255 registers, 898 bytes;
  // docs/cost-model.md#mma-decode).
  if (R * d.K / 4 > 256)
    return why() << "holds at most 256 state values a lane (columns_per_lane "
                    "* K / 4), not "
                 << R * d.K / 4 << " (columns_per_lane = " << R
                 << ", K = " << d.K << ")";
  if (*s.getStagedTokens() != 0 || s.chunkedSolve() ||
      *s.getProducerStages() != 0)
    return why() << "reads its token from global memory (staged_tokens = "
                    "0, solve = token_by_token, no producer)";
  if (!target.mmaSyncTF32)
    return why() << "needs mma.sync (sm_80 on), not " << target.chip;
  return success();
}

/// The K-reductions are butterfly trees over the lanes along K.
LogicalResult checkLanesAlongV(RecurrentOp op, ScheduleAttr s,
                               const GPUTarget &) {
  if (*s.getLanesAlongV() >= 1 && *s.getLanesAlongV() <= kWarpSize &&
      llvm::isPowerOf2_64(*s.getLanesAlongV()))
    return success();
  return refuse(op) << "lanes_along_v = " << *s.getLanesAlongV()
                    << " must be a power of two in [1, 32]";
}

/// Every lane along K holds the same number of whole keys.
LogicalResult checkKeysPerLane(RecurrentOp op, ScheduleAttr s,
                               const GPUTarget &) {
  auto d = op.getDims();
  if (d.K % s.lanesAlongK() == 0)
    return success();
  return refuse(op) << "K = " << d.K
                    << " must be a multiple of 32 / lanes_along_v = "
                    << s.lanesAlongK();
}

/// The kernel builder unrolls a lane's columns and a CTA's warps.
LogicalResult checkSizes(RecurrentOp op, ScheduleAttr s, const GPUTarget &) {
  if (*s.getColumnsPerLane() >= 1 && *s.getColumnsPerLane() <= 16 &&
      *s.getWarps() >= 1 && *s.getWarps() <= 32)
    return success();
  return refuse(op) << "columns_per_lane = " << *s.getColumnsPerLane()
                    << " must be in [1, 16] and warps = " << *s.getWarps()
                    << " in [1, 32]";
}

/// The state tile lives in registers, within what ptxas holds without
/// spilling.
LogicalResult checkStateRegisters(RecurrentOp op, ScheduleAttr s,
                                  const GPUTarget &) {
  if (s.mmaReductions()) // f16 pairs, a tile at a time (checkMmaReductions)
    return success();
  int64_t values =
      *s.getColumnsPerLane() * keysPerLane(op, *s.getLanesAlongV());
  // On tensor cores each of a warp's row tiles (2 columns a lane) may hold
  // the limit: their mma share every other operand, which makes room
  // (docs/cost-model.md#scan-row-tiles).
  int64_t limit = kMaxStateValues * std::max<int64_t>(s.rowTiles(), 1);
  if (values <= limit)
    return success();
  return refuse(op) << "a thread would hold columns_per_lane * K / (32 / "
                       "lanes_along_v) = "
                    << values << " state values, more than " << limit
                    << " (K = " << op.getDims().K << " must be at most "
                    << limit * s.lanesAlongK() / *s.getColumnsPerLane()
                    << " for this schedule)";
}

/// A CTA holds whole blocks of V columns.
LogicalResult checkColumnsDivide(RecurrentOp op, ScheduleAttr s,
                                 const GPUTarget &) {
  auto d = op.getDims();
  if (d.V % s.blockColumns() == 0)
    return success();
  return refuse(op) << "V = " << d.V
                    << " is not a multiple of columns_per_lane * "
                       "lanes_along_v * warps = "
                    << s.blockColumns();
}

/// The V blocks are the grid's x dimension.
LogicalResult checkColumnBlocks(RecurrentOp op, ScheduleAttr s,
                                const GPUTarget &) {
  int64_t blocks = op.getDims().V / s.blockColumns();
  if (blocks <= std::numeric_limits<int32_t>::max())
    return success();
  return refuse(op) << "V / (columns_per_lane * lanes_along_v * warps) = "
                    << blocks << " blocks exceed the grid limit 2^31 - 1";
}

/// The chunked (WY) solve computes the final state of a chain of tokens with
/// scalar gates a head, from a staged chunk (whole mma tiles on tensor
/// cores).
LogicalResult checkChunkedSolve(RecurrentOp op, ScheduleAttr s,
                                const GPUTarget &) {
  if (!s.chunkedSolve())
    return success();
  auto needs = [&](StringRef why) {
    return refuse(op) << "solve = "
                      << stringifyChunkSolve(s.getSolve().getValue())
                      << " needs " << why;
  };
  if (op.hasParentTable())
    return needs("a chain of tokens (no parent table, EAGLE tree)");
  if (op.getIntermediateStates())
    return needs("the final state only (no intermediate_states)");
  if (op.hasPerKeyDecay() && !s.chunkParallel())
    return needs("a decay per head (a per-key decay, KDA, takes solve = "
                 "chunk_parallel)");
  // The first launch runs min(warps, 4) warps (RecurrentToGPU.cpp), each
  // holding whole columns of the Gram on a power of two of lanes.
  int64_t solveWarps = std::min<int64_t>(*s.getWarps(), 4);
  if (op.hasPerKeyDecay() && *s.getStagedTokens() > kWarpSize)
    return needs("with a per-key decay (KDA) a chunk of at most 32 tokens "
                 "(a warp's lanes hold whole columns of its Gram, "
                 "KeyDecayChunks.cpp), not staged_tokens = " +
                 std::to_string(*s.getStagedTokens()));
  if (op.hasPerKeyDecay() && !llvm::isPowerOf2_64(solveWarps))
    return needs("with a per-key decay (KDA) warps = 1, 2, 4 or more (the "
                 "first launch's min(warps, 4) a power of two), not " +
                 std::to_string(*s.getWarps()));
  if (op.hasPerChannelBeta())
    return needs("a beta per head (no per-channel beta)");
  if (*s.getStagedTokens() == 0)
    return needs(defaultStagedTokens(op) == 0
                     ? "tokens staged in shared memory (staged_tokens > 0: "
                       "a single token is not staged unless asked)"
                     : "tokens staged in shared memory (staged_tokens > 0)");
  if (s.tensorCores() && *s.getStagedTokens() != 8 &&
      *s.getStagedTokens() % 16 != 0)
    return needs("staged_tokens = 8 or a multiple of 16 on tensor cores "
                 "(the Gram's mma tiles of 16 tokens), not " +
                 std::to_string(*s.getStagedTokens()));
  if (s.tensorCores() && op.getDims().K % 8 != 0)
    return needs("K a multiple of 8 on tensor cores (mma tiles of 8 keys)");
  if (!s.tensorCores() &&
      (*s.getStagedTokens() > kCudaCoreMaxChunkTokens ||
       *s.getStagedTokens() * *s.getColumnsPerLane() >
           kCudaCoreMaxChunkColumns))
    return needs("staged_tokens at most " +
                 std::to_string(kCudaCoreMaxChunkTokens) +
                 " and staged_tokens * columns_per_lane at most " +
                 std::to_string(kCudaCoreMaxChunkColumns) +
                 " (its chunk is unrolled: the compile grows with both), "
                 "not " + std::to_string(*s.getStagedTokens()) + " * " +
                 std::to_string(*s.getColumnsPerLane()));
  return success();
}

/// The chunk-parallel solve's first launch runs over every chunk of every
/// sequence (a varlen batch's through their record slots); its second
/// launch (the scan) reads what the first wrote, so it cannot start before
/// the first ends (ChunkParallel.cpp).
LogicalResult checkChunkParallel(RecurrentOp op, ScheduleAttr s,
                                 const GPUTarget &) {
  if (!s.chunkParallel())
    return success();
  if (s.launchMode() != LaunchMode::ordinary)
    return refuse(op) << "solve = chunk_parallel needs launch = ordinary (its "
                         "scan reads what its first launch writes), not "
                      << stringifyLaunchMode(s.launchMode());
  return success();
}

/// concurrent_solves = 1 (ChunkParallel.cpp): the solves' persistent CTAs
/// let the scan launch beside them (griddepcontrol), and the scan waits for
/// a count of each group of a fixed batch's chunks; a split scan (its maps'
/// launch reads the records too) and a varlen batch (a group's chunks span
/// sequences) keep the records' launch before the scan.
LogicalResult checkConcurrentSolves(RecurrentOp op, ScheduleAttr s,
                                    const GPUTarget &target) {
  int64_t value = *s.getConcurrentSolves();
  if (value == 0)
    return success();
  auto fail = [&]() {
    return refuse(op) << "concurrent_solves = " << value << " ";
  };
  if (value != 1)
    return fail() << "must be 0 or 1";
  if (!s.chunkParallel())
    return fail() << "needs solve = chunk_parallel";
  if (s.segmented())
    return fail() << "needs segments = 1";
  if (op.isVarlen())
    return fail() << "needs a fixed batch (no cu_seqlens)";
  if (!target.gridDependencyControl)
    return fail() << "needs griddepcontrol (sm_90 on)";
  return success();
}

/// Context-parallel segments (SegmentScan.cpp): the checks in
/// segmentsRefusal, which the cost model's chooseSegments reads too.
LogicalResult checkSegments(RecurrentOp op, ScheduleAttr s, const GPUTarget &) {
  if (std::optional<std::string> why = segmentsRefusal(op, s))
    return refuse(op) << "segments = " << *s.getSegments() << " " << *why;
  return success();
}

/// Only the tensor-core forms multiply on tf32 mma: `precision = tf32`
/// elsewhere would promise a speed-for-accuracy trade that never happens.
/// `precision = bf16` multiplies the state by bf16 q and k 16 keys and 16
/// tokens an mma (m16n8k16, TensorCoreSolve.cpp).
LogicalResult checkPrecision(RecurrentOp op, ScheduleAttr s,
                             const GPUTarget &) {
  StringRef precision = stringifyPrecision(s.getPrecision().getValue());
  if (s.singleTF32() && !s.tensorCores())
    return refuse(op) << "precision = " << precision
                      << " needs solve = tensor_cores or chunk_parallel (the "
                         "mma products), not "
                      << stringifyChunkSolve(s.getSolve().getValue());
  if (!s.bf16Products())
    return success();
  auto elementType = [](Value x) {
    return cast<ShapedType>(x.getType()).getElementType();
  };
  if (!bf16QueriesAndKeys(op))
    return refuse(op) << "precision = bf16 needs bf16 q and k (the bf16 mma's "
                         "operands), not "
                      << elementType(op.getQ()) << " and "
                      << elementType(op.getK());
  int64_t chunk = *s.getStagedTokens(), K = op.getDims().K;
  if (K % 16 != 0 || chunk % 16 != 0)
    return refuse(op) << "precision = bf16 needs K and staged_tokens "
                         "multiples of 16 (16 keys and 16 tokens an mma), "
                         "not K = "
                      << K << " and staged_tokens = " << chunk;
  return success();
}

/// A staged kernel stores checkpoints at the ends of its chunks, which
/// start at the sequence's first token: the chunk divides the interval.
LogicalResult checkCheckpoints(RecurrentOp op, ScheduleAttr s,
                               const GPUTarget &) {
  std::optional<int64_t> interval = op.getCheckpointInterval();
  int64_t chunk = *s.getStagedTokens();
  if (!interval || chunk == 0 || *interval % chunk == 0)
    return success();
  return refuse(op) << "checkpoint_interval = " << *interval
                    << " needs staged_tokens dividing it (checkpoints are "
                       "stored at chunk ends), not staged_tokens = "
                    << chunk;
}

/// The unrolled token loop's code size.
LogicalResult checkUnrollTokens(RecurrentOp op, ScheduleAttr s,
                                const GPUTarget &) {
  if (*s.getUnrollTokens() <= 64)
    return success();
  return refuse(op) << "unroll_tokens = " << *s.getUnrollTokens()
                    << " must be at most 64";
}

/// One thread computes each staged token's gates (a solving producer's:
/// producerSolves).
LogicalResult checkStagedThreads(RecurrentOp op, ScheduleAttr s,
                                 const GPUTarget &) {
  bool producer = s.producerSolves();
  int64_t threads =
      (producer ? s.producerWarps() : *s.getWarps()) * kWarpSize;
  if (*s.getStagedTokens() <= threads)
    return success();
  return refuse(op) << "staged_tokens = " << *s.getStagedTokens()
                    << " exceeds the " << threads
                    << (producer ? " threads of the producer warpgroup"
                                 : " threads of a CTA");
}

/// A chunk's staging buffers fit the chip's shared memory (a producer's
/// ring of them: checkProducerStages).
LogicalResult checkStagingBytes(RecurrentOp op, ScheduleAttr s,
                                const GPUTarget &target) {
  int64_t bytes = stagingBytes(op, s, *s.getStagedTokens());
  if (bytes <= sharedBytesFor(target))
    return success();
  return refuse(op) << "staged_tokens = " << *s.getStagedTokens() << " needs "
                    << bytes << " bytes of shared memory, more than the "
                    << sharedBytesFor(target) << " a CTA has on "
                    << target.chip;
}

/// setmaxnreg moves registers from a producer warpgroup to the consumers.
LogicalResult checkConsumerRegistersNeedProducer(RecurrentOp op, ScheduleAttr s,
                                                 const GPUTarget &) {
  if (*s.getConsumerRegisters() == 0 || *s.getProducerStages() > 0)
    return success();
  return refuse(op) << "consumer_registers needs a producer warp "
                       "(producer_stages > 0)";
}

/// The warp-specialized WY solve (producerSolves, WarpSpecializedSolve.cpp):
/// a warpgroup of 128 threads solves each chunk (a thread a token in the
/// substitution) into one of two sets of the chunk's static buffers, with
/// cp.async copies and mbarriers between the roles.
static LogicalResult checkSolvingProducer(RecurrentOp op, ScheduleAttr s) {
  auto fail = [&]() {
    return refuse(op) << "producer_stages = " << *s.getProducerStages()
                      << " with solve = tensor_cores (a solving producer) ";
  };
  if (*s.getProducerStages() != 2)
    return fail() << "needs exactly 2 ring slots";
  if (*s.getConsumerRegisters() != 0)
    return fail() << "takes no consumer_registers";
  if (*s.getChunkPrefetchDistance() != 0)
    return fail() << "takes chunk_prefetch_distance = 0 (its ring is the "
                     "prefetch)";
  if (s.launchMode() != LaunchMode::ordinary)
    return fail() << "needs launch = ordinary, not "
                  << stringifyLaunchMode(s.launchMode());
  int64_t bytes = chunkPrefetchBytes(op, s) + 16 * *s.getProducerStages();
  if (bytes > kStaticSharedBytes)
    return fail() << "with staged_tokens = " << *s.getStagedTokens()
                  << " needs " << bytes
                  << " bytes of static shared memory (two sets of the "
                     "chunk's buffers and the ring's mbarriers), more than "
                  << kStaticSharedBytes;
  return success();
}

/// A producer warp copies each token's rows with cp.async.bulk (16-byte
/// multiples between 16-byte aligned addresses; the C API guarantees
/// 16-byte aligned buffers) into a ring in shared memory, one lane a token.
LogicalResult checkProducerStages(RecurrentOp op, ScheduleAttr s,
                                  const GPUTarget &target) {
  if (*s.getProducerStages() == 0)
    return success();
  auto d = op.getDims();
  auto fail = [&]() {
    return refuse(op) << "producer_stages = " << *s.getProducerStages() << " ";
  };
  if (!target.bulkAsyncCopies)
    return fail() << "needs bulk async copies and mbarrier transactions "
                     "(sm_90 on)";
  if (*s.getProducerStages() > 8)
    return fail() << "must be at most 8";
  if (*s.getStagedTokens() == 0)
    return fail() << "needs staged tokens (staged_tokens > 0)";
  if (s.producerSolves())
    return checkSolvingProducer(op, s);
  if (s.chunkedSolve())
    return fail() << "(a producer warp) and solve = "
                  << stringifyChunkSolve(s.getSolve().getValue())
                  << " cannot be combined (a solving producer takes solve = "
                     "tensor_cores)";
  if (*s.getStagedTokens() > kWarpSize)
    return fail() << "needs staged_tokens <= 32 (one producer lane a token), "
                     "not "
                  << *s.getStagedTokens();
  if (!bulkCopies(op, s))
    return fail() << "copies rows of q and k (" << d.K * elementBytes(op.getQ())
                  << " bytes), v (" << d.V * elementBytes(op.getV())
                  << ") and the CTA's columns of v ("
                  << s.blockColumns() * elementBytes(op.getV())
                  << ") with cp.async.bulk, which needs multiples of 16 bytes";
  int64_t bytes = ringBytes(op, s, *s.getProducerStages());
  if (bytes > sharedBytesFor(target))
    return fail() << "with staged_tokens = " << *s.getStagedTokens()
                  << " needs " << bytes
                  << " bytes of shared memory, more than the "
                  << sharedBytesFor(target) << " a CTA has on " << target.chip;
  return success();
}

/// setmaxnreg acts on warpgroups and takes multiples of 8 in [24, 256]; the
/// producer warpgroup keeps kProducerRegisters and the CTA's total stays
/// within 64K.
LogicalResult checkConsumerRegisters(RecurrentOp op, ScheduleAttr s,
                                     const GPUTarget &) {
  int64_t registers = *s.getConsumerRegisters(), warps = *s.getWarps();
  if (registers == 0)
    return success();
  if (warps % 4 != 0)
    return refuse(op) << "consumer_registers needs whole consumer warpgroups "
                         "(setmaxnreg acts on warpgroups), but warps = "
                      << warps << " is not a multiple of 4";
  int64_t total =
      4 * kWarpSize * kProducerRegisters + warps * kWarpSize * registers;
  if (registers % 8 == 0 && registers >= 24 && registers <= 256 &&
      total <= 65536)
    return success();
  return refuse(op) << "consumer_registers = " << registers
                    << " must be a multiple of 8 in [24, 256] with the CTA's "
                       "registers ("
                    << total << ") at most 65536";
}

/// .maxnreg takes what ptxas can allocate a thread, at least 24 (as
/// setmaxnreg; 28 for mma.sync (tensor cores, reductions = mma:
/// kTensorCoreMinRegisters)), at most 255;
/// setmaxnreg (consumer_registers) needs the count fixed at entry instead.
LogicalResult checkMaxRegisters(RecurrentOp op, ScheduleAttr s,
                                const GPUTarget &) {
  int64_t registers = *s.getMaxRegisters();
  if (registers == 0)
    return success();
  if (registers < 24 || registers > 255)
    return refuse(op) << "max_registers = " << registers
                      << " must be 0 (no cap) or in [24, 255]";
  // The chunked solve's and the e4m3 decode's (reductions = mma) mma.sync.
  if ((s.tensorCores() || s.mmaReductions()) &&
      registers < kTensorCoreMinRegisters)
    return refuse(op) << "max_registers = " << registers << " is below "
                      << kTensorCoreMinRegisters
                      << ", the fewest with which ptxas compiles the "
                         "tensor cores' mma.sync";
  if (*s.getConsumerRegisters() > 0)
    return refuse(op) << "max_registers (.maxnreg) and consumer_registers "
                         "(setmaxnreg) cannot be combined";
  return success();
}

/// setmaxnreg is an arch-specific instruction (sm_90a, sm_100a).
LogicalResult checkConsumerRegistersChip(RecurrentOp op, ScheduleAttr s,
                                         const GPUTarget &target) {
  if (*s.getConsumerRegisters() == 0 || target.setMaxNReg)
    return success();
  return refuse(op) << "consumer_registers (setmaxnreg) needs an "
                       "arch-specific chip (sm_90a, sm_100a), not "
                    << target.chip;
}

/// The state prefetch is cp.async.bulk.prefetch.L2 (sm_90 to LLVM's NVPTX)
/// of a tile statePrefetchable describes.
LogicalResult checkStatePrefetch(RecurrentOp op, ScheduleAttr s,
                                 const GPUTarget &target) {
  if (*s.getStatePrefetchDistance() == 0)
    return success();
  if (!target.bulkAsyncCopies)
    return refuse(op) << "state_prefetch_distance = "
                      << *s.getStatePrefetchDistance()
                      << " needs cp.async.bulk.prefetch (sm_90 on)";
  if (statePrefetchable(op, s))
    return success();
  return refuse(op) << "state_prefetch_distance = "
                    << *s.getStatePrefetchDistance()
                    << " needs a kernel without staged tokens or tensor cores "
                       "(staged_tokens = 0 or T = 1), an initial state in the "
                       "vk layout (identity, a CTA's "
                    << s.blockColumns()
                    << " rows of K a multiple of 16 bytes) and a fixed batch "
                       "(no cu_seqlens)";
}

/// The input prefetch is prefetch.global.L2 (sm_90 to LLVM's NVPTX) of the
/// rows the tensor-core solve stages.
LogicalResult checkInputPrefetch(RecurrentOp op, ScheduleAttr s,
                                 const GPUTarget &target) {
  if (*s.getInputPrefetchDistance() == 0)
    return success();
  if (!target.bulkAsyncCopies)
    return refuse(op) << "input_prefetch_distance = "
                      << *s.getInputPrefetchDistance()
                      << " needs prefetch.global.L2 (sm_90 on)";
  if (inputsPrefetchable(op, s))
    return success();
  return refuse(op) << "input_prefetch_distance = "
                    << *s.getInputPrefetchDistance()
                    << " needs the tensor-core solve of a single chunk (T <= "
                       "staged_tokens) with a fixed batch (no cu_seqlens) and "
                       "no producer";
}

/// The tensor-core forms' chunk loop copies the next chunk's q, k and v rows
/// (16-byte cp.async copies, sm_80 on as their mma is) and chunk_parallel's
/// record into a second set of static staging buffers.
LogicalResult checkChunkPrefetch(RecurrentOp op, ScheduleAttr s,
                                 const GPUTarget &) {
  int64_t distance = *s.getChunkPrefetchDistance();
  if (distance == 0)
    return success();
  auto fail = [&]() {
    return refuse(op) << "chunk_prefetch_distance = " << distance << " ";
  };
  if (distance > 1)
    return fail() << "must be 0 or 1";
  if (!s.tensorCores())
    return fail() << "needs solve = tensor_cores or chunk_parallel (their "
                     "chunk loop)";
  // The tensor-core shapes (K a multiple of 8, 16 or 32 V columns a warp) make
  // every row a multiple of 16 bytes.
  assert(bulkCopies(op, s) && "tensor-core rows of 16-byte multiples");
  int64_t bytes = chunkPrefetchBytes(op, s);
  if (bytes > kStaticSharedBytes)
    return fail() << "with staged_tokens = " << *s.getStagedTokens()
                  << " needs " << bytes
                  << " bytes of static shared memory (a second set of the "
                     "chunk's buffers), more than "
                  << kStaticSharedBytes;
  return success();
}

/// A programmatic launch waits and signals with griddepcontrol.
LogicalResult checkLaunch(RecurrentOp op, ScheduleAttr s,
                          const GPUTarget &target) {
  if (s.launchMode() == LaunchMode::ordinary || target.gridDependencyControl)
    return success();
  return refuse(op) << "launch = " << stringifyLaunchMode(s.launchMode())
                    << " needs griddepcontrol (sm_90 on)";
}

/// Heads and sequences are the grid's y and z dimensions.
LogicalResult checkGridLimits(RecurrentOp op, ScheduleAttr, const GPUTarget &) {
  auto d = op.getDims();
  if (d.HV <= 65535 && d.N <= 65535)
    return success();
  return refuse(op) << "N = " << d.N << " and HV = " << d.HV
                    << " must each be at most 65535 (grid limits)";
}

using Check = LogicalResult (*)(RecurrentOp, ScheduleAttr, const GPUTarget &);
/// Every check, in the order their diagnostics take precedence: the mapping,
/// then the staging, the producer, the prefetches, the launch, the grid.
constexpr Check kChecks[] = {
    checkTensorCoreChip,
    checkTensorCoreMapping,
    checkScaledState,
    checkMmaReductions,
    checkLanesAlongV,
    checkKeysPerLane,
    checkSizes,
    checkStateRegisters,
    checkColumnsDivide,
    checkColumnBlocks,
    checkChunkedSolve,
    checkChunkParallel,
    checkConcurrentSolves,
    checkSegments,
    checkPrecision,
    checkCheckpoints,
    checkUnrollTokens,
    checkStagedThreads,
    checkStagingBytes,
    checkConsumerRegistersNeedProducer,
    checkProducerStages,
    checkConsumerRegisters,
    checkStatePrefetch,
    checkInputPrefetch,
    checkChunkPrefetch,
    checkMaxRegisters,
    checkLaunch,
    checkGridLimits,
    checkConsumerRegistersChip,
};
} // namespace

FailureOr<ScheduleAttr> gdn::checkGPUSchedule(RecurrentOp op,
                                              ScheduleAttr complete,
                                              const GPUTarget &target) {
  if (!complete)
    return refuse(op) << "it has no gdn.schedule; run gdn-select-schedule "
                         "first (it chooses every parameter)";
  if (!complete.isComplete())
    return refuse(op) << "gdn.schedule = " << complete
                      << " is not complete (every parameter, launch not "
                         "programmatic); run gdn-select-schedule first";
  ScheduleAttr s = resolvedSchedule(op, complete);
  for (Check check : kChecks)
    if (failed(check(op, s, target)))
      return failure();
  return s;
}

LogicalResult gdn::checkGPUOperandSizes(Operation *op) {
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<ShapedType>(operand.get().getType());
    if (!type || !type.hasStaticShape())
      continue; // the op's verifier refuses these
    int64_t elements = 1;
    bool tooLarge = false;
    for (int64_t d : type.getShape())
      tooLarge = tooLarge || d > kMaxGPUOperandElements ||
                 llvm::MulOverflow(elements, d, elements) ||
                 elements > kMaxGPUOperandElements;
    if (tooLarge)
      return op->emitOpError()
             << "cannot be lowered to the GPU: operand #"
             << operand.getOperandNumber() << " of type " << type
             << " has more than 2^40 elements (or a dimension past 2^40)";
  }
  return success();
}

std::optional<std::string> gdn::segmentsRefusal(RecurrentOp op,
                                                ScheduleAttr s) {
  int64_t P = *s.getSegments();
  if (P == 1)
    return std::nullopt;
  auto d = op.getDims();
  std::string why;
  llvm::raw_string_ostream os(why);
  if (!s.chunkParallel())
    os << "needs solve = chunk_parallel (its scan is what splits), not "
       << stringifyChunkSolve(s.getSolve().getValue());
  else if (op.getIntermediateStates() || op.hasReplayWindows())
    os << "takes no intermediate_states and no replay windows";
  else if (s.getInputPrefetchDistance().value_or(0) != 0 ||
           s.getStatePrefetchDistance().value_or(0) != 0)
    os << "needs input_prefetch_distance = 0 and state_prefetch_distance = 0";
  else if (d.K % s.blockColumns() != 0)
    os << "needs K = " << d.K << " a multiple of the CTA's V columns, "
       << s.blockColumns() << " (the transition's blocks)";
  else if (d.V % kSegmentJoinRows != 0)
    os << "needs V a multiple of " << kSegmentJoinRows;
  else if ((P - 1) * segmentTokens(op, s) >= d.T)
    os << "leaves a segment empty: T = " << d.T << " in segments of "
       << segmentTokens(op, s) << " tokens (whole chunks)";
  else if (d.N * P > 65535)
    os << "needs N * segments at most 65535 (the grid's z), not " << d.N * P;
  else if (P > kSegmentMaxPinned)
    os << "must be at most " << kSegmentMaxPinned
       << " (the join's steps are unrolled: its compile grows with P)";
  if (why.empty())
    return std::nullopt;
  return why;
}
