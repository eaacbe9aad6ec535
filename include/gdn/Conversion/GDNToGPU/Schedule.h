//===- Schedule.h - GPU schedule of gdn.recurrent and its cost model -*- C++ -*-===//
//
// The thread-to-data mapping of a gdn.recurrent GPU kernel, chosen by a cost
// model measured on the H200 (docs/cost-model.md) or pinned by a
// #gdn.schedule, and carried from gdn-select-schedule (chooseSchedule, then
// checkGPUSchedule) to convert-gdn-to-gpu (checkGPUSchedule only) as the
// discardable attribute `gdn.schedule` on the op. GPUSchedule is the kernel
// builder's resolved view of a complete #gdn.schedule.
//
//===----------------------------------------------------------------------===//
#ifndef GDN_CONVERSION_GDNTOGPU_SCHEDULE_H
#define GDN_CONVERSION_GDNTOGPU_SCHEDULE_H

#include "gdn/Dialect/GDN/IR/GDNDialect.h"
#include "gdn/Dialect/GDN/IR/GDNOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>

namespace mlir {
namespace gdn {
struct GPUTarget;

constexpr int64_t kWarpSize = 32;
/// Registers a producer thread keeps under setmaxnreg (the instruction's
/// minimum: the producer only issues copies and computes gates).
constexpr int64_t kProducerRegisters = 24;

/// The thread-to-data mapping of one kernel: one CTA per (sequence n, value
/// head hv, block of blockRows() V columns); a warp's lanes split lanesV along
/// V and 32 / lanesV along K, each lane holding `rows` V columns x kPerLane
/// key rows of the state in registers.
struct GPUSchedule {
  int64_t rows;     ///< R: V columns per lane (columns_per_lane)
  int64_t warps;    ///< W: consumer warps per CTA (warps)
  int64_t lanesV;   ///< lanes of a warp along V, the rest along K (lanes_along_v)
  int64_t kPerLane; ///< KL = K / (32 / lanesV)
  int64_t chunk;    ///< staged_tokens (0: none)
  int64_t unroll;   ///< unroll_tokens (1: a loop)
  /// A token's K-reductions side by side on the carried state (one shuffle
  /// tree deep) rather than decay, Sᵀk, update, Sᵀq in turn (fewer
  /// registers): see TokenSteps::token().
  bool overlapReductions;
  /// A staged chunk's tokens solved at once in the WY (UT-transform) form
  /// (0: token by token). Final state only; no tree, per-key decay or
  /// per-channel beta. kCudaCoreSolve: the chunk's Gram matrices once a CTA
  /// in shared memory, every Sᵀk and Sᵀq of the chunk side by side as
  /// shuffle trees, a forward substitution in registers and one rank-C state
  /// update (ChunkedSolve.cpp). kTensorCoreSolve: the state tile held as
  /// mma.sync accumulator fragments and every product with it (S0ᵀ[k q],
  /// the rank-C update) on tensor cores in split (3xTF32) precision
  /// (TensorCoreSolve.cpp).
  int64_t chunkedSolve;
  static constexpr int64_t kCudaCoreSolve = int64_t(ChunkSolve::cuda_cores),
                           kTensorCoreSolve = int64_t(ChunkSolve::tensor_cores);
  bool tensorCores() const { return chunkedSolve == kTensorCoreSolve; }
  /// Warp specialization: slots of the shared-memory ring a producer warp
  /// fills with bulk async copies (cp.async.bulk) of each chunk's tokens,
  /// guarded by full/empty mbarriers, while the `warps` consumer warps
  /// compute (0: no producer, every thread stages then waits at a barrier).
  int64_t stages = 0;
  /// With a producer, registers a consumer thread gets by `setmaxnreg`
  /// (sm_90a) once the producer warpgroup gave its own back (0: no
  /// setmaxnreg). The producer is then a whole warpgroup (4 warps, one of
  /// them copying) and `warps` a multiple of 4.
  int64_t consumerRegisters = 0;
  /// L2 prefetch distance of state tiles, in CTAs (0: none): thread 0 of
  /// each CTA issues a bulk prefetch into L2 (cp.async.bulk.prefetch.L2,
  /// sm_90) of the state tile of the CTA this many CTAs later in launch
  /// order, so a bandwidth-bound grid keeps DRAM reads in flight beyond what
  /// its resident CTAs' registers hold. Kernels without staged tokens only.
  int64_t statePrefetchDistance = 0;
  /// L2 prefetch distance of staged inputs, in CTAs (0: none): on the
  /// tensor-core solve of a single chunk, thread t < T prefetches token t's
  /// q, k, v rows and gates of the CTA this many later (prefetch.global.L2).
  int64_t inputPrefetchDistance = 0;
  /// Programmatic dependent launch (sm_90; 0: none): the kernel is launched
  /// with programmatic stream serialization, so it may start while the
  /// previous kernel of the stream runs. Each CTA issues its reads of the
  /// sequence's slot (state_indices), token range (cu_seqlens), intermediate
  /// row and initial state before it waits for the previous kernel
  /// (griddepcontrol.wait); every other read and every write come after
  /// (tensor-core CTAs of 4 or more warps load their state after their
  /// staging loads, so after the wait). So only when no kernel that may
  /// still run writes those: the previous kernel and, as a programmatic
  /// kernel lets the next one launch early, every kernel back to the last
  /// one launched without it (a chain of programmatic kernels touches each
  /// state once). Never chosen by the cost model. It lets the next kernel
  /// launch
  /// (griddepcontrol.launch_dependents) at its start (kLaunchAtStart) or once
  /// its recurrence is done, before its state store (kLaunchAfterRecurrence).
  int64_t programmaticLaunch = 0;
  static constexpr int64_t kLaunchAtStart =
      int64_t(LaunchMode::programmatic_at_start);
  static constexpr int64_t kLaunchAfterRecurrence =
      int64_t(LaunchMode::programmatic_after_recurrence);
  /// Staged tokens two at a time, every state sum of both on the state
  /// before the first, so one shuffle tree deep for the pair
  /// (reductions = token_pairs; TokenSteps::tokenPair). Only with staged
  /// tokens in the side-by-side form, no tree and no chunked solve: a pinned
  /// token_pairs elsewhere is built (and reported) as side_by_side. unroll_tokens still counts
  /// tokens, two an iteration of the pair loop.
  bool pairTokens = false;
  int64_t lanesK() const { return kWarpSize / lanesV; }
  /// Warps of the producer: a warp, or a warpgroup with setmaxnreg.
  int64_t producerWarps() const {
    return stages == 0 ? 0 : consumerRegisters > 0 ? 4 : 1;
  }
  /// Threads of a CTA, producer included.
  int64_t threads() const { return (warps + producerWarps()) * kWarpSize; }
  int64_t warpRows() const { return rows * lanesV; }
  int64_t blockRows() const { return rows * lanesV * warps; }
};

/// Whether the producer warp of `s` also computes each staged token's
/// L2-norm factors and k·q (WarpSpecializedKernel::stageNorms), once a CTA instead of
/// once a consumer warp: with a producer that keeps its registers (no
/// consumer_registers: setmaxnreg leaves it 24), tokens in the side-by-side
/// form (reductions = side_by_side) and a decay per head (KDA scales k and q by
/// per-key decays first).
bool producerNorms(RecurrentOp op, const GPUSchedule &s);

/// The largest SM count the cost model takes (sm-count; its products of
/// warps and SMs stay far from overflow): gdn-select-schedule refuses larger
/// ones.
constexpr int64_t kMaxSMCount = 4096;

/// The cost model: the complete #gdn.schedule of `op` on `target` with
/// `smCount` multiprocessors (0: the chip's; at most kMaxSMCount), every
/// parameter `pins` (a #gdn.schedule, may be null) holds kept and every
/// other chosen by the rules of docs/cost-model.md. A pure function that
/// never fails: whether the kernel can take the result is checkGPUSchedule's
/// question.
ScheduleAttr chooseSchedule(RecurrentOp op, const GPUTarget &target,
                            ScheduleAttr pins, int64_t smCount = 0);

/// The legality of `complete` (the op's gdn.schedule, may be null) for `op`
/// on `target`: it must be complete (ScheduleAttr::isComplete; else run
/// gdn-select-schedule first), the shapes must divide, the state tile fit in
/// registers, the staging buffers in shared memory, the grid in its limits,
/// and the chip have the instructions. Returns the kernel builder's view of
/// it, or emits the first failing check's diagnostic on the op.
FailureOr<GPUSchedule> checkGPUSchedule(RecurrentOp op, ScheduleAttr complete,
                                        const GPUTarget &target);

/// The token-loop schedule of a gdn.replay_commit (ReplayToGPU.cpp): the
/// cost model's for its layer-0 recurrence view with `pins` (may be null)
/// over the op's own `gdn.schedule`, and every staging, solve, producer,
/// prefetch and launch parameter fixed to none (the replay runs the plain
/// token loop). Checked with checkGPUSchedule on the view.
FailureOr<ScheduleAttr> selectReplaySchedule(ReplayCommitOp op,
                                             const GPUTarget &target,
                                             ScheduleAttr pins,
                                             int64_t smCount);

/// The #gdn.schedule pinned on `op` (the `gdn.schedule` attribute, which the
/// dialect verifies), or a null attribute.
ScheduleAttr pinnedSchedule(RecurrentOp op);

} // namespace gdn
} // namespace mlir

#endif // GDN_CONVERSION_GDNTOGPU_SCHEDULE_H
