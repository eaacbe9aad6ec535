//===- Loops.cpp - scf loop helpers of the CPU lowering -------------------===//
//
// Loops.h.
//
//===----------------------------------------------------------------------===//
#include "Loops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

void gdn::forRange(OpBuilder &b, Location loc, Value lb, Value upper,
                   llvm::function_ref<void(Value)> body) {
  Value step = arith::ConstantIndexOp::create(b, loc, 1);
  scf::ForOp::create(b, loc, lb, upper, step, ValueRange{},
                     [&](OpBuilder &nb, Location, Value i, ValueRange) {
                       OpBuilder::InsertionGuard g(b);
                       b.setInsertionPoint(nb.getInsertionBlock(),
                                           nb.getInsertionPoint());
                       body(i);
                       scf::YieldOp::create(b, loc);
                     });
}

void gdn::forRange(OpBuilder &b, Location loc, int64_t ub,
                   llvm::function_ref<void(Value)> body) {
  forRange(b, loc, arith::ConstantIndexOp::create(b, loc, 0),
           arith::ConstantIndexOp::create(b, loc, ub), body);
}

Value gdn::reduceRange(OpBuilder &b, Location loc, int64_t ub,
                       llvm::function_ref<Value(Value, Value)> combine,
                       llvm::function_ref<Value(Value)> term) {
  Value lb = arith::ConstantIndexOp::create(b, loc, 0);
  Value upper = arith::ConstantIndexOp::create(b, loc, ub);
  Value step = arith::ConstantIndexOp::create(b, loc, 1);
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
  auto loop = scf::ForOp::create(
      b, loc, lb, upper, step, ValueRange{zero},
      [&](OpBuilder &nb, Location, Value i, ValueRange acc) {
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        scf::YieldOp::create(b, loc, combine(acc[0], term(i)));
      });
  return loop.getResult(0);
}
