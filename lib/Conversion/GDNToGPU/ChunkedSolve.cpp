//===- ChunkedSolve.cpp - the WY solve on CUDA cores ---------------------===//
//
// Schedule `solve = cuda_cores`: the tokens of a staged chunk solved together
// in the WY / UT-transform form (KernelForms.h, chunkedSolve()).
//
//===----------------------------------------------------------------------===//

#include "KernelForms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::gdn;

void CudaCoreSolveKernel::build() {
  enter();
  SmallVector<Value> state = loadState();
  waitForPreviousGrid();
  writeReplayWindows();
  runStagedForm(state, [&](Value c, Value count, ValueRange current) {
    return chunkedSolve(c, count, current);
  });
}

void CudaCoreSolveKernel::buildGram() {
  int64_t rows = solveRows();
  Type qkType = cast<MemRefType>(op.getQ().getType()).getElementType();
  int64_t vec = 16 / (qkType.getIntOrFloatBitWidth() / 8);
  while (d.K % vec != 0)
    vec /= 2;
  auto total = [&](SmallVector<Value> parts) { // a sum as a tree
    for (int64_t w = int64_t(parts.size()) / 2; w >= 1; w /= 2)
      for (int64_t x = 0; x < w; ++x)
        parts[x] = m.add(parts[x], parts[x + w]);
    return parts.front();
  };
  scf::ForOp::create(
      b, loc, tid, m.index(rows * rows), m.index(*s.getWarps() * kWarpSize),
      ValueRange{}, [&](OpBuilder &nb, Location, Value p, ValueRange) {
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        Value i = arith::DivUIOp::create(b, loc, p, m.index(rows));
        Value j = arith::RemUIOp::create(b, loc, p, m.index(rows));
        Value lower =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, j, i);
        auto ifLower =
            scf::IfOp::create(b, loc, lower, /*withElseRegion=*/false);
        b.setInsertionPointToStart(&ifLower.getThenRegion().front());
        // One K-long pass over k_i, q_i, k_j: a loop, so that only one
        // step's loads are live (unrolled, all of them are hoisted).
        auto dots = scf::ForOp::create(
            b, loc, m.index(0), m.index(d.K), m.index(vec),
            ValueRange{m.f32(0.0), m.f32(0.0), m.f32(0.0)},
            [&](OpBuilder &lb, Location, Value e, ValueRange acc) {
              OpBuilder::InsertionGuard inLoop(b);
              b.setInsertionPoint(lb.getInsertionBlock(),
                                  lb.getInsertionPoint());
              auto ki = extractAll(m.toF32(loadVector(kStage, {i, e}, vec)));
              auto qi = extractAll(m.toF32(loadVector(qStage, {i, e}, vec)));
              auto kj = extractAll(m.toF32(loadVector(kStage, {j, e}, vec)));
              SmallVector<Value> kk, qk, qq;
              for (int64_t x = 0; x < vec; ++x) {
                kk.push_back(m.mul(ki[x], kj[x]));
                qk.push_back(m.mul(qi[x], kj[x]));
                qq.push_back(m.mul(qi[x], qi[x]));
              }
              scf::YieldOp::create(b, loc,
                                   ValueRange{m.add(acc[0], total(kk)),
                                              m.add(acc[1], total(qk)),
                                              m.add(acc[2], total(qq))});
            });
        // Masked sums of the log gates: (j, i], [0, i] and (i, rows).
        Value between = m.f32(0.0), upTo = m.f32(0.0), after = m.f32(0.0);
        for (int64_t l = 0; l < rows; ++l) {
          Value gl = memref::LoadOp::create(b, loc, decayStage,
                                            ValueRange{m.index(l)});
          auto pick = [&](Value cond) -> Value {
            return arith::SelectOp::create(b, loc, cond, gl, m.f32(0.0));
          };
          Value le = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule,
                                           m.index(l), i);
          Value gt = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                           m.index(l), j);
          Value notLe = arith::XOrIOp::create(
              b, loc, le, arith::ConstantIntOp::create(b, loc, 1, 1));
          between = m.add(between, pick(arith::AndIOp::create(b, loc, le, gt)));
          upTo = m.add(upTo, pick(le));
          after = m.add(after, pick(notLe));
        }
        Value decay = m.exp(between);
        Value diag =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, i, j);
        Value kkTotal = dots.getResult(0);
        memref::StoreOp::create(b, loc,
                                arith::SelectOp::create(b, loc, diag, kkTotal,
                                                        m.mul(decay, kkTotal)),
                                gramStage, ValueRange{m.index(0), i, j});
        memref::StoreOp::create(b, loc, m.mul(decay, dots.getResult(1)),
                                gramStage, ValueRange{m.index(1), i, j});
        auto ifDiag = scf::IfOp::create(b, loc, diag, /*withElseRegion=*/false);
        b.setInsertionPointToStart(&ifDiag.getThenRegion().front());
        memref::StoreOp::create(b, loc, m.exp(upTo), tokenStage,
                                ValueRange{m.index(0), i});
        memref::StoreOp::create(b, loc, m.exp(after), tokenStage,
                                ValueRange{m.index(1), i});
        memref::StoreOp::create(b, loc, dots.getResult(2), tokenStage,
                                ValueRange{m.index(2), i});
        b.setInsertionPointAfter(ifLower);
        scf::YieldOp::create(b, loc);
      });
}

SmallVector<Value> CudaCoreSolveKernel::chunkedSolve(Value c, Value count,
                                               ValueRange state) {
  buildGram();
  gpu::BarrierOp::create(b, loc);
  int64_t rows = solveRows();
  SmallVector<Value> S(state.begin(), state.end());
  std::optional<int64_t> staticCount = getConstantIntValue(count);
  auto tok = [&](int64_t which, int64_t i) -> Value {
    return memref::LoadOp::create(b, loc, tokenStage,
                                  ValueRange{m.index(which), m.index(i)});
  };
  auto gram = [&](int64_t which, int64_t i, int64_t j) -> Value {
    return memref::LoadOp::create(
        b, loc, gramStage, ValueRange{m.index(which), m.index(i), m.index(j)});
  };
  // S0ᵀk_i and S0ᵀq_i (raw k, q) of every token and column: rows * R
  // independent shuffle trees each, side by side (Sᵀq's are built after
  // the substitution has consumed Sᵀk's, to hold fewer registers).
  auto reduceAll = [&](Value stage) {
    SmallVector<SmallVector<Value>> sums(rows);
    for (int64_t i = 0; i < rows; ++i) {
      SmallVector<Value> x = loadStagedKeyChunk(stage, m.index(i));
      for (int64_t r = 0; r < *s.getColumnsPerLane(); ++r) {
        Value sum = m.f32(0.0);
        for (int64_t jj = 0; jj < kPerLane; ++jj)
          sum = m.add(sum, m.mul(at(S, r, jj), x[jj]));
        sums[i].push_back(warpSum(sum));
      }
    }
    return sums;
  };
  Value col = arith::SubIOp::create(b, loc, v0, blockV0);
  Value scale = m.f32(op.getScaleOrDefault());
  SmallVector<Value> ik(rows, m.f32(1.0)), iq(rows, scale), decay(rows);
  for (int64_t i = 0; i < rows; ++i) {
    // x / sqrt(sum(x^2) + 1e-6), eps inside the sqrt. IEEE divide and sqrt
    // here, not m.rsqrt: their slow-path branches keep ptxas from hoisting
    // every token's norms (with rsqrt.approx the varlen example at 2 columns
    // a lane took 255 registers and spilled).
    if (op.getQkL2norm()) {
      ik[i] = m.div(m.f32(1.0), m.sqrt(m.add(gram(0, i, i), m.f32(1e-6))));
      iq[i] = m.div(scale, m.sqrt(m.add(tok(2, i), m.f32(1e-6))));
    }
    decay[i] = tok(0, i);
  }
  // w_i = ik_i beta_i (v_i - ik_i (exp(G_i) S0ᵀk_i + sum_{j<i} gram0_ij w_j)).
  SmallVector<SmallVector<Value>> A = reduceAll(kStage), w(rows);
  for (int64_t i = 0; i < rows; ++i) {
    Value beta =
        memref::LoadOp::create(b, loc, betaStage, ValueRange{m.index(i)});
    Value ikBeta = m.mul(ik[i], beta);
    SmallVector<Value> vf = extractAll(
        m.toF32(loadVector(vStage, {m.index(i), col}, *s.getColumnsPerLane())));
    SmallVector<Value> kkRow;
    for (int64_t j = 0; j < i; ++j)
      kkRow.push_back(gram(0, i, j));
    for (int64_t r = 0; r < *s.getColumnsPerLane(); ++r) {
      Value acc = m.mul(decay[i], A[i][r]);
      for (int64_t j = 0; j < i; ++j)
        acc = m.add(acc, m.mul(kkRow[j], w[j][r]));
      w[i].push_back(m.mul(ikBeta, m.sub(vf[r], m.mul(ik[i], acc))));
    }
  }
  // o_i = iq_i (exp(G_i) S0ᵀq_i + sum_{j<=i} gram1_ij w_j).
  SmallVector<SmallVector<Value>> B = reduceAll(qStage);
  for (int64_t i = 0; i < rows; ++i) {
    SmallVector<Value> qkRow;
    for (int64_t j = 0; j <= i; ++j)
      qkRow.push_back(gram(1, i, j));
    SmallVector<Value> outputs;
    for (int64_t r = 0; r < *s.getColumnsPerLane(); ++r) {
      Value out = m.mul(decay[i], B[i][r]);
      for (int64_t j = 0; j <= i; ++j)
        out = m.add(out, m.mul(qkRow[j], w[j][r]));
      outputs.push_back(m.mul(iq[i], out));
    }
    Value t = arith::AddIOp::create(b, loc, c, m.index(i));
    if (staticCount && i < *staticCount) {
      storeOutputs(t, outputs);
      continue;
    }
    Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          m.index(i), count);
    auto ifOp = scf::IfOp::create(b, loc, inRange, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    storeOutputs(t, outputs);
  }
  // S_C = exp(G_C) S0 + sum_j exp(G_C - G_j) k_j w_jᵀ, k_j read again
  // from shared memory.
  Value last = decay[rows - 1];
  for (Value &e : S)
    e = m.mul(last, e);
  for (int64_t j = 0; j < rows; ++j) {
    Value f = tok(1, j);
    SmallVector<Value> kf = loadStagedKeyChunk(kStage, m.index(j));
    for (int64_t jj = 0; jj < kPerLane; ++jj) {
      Value fk = m.mul(f, kf[jj]);
      for (int64_t r = 0; r < *s.getColumnsPerLane(); ++r)
        at(S, r, jj) = m.add(at(S, r, jj), m.mul(fk, w[j][r]));
    }
  }
  return S;
}
