//===- BufferizableOpInterfaceImpl.cpp - gdn bufferization ----------------===//
//
// One-shot bufferization of gdn.recurrent: the tensor form (destination style,
// inits `final_state` and `o`) becomes the memref form, whose inits' buffers
// replace the results.
//
// Reads and writes, as the analysis sees them:
// - every input (q, k, v, gating, beta, initial_state) is read;
// - without a pool or cu_seqlens the inits are written in full and never
//   read, so an out-of-place init is a fresh allocation without a copy, and
//   `tensor.empty` is a fine init; with either the op writes them only in
//   part (RecurrentOp::writesInitsInPart: unnamed slots, padding rows,
//   tokens past the sequences keep their values), so they are read too and
//   an out-of-place init is a copy of it;
// - the read of `initial_state` and the write of `final_state` do not
//   conflict when both are the same buffer: every kernel reads the part of
//   the state it owns before it writes it (a CTA its tile on the GPU, a head
//   on the CPU). So `initial_state(%s) final_state(%s)` updates %s in place
//   when nothing reads %s afterwards. Any other overlap is a conflict and
//   gets a copy.
//
// A buffer whose layout its operand accepts (OperandLayouts.h: static
// strides, e.g. a static subview of a fused projection) is used in place.
// Any other layout (a function argument bufferized with a fully dynamic
// layout, a subview with dynamic offsets) is copied into a contiguous buffer
// before the op and, for an init, copied back after it.
//
//===----------------------------------------------------------------------===//
#include "gdn/Dialect/GDN/Transforms/BufferizableOpInterfaceImpl.h"
#include "gdn/Dialect/GDN/IR/GDNDialect.h"
#include "gdn/Dialect/GDN/IR/GDNOps.h"
#include "gdn/Dialect/GDN/IR/OperandLayouts.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/DstBufferizableOpInterfaceImpl.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::bufferization;
using namespace mlir::gdn;

namespace {

/// The OpOperand of an optional operand, or null when it is absent.
OpOperand *getOptionalOperand(MutableOperandRange range) {
  return range.empty() ? nullptr : &range[0];
}

/// The buffers of `op`'s tensor operands and the buffers its memref form gets
/// in their place: the same buffer when its operand accepts its layout, else
/// a fresh contiguous allocation, into which the operand is copied when
/// `copyIn(operand)` (it is read).
struct OperandBuffers {
  DenseMap<Value, Value> buffers, contiguous;
  Value get(Value tensor) const {
    return tensor ? contiguous.lookup(tensor) : Value();
  }
};

FailureOr<OperandBuffers>
bufferizeOperands(Operation *op, RewriterBase &rewriter,
                  const BufferizationOptions &options, BufferizationState &state,
                  function_ref<bool(OpOperand &)> copyIn) {
  OperandBuffers result;
  Location loc = op->getLoc();
  for (OpOperand &operand : op->getOpOperands()) {
    Value tensor = operand.get();
    if (result.buffers.count(tensor))
      continue;
    FailureOr<Value> buffer = getBuffer(rewriter, tensor, options, state);
    if (failed(buffer))
      return failure();
    auto type = dyn_cast<MemRefType>(buffer->getType());
    if (!type)
      return op->emitOpError()
             << "operand #" << operand.getOperandNumber() << " bufferizes to "
             << buffer->getType() << "; the memref form needs a memref";
    result.buffers[tensor] = *buffer;
    result.contiguous[tensor] = *buffer;
    if (checkOperandLayout(type, getOperandLayout(operand)).empty())
      continue;
    auto contiguousType =
        MemRefType::get(type.getShape(), type.getElementType(),
                        MemRefLayoutAttrInterface(), type.getMemorySpace());
    FailureOr<Value> copy =
        options.createAlloc(rewriter, loc, contiguousType, ValueRange{});
    if (failed(copy))
      return failure();
    if (copyIn(operand) &&
        failed(options.createMemCpy(rewriter, loc, *buffer, *copy)))
      return failure();
    result.contiguous[tensor] = *copy;
  }
  return result;
}

/// Replaces `op` by the buffers of its inits, after `newOp` (its memref form)
/// wrote them, copying back the ones that were strided.
LogicalResult replaceWithInitBuffers(Operation *op, Operation *newOp,
                                     ValueRange inits,
                                     const OperandBuffers &operands,
                                     RewriterBase &rewriter,
                                     const BufferizationOptions &options) {
  newOp->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  rewriter.setInsertionPointAfter(newOp);
  SmallVector<Value> results;
  for (Value init : inits) {
    Value buffer = operands.buffers.lookup(init);
    Value written = operands.contiguous.lookup(init);
    if (written != buffer &&
        failed(options.createMemCpy(rewriter, op->getLoc(), written, buffer)))
      return failure();
    results.push_back(buffer);
  }
  replaceOpWithBufferizedValues(rewriter, op, results);
  return success();
}

/// Whether `op` reads `operand`: every input, and its inits (final_state,
/// o) where it writes them only in part.
bool readsOperand(RecurrentOp op, OpOperand &operand) {
  return !op.isDpsInit(&operand) || op.writesInitsInPart();
}

struct RecurrentOpInterface
    : DstBufferizableOpInterfaceExternalModel<RecurrentOpInterface,
                                              RecurrentOp> {
  bool bufferizesToMemoryRead(Operation *op, OpOperand &opOperand,
                              const AnalysisState &state) const {
    return readsOperand(cast<RecurrentOp>(op), opOperand);
  }

  bool isNotConflicting(Operation *op, OpOperand *uRead, OpOperand *uWrite,
                        const AnalysisState &state) const {
    // The op's own read of initial_state and write of final_state may share
    // one buffer exactly (in-place state update).
    auto recurrent = cast<RecurrentOp>(op);
    OpOperand *initial = getOptionalOperand(recurrent.getInitialStateMutable());
    OpOperand *finalState =
        getOptionalOperand(recurrent.getFinalStateMutable());
    if (!initial || !finalState || uRead != initial || uWrite != finalState)
      return false;
    return initial->get() == finalState->get() ||
           state.areEquivalentBufferizedValues(initial->get(),
                                               finalState->get());
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto recurrent = cast<RecurrentOp>(op);
    Location loc = op->getLoc();
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(op);

    // Copy in what is read: all but the inits written in full (an init that
    // is also read is the same value as initial_state, which comes first).
    FailureOr<OperandBuffers> operands = bufferizeOperands(
        op, rewriter, options, state,
        [&](OpOperand &operand) { return readsOperand(recurrent, operand); });
    if (failed(operands))
      return failure();
    auto get = [&](Value tensor) { return operands->get(tensor); };
    auto newOp = RecurrentOp::create(
        rewriter, loc, TypeRange{}, get(recurrent.getQ()),
        get(recurrent.getK()), get(recurrent.getV()), get(recurrent.getG()),
        get(recurrent.getA()), get(recurrent.getALog()),
        get(recurrent.getDtBias()), get(recurrent.getBeta()),
        get(recurrent.getB()), get(recurrent.getStateIndices()),
        get(recurrent.getCuSeqlens()),
        get(recurrent.getIntermediateStateIndices()),
        get(recurrent.getRetrieveParentToken()),
        get(recurrent.getCheckpointOffsets()), get(recurrent.getInitialState()),
        get(recurrent.getIntermediateStates()),
        get(recurrent.getIntermediateStateScale()), get(recurrent.getKWindow()),
        get(recurrent.getVWindow()), get(recurrent.getGWindow()),
        get(recurrent.getBetaWindow()), get(recurrent.getStateCheckpoints()),
        get(recurrent.getCheckpointScale()), get(recurrent.getStateScale()), get(recurrent.getFinalState()),
        get(recurrent.getO()), recurrent.getScaleAttr(),
        recurrent.getQkL2normAttr(), recurrent.getAllowNegEigvalAttr(),
        recurrent.getCheckpointIntervalAttr(), recurrent.getStateLayoutAttr(),
        recurrent.getStochasticRoundingAttr());
    return replaceWithInitBuffers(op, newOp, recurrent.getDpsInits(), *operands,
                                  rewriter, options);
  }
};


/// gdn.commit and gdn.replay_commit: every operand is read, including the
/// init `state` (slots the op does not commit keep their values; a replay
/// starts from them), and `state` is written in part. The result is the
/// buffer of `state`, so the pool is updated in place unless it is read
/// after the op (then the analysis copies it first).
template <typename PoolUpdateOp>
struct PoolUpdateOpInterface
    : DstBufferizableOpInterfaceExternalModel<
          PoolUpdateOpInterface<PoolUpdateOp>, PoolUpdateOp> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(op);
    // All operands are read, the init `state` included: copy them all in.
    FailureOr<OperandBuffers> operands = bufferizeOperands(
        op, rewriter, options, state, [](OpOperand &) { return true; });
    if (failed(operands))
      return failure();
    // The same op on the buffers, with no result (its memref form).
    OperationState memrefForm(op->getLoc(), op->getName());
    for (Value tensor : op->getOperands())
      memrefForm.addOperands(operands->get(tensor));
    memrefForm.propertiesAttr = op->getPropertiesAsAttribute();
    Operation *newOp = rewriter.create(memrefForm);
    return replaceWithInitBuffers(op, newOp,
                                  ValueRange{cast<PoolUpdateOp>(op).getState()},
                                  *operands, rewriter, options);
  }
};
} // namespace

void mlir::gdn::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, GDNDialect *) {
    RecurrentOp::attachInterface<RecurrentOpInterface>(*ctx);
    CommitOp::attachInterface<PoolUpdateOpInterface<CommitOp>>(*ctx);
    ReplayCommitOp::attachInterface<PoolUpdateOpInterface<ReplayCommitOp>>(
        *ctx);
  });
}
