//===- ChunkParallel.cpp - every chunk's WY solve in a launch of its own --===//
//
// solve = chunk_parallel's first launch (ChunkSolvesKernel, KernelForms.h):
// one CTA a chunk of a (sequence, head), all chunks at once, writes the
// chunk's Tm, M and token factors (docs/math.md §5) to its record of the
// workspace, where the scan (TensorCoreSolveKernel with a workspace) reads
// them; RecurrentToGPU.cpp creates both launches and the workspace.
//
//===----------------------------------------------------------------------===//

#include "KernelForms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::gdn;

void ChunkSolvesKernel::build() {
  workspace = kernel.getArgument(op->getNumOperands());
  enter();
  createStagingBuffers();
  int64_t C = *s.getStagedTokens();
  // The grid's x is the chunk (enter() calls it vBlock; no V is read here).
  Value c = arith::MulIOp::create(b, loc, vBlock, m.index(C));
  Value count = arith::MinUIOp::create(b, loc, m.index(C),
                                       arith::SubIOp::create(b, loc, hi, c));
  stageQK(c, count);
  stageLogGates(c, count);
  gpu::BarrierOp::create(b, loc);
  buildTensorCoreGram();
  buildSolveMatrices();
  copyRecord(c, /*toWorkspace=*/true);
}

Value TensorCoreSolveKernel::recordOf(Value c) {
  int64_t C = *s.getStagedTokens();
  int64_t chunks = llvm::divideCeil(d.T, C);
  Value head = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, n, m.index(d.HV)), hv);
  Value chunk = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, head, m.index(chunks)),
      arith::DivUIOp::create(b, loc, c, m.index(C)));
  return arith::MulIOp::create(b, loc, chunk, m.index(recordFloats(C)));
}

void TensorCoreSolveKernel::stageChunkExtras(Value c) {
  if (workspace)
    copyRecord(c, /*toWorkspace=*/false);
}

void TensorCoreSolveKernel::copyRecord(Value c, bool toWorkspace) {
  // The record (recordFloats): solveStage [2, C, C + 4] in 16-byte vectors
  // over every thread, then factor rows 0-2 (thread i < 3 C one each) and
  // gamma_C (thread 0).
  int64_t C = *s.getStagedTokens(), threads = *s.getWarps() * kWarpSize;
  Value record = recordOf(c);
  auto vec4 = VectorType::get({4}, b.getF32Type());
  int64_t rowVectors = (C + 4) / 4, solveVectors = 2 * C * rowVectors;
  scf::ForOp::create(
      b, loc, tid, m.index(solveVectors), m.index(threads), ValueRange{},
      [&](OpBuilder &nb, Location, Value i, ValueRange) {
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        Value row = arith::DivUIOp::create(b, loc, i, m.index(rowVectors));
        SmallVector<Value, 3> staged{
            arith::DivUIOp::create(b, loc, row, m.index(C)),
            arith::RemUIOp::create(b, loc, row, m.index(C)),
            arith::MulIOp::create(
                b, loc, arith::RemUIOp::create(b, loc, i, m.index(rowVectors)),
                m.index(4))};
        Value at = plus(record, arith::MulIOp::create(b, loc, i, m.index(4)));
        if (toWorkspace)
          vector::StoreOp::create(
              b, loc, vector::LoadOp::create(b, loc, vec4, solveStage, staged),
              workspace, ValueRange{at});
        else
          vector::StoreOp::create(
              b, loc, vector::LoadOp::create(b, loc, vec4, workspace, at),
              solveStage, staged);
        scf::YieldOp::create(b, loc);
      });
  auto copy = [&](Value stage, ValueRange staged, Value at) {
    if (toWorkspace)
      memref::StoreOp::create(b, loc,
                              memref::LoadOp::create(b, loc, stage, staged),
                              workspace, ValueRange{at});
    else
      memref::StoreOp::create(
          b, loc, memref::LoadOp::create(b, loc, workspace, ValueRange{at}),
          stage, staged);
  };
  auto ifThread = [&](arith::CmpIPredicate pred, int64_t bound,
                      function_ref<void()> body) {
    Value cond = arith::CmpIOp::create(b, loc, pred, tid, m.index(bound));
    auto ifOp = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    body();
  };
  Value factorBase = offset(record, 2 * C * (C + 4));
  ifThread(arith::CmpIPredicate::ult, 3 * C, [&] {
    copy(factorStage,
         {arith::DivUIOp::create(b, loc, tid, m.index(C)),
          arith::RemUIOp::create(b, loc, tid, m.index(C))},
         plus(factorBase, tid));
  });
  ifThread(arith::CmpIPredicate::eq, 0, [&] {
    copy(tokenStage, {m.index(0), m.index(C - 1)}, offset(factorBase, 3 * C));
  });
}
