//===- ScheduleShapes.cpp - what a schedule's shapes cost and allow -------===//
//
// Shared memory of the staging buffers and a producer's ring (their one
// layout: StagingLayout.h), what bulk
// copies and the L2 state prefetch need of the operands, the tiny-grid and
// fp32-verify regimes: facts the cost model's rules (Schedule.cpp,
// SchedulePipeline.cpp) and their checks read.
//
//===----------------------------------------------------------------------===//
#include "ScheduleRules.h"
#include "StagingLayout.h"
#include "gdn/Conversion/GDNToGPU/GPUTarget.h"
#include "gdn/Dialect/GDN/IR/GDNOps.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::gdn;

/// A grid so small that warps of 8 V columns fill at most an eighth of the
/// target (N * HV <= 32 at V = 128 on 132 SMs, e.g. N = 1 at HV = 32): one
/// token chain a warp is all the machine runs, so latency decides.
bool gdn::tinyGrid(RecurrentOp op, int64_t targetWarps) {
  auto d = op.getDims();
  return d.N * d.HV * ((d.V + 7) / 8) <= targetWarps / 8;
}

int64_t gdn::stagingBytes(RecurrentOp op, const GPUSchedule &s, int64_t chunk) {
  return stagingLayout(op, s, chunk, /*slots=*/1).bytes();
}

/// Shared memory of a producer's ring of `stages` slots: each slot's staging
/// buffers and its two mbarriers.
int64_t gdn::ringBytes(RecurrentOp op, GPUSchedule s, int64_t stages) {
  s.stages = stages;
  return stagingLayout(op, s, s.chunk, stages).bytes() + stages * 16;
}

/// Bytes of one element of `x` (either form: gdn-select-schedule also runs
/// before bufferization).
int64_t gdn::elementBytes(Value x) {
  return cast<ShapedType>(x.getType()).getElementTypeBitWidth() / 8;
}

/// Whether cp.async.bulk can move a token's q and k rows and the CTA's
/// columns of v: 16-byte multiples from 16-byte aligned buffers (which the C
/// API guarantees). Rows of 16-byte multiples start on 16 bytes in any layout
/// the verifier accepts (OperandLayouts.h: each stride is then a multiple of
/// 16 bytes).
bool gdn::bulkCopies(RecurrentOp op, const GPUSchedule &s) {
  auto d = op.getDims();
  return (d.K * elementBytes(op.getQ())) % 16 == 0 &&
         (d.V * elementBytes(op.getV())) % 16 == 0 &&
         (s.blockRows() * elementBytes(op.getV())) % 16 == 0;
}

/// Whether every slot of a state pool starts on 16 bytes, as an identity
/// layout's does when its tiles are 16-byte multiples: a pitch (a Slots
/// layout) must then be a multiple of 16 bytes too.
bool gdn::alignedSlots(Value state) {
  auto type = dyn_cast<MemRefType>(state.getType());
  if (!type || type.getLayout().isIdentity())
    return true;
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(type.getStridesAndOffset(strides, offset)) &&
         (type.getDimSize(0) == 1 ||
          (strides[0] * elementBytes(state)) % 16 == 0);
}

/// Verify of a chain (no EAGLE tree) in vk writing fp32 per-token states,
/// the only buffer dtype of FlashInfer's gated_delta_rule_mtp and what
/// SGLang's FlashInfer verify runs on Hopper. Its staged kernel keeps one
/// lane along V (4 or 8 columns a lane, each a 512-byte row of the step's
/// state a warp) and no producer warp: faster than the 2 x 4 / 4 x 2 split
/// and the producer of the bf16 verify at every N measured (H200, HV = 32,
/// cold, bench_gdn "one_v_lane" vs default): T = 4 N = 1 / 8 / 64 / 256
/// 8.73 -> 5.74 / 29.24 -> 26.01 / 185.87 -> 180.70 / 717.57 -> 710.19 us,
/// T = 12 19.80 -> 10.30 / 65.60 -> 59.50 / 486.16 -> 479.36 / 1928.86 ->
/// 1902.46 (docs/cost-model.md#fp32-verify-one-v-lane). Trees, KDA
/// and kv are unmeasured and keep the bf16 rules.
bool gdn::fp32StepStates(RecurrentOp op) {
  Value inter = op.getIntermediateStates();
  return inter && elementBytes(inter) == 4 && op.isVKLayout() &&
         !op.hasParentTable() && !op.hasPerKeyDecay() &&
         !op.hasPerChannelBeta();
}
