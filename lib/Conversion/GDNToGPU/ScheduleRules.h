//===- ScheduleRules.h - the cost model's shared pieces ----------*- C++ -*-===//
//
// Private to the GPU cost model (Schedule.cpp, SchedulePipeline.cpp,
// ScheduleShapes.cpp): the facts its rules read and the rules that run after
// the thread-to-data mapping is chosen. Measurements: docs/cost-model.md.
//
//===----------------------------------------------------------------------===//
#ifndef GDN_LIB_CONVERSION_GDNTOGPU_SCHEDULERULES_H
#define GDN_LIB_CONVERSION_GDNTOGPU_SCHEDULERULES_H

#include "gdn/Conversion/GDNToGPU/Schedule.h"

namespace mlir {
namespace gdn {
struct GPUTarget;

/// Bytes of one element of `x` (either form: gdn-select-schedule also runs
/// before bufferization).
int64_t elementBytes(Value x);
/// A grid so small that warps of 8 V columns fill at most an eighth of
/// `targetWarps`: latency decides.
bool tinyGrid(RecurrentOp op, int64_t targetWarps);
/// Shared memory of `chunk` staged tokens under `s`.
int64_t stagingBytes(RecurrentOp op, const GPUSchedule &s, int64_t chunk);
/// Shared memory of a producer's ring of `stages` slots.
int64_t ringBytes(RecurrentOp op, GPUSchedule s, int64_t stages);
/// Whether cp.async.bulk can move a token's q and k rows and the CTA's
/// columns of v.
bool bulkCopies(RecurrentOp op, const GPUSchedule &s);
/// Whether every slot of a state pool starts on 16 bytes.
bool alignedSlots(Value state);
/// Verify of a chain in vk writing fp32 per-token states (FlashInfer's MTP
/// regime).
bool fp32StepStates(RecurrentOp op);

/// The producer warp of `s` (producer_stages, consumer_registers) and its
/// checks.
LogicalResult selectWarpSpecialization(RecurrentOp op, ScheduleAttr pins,
                                       const GPUTarget &target,
                                       int64_t targetWarps, GPUSchedule &s);
/// The L2 prefetches (state_prefetch_distance, input_prefetch_distance) and
/// their checks; `streaming`: the bandwidth-bound 2-byte decode.
LogicalResult selectPrefetch(RecurrentOp op, ScheduleAttr pins,
                             const GPUTarget &target, bool streaming,
                             int64_t sms, GPUSchedule &s);

} // namespace gdn
} // namespace mlir

#endif // GDN_LIB_CONVERSION_GDNTOGPU_SCHEDULERULES_H
