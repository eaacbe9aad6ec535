//===- KeyDecayChunks.cpp - KDA's per-key decay in chunk_parallel ---------===//
//
// A decay per key channel (Kimi's KDA) in chunk_parallel's two launches
// (docs/math.md §5, "A decay per key"): the first launch's Gram matrices
// with each key's decay inside the sums (buildKeyDecayGram, CUDA cores),
// the scan's q and k decayed per key before its products (decayKeys), so
// the rest of the WY form (TensorCoreSolve.cpp, the substitution, the
// record) is the scalar one with exp(G) = 1.
//
// Every decay factor used is a product of exp(g) over tokens, each at most
// 1 for g <= 0: nothing overflows, and a -inf gate gives exact zeros.
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

void TensorCoreSolveKernel::buildKeyDecayGram() {
  int64_t C = *s.getStagedTokens(), warps = *s.getWarps();
  // Warp w holds columns j of C / warps each (chunks of 8, 16 or 32 tokens
  // on at most 4 warps: checkChunkedSolve), a column on `groups` lanes side
  // by side, each summing keys lane % groups, + groups, ...: the column's
  // sums need shuffles only.
  int64_t columns = C / warps, groups = kWarpSize / columns,
          rounds = llvm::divideCeil(d.K, groups);
  assert(C % warps == 0 && kWarpSize % columns == 0 && "checkChunkedSolve");
  auto cmp = [&](arith::CmpIPredicate pred, Value x, Value y) -> Value {
    return arith::CmpIOp::create(b, loc, pred, x, y);
  };
  auto scalarAt = [&](Value buf, ValueRange idx) {
    return extractAll(m.toF32(loadVector(buf, idx, 1))).front();
  };
  Value lane = arith::RemUIOp::create(b, loc, tid, m.index(kWarpSize));
  Value group = arith::RemUIOp::create(b, loc, lane, m.index(groups));
  Value j = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(
          b, loc, arith::DivUIOp::create(b, loc, tid, m.index(kWarpSize)),
          m.index(columns)),
      arith::DivUIOp::create(b, loc, lane, m.index(groups)));
  // For column j, gram0 and gram1 of every row i (0 above the diagonal:
  // D_ij = 0 for i < j, 1 for i = j) and q_j.q_j.
  SmallVector<Value> init(2 * C + 1, m.f32(0.0));
  auto loop = scf::ForOp::create(
      b, loc, m.index(0), m.index(rounds), m.index(1), init,
      [&](OpBuilder &nb, Location, Value r, ValueRange acc) {
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        Value key = arith::AddIOp::create(
            b, loc, group, arith::MulIOp::create(b, loc, r, m.index(groups)));
        Value real = cmp(arith::CmpIPredicate::ult, key, m.index(d.K));
        key = arith::SelectOp::create(b, loc, real, key, m.index(0));
        auto orZero = [&](Value x) -> Value {
          return d.K % groups == 0
                     ? x
                     : arith::SelectOp::create(b, loc, real, x, m.f32(0.0));
        };
        Value kj = orZero(scalarAt(kStage, {j, key}));
        Value qj = orZero(scalarAt(qStage, {j, key}));
        SmallVector<Value> next(acc.begin(), acc.end());
        Value decay = m.f32(0.0);
        for (int64_t i = 0; i < C; ++i) {
          Value e = memref::LoadOp::create(b, loc, decayStage,
                                           ValueRange{m.index(i), key});
          decay = arith::SelectOp::create(
              b, loc, cmp(arith::CmpIPredicate::eq, j, m.index(i)), m.f32(1.0),
              m.mul(decay, e));
          Value w = m.mul(decay, kj);
          next[i] =
              m.add(next[i], m.mul(scalarAt(kStage, {m.index(i), key}), w));
          next[C + i] =
              m.add(next[C + i], m.mul(scalarAt(qStage, {m.index(i), key}), w));
        }
        next[2 * C] = m.add(next[2 * C], m.mul(qj, qj));
        scf::YieldOp::create(b, loc, next);
      });
  SmallVector<Value> sums;
  for (Value x : loop.getResults())
    sums.push_back(butterflySum(x, groups / 2, 1));
  auto first = scf::IfOp::create(
      b, loc, cmp(arith::CmpIPredicate::eq, group, m.index(0)),
      /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&first.getThenRegion().front());
    for (int64_t i = 0; i < C; ++i)
      for (int64_t which = 0; which < 2; ++which)
        memref::StoreOp::create(b, loc, sums[which * C + i], gramStage,
                                ValueRange{m.index(which), m.index(i), j});
    if (op.getQkL2norm())
      memref::StoreOp::create(b, loc, sums[2 * C], tokenStage,
                              ValueRange{m.index(2), j});
  }
  gpu::BarrierOp::create(b, loc);
  storeTokenFactors(m.f32(1.0), m.f32(1.0));
}

void TensorCoreSolveKernel::decayKeys() {
  int64_t C = *s.getStagedTokens(), threads = *s.getWarps() * kWarpSize,
          pairs = d.K / 2;
  // `parts` threads side by side a key pair (a power of two, at most the
  // chunk), each `rows` rows of it: their products of exp(g) combined by
  // shuffle scans over the parts, so no thread walks the whole chunk.
  int64_t parts = 1;
  while (parts * 2 <= C && pairs * parts * 2 <= threads)
    parts *= 2;
  int64_t rows = C / parts, pairsAtOnce = threads / parts;
  Type f32 = b.getF32Type();
  auto pairType = VectorType::get({2}, f32);
  auto ones = [&]() -> Value {
    return arith::ConstantOp::create(
        b, loc, pairType,
        DenseElementsAttr::get(pairType, b.getF32FloatAttr(1.0f)));
  };
  auto times = [&](Value x, Value y) -> Value {
    return arith::MulFOp::create(b, loc, x, y);
  };
  auto cmp = [&](arith::CmpIPredicate pred, Value x, Value y) -> Value {
    return arith::CmpIOp::create(b, loc, pred, x, y);
  };
  Value part = arith::RemUIOp::create(b, loc, tid, m.index(parts));
  Value first = arith::DivUIOp::create(b, loc, tid, m.index(parts));
  Value row0 = arith::MulIOp::create(b, loc, part, m.index(rows));
  // The product over the other parts before (up) or after this one: an
  // exclusive scan of `local` over the `parts` lanes of a pair.
  auto exclusive = [&](Value local, bool up) -> Value {
    auto shuffle = [&](Value x, int64_t dist) {
      SmallVector<Value> elements;
      for (Value e : extractAll(x))
        elements.push_back(
            gpu::ShuffleOp::create(
                b, loc, e, static_cast<uint32_t>(dist), kWarpSize,
                up ? gpu::ShuffleMode::UP : gpu::ShuffleMode::DOWN)
                .getShuffleResult());
      return fromElements(elements);
    };
    auto inPair = [&](int64_t dist) {
      return up ? cmp(arith::CmpIPredicate::uge, part, m.index(dist))
                : cmp(arith::CmpIPredicate::ult, offset(part, dist),
                      m.index(parts));
    };
    Value x =
        arith::SelectOp::create(b, loc, inPair(1), shuffle(local, 1), ones());
    for (int64_t dist = 1; dist < parts; dist *= 2)
      x = arith::SelectOp::create(b, loc, inPair(dist),
                                  times(x, shuffle(x, dist)), x);
    return x;
  };
  for (int64_t p0 = 0; p0 < pairs; p0 += pairsAtOnce) {
    Value pair = offset(first, p0);
    Value active = cmp(arith::CmpIPredicate::ult, pair, m.index(pairs));
    Value key = arith::MulIOp::create(
        b, loc, arith::SelectOp::create(b, loc, active, pair, m.index(0)),
        m.index(2));
    auto at = [&](Value buf, Value i) {
      return m.toF32(loadVector(buf, {i, key}, 2));
    };
    auto store = [&](Value x, Value buf, Value i) {
      storeVector(extractAll(x), buf, {i, key});
    };
    auto row = [&](int64_t r) { return offset(row0, r); };
    Value before = ones(), after = ones();
    if (parts > 1) { // every lane shuffles, the inactive ones too
      Value local = ones();
      for (int64_t r = 0; r < rows; ++r)
        local = times(local, at(decayStage, row(r)));
      before = exclusive(local, /*up=*/true);
      after = exclusive(local, /*up=*/false);
    }
    std::optional<OpBuilder::InsertionGuard> inPairs;
    if (p0 + pairsAtOnce > pairs) {
      auto ifOp = scf::IfOp::create(b, loc, active, /*withElseRegion=*/false);
      inPairs.emplace(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    }
    // The tail first (it reads k as staged), then Gamma, q and k in place;
    // the last part's Gamma is the chunk's.
    Value tail = after;
    for (int64_t r = rows - 1; r >= 0; --r) {
      store(times(at(kStage, row(r)), tail), tailStage, row(r));
      tail = times(tail, at(decayStage, row(r)));
    }
    Value gamma = before;
    for (int64_t r = 0; r < rows; ++r) {
      gamma = times(gamma, at(decayStage, row(r)));
      store(times(at(qStage, row(r)), gamma), qStage, row(r));
      store(times(at(kStage, row(r)), gamma), kStage, row(r));
    }
    auto last = scf::IfOp::create(
        b, loc, cmp(arith::CmpIPredicate::eq, part, m.index(parts - 1)),
        /*withElseRegion=*/false);
    OpBuilder::InsertionGuard inLast(b);
    b.setInsertionPointToStart(&last.getThenRegion().front());
    storeVector(extractAll(gamma), lastDecayStage, {key});
  }
  gpu::BarrierOp::create(b, loc);
}
