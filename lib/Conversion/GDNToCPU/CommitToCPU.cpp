//===- CommitToCPU.cpp - gdn.commit to scf loops --------------------------===//
//
// The CPU lowering of gdn.commit: for every row n whose commit is valid
// (KernelMath::emitCommitRow: slot >= 0, buffer row >= 0, accepted >= 1),
// loops over (hv, i, j) copy intermediate_states[row, step, hv, i, j] into
// state[slot, hv, i, j], converting through f32 when the dtypes differ. The
// two operands share one layout, so (i, j) is (V, K) or (K, V) alike.
//
//===----------------------------------------------------------------------===//
#include "gdn/Conversion/GDNToCPU/CommitToCPU.h"
#include "gdn/Conversion/KernelMath.h"
#include "gdn/Dialect/GDN/IR/GDNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::gdn;

namespace {

/// Emits `for i in [0, ub)` and calls `body(i)` inside.
void forRange(OpBuilder &b, Location loc, int64_t ub,
              llvm::function_ref<void(Value)> body) {
  Value lb = arith::ConstantIndexOp::create(b, loc, 0);
  Value upper = arith::ConstantIndexOp::create(b, loc, ub);
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

struct CommitToLoops : OpRewritePattern<CommitOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(CommitOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.getResults().empty())
      return rewriter.notifyMatchFailure(op, "tensor form");
    Location loc = op.getLoc();
    auto d = op.getDims();
    KernelMath m(rewriter, loc, KernelMath::Flavor::CPU);
    Value buffer = op.getIntermediateStates(), state = op.getState();
    auto bufferType = cast<MemRefType>(buffer.getType());
    auto stateType = cast<MemRefType>(state.getType());
    Type from = bufferType.getElementType(), to = stateType.getElementType();
    int64_t rows = bufferType.getDimSize(3), cols = bufferType.getDimSize(4);

    forRange(rewriter, loc, d.N, [&](Value n) {
      KernelMath::CommitRow r = m.emitCommitRow(op, n);
      auto ifOp = scf::IfOp::create(rewriter, loc, r.valid,
                                    /*withElseRegion=*/false);
      OpBuilder::InsertionGuard g(rewriter);
      rewriter.setInsertionPointToStart(&ifOp.getThenRegion().front());
      // state[slot, hv, i, j] <- intermediate_states[row, step, hv, i, j].
      forRange(rewriter, loc, d.HV, [&](Value hv) {
        forRange(rewriter, loc, rows, [&](Value i) {
          forRange(rewriter, loc, cols, [&](Value j) {
            Value x = memref::LoadOp::create(
                rewriter, loc, buffer, ValueRange{r.row, r.step, hv, i, j});
            // Equal dtypes copy the bits; others round once from f32.
            if (from != to)
              x = m.fromF32(m.toF32(x), to);
            memref::StoreOp::create(rewriter, loc, x, state,
                                    ValueRange{r.slot, hv, i, j});
          });
        });
      });
    });
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::gdn::populateCommitToCPUPatterns(RewritePatternSet &patterns) {
  patterns.add<CommitToLoops>(patterns.getContext());
}
