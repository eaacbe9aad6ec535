//===- Schedule.cpp - the GPU schedule of gdn.recurrent -------------------===//
//
// The cost model as one pure function, chooseSchedule: the rules of
// ScheduleMapping.cpp and SchedulePipeline.cpp in the order each reads what
// the ones before chose, giving a complete #gdn.schedule; and the
// conversions between that attribute and the kernel builder's view,
// GPUSchedule. Legality: ScheduleLegality.cpp.
//
//===----------------------------------------------------------------------===//
#include "gdn/Conversion/GDNToGPU/Schedule.h"
#include "ScheduleRules.h"
#include "gdn/Conversion/GDNToGPU/GPUTarget.h"
#include "gdn/Dialect/GDN/IR/GDNOps.h"

#include <cassert>

using namespace mlir;
using namespace mlir::gdn;

ScheduleAttr gdn::chooseSchedule(RecurrentOp op, const GPUTarget &target,
                                 ScheduleAttr pins, int64_t smCount) {
  assert(smCount >= 0 && smCount <= kMaxSMCount && "sm-count out of range");
  ScheduleDraft x(op, target, pins, smCount > 0 ? smCount : target.smCount);
  // The mapping: which solve, then how a warp covers the state tile (the
  // columns a lane first, since the lanes and warps fit around them), then
  // the staged tokens, whose buffers depend on the CTA's columns.
  chooseSolve(x);
  chooseTensorCoreMapping(x);
  chooseColumnsPerLane(x);
  chooseStagedVLanes(x);
  chooseDecodeTwoVLanes(x);
  chooseDecode16ByteSlices(x);
  chooseLanesAlongV(x);
  chooseReductions(x);
  chooseWarps(x);
  chooseStagedTokens(x);
  chooseTokenPairs(x);
  chooseUnrollTokens(x);
  // What overlaps the memory traffic with the math, on that mapping, and
  // where the next kernel may launch (after a producer's recurrence).
  chooseConsumerRegisters(x);
  chooseProducerStages(x);
  chooseStatePrefetchDistance(x);
  chooseInputPrefetchDistance(x);
  chooseLaunch(x);
  return toScheduleAttr(op.getContext(), x.s);
}

bool gdn::producerNorms(RecurrentOp op, const GPUSchedule &s) {
  return s.stages > 0 && s.consumerRegisters == 0 && s.overlapReductions &&
         !s.chunkedSolve && !op.hasPerKeyDecay();
}

ScheduleAttr gdn::toScheduleAttr(MLIRContext *context, const GPUSchedule &s) {
  Reductions reductions = s.pairTokens          ? Reductions::token_pairs
                          : s.overlapReductions ? Reductions::side_by_side
                                                : Reductions::in_turn;
  return ScheduleAttr::get(
      context, s.rows, s.lanesV, s.warps, s.chunk, s.unroll,
      ReductionsAttr::get(context, reductions),
      ChunkSolveAttr::get(context, ChunkSolve(s.chunkedSolve)), s.stages,
      s.consumerRegisters, s.statePrefetchDistance, s.inputPrefetchDistance,
      LaunchModeAttr::get(context, LaunchMode(s.programmaticLaunch)));
}

GPUSchedule gdn::toGPUSchedule(RecurrentOp op, ScheduleAttr complete) {
  assert(complete && complete.isComplete() && "an incomplete schedule");
  GPUSchedule s{*complete.getColumnsPerLane(),
                *complete.getWarps(),
                *complete.getLanesAlongV(),
                keysPerLane(op, *complete.getLanesAlongV()),
                *complete.getStagedTokens(),
                *complete.getUnrollTokens(),
                /*overlapReductions=*/false,
                int64_t(complete.getSolve().getValue())};
  Reductions reductions = complete.getReductions().getValue();
  // KDA (a per-key decay or per-channel beta) is built side by side only.
  s.overlapReductions = reductions != Reductions::in_turn ||
                        op.hasPerKeyDecay() || op.hasPerChannelBeta();
  s.stages = *complete.getProducerStages();
  s.consumerRegisters = *complete.getConsumerRegisters();
  s.statePrefetchDistance = *complete.getStatePrefetchDistance();
  s.inputPrefetchDistance = *complete.getInputPrefetchDistance();
  s.programmaticLaunch = int64_t(complete.getLaunch().getValue());
  // Elsewhere token_pairs are side by side (the enum's meaning).
  s.pairTokens = reductions == Reductions::token_pairs && pairableTokens(op, s);
  return s;
}

ScheduleAttr gdn::pinnedSchedule(RecurrentOp op) {
  return op->getAttrOfType<ScheduleAttr>(GDNDialect::kScheduleAttrName);
}
