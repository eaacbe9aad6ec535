//===- ReplayView.cpp - gdn.replay_commit as a gdn.recurrent --------------===//
//
// The layer view of a replay's windows and state (ReplayView.h).
//
//===----------------------------------------------------------------------===//
#include "gdn/Conversion/ReplayView.h"
#include "gdn/Conversion/KernelMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace mlir::gdn;

namespace {
/// Layer `layer` of a dense memref x [layers, slots, a, b, ...] as [slots,
/// b, a, ...] when `stepsSecond` (a window: [slots, heads, L, ...] read as
/// [slots, L, heads, ...]), else [slots, a, b, ...]: one reinterpret_cast
/// at offset layer * (its elements a layer), which both memref-to-LLVM
/// lowerings take as it is.
Value layerView(OpBuilder &b, Location loc, Value x, Value layer,
                bool stepsSecond) {
  auto type = cast<MemRefType>(x.getType());
  ArrayRef<int64_t> shape = type.getShape().drop_front();
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = int64_t(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  SmallVector<int64_t> viewShape(shape);
  if (stepsSecond) {
    std::swap(viewShape[1], viewShape[2]);
    std::swap(strides[1], strides[2]);
  }
  int64_t perLayer = strides[0] * shape[0];
  Value offset = arith::MulIOp::create(
      b, loc, layer, arith::ConstantIndexOp::create(b, loc, perLayer));
  auto viewType = MemRefType::get(
      viewShape, type.getElementType(),
      StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic, strides));
  SmallVector<OpFoldResult> sizes, strideValues;
  for (int64_t d : viewShape)
    sizes.push_back(b.getIndexAttr(d));
  for (int64_t st : strides)
    strideValues.push_back(b.getIndexAttr(st));
  return memref::ReinterpretCastOp::create(b, loc, viewType, x, offset, sizes,
                                           strideValues);
}
} // namespace

RecurrentOp gdn::buildReplayView(OpBuilder &b, ReplayCommitOp op,
                                 ArrayRef<Value> operands, Value layer) {
  Location loc = op.getLoc();
  auto window = [&](unsigned i) {
    return layerView(b, loc, operands[i], layer, /*stepsSecond=*/true);
  };
  Value k = window(0), v = window(1), g = window(2), beta = window(3);
  Value indices = operands[5];
  Value scale = operands[7] ? layerView(b, loc, operands[7], layer,
                                        /*stepsSecond=*/false)
                            : Value();
  Value state = layerView(b, loc, operands[8], layer, /*stepsSecond=*/false);
  return RecurrentOp::create(
      b, loc, TypeRange{}, /*q=*/k, k, v, g, /*a=*/Value(), /*A_log=*/Value(),
      /*dt_bias=*/Value(), beta, /*b=*/Value(), indices,
      /*cu_seqlens=*/Value(), /*intermediate_state_indices=*/Value(),
      /*retrieve_parent_token=*/Value(), /*checkpoint_offsets=*/Value(),
      /*initial_state=*/state,
      /*intermediate_states=*/Value(),
      /*intermediate_state_scale=*/Value(), /*k_window=*/Value(),
      /*v_window=*/Value(), /*g_window=*/Value(), /*beta_window=*/Value(),
      /*state_checkpoints=*/Value(), /*checkpoint_scale=*/Value(),
      /*state_scale=*/scale,
      /*final_state=*/state, /*o=*/v,
      /*scale=*/FloatAttr(), op.getQkL2norm(),
      /*allow_neg_eigval=*/false, /*checkpoint_interval=*/IntegerAttr(),
      op.getStateLayout(), /*stochastic_rounding=*/false);
}

Value gdn::emitReplayCount(KernelMath &m, const ReplayRows &replay, Value n) {
  OpBuilder &b = m.builder();
  Location loc = m.location();
  Value raw = memref::LoadOp::create(b, loc, replay.accepted, ValueRange{n});
  Value count = arith::IndexCastOp::create(b, loc, b.getIndexType(), raw);
  return arith::MinSIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, count, m.index(0)),
      m.index(replay.parents ? replay.treeSteps : replay.steps));
}

Value gdn::emitReplayPath(KernelMath &m, const ReplayRows &replay, Value n,
                         Value count) {
  if (!replay.parents)
    return {};
  OpBuilder &b = m.builder();
  Location loc = m.location();
  Type i64 = b.getI64Type();
  auto i64Constant = [&](int64_t c) -> Value {
    return arith::ConstantIntOp::create(b, loc, i64, c);
  };
  // From s = count - 1 (-1: no path) up the tree: every step strictly
  // decreases s, so the walk ends within P loads, each inside row n.
  Value last = arith::IndexCastOp::create(
      b, loc, i64, arith::SubIOp::create(b, loc, count, m.index(1)));
  auto walk = scf::WhileOp::create(
      b, loc, TypeRange{i64, i64}, ValueRange{last, i64Constant(0)},
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value onPath = arith::CmpIOp::create(
            nb, l, arith::CmpIPredicate::sge, args[0], i64Constant(0));
        scf::ConditionOp::create(nb, l, onPath, args);
      },
      [&](OpBuilder &, Location l, ValueRange args) {
        // (The builder WhileOp::build hands over is `b`, which m builds with.)
        Value s = args[0];
        Value mask = arith::OrIOp::create(
            b, l, args[1], arith::ShLIOp::create(b, l, i64Constant(1), s));
        Value p = m.loadI64(
            replay.parents,
            ValueRange{n, arith::IndexCastOp::create(b, l, b.getIndexType(),
                                                     s)});
        // Step 0 and a root (p < 0) start from the checkpoint; p >= s is not
        // a tree and ends the path too.
        Value up = arith::AndIOp::create(
            b, l,
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, p,
                                  i64Constant(0)),
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, p, s));
        Value next = arith::SelectOp::create(b, l, up, p, i64Constant(-1));
        scf::YieldOp::create(b, l, ValueRange{next, mask});
      });
  return walk.getResult(1);
}

Value gdn::emitReplayRuns(KernelMath &m, Value t, Value count, Value path) {
  OpBuilder &b = m.builder();
  Location loc = m.location();
  if (!path)
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, t, count);
  Type i64 = b.getI64Type();
  Value bit = arith::AndIOp::create(
      b, loc,
      arith::ShRUIOp::create(b, loc, path,
                             arith::IndexCastOp::create(b, loc, i64, t)),
      arith::ConstantIntOp::create(b, loc, i64, 1));
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, bit,
                               arith::ConstantIntOp::create(b, loc, i64, 0));
}

void gdn::eraseReplayView(RecurrentOp view) {
  SmallVector<Operation *> worklist;
  for (Value operand : view->getOperands())
    if (Operation *def = operand.getDefiningOp())
      worklist.push_back(def);
  view->erase();
  llvm::SmallPtrSet<Operation *, 16> erased; // an op may be listed twice
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (erased.contains(op) || !op->use_empty() ||
        !isa<memref::ReinterpretCastOp, arith::MulIOp, arith::ConstantOp>(op))
      continue;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        worklist.push_back(def);
    erased.insert(op);
    op->erase();
  }
}
