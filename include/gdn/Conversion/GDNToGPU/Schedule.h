//===- Schedule.h - GPU schedule of gdn.recurrent, its cost model -*- C++
//-*-===//
//
// The thread-to-data mapping of a gdn.recurrent GPU kernel, chosen by a cost
// model measured on the H200 (docs/cost-model.md) or pinned by a
// #gdn.schedule, and carried from gdn-select-schedule (chooseSchedule, then
// checkGPUSchedule) to convert-gdn-to-gpu (checkGPUSchedule only) as the
// discardable attribute `gdn.schedule` on the op.
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

/// Lanes of a warp (ScheduleAttr's, which derives lanes along K from it).
constexpr int64_t kWarpSize = ScheduleAttr::kWarpSize;
/// Registers a producer thread keeps under setmaxnreg (the instruction's
/// minimum: the producer only issues copies and computes gates).
constexpr int64_t kProducerRegisters = 24;

// A kernel's schedule is a complete #gdn.schedule (ScheduleAttr::isComplete):
// one CTA per (sequence n, value head hv, block of blockColumns() V columns);
// a warp's lanes split lanes_along_v along V and lanesAlongK() along K, each
// lane holding columns_per_lane V columns x K / lanesAlongK() key rows of the
// state in registers. The kernel builder reads its parameters through the
// generated getters and its derived values through the attribute's own
// accessors (GDNAttrs.td); nothing copies it into another type.

/// Whether the producer warp of `s` also computes each staged token's
/// L2-norm factors and k·q (WarpSpecializedKernel::stageNorms), once a CTA instead of
/// once a consumer warp: with a producer that keeps its registers (no
/// consumer_registers: setmaxnreg leaves it 24), tokens in the side-by-side
/// form (reductions = side_by_side) and a decay per head (KDA scales k and q by
/// per-key decays first).
bool producerNorms(RecurrentOp op, ScheduleAttr s);

/// The largest SM count the cost model takes (sm-count; its products of
/// warps and SMs stay far from overflow): gdn-select-schedule refuses larger
/// ones.
constexpr int64_t kMaxSMCount = 4096;

/// The most elements an operand (and so any one dimension) of an op the GPU
/// lowering takes may have: 2^40, the runner's limit in bytes. The cost model
/// and the kernel builders multiply a few of the op's sizes and schedule
/// parameters (at most 2^20), which then stays far from int64 overflow.
constexpr int64_t kMaxGPUOperandElements = int64_t(1) << 40;

/// Refuses `op` (a gdn.recurrent, gdn.commit or gdn.replay_commit) with a
/// diagnostic when one of its operands has a dimension or a number of
/// elements past kMaxGPUOperandElements; gdn-select-schedule and
/// convert-gdn-to-gpu check it before any arithmetic on the op's sizes.
LogicalResult checkGPUOperandSizes(Operation *op);

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
/// and the chip have the instructions. Returns the schedule the kernel is
/// built with (resolvedSchedule), or emits the first failing check's
/// diagnostic on the op.
FailureOr<ScheduleAttr> checkGPUSchedule(RecurrentOp op, ScheduleAttr complete,
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

/// The complete schedule gdn-select-schedule gives `op`: its own pinned
/// parameters (pinnedSchedule) under the pass option's `pins` (may be
/// null), the rest chosen by chooseSchedule. Unchecked (checkGPUSchedule).
ScheduleAttr selectSchedule(RecurrentOp op, const GPUTarget &target,
                            ScheduleAttr pins, int64_t smCount = 0);

} // namespace gdn
} // namespace mlir

#endif // GDN_CONVERSION_GDNTOGPU_SCHEDULE_H
