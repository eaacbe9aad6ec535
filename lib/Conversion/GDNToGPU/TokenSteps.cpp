//===- TokenSteps.cpp - tokens of the recurrence in registers ---------------===//
//
// A token's inputs, norms, state sums and update, side by side or in turn,
// a pair of tokens at once, and the loop over a staged chunk's tokens
// (TokenSteps.h).
//
//===----------------------------------------------------------------------===//

#include "TokenSteps.h"

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

SmallVector<Value> TokenSteps::runChunk(Value c, Value count, Value rowBase,
                                           ValueRange state) {
  // Two tokens a step (ScheduleAttr::tokenPairs): pairs j, j + 1 while j + 1 <
  // count, then the last token of an odd count on its own.
  bool pairs = s.tokenPairs();
  auto body = [&](OpBuilder &nb, Location, Value j, ValueRange carried) {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
    Value t = arith::AddIOp::create(b, loc, c, j);
    SmallVector<Value> next =
        pairs ? tokenPair(t, plus(rowBase, j), carried)
              : token(t, plus(rowBase, j), carried);
    storeIntermediate(pairs ? offset(t, 1) : t, next);
    scf::YieldOp::create(b, loc, next);
  };
  Value end = pairs ? b.createOrFold<arith::SubIOp>(loc, count, m.index(1))
                    : count;
  auto loop = scf::ForOp::create(b, loc, m.index(0), end,
                                 m.index(pairs ? 2 : 1), state, body);
  tokenLoops.push_back(loop); // unrolled once its results have their uses
  SmallVector<Value> results(loop.getResults());
  if (!pairs)
    return results;
  auto last = [&](ValueRange carried) { // the odd token, j = count - 1
    Value t = arith::AddIOp::create(b, loc, c, end);
    SmallVector<Value> next = token(t, plus(rowBase, end), carried);
    storeIntermediate(t, next);
    return next;
  };
  if (std::optional<int64_t> n = getConstantIntValue(count)) // fixed T
    return *n % 2 ? last(results) : results;
  Value odd = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ne,
      arith::AndIOp::create(b, loc, count, m.index(1)), m.index(0));
  auto ifOdd = scf::IfOp::create(b, loc, ValueRange(results).getTypes(), odd,
                                 /*withElseRegion=*/true);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&ifOdd.getThenRegion().front());
  scf::YieldOp::create(b, loc, last(results));
  b.setInsertionPointToStart(&ifOdd.getElseRegion().front());
  scf::YieldOp::create(b, loc, results);
  return SmallVector<Value>(ifOdd.getResults());
}

void TokenSteps::unrollTokenLoops() {
  // unroll_tokens counts tokens; an iteration of a pair loop takes two.
  for (scf::ForOp loop : tokenLoops) {
    int64_t perIteration = getConstantIntValue(loop.getStep()).value_or(1);
    std::optional<int64_t> lo = getConstantIntValue(loop.getLowerBound());
    std::optional<int64_t> upper = getConstantIntValue(loop.getUpperBound());
    if (lo && upper &&
        int64_t(llvm::divideCeil(std::max<int64_t>(*upper - *lo, 0),
                                 perIteration)) *
                perIteration <=
            *s.getUnrollTokens())
      (void)loopUnrollFull(loop);
    else if (*s.getUnrollTokens() / perIteration > 1)
      (void)loopUnrollByFactor(loop, *s.getUnrollTokens() / perIteration);
  }
}

TokenSteps::TokenInputs TokenSteps::loadToken(Value t, Value j) {
  bool staged = static_cast<bool>(j);
  TokenInputs in;
  in.kf = staged ? loadStagedKeyChunk(kStage, j) : loadKeyChunk(op.getK(), t);
  in.qf = staged ? loadStagedKeyChunk(qStage, j) : loadKeyChunk(op.getQ(), t);
  bool perKey = op.hasPerKeyDecay(), perChannel = op.hasPerChannelBeta();
  if (staged) {
    Value col = arith::SubIOp::create(b, loc, v0, blockV0);
    in.decay = perKey ? extractAll(loadVector(decayStage, {j, k0}, kPerLane))
                      : SmallVector<Value>{memref::LoadOp::create(
                            b, loc, decayStage, ValueRange{j})};
    in.beta = perChannel ? extractAll(loadVector(betaStage, {j, col},
                                                 *s.getColumnsPerLane()))
                         : SmallVector<Value>{memref::LoadOp::create(
                               b, loc, betaStage, ValueRange{j})};
    in.vf = extractAll(
        m.toF32(loadVector(vStage, {j, col}, *s.getColumnsPerLane())));
  } else if (tokenFirst && !perKey && !perChannel) {
    // Every load before the gates' math: under in-order issue an exp or a
    // sigmoid waiting on its input would hold the loads after it. (Only
    // with a pool: on a state in place at N = 1 this order measured 3-5%
    // slower, 2.78 -> 2.91 us; docs/cost-model.md#pool-decode-token-first.)
    Value vRaw =
        loadVector(op.getV(), {tokenRow, t, hv, v0}, *s.getColumnsPerLane());
    KernelMath::GateInputs gates = m.loadGates(op, tokenRow, t, hv);
    in.vf = extractAll(m.toF32(vRaw));
    in.decay = {m.gateDecay(op, gates)};
    in.beta = {m.gateBeta(op, gates)};
  } else {
    in.decay = perKey ? perKeyDecay(t, k0, kPerLane)
                      : SmallVector<Value>{m.emitDecay(op, tokenRow, t, hv)};
    in.beta = perChannel ? perChannelBeta(t, v0, *s.getColumnsPerLane())
                         : SmallVector<Value>{m.emitBeta(op, tokenRow, t, hv)};
    in.vf = extractAll(m.toF32(
        loadVector(op.getV(), {tokenRow, t, hv, v0}, *s.getColumnsPerLane())));
  }
  return in;
}

TokenSteps::TokenNorms TokenSteps::normsAt(Value j,
                                                 const TokenInputs &in) {
  if (j && normStage) {
    SmallVector<Value> row =
        extractAll(loadVector(normStage, {j, m.index(0)}, 4));
    if (!op.getQkL2norm()) // constants the multiplications fold
      return {m.f32(1.0), m.f32(op.getScaleOrDefault()), row[2]};
    return {row[0], row[1], row[2]};
  }
  return tokenNorms(in.kf, in.qf, [&](Value x) { return warpSum(x); });
}

SmallVector<Value> TokenSteps::token(Value t, Value j, ValueRange carried) {
  SmallVector<Value> S(carried.begin(), carried.end());
  bool staged = static_cast<bool>(j);
  // EAGLE tree: start from the parent's state (before any of the math).
  if (op.hasParentTable())
    S = startState(staged ? Value(memref::LoadOp::create(b, loc, sourceStage,
                                                         ValueRange{j}))
                          : parentSource(t),
                   S);
  TokenInputs in = firstToken ? *std::exchange(firstToken, std::nullopt)
                              : loadToken(t, j);
  SmallVector<Value> units = std::exchange(rowUnits, {});
  assert((units.empty() || !op.hasPerKeyDecay()) && "units need one decay");
  if (!s.sideBySide()) // the schedule never asks for it with KDA
    return tokenInTurn(t, S, in.kf, in.qf, in.decay.front(), in.beta.front(),
                       in.vf, units);

  // Every K-reduction of a token reads only the raw q, k and the carried
  // state, so they all run side by side instead of one after another. With
  // k̂ = ik k and q̂ = iq scale q (ik, iq the L2-norm factors, 1 without
  // qk_l2norm) and D = diag(exp(g)) (one value unless per key, KDA):
  //   (D S)ᵀk̂ = ik Sᵀ(D k),        u = beta (v - ik Sᵀ(D k)),
  //   o = (D S + k̂ uᵀ)ᵀ q̂ = iq scale Sᵀ(D q) + (k̂·q̂) u,
  // where the norms and k·q do not depend on the state. A token's
  // dependent chain is one shuffle tree deep instead of three. A producer
  // warp computes the norms once a CTA (stageNorms), not once a warp.
  TokenNorms norms = normsAt(j, in);
  auto [dk, dq] = decayed(in, in.kf, in.qf);
  Factors f = factors(in, norms);
  SmallVector<SmallVector<Value>> sums = stateSums(S, {dk, dq});
  for (auto [r, unit] : llvm::enumerate(units)) // sums of the state in units
    for (SmallVector<Value> &sum : sums)
      sum[r] = m.mul(sum[r], unit);
  advance(t, S, in, norms, f, sums[0], sums[1], units);
  return S;
}

std::pair<SmallVector<Value>, SmallVector<Value>>
TokenSteps::decayed(const TokenInputs &in, ArrayRef<Value> x,
                       ArrayRef<Value> y) {
  std::pair<SmallVector<Value>, SmallVector<Value>> out{x, y};
  if (op.hasPerKeyDecay()) // one decay a head factors out of the sums
    for (int64_t jj = 0; jj < kPerLane; ++jj) {
      out.first[jj] = m.mul(x[jj], in.decay[jj]);
      out.second[jj] = m.mul(y[jj], in.decay[jj]);
    }
  return out;
}

SmallVector<SmallVector<Value>>
TokenSteps::stateSums(SmallVector<Value> &S,
                         ArrayRef<SmallVector<Value>> xs) {
  SmallVector<SmallVector<Value>> sums(xs.size());
  for (int64_t r = 0; r < *s.getColumnsPerLane(); ++r) {
    SmallVector<Value> partial(xs.size(), m.f32(0.0));
    for (int64_t jj = 0; jj < kPerLane; ++jj)
      for (auto [p, x] : llvm::zip_equal(partial, xs))
        p = m.add(p, m.mul(at(S, r, jj), x[jj]));
    for (auto [sum, p] : llvm::zip_equal(sums, partial))
      sum.push_back(warpSum(p));
  }
  return sums;
}

TokenSteps::Factors TokenSteps::factors(const TokenInputs &in,
                                              const TokenNorms &norms) {
  if (op.hasPerKeyDecay())
    return {norms.ik, norms.iq};
  // One decay for the whole head factors out of the sums.
  return {m.mul(in.decay[0], norms.ik), m.mul(in.decay[0], norms.iq)};
}

SmallVector<Value> TokenSteps::advance(Value t, SmallVector<Value> &S,
                                       const TokenInputs &in,
                                       const TokenNorms &norms,
                                       const Factors &f, ArrayRef<Value> A,
                                       ArrayRef<Value> B,
                                       ArrayRef<Value> units) {
  bool perKey = op.hasPerKeyDecay(), perChannel = op.hasPerChannelBeta();
  auto [ik, iq, kq] = norms;
  auto [fk, fq] = f;
  SmallVector<Value> kHat; // k̂ for the rank-1 update
  for (Value e : in.kf)
    kHat.push_back(m.mul(e, ik));
  SmallVector<Value> outputs, us;
  for (int64_t r = 0; r < *s.getColumnsPerLane(); ++r) {
    Value u =
        m.mul(in.beta[perChannel ? r : 0], m.sub(in.vf[r], m.mul(fk, A[r])));
    Value rowDecay = units.empty() ? in.decay[0] : m.mul(in.decay[0], units[r]);
    for (int64_t jj = 0; jj < kPerLane; ++jj)
      at(S, r, jj) =
          m.add(m.mul(at(S, r, jj), perKey ? in.decay[jj] : rowDecay),
                m.mul(kHat[jj], u));
    outputs.push_back(m.add(m.mul(fq, B[r]), m.mul(kq, u)));
    us.push_back(u);
  }
  storeOutputs(t, outputs);
  return us;
}

SmallVector<Value> TokenSteps::tokenPair(Value t, Value j,
                                            ValueRange carried) {
  // Tokens t and t + 1 from the state S before t. With S' = D0 S + k̂0 u0ᵀ
  // the state after t, the sums token t + 1 needs are
  //   S'ᵀ(D1 x) = Sᵀ(D0 D1 x) + u0 (k̂0 · D1 x),   x = k1 or q1,
  // so all four state sums of the pair (Sᵀ D0 k0, Sᵀ D0 q0, Sᵀ D0 D1 k1,
  // Sᵀ D0 D1 q1) run side by side on S, with the two state-free dot
  // products k̂0 · D1 k1 and k̂0 · D1 q1: one shuffle tree deep for two
  // tokens. A head's one decay factors out as in token().
  SmallVector<Value> S(carried.begin(), carried.end());
  Value t1 = offset(t, 1), j1 = offset(j, 1);
  TokenInputs in0 = loadToken(t, j), in1 = loadToken(t1, j1);
  TokenNorms n0 = normsAt(j, in0), n1 = normsAt(j1, in1);
  bool perKey = op.hasPerKeyDecay();
  auto [dk1, dq1] = decayed(in1, in1.kf, in1.qf);
  auto [dk0, dq0] = decayed(in0, in0.kf, in0.qf);
  auto [ddk1, ddq1] = decayed(in0, dk1, dq1);
  Factors f0 = factors(in0, n0), f1 = factors(in1, n1);
  SmallVector<SmallVector<Value>> sums =
      stateSums(S, {dk0, dq0, ddk1, ddq1});
  // k0 · D1 k1 and k0 · D1 q1 (D1 = 1 for a head's one decay).
  Value ck = m.f32(0.0), cq = m.f32(0.0);
  for (int64_t jj = 0; jj < kPerLane; ++jj) {
    ck = m.add(ck, m.mul(in0.kf[jj], dk1[jj]));
    cq = m.add(cq, m.mul(in0.kf[jj], dq1[jj]));
  }
  ck = m.mul(warpSum(ck), n0.ik);
  cq = m.mul(warpSum(cq), n0.ik);
  SmallVector<Value> u0 = advance(t, S, in0, n0, f0, sums[0], sums[1]);
  storeIntermediate(t, S);
  SmallVector<Value> A1, B1;
  for (int64_t r = 0; r < *s.getColumnsPerLane(); ++r) {
    Value a = sums[2][r], bq = sums[3][r];
    if (!perKey) { // the sums were of S, not D0 S
      a = m.mul(a, in0.decay[0]);
      bq = m.mul(bq, in0.decay[0]);
    }
    A1.push_back(m.add(a, m.mul(ck, u0[r])));
    B1.push_back(m.add(bq, m.mul(cq, u0[r])));
  }
  advance(t1, S, in1, n1, f1, A1, B1);
  return S;
}

TokenSteps::TokenNorms
TokenSteps::tokenNorms(ArrayRef<Value> kf, ArrayRef<Value> qf,
                          function_ref<Value(Value)> sum) {
  bool l2norm = op.getQkL2norm();
  Value kq = m.f32(0.0), kk = m.f32(0.0), qq = m.f32(0.0);
  for (auto [k, q] : llvm::zip_equal(kf, qf)) {
    kq = m.add(kq, m.mul(k, q));
    if (l2norm) {
      kk = m.add(kk, m.mul(k, k));
      qq = m.add(qq, m.mul(q, q));
    }
  }
  Value ik = m.f32(1.0), iq = m.f32(op.getScaleOrDefault());
  if (l2norm) { // x / sqrt(sum(x^2) + 1e-6), eps inside the sqrt
    auto inverseNorm = [&](Value ss) {
      return m.rsqrt(m.add(sum(ss), m.f32(1e-6)));
    };
    ik = inverseNorm(kk);
    iq = m.mul(inverseNorm(qq), iq);
  }
  return {ik, iq, m.mul(sum(kq), m.mul(ik, iq))};
}

SmallVector<Value> TokenSteps::tokenInTurn(Value t, SmallVector<Value> S,
                                           SmallVector<Value> kf,
                                           SmallVector<Value> qf, Value decay,
                                           Value beta, ArrayRef<Value> vf,
                                           ArrayRef<Value> units) {
  if (op.getQkL2norm()) { // x / sqrt(sum(x^2) + 1e-6), eps inside the sqrt
    for (SmallVector<Value> *x : {&kf, &qf}) {
      Value ss = m.f32(0.0);
      for (Value e : *x)
        ss = m.add(ss, m.mul(e, e));
      Value inv = m.rsqrt(m.add(warpSum(ss), m.f32(1e-6)));
      for (Value &e : *x)
        e = m.mul(e, inv);
    }
  }
  Value scale = m.f32(op.getScaleOrDefault());
  for (Value &e : qf)
    e = m.mul(e, scale);
  SmallVector<Value> outputs;
  for (int64_t r = 0; r < *s.getColumnsPerLane(); ++r) {
    Value sk = m.f32(0.0);
    Value rowDecay = units.empty() ? decay : m.mul(decay, units[r]);
    for (int64_t jj = 0; jj < kPerLane; ++jj) {
      at(S, r, jj) = m.mul(at(S, r, jj), rowDecay);
      sk = m.add(sk, m.mul(at(S, r, jj), kf[jj]));
    }
    Value u = m.mul(beta, m.sub(vf[r], warpSum(sk)));
    Value sq = m.f32(0.0);
    for (int64_t jj = 0; jj < kPerLane; ++jj) {
      at(S, r, jj) = m.add(at(S, r, jj), m.mul(kf[jj], u));
      sq = m.add(sq, m.mul(at(S, r, jj), qf[jj]));
    }
    outputs.push_back(warpSum(sq));
  }
  storeOutputs(t, outputs);
  return S;
}
