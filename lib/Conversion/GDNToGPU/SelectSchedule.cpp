//===- SelectSchedule.cpp - gdn-select-schedule ---------------------------===//
//
// Pins the GPU schedule of every gdn.recurrent as a complete #gdn.schedule
// in its `gdn.schedule` attribute: the option's parameters, then any the op
// already has, the cost model (chooseSchedule) for the rest, refused here
// already where the kernel cannot take it (checkGPUSchedule).
// convert-gdn-to-gpu builds that kernel. A gdn.replay_commit gets the
// token-loop schedule of its recurrence view (selectReplaySchedule).
//
//===----------------------------------------------------------------------===//
#include "gdn/Conversion/GDNToGPU/GPUTarget.h"
#include "gdn/Conversion/GDNToGPU/Schedule.h"
#include "gdn/Conversion/Passes.h"
#include "gdn/Dialect/GDN/IR/GDNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
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
    const GPUTarget *target = lookupGPUTarget(chip);
    ScheduleAttr pins;
    if (!StringRef(schedule).trim().empty()) {
      std::string error;
      pins = ScheduleAttr::parseText(schedule, &getContext(), error);
      if (!pins) {
        emitError(getOperation().getLoc())
            << "gdn-select-schedule: option schedule = " << error;
        return signalPassFailure();
      }
    }
    WalkResult result = getOperation().walk([&](RecurrentOp op) {
      if (!target) {
        op.emitOpError() << "cannot be lowered to the GPU: unsupported chip '"
                         << chip << "' (supported: " << supportedGPUChips()
                         << ")";
        return WalkResult::interrupt();
      }
      int64_t sms = smCount;
      if (sms < 0 || sms > kMaxSMCount) {
        op.emitOpError() << "cannot be lowered to the GPU: sm-count = " << sms
                         << " must be in [0, " << kMaxSMCount << "]";
        return WalkResult::interrupt();
      }
      if (failed(checkGPUOperandSizes(op)))
        return WalkResult::interrupt();
      // The option's parameters over the op's own.
      ScheduleAttr complete = selectSchedule(op, *target, pins, sms);
      if (failed(checkGPUSchedule(op, complete, *target)))
        return WalkResult::interrupt();
      op->setAttr(GDNDialect::kScheduleAttrName, complete);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    // A replay commit takes the token loop of its recurrence view.
    result = getOperation().walk([&](ReplayCommitOp op) {
      if (!target || smCount < 0 || smCount > kMaxSMCount) {
        op.emitOpError() << "cannot be lowered to the GPU: unsupported chip '"
                         << chip << "' or sm-count " << smCount;
        return WalkResult::interrupt();
      }
      if (failed(checkGPUOperandSizes(op)))
        return WalkResult::interrupt();
      FailureOr<ScheduleAttr> complete =
          selectReplaySchedule(op, *target, pins, smCount);
      if (failed(complete))
        return WalkResult::interrupt();
      op->setAttr(GDNDialect::kScheduleAttrName, *complete);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
