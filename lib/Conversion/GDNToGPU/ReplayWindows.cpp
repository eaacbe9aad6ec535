//===- ReplayWindows.cpp - a replayed verify's token windows
//---------------===//
//
// Replayed verify writes every token's raw k and v and its gates into the
// per-slot windows a later gdn.replay_commit replays (the k_window operand
// of gdn.recurrent). Every kernel form writes them the same way, straight
// from global memory and apart from its recurrence, so o is the form's
// unchanged (KernelContext.h).
//
//===----------------------------------------------------------------------===//
#include "KernelContext.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::gdn;

void KernelContext::writeReplayWindows(Value thread, int64_t threads) {
  if (!op.hasReplayWindows())
    return;
  int64_t L = cast<MemRefType>(op.getKWindow().getType()).getDimSize(2);
  // The sequence's tokens [tokenLo, hi) up to L of them; none for padding.
  Value count = arith::MinSIOp::create(
      b, loc, arith::SubIOp::create(b, loc, hi, tokenLo), m.index(L));
  if (valid)
    count = arith::SelectOp::create(b, loc, valid, count, m.index(0));
  auto isZero = [&](Value x) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x,
                                 m.index(0));
  };
  // for (i = thread; i < count * width; i += threads): step i / width,
  // element i % width.
  auto spread = [&](int64_t width, function_ref<void(Value, Value)> body) {
    Value total = arith::MulIOp::create(b, loc, count, m.index(width));
    scf::ForOp::create(
        b, loc, thread, total, m.index(threads), ValueRange{},
        [&](OpBuilder &nb, Location, Value i, ValueRange) {
          OpBuilder::InsertionGuard g(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          body(arith::DivUIOp::create(b, loc, i, m.index(width)),
               arith::RemUIOp::create(b, loc, i, m.index(width)));
          scf::YieldOp::create(b, loc);
        });
  };
  auto token = [&](Value step) {
    return arith::AddIOp::create(b, loc, tokenLo, step);
  };
  OpBuilder::InsertionGuard g(b);
  // v: the CTA's blockRows() columns.
  Value col0 = arith::MulIOp::create(b, loc, vBlock, m.index(s.blockRows()));
  spread(s.blockRows(), [&](Value step, Value c) {
    Value col = arith::AddIOp::create(b, loc, col0, c);
    Value x = memref::LoadOp::create(
        b, loc, op.getV(), ValueRange{tokenRow, token(step), hv, col});
    memref::StoreOp::create(b, loc, x, op.getVWindow(),
                            ValueRange{stateRow, hv, step, col});
  });
  auto ifBlock0 = scf::IfOp::create(b, loc, isZero(vBlock), false);
  b.setInsertionPointToStart(&ifBlock0.getThenRegion().front());
  // The gates of the value head, in f32 as the recurrence computes them.
  spread(1, [&](Value step, Value) {
    Value t = token(step);
    memref::StoreOp::create(b, loc, m.emitLogDecay(op, tokenRow, t, hv),
                            op.getGWindow(), ValueRange{stateRow, hv, step});
    memref::StoreOp::create(b, loc, m.emitBeta(op, tokenRow, t, hv),
                            op.getBetaWindow(), ValueRange{stateRow, hv, step});
  });
  // k, once a k head: by the first value head of its group.
  Value firstOfGroup =
      isZero(arith::RemUIOp::create(b, loc, hv, m.index(d.HV / d.H)));
  auto ifFirst = scf::IfOp::create(b, loc, firstOfGroup, false);
  b.setInsertionPointToStart(&ifFirst.getThenRegion().front());
  spread(d.K, [&](Value step, Value key) {
    Value x = memref::LoadOp::create(b, loc, op.getK(),
                                     ValueRange{tokenRow, token(step), h, key});
    memref::StoreOp::create(b, loc, x, op.getKWindow(),
                            ValueRange{stateRow, h, step, key});
  });
}
