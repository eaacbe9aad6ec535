//===- CommitToCPU.cpp - gdn.commit to scf loops --------------------------===//
//
// The CPU lowering of gdn.commit: for every row n whose commit is valid
// (KernelMath::emitCommitRow: slot >= 0, buffer row >= 0, accepted >= 1),
// loops over (hv, i, j) copy intermediate_states[row, step, hv, i, j] into
// state[slot, hv, i, j], converting through f32 when the dtypes differ. The
// two operands share one layout, so (i, j) is (V, K) or (K, V) alike. An
// f8E4M3FN pool is quantized a row (V column) at a time, as the recurrence
// stores one (docs/math.md §6), from any other buffer; from an f8E4M3FN
// buffer it takes the bits and the row scales as they are.
//
//===----------------------------------------------------------------------===//
#include "gdn/Conversion/GDNToCPU/CommitToCPU.h"
#include "Loops.h"
#include "gdn/Conversion/KernelMath.h"
#include "gdn/Dialect/GDN/IR/GDNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::gdn;

namespace {

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
      Value bufferScales = op.getIntermediateStateScale();
      Value scales = op.getStateScale();
      if (scales && !bufferScales) {
        // Row v of head hv: amax over its K keys, its scale, then every
        // element times the inverse, rounded once.
        bool vk = op.isVKLayout();
        auto at = [&](Value hv, Value k, Value v) {
          return vk ? SmallVector<Value>{hv, v, k}
                    : SmallVector<Value>{hv, k, v};
        };
        auto load = [&](Value hv, Value k, Value v) {
          SmallVector<Value> idx{r.row, r.step};
          idx.append(at(hv, k, v));
          return m.toF32(memref::LoadOp::create(rewriter, loc, buffer, idx));
        };
        forRange(rewriter, loc, d.HV, [&](Value hv) {
          forRange(rewriter, loc, d.V, [&](Value v) {
            Value amax = reduceRange(
                rewriter, loc, d.K,
                [&](Value x, Value y) { return m.maxAbs(x, y); },
                [&](Value k) { return load(hv, k, v); });
            // (Named values: C++17 lambdas cannot capture a binding.)
            std::pair<Value, Value> quotients = m.e4m3Scale(amax);
            Value scale = quotients.first, inv = quotients.second;
            memref::StoreOp::create(rewriter, loc, scale, scales,
                                    ValueRange{r.slot, hv, v});
            forRange(rewriter, loc, d.K, [&](Value k) {
              SmallVector<Value> idx{r.slot};
              idx.append(at(hv, k, v));
              memref::StoreOp::create(rewriter, loc,
                                      m.fromF32(m.mul(load(hv, k, v), inv), to),
                                      state, idx);
            });
          });
        });
        return;
      }
      // state[slot, hv, i, j] <- intermediate_states[row, step, hv, i, j].
      forRange(rewriter, loc, d.HV, [&](Value hv) {
        forRange(rewriter, loc, rows, [&](Value i) {
          forRange(rewriter, loc, cols, [&](Value j) {
            Value x = memref::LoadOp::create(
                rewriter, loc, buffer, ValueRange{r.row, r.step, hv, i, j});
            // Equal dtypes copy the bits (e4m3 with its scales, below);
            // others round once from f32, an e4m3 buffer times its row's
            // scale (row v: i in vk, j in kv).
            if (from != to) {
              x = m.toF32(x);
              if (bufferScales)
                x = m.mul(x, memref::LoadOp::create(
                                 rewriter, loc, bufferScales,
                                 ValueRange{r.row, r.step, hv,
                                            op.isVKLayout() ? i : j}));
              x = m.fromF32(x, to);
            }
            memref::StoreOp::create(rewriter, loc, x, state,
                                    ValueRange{r.slot, hv, i, j});
          });
        });
        if (scales) // e4m3 to e4m3: the row scales go with the bits
          forRange(rewriter, loc, d.V, [&](Value v) {
            Value x = memref::LoadOp::create(rewriter, loc, bufferScales,
                                             ValueRange{r.row, r.step, hv, v});
            memref::StoreOp::create(rewriter, loc, x, scales,
                                    ValueRange{r.slot, hv, v});
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
