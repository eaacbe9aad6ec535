//===- ScheduleShapes.cpp - what a schedule's shapes cost and allow -------===//
//
// Shared memory of the staging buffers and a producer's ring (their one
// layout: StagingLayout.h), what bulk
// copies and the L2 prefetches need of the operands, the tiny-grid and
// fp32-verify regimes: facts the cost model's rules (ScheduleMapping.cpp,
// SchedulePipeline.cpp) and the legality checks (ScheduleLegality.cpp)
// read, one definition each.
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

int64_t gdn::stagingBytes(RecurrentOp op, ScheduleAttr s, int64_t chunk) {
  // The buffers alone, not a producer's norm rows (ringBytes).
  s = s.with(&ScheduleAttr::getProducerStages, 0);
  return stagingLayout(op, s, chunk, /*slots=*/1).bytes();
}

int64_t gdn::chunkPrefetchBytes(RecurrentOp op, ScheduleAttr s) {
  return stagingLayout(op, s, *s.getStagedTokens(), 1).prefetchedBytes(16);
}

/// Shared memory of a producer's ring of `stages` slots: each slot's staging
/// buffers and its two mbarriers.
int64_t gdn::ringBytes(RecurrentOp op, ScheduleAttr s, int64_t stages) {
  s = s.with(&ScheduleAttr::getProducerStages, stages);
  return stagingLayout(op, s, *s.getStagedTokens(), stages).bytes() +
         stages * 16;
}

int64_t gdn::elementBytes(Value x) {
  return cast<ShapedType>(x.getType()).getElementTypeBitWidth() / 8;
}

int64_t gdn::keysPerLane(RecurrentOp op, int64_t lanesV) {
  if (lanesV < 1 || lanesV > kWarpSize)
    return 0;
  return op.getDims().K / (kWarpSize / lanesV);
}

/// None for a single token (staging would only add a barrier); else up to
/// 16 (fixed T) or 8 (varlen, where most sequences are short), one
/// gate-computing thread a token.
int64_t gdn::defaultStagedTokens(RecurrentOp op) {
  auto d = op.getDims();
  if (!op.isVarlen() && d.T == 1)
    return 0;
  return op.isVarlen() ? 8 : std::min<int64_t>(d.T, 16);
}

/// Whether cp.async.bulk can move a token's q and k rows and the CTA's
/// columns of v: 16-byte multiples from 16-byte aligned buffers (which the C
/// API guarantees). Rows of 16-byte multiples start on 16 bytes in any layout
/// the verifier accepts (OperandLayouts.h: each stride is then a multiple of
/// 16 bytes).
bool gdn::bulkCopies(RecurrentOp op, ScheduleAttr s) {
  auto d = op.getDims();
  return (d.K * elementBytes(op.getQ())) % 16 == 0 &&
         (d.V * elementBytes(op.getV())) % 16 == 0 &&
         (s.blockColumns() * elementBytes(op.getV())) % 16 == 0;
}

bool gdn::bf16QueriesAndKeys(RecurrentOp op) {
  auto isBF16 = [](Value x) {
    return cast<ShapedType>(x.getType()).getElementType().isBF16();
  };
  return isBF16(op.getQ()) && isBF16(op.getK());
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
/// lane along V and no producer warp
/// (docs/cost-model.md#fp32-verify-one-v-lane); trees, KDA and kv are
/// unmeasured and keep the bf16 rules.
bool gdn::fp32StepStates(RecurrentOp op) {
  Value inter = op.getIntermediateStates();
  return inter && elementBytes(inter) == 4 && op.isVKLayout() &&
         !op.hasParentTable() && !op.hasPerKeyDecay() &&
         !op.hasPerChannelBeta();
}

/// Whether `op` stores e4m3 per-token states in vk (a chain or a tree),
/// each step's rows quantized with their scales
/// (docs/cost-model.md#e4m3-step-states).
bool gdn::e4m3StepStates(RecurrentOp op) {
  Value inter = op.getIntermediateStates();
  return inter && elementBytes(inter) == 1 && op.isVKLayout();
}

/// The state is read once, up front (no staged tokens, tensor cores or
/// producer), from an initial state in vk whose CTA tile (blockColumns() whole
/// rows of K) is one contiguous run of 16-byte multiples
/// (cp.async.bulk.prefetch.L2), in a fixed batch (the grid is (V blocks, HV,
/// N) in launch order).
bool gdn::statePrefetchable(RecurrentOp op, ScheduleAttr s) {
  Value init = op.getInitialState();
  return *s.getStagedTokens() == 0 && !s.tensorCores() &&
         *s.getProducerStages() == 0 && init && op.isVKLayout() &&
         !op.isVarlen() && alignedSlots(init) &&
         (s.blockColumns() * op.getDims().K * elementBytes(init)) % 16 == 0;
}

/// The tensor-core solve of a single chunk with a fixed batch
/// (KernelFeatures::prefetchLaterInputs: rows of q, k, v and the gates, in
/// any layout the verifier accepts).
bool gdn::inputsPrefetchable(RecurrentOp op, ScheduleAttr s) {
  return s.tensorCores() && *s.getProducerStages() == 0 && !op.isVarlen() &&
         op.getDims().T <= *s.getStagedTokens();
}

bool gdn::pairableTokens(RecurrentOp op, ScheduleAttr s) {
  return s.sideBySide() && *s.getStagedTokens() > 0 && !s.chunkedSolve() &&
         !op.hasParentTable();
}

int64_t gdn::segmentTokens(RecurrentOp op, ScheduleAttr s) {
  int64_t C = *s.getStagedTokens();
  return llvm::alignTo(llvm::divideCeil(op.getDims().T, *s.getSegments()), C);
}
