//===- SelectSchedule.cpp - gdn-select-schedule ---------------------------===//
//
// Pins the GPU schedule of every gdn.recurrent as the `gdn.schedule`
// attribute: the pass options and any entries already on the op, the cost
// model (Schedule.cpp) for the rest. convert-gdn-to-gpu builds that kernel.
//
//===----------------------------------------------------------------------===//
#include "gdn/Conversion/GDNToGPU/GPUTarget.h"
#include "gdn/Conversion/GDNToGPU/Schedule.h"
#include "gdn/Conversion/Passes.h"
#include "gdn/Dialect/GDN/IR/GDNOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace gdn {
#define GEN_PASS_DEF_GDNSELECTSCHEDULEPASS
#include "gdn/Conversion/Passes.h.inc"
} // namespace gdn
} // namespace mlir

using namespace mlir;
using namespace mlir::gdn;

namespace {
struct GDNSelectSchedulePass
    : gdn::impl::GDNSelectSchedulePassBase<GDNSelectSchedulePass> {
  using Base::Base;

  void runOnOperation() override {
    WalkResult result = getOperation().walk([&](RecurrentOp op) {
      FailureOr<GPUScheduleOptions> options = scheduleOptionsOf(op);
      if (failed(options))
        return WalkResult::interrupt();
      auto pin = [](int64_t &field, int64_t option) {
        if (option != 0)
          field = option;
      };
      pin(options->rowsPerWarp, rowsPerWarp);
      pin(options->warpsPerBlock, warpsPerBlock);
      pin(options->vLanes, vLanes);
      pin(options->stageTokens, stageTokens);
      pin(options->unrollTokens, unrollTokens);
      pin(options->overlapReductions, overlapReductions);
      pin(options->chunkedSolve, chunkedSolve);
      pin(options->pipelineStages, pipelineStages);
      pin(options->consumerRegisters, consumerRegisters);
      pin(options->l2PrefetchDistance, l2PrefetchDistance);
      pin(options->programmaticLaunch, programmaticLaunch);
      const GPUTarget *target = lookupGPUTarget(chip);
      if (!target) {
        op.emitOpError() << "cannot be lowered to the GPU: unsupported chip '"
                         << chip << "' (supported: " << supportedGPUChips()
                         << ")";
        return WalkResult::interrupt();
      }
      options->smCount = smCount != 0 ? int64_t(smCount) : target->smCount;
      options->bulkAsyncCopies = target->bulkAsyncCopies;
      FailureOr<GPUSchedule> schedule = selectGPUSchedule(op, *options);
      if (failed(schedule))
        return WalkResult::interrupt();
      op->setAttr(kScheduleAttrName, scheduleToAttr(op.getContext(), *schedule));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
