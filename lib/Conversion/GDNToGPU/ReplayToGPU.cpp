//===- ReplayToGPU.cpp - gdn.replay_commit to the token-loop kernel ------===//
//
// A replay commit is the token loop of its recurrence view (ReplayView.h):
// the same pieces, the same arithmetic a plain gdn.recurrent of the accepted
// tokens runs with that schedule, over a grid whose z covers every (layer,
// row): one launch for all layers (KernelForms.h).
//
//===----------------------------------------------------------------------===//
#include "KernelForms.h"
#include "gdn/Conversion/GDNToGPU/GPUTarget.h"
#include "gdn/Conversion/GDNToGPU/VerifyMode.h"
#include "gdn/Conversion/ReplayView.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace mlir::gdn;

namespace {
/// The largest grid z (layers * N) of a launch.
constexpr int64_t kMaxGridZ = 65535;

/// Runs `body` on the layer-0 recurrence view of `op`, built before the op
/// and erased after.
template <typename Result>
Result withHostView(ReplayCommitOp op, function_ref<Result(RecurrentOp)> body) {
  OpBuilder b(op);
  Value layer0 = arith::ConstantIndexOp::create(b, op.getLoc(), 0);
  SmallVector<Value> operands = replayOperands(op);
  RecurrentOp view = buildReplayView(b, op, operands, layer0);
  Result result = body(view);
  eraseReplayView(view);
  return result;
}

/// What a replay's token loop takes: at most kMaxReplaySteps steps
/// (VerifyMode.h: it unrolls every step, TokenLoopKernel::replayTokens), and
/// not reductions = mma, a decode's form (MmaDecode.cpp).
LogicalResult checkReplayTokenLoop(ReplayCommitOp op, ScheduleAttr s) {
  if (int64_t L = op.getDims().L; L > kMaxReplaySteps)
    return op.emitOpError()
           << "cannot be lowered to the GPU: windows of L = " << L
           << " steps; its replay unrolls every step, at most "
           << kMaxReplaySteps;
  if (!s.mmaReductions())
    return success();
  return op.emitOpError() << "cannot be lowered to the GPU: reductions = mma "
                             "is the e4m3 decode's form; a replay runs the "
                             "token loop (in_turn, side_by_side or "
                             "token_pairs)";
}

/// checkGPUSchedule of the replay's recurrence view, its refusals reported
/// on the replay (the view is internal: its name and generic form would
/// only confuse), each once, without the view's notes.
LogicalResult checkViewSchedule(ReplayCommitOp op, RecurrentOp view,
                                ScheduleAttr s, const GPUTarget &target) {
  SmallVector<std::string> refusals;
  LogicalResult checked = success();
  {
    ScopedDiagnosticHandler capture(op.getContext(), [&](Diagnostic &diag) {
      if (diag.getSeverity() != DiagnosticSeverity::Error)
        return failure(); // to the handlers outside
      std::string full = diag.str();
      StringRef text = full;
      text.consume_front(("'" + view->getName().getStringRef() + "' op ").str());
      refusals.push_back(text.str());
      return success();
    });
    checked = checkGPUSchedule(view, s, target);
  }
  for (const std::string &refusal : refusals)
    op.emitOpError() << refusal;
  return checked;
}

/// The parameters a replay never takes: it runs the plain token loop
/// (docs/cost-model.md#replay-commit-token-loop).
ScheduleAttr tokenLoopPins(MLIRContext *context) {
  return ScheduleAttr::get(context)
      .with(&ScheduleAttr::getStagedTokens, 0)
      .with(&ScheduleAttr::getUnrollTokens, 1)
      .with(&ScheduleAttr::getSolve, ChunkSolve::token_by_token)
      .with(&ScheduleAttr::getProducerStages, 0)
      .with(&ScheduleAttr::getConsumerRegisters, 0)
      .with(&ScheduleAttr::getStatePrefetchDistance, 0)
      .with(&ScheduleAttr::getInputPrefetchDistance, 0)
      .with(&ScheduleAttr::getChunkPrefetchDistance, 0)
      .with(&ScheduleAttr::getLaunch, LaunchMode::ordinary)
      .with(&ScheduleAttr::getSegments, 1);
}

/// A bandwidth-bound replay onto an f32 state (a layer's rows x HV x V/8 at
/// least 8 x 4096 warps of 8 columns on 132 SMs, N >= 64 at HV = 32): CTAs
/// of 4 warps, 4 columns on one lane, reductions side by side, where the
/// view's mapping takes one-warp CTAs of 8 columns, 4x the CTAs a round
/// pays for even when it replays nothing (docs/cost-model.md#replay-commit-
/// token-loop). The caller's pins win.
ScheduleAttr replayMapping(ReplayCommitOp op, const GPUTarget &target,
                           int64_t smCount, ScheduleAttr wanted) {
  ReplayCommitOp::Dims d = op.getDims();
  int64_t sms = smCount > 0 ? smCount : target.smCount;
  auto state = cast<ShapedType>(op.getState().getType());
  if (state.getElementTypeBitWidth() != 32 || d.V % 16 != 0 ||
      d.N * d.HV * (d.V / 8) < 8 * 4096 * sms / 132 ||
      wanted.getColumnsPerLane() || wanted.getLanesAlongV() ||
      wanted.getWarps() || wanted.getReductions())
    return wanted;
  return ScheduleAttr::get(op.getContext())
      .with(&ScheduleAttr::getColumnsPerLane, 4)
      .with(&ScheduleAttr::getLanesAlongV, 1)
      .with(&ScheduleAttr::getWarps, 4)
      .with(&ScheduleAttr::getReductions, Reductions::side_by_side)
      .pinnedBy(wanted);
}
} // namespace

FailureOr<ScheduleAttr> gdn::selectReplaySchedule(ReplayCommitOp op,
                                                  const GPUTarget &target,
                                                  ScheduleAttr pins,
                                                  int64_t smCount) {
  MLIRContext *context = op.getContext();
  auto own = op->getAttrOfType<ScheduleAttr>(GDNDialect::kScheduleAttrName);
  ScheduleAttr wanted = own ? own : ScheduleAttr::get(context);
  if (pins)
    wanted = wanted.pinnedBy(pins);
  wanted = replayMapping(op, target, smCount,
                         wanted.pinnedBy(tokenLoopPins(context)));
  return withHostView<FailureOr<ScheduleAttr>>(
      op, [&](RecurrentOp view) -> FailureOr<ScheduleAttr> {
        ScheduleAttr complete = chooseSchedule(view, target, wanted, smCount);
        if (failed(checkReplayTokenLoop(op, complete)) ||
            failed(checkViewSchedule(op, view, complete, target)))
          return failure();
        return complete;
      });
}

LogicalResult
gdn::lowerReplayCommitToGPU(ReplayCommitOp op, const GPUTarget &target,
                            const KernelModuleOf &kernelModuleOf) {
  auto complete =
      op->getAttrOfType<ScheduleAttr>(GDNDialect::kScheduleAttrName);
  if (!complete || !complete.isComplete() ||
      complete != complete.pinnedBy(tokenLoopPins(op.getContext())))
    return op.emitOpError()
           << "cannot be lowered to the GPU without the complete token-loop "
              "schedule gdn-select-schedule attaches; run it first";
  FailureOr<ScheduleAttr> s =
      withHostView<FailureOr<ScheduleAttr>>(op, [&](RecurrentOp view) {
        return checkGPUSchedule(view, complete, target);
      });
  if (failed(s) || failed(checkReplayTokenLoop(op, *s)))
    return failure();
  ReplayCommitOp::Dims d = op.getDims();
  if (d.layers * d.N > kMaxGridZ)
    return op.emitOpError()
           << "cannot be lowered to the GPU: layers * N = " << d.layers << " * "
           << d.N << " grid rows exceed the launch limit of " << kMaxGridZ;

  gpu::GPUFuncOp kernel = createKernelFunc(op, *s, kernelModuleOf, "replay");
  Location loc = op.getLoc();
  OpBuilder b = OpBuilder::atBlockBegin(&kernel.getBody().front());
  // z = layer * N + n: the layer's views, then the token loop of row n.
  Value z = gpu::BlockIdOp::create(b, loc, gpu::Dimension::z);
  Value layer = arith::DivUIOp::create(
      b, loc, z, arith::ConstantIndexOp::create(b, loc, d.N));
  // The kernel's arguments are the op's operands: null for absent ones.
  SmallVector<Value> args(kernel.getArguments());
  if (!op.getStateIndices())
    args.insert(args.begin() + 5, Value());
  if (!op.getRetrieveParentToken())
    args.insert(args.begin() + 6, Value());
  if (!op.getStateScale())
    args.insert(args.begin() + 7, Value());
  RecurrentOp view = buildReplayView(b, op, args, layer);
  TokenLoopKernel form(b, loc, view, *s, kernel);
  form.setReplay(replayRows(op, args[4], args[6]));
  form.build();
  view->erase();
  gpu::ReturnOp::create(b, loc);

  OpBuilder host(op);
  auto idx = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(host, loc, v);
  };
  gpu::KernelDim3 grid{idx(d.V / s->blockColumns()), idx(d.HV),
                       idx(d.layers * d.N)};
  gpu::KernelDim3 block{idx(s->threads()), idx(1), idx(1)};
  gpu::LaunchFuncOp::create(host, loc, kernel, grid, block,
                            /*dynamicSharedMemorySize=*/Value(),
                            op->getOperands());
  op->erase();
  return success();
}
