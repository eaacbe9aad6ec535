//===- Schedule.cpp - the GPU schedule of gdn.recurrent -------------------===//
//
// The cost model as one pure function, chooseSchedule: the rules of
// ScheduleMapping.cpp and SchedulePipeline.cpp in the order each reads what
// the ones before chose, giving a complete #gdn.schedule; and the schedule a
// kernel is built with (resolvedSchedule). Legality: ScheduleLegality.cpp.
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
  // The mapping (which solve, then how a warp covers the state tile, then
  // the staged tokens), then what overlaps the memory traffic with the math
  // on that mapping, and where the next kernel may launch: each list in the
  // order its file gives.
  for (ArrayRef<ScheduleRule> rules : {mappingRules(), pipelineRules()})
    for (ScheduleRule rule : rules)
      rule(x);
  return x.s;
}

bool gdn::producerNorms(RecurrentOp op, ScheduleAttr s) {
  return *s.getProducerStages() > 0 && *s.getConsumerRegisters() == 0 &&
         s.sideBySide() && !s.chunkedSolve() && !op.hasPerKeyDecay();
}

ScheduleAttr gdn::resolvedSchedule(RecurrentOp op, ScheduleAttr complete) {
  assert(complete && complete.isComplete() && "an incomplete schedule");
  // KDA (a per-key decay or per-channel beta) is built side by side only;
  // elsewhere token_pairs are side by side (the enum's meaning).
  if (!complete.sideBySide() && (op.hasPerKeyDecay() || op.hasPerChannelBeta()))
    return complete.with(&ScheduleAttr::getReductions,
                         Reductions::side_by_side);
  if (complete.tokenPairs() && !pairableTokens(op, complete))
    return complete.with(&ScheduleAttr::getReductions,
                         Reductions::side_by_side);
  return complete;
}

ScheduleAttr gdn::pinnedSchedule(RecurrentOp op) {
  return op->getAttrOfType<ScheduleAttr>(GDNDialect::kScheduleAttrName);
}

ScheduleAttr gdn::selectSchedule(RecurrentOp op, const GPUTarget &target,
                                 ScheduleAttr pins, int64_t smCount) {
  ScheduleAttr own = pinnedSchedule(op);
  return chooseSchedule(op, target, own ? own.pinnedBy(pins) : pins, smCount);
}
