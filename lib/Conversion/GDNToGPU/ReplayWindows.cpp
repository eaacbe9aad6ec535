//===- ReplayWindows.cpp - a replayed verify's token windows ---------------===//
//
// Replayed verify writes every token's raw k and v and its gates into the
// per-slot windows a later gdn.replay_commit replays (the k_window operand
// of gdn.recurrent). Every kernel form writes them the same way, straight
// from global memory and apart from its recurrence, so o is the form's
// unchanged (KernelContext.h).
//
// The copies are 16-byte vectors, a batch of loads a thread issued before
// any of its stores (the windows may alias the inputs as far as the
// compiler knows, so a store would hold the loads after it): with a fixed T
// the whole copy is one or two memory latencies, whatever T is, even for
// the producer warp alone.
//
//===----------------------------------------------------------------------===//
#include "KernelContext.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <functional>

using namespace mlir;
using namespace mlir::gdn;

namespace {
/// Vectors in flight a thread before its stores.
constexpr int64_t kLoadsInFlight = 8;
} // namespace

void KernelContext::writeReplayWindows(Value thread, int64_t threads) {
  if (!op.hasReplayWindows())
    return;
  int64_t L = cast<MemRefType>(op.getKWindow().getType()).getDimSize(2);
  OpBuilder::InsertionGuard g(b);
  auto isZero = [&](Value x) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x,
                                 m.index(0));
  };
  auto token = [&](Value step) {
    return arith::AddIOp::create(b, loc, tokenLo, step);
  };
  auto openIf = [&](Value cond) {
    auto ifOp = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  };
  if (valid) // padding rows write nothing
    openIf(valid);

  // `steps` x `width` elements of `src` at [tokenRow, t, head, col0 + c]
  // into `dst` at [stateRow, head, step, col0 + c], in vectors of `vec`:
  // thread i takes vectors i, i + threads, ... (the last one clamped, so a
  // few threads copy it twice, the same bytes).
  auto copy = [&](Value src, Value dst, Value head, Value col0, int64_t steps,
                  int64_t width) {
    int64_t bytes = elementBytes(src);
    int64_t vec = std::min<int64_t>(16 / bytes, width & -width);
    int64_t perStep = width / vec, total = steps * perStep;
    int64_t perThread = llvm::divideCeil(total, threads);
    for (int64_t first = 0; first < perThread; first += kLoadsInFlight) {
      SmallVector<std::pair<SmallVector<Value>, Value>> batch;
      for (int64_t j = first; j < std::min(perThread, first + kLoadsInFlight);
           ++j) {
        Value i = arith::MinUIOp::create(
            b, loc,
            arith::AddIOp::create(b, loc, thread, m.index(j * threads)),
            m.index(total - 1));
        Value step = arith::DivUIOp::create(b, loc, i, m.index(perStep));
        Value col = arith::AddIOp::create(
            b, loc, col0,
            arith::MulIOp::create(
                b, loc, arith::RemUIOp::create(b, loc, i, m.index(perStep)),
                m.index(vec)));
        Value x = loadVector(src, {tokenRow, token(step), head, col}, vec);
        batch.push_back({{stateRow, head, step, col}, x});
      }
      for (auto &[idx, x] : batch)
        vector::StoreOp::create(b, loc, x, dst, idx, /*nontemporal=*/false,
                                llvm::MaybeAlign(vectorAlignment(
                                    vec, getElementTypeOrSelf(x.getType()))));
    }
  };

  // How a row of `width` elements a step is copied and how the steps are
  // split over the threads: with a fixed T every step < min(T, L) in
  // vector batches (`copy`); varlen, the sequence's tokens [tokenLo, hi), at
  // most L of them, one element a thread at a time.
  std::function<void(Value, Value, Value, Value, int64_t)> copyRows;
  std::function<void(function_ref<void(Value)>)> forEachStep;
  // body(i) for i = thread, thread + threads, ... < end.
  auto strided = [&](Value end, function_ref<void(Value)> body) {
    scf::ForOp::create(b, loc, thread, end, m.index(threads), ValueRange{},
                       [&](OpBuilder &nb, Location, Value i, ValueRange) {
                         OpBuilder::InsertionGuard g2(b);
                         b.setInsertionPoint(nb.getInsertionBlock(),
                                             nb.getInsertionPoint());
                         body(i);
                         scf::YieldOp::create(b, loc);
                       });
  };
  if (!op.isVarlen()) {
    int64_t steps = std::min(d.T, L);
    copyRows = [&, steps](Value src, Value dst, Value head, Value col0,
                          int64_t width) {
      copy(src, dst, head, col0, steps, width);
    };
    // min(T, L) may pass the CTA's threads.
    forEachStep = [&, steps](function_ref<void(Value)> body) {
      strided(m.index(steps), body);
    };
  } else {
    Value count = arith::MinSIOp::create(
        b, loc, arith::SubIOp::create(b, loc, hi, tokenLo), m.index(L));
    auto spread = [&, count](int64_t width,
                             function_ref<void(Value, Value)> body) {
      strided(arith::MulIOp::create(b, loc, count, m.index(width)),
              [&](Value i) {
                body(arith::DivUIOp::create(b, loc, i, m.index(width)),
                     arith::RemUIOp::create(b, loc, i, m.index(width)));
              });
    };
    copyRows = [&, spread](Value src, Value dst, Value head, Value col0,
                           int64_t width) {
      spread(width, [&](Value step, Value c) {
        Value col = arith::AddIOp::create(b, loc, col0, c);
        Value x = memref::LoadOp::create(
            b, loc, src, ValueRange{tokenRow, token(step), head, col});
        memref::StoreOp::create(b, loc, x, dst,
                                ValueRange{stateRow, head, step, col});
      });
    };
    forEachStep = [&, spread](function_ref<void(Value)> body) {
      spread(1, [&](Value step, Value) { body(step); });
    };
  }

  // v: the CTA's columns.
  copyRows(op.getV(), op.getVWindow(), hv,
           arith::MulIOp::create(b, loc, vBlock, m.index(s.blockColumns())),
           s.blockColumns());
  // The gates of the value head, by its V block 0, in f32 as the
  // recurrence computes them.
  openIf(isZero(vBlock));
  forEachStep([&](Value step) {
    Value t = token(step);
    memref::StoreOp::create(b, loc, m.emitLogDecay(op, tokenRow, t, hv),
                            op.getGWindow(), ValueRange{stateRow, hv, step});
    memref::StoreOp::create(b, loc, m.emitBeta(op, tokenRow, t, hv),
                            op.getBetaWindow(), ValueRange{stateRow, hv, step});
  });
  // k, once a k head: by the first value head of its group.
  openIf(isZero(arith::RemUIOp::create(b, loc, hv, m.index(d.HV / d.H))));
  copyRows(op.getK(), op.getKWindow(), h, m.index(0), d.K);
}
