//===- MmaDecode.cpp - an e4m3 decode on mma.sync and packed f16 ----------===//
//
// The kernel form of reductions = mma (KernelForms.h, MmaDecodeKernel): one
// token of an f8E4M3FN vk state. The token loop's e4m3 decode widens every
// state element to f32 and spends about 17 instructions on it
// (bench/results/quantized/sass-mix.md); here the two sums over K are
// m16n8k16 mma.sync on the e4m3 values widened to f16 pairs (one cvt a
// pair, exact), and the update, the row maximum and the requantization run
// on the same f16 pairs, two values an instruction.
//
// A warp holds 16 rows x K keys: lane 4g + t the rows v0, v0 + 1 (tile rows
// g and g + 8) and the keys [k0, k0 + K/4), k0 = t K/4 (KernelIndices.cpp).
// The mma's reduction index is permuted so that each lane's A and B
// registers are its own keys: for k-step s, tile columns 2t, 2t + 1 are
// keys k0 + 4s, k0 + 4s + 1 and columns 2t + 8, 2t + 9 keys k0 + 4s + 2,
// k0 + 4s + 3 (a sum does not depend on its order). B's column 0 is k̂,
// column 1 q̂, the others zero, so D's columns 0 and 1 (on lane t = 0) are
// E k̂ and E q̂ of the rows.
//
//===----------------------------------------------------------------------===//
#include "KernelForms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::gdn;

namespace {
/// The largest finite f16: the requantization's multiplier at most.
constexpr double kF16Max = 65504.0;
} // namespace

void MmaDecodeKernel::build() {
  enter();
  // A pool's token loads first, in flight while the slot index arrives
  // (TokenLoopKernel::build); after a programmatic launch's wait instead,
  // since the previous grid may write them.
  bool ordinary = s.launchMode() == LaunchMode::ordinary;
  tokenFirst = valid && ordinary;
  std::optional<TokenInputs> token;
  if (ordinary)
    token = loadToken(tokenLo, Value());
  Rows rows = loadRows();
  waitForPreviousGrid();
  if (!ordinary)
    token = loadToken(tokenLo, Value());
  const TokenInputs &in = *token;
  prefetchLaterState();

  // The lanes of a row group (t = 0..3) split K: sums over lane bits 0, 1.
  TokenNorms norms =
      tokenNorms(in.kf, in.qf, [&](Value x) { return butterflySum(x, 2, 1); });
  SmallVector<Value> kHat = halfPairs(in.kf, norms.ik);
  SmallVector<Value> qHat = halfPairs(in.qf, norms.iq);
  int64_t R = *s.getColumnsPerLane();
  Value decay = in.decay.front(), beta = in.beta.front();
  SmallVector<Value> outputs, decayed, us;
  for (int64_t tile = 0; tile < R / 2; ++tile) {
    Fragment sums =
        stateSums(rows.pairs[2 * tile], rows.pairs[2 * tile + 1], kHat, qHat);
    for (int64_t i = 0; i < 2; ++i) {
      int64_t r = 2 * tile + i;
      Value a = m.mul(decay, rows.scales[r]);
      Value u = m.mul(beta, m.sub(in.vf[r], m.mul(a, sums[2 * i])));
      outputs.push_back(m.add(m.mul(a, sums[2 * i + 1]), m.mul(norms.kq, u)));
      decayed.push_back(a);
      us.push_back(u);
    }
  }
  storeOutputs(tokenLo, outputs);

  Value fin = op.getFinalState();
  SmallVector<Value> bytes, scales;
  for (int64_t r = 0; r < R; ++r) {
    auto [e, scale] = requantize(rows.pairs[r], kHat, decayed[r], us[r]);
    bytes.push_back(e);
    scales.push_back(scale);
  }
  if (s.launchMode() == LaunchMode::programmatic_after_recurrence)
    launchDependents();
  OpBuilder::InsertionGuard g(b);
  if (valid) {
    auto ifValid = scf::IfOp::create(b, loc, valid, /*withElseRegion=*/false);
    b.setInsertionPointToStart(&ifValid.getThenRegion().front());
  }
  int64_t align = vectorAlignment(kPerLane, b.getType<Float8E4M3FNType>());
  for (int64_t r = 0; r < R; ++r)
    vector::StoreOp::create(b, loc, bytes[r], fin,
                            ValueRange{stateRow, hv, offset(v0, r), k0},
                            /*nontemporal=*/false, llvm::MaybeAlign(align));
  // Lane t = 0 of a row group stores its rows' scales.
  Value isLane0 = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, kLane,
                                        m.index(0));
  auto ifLane0 = scf::IfOp::create(b, loc, isLane0, /*withElseRegion=*/false);
  b.setInsertionPointToStart(&ifLane0.getThenRegion().front());
  storeVector(scales, scalesOf(fin), {stateRow, hv, v0});
}

MmaDecodeKernel::Rows MmaDecodeKernel::loadRows() {
  int64_t R = *s.getColumnsPerLane();
  Rows rows;
  Value init = op.getInitialState();
  auto halfPair = VectorType::get({2}, b.getF16Type());
  if (!init) {
    Value zero = arith::ConstantOp::create(
        b, loc, cast<TypedAttr>(b.getZeroAttr(halfPair)));
    rows.pairs.assign(R, SmallVector<Value>(kPerLane / 2, zero));
    rows.scales.assign(R, m.f32(0.0));
    return rows;
  }
  // A pool's padding row (slot < 0) loads slot 0 and keeps zeros, without a
  // branch (TileIO::loadState; the op's verifier guarantees a static pool
  // of at least one slot).
  Value row = valid
                  ? arith::SelectOp::create(b, loc, valid, stateRow, m.index(0))
                  : stateRow;
  auto load = [&](Value from, ValueRange idx, int64_t count) {
    Value raw = loadVector(from, idx, count);
    return valid ? keepOrZero(valid, raw) : raw;
  };
  rows.pairs.resize(R);
  for (int64_t r = 0; r < R; ++r) // byte i to half i
    rows.pairs[r] =
        m.e4m3HalfPairs(load(init, {row, hv, offset(v0, r), k0}, kPerLane));
  rows.scales = extractAll(load(scalesOf(init), {row, hv, v0}, R));
  return rows;
}

SmallVector<Value> MmaDecodeKernel::halfPairs(ArrayRef<Value> x, Value factor) {
  auto pairType = VectorType::get({2}, b.getF32Type());
  auto halfPair = VectorType::get({2}, b.getF16Type());
  SmallVector<Value> pairs;
  for (size_t j = 0; j < x.size(); j += 2) {
    Value pair = vector::FromElementsOp::create(
        b, loc, pairType,
        ValueRange{m.mul(x[j], factor), m.mul(x[j + 1], factor)});
    pairs.push_back(arith::TruncFOp::create(b, loc, halfPair, pair));
  }
  return pairs;
}

Fragment MmaDecodeKernel::stateSums(ArrayRef<Value> first,
                                    ArrayRef<Value> second,
                                    ArrayRef<Value> kHat,
                                    ArrayRef<Value> qHat) {
  // B's column g is k̂ on the lanes of group 0, q̂ on group 1, else zero.
  Value g = arith::DivUIOp::create(b, loc, lane, m.index(4));
  Value isK =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, g, m.index(0));
  Value isQ =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, g, m.index(1));
  Value zero = arith::ConstantOp::create(
      b, loc,
      cast<TypedAttr>(b.getZeroAttr(VectorType::get({2}, b.getF16Type()))));
  auto column = [&](int64_t j) {
    return arith::SelectOp::create(
        b, loc, isK, kHat[j],
        arith::SelectOp::create(b, loc, isQ, qHat[j], zero));
  };
  Fragment c;
  for (Value &x : c)
    x = m.f32(0.0);
  for (int64_t step = 0; step < kPerLane / 4; ++step) {
    int64_t lo = 2 * step, hi = 2 * step + 1;
    c = mmaSync(b, loc, {16, 8, 16}, NVVM::MMATypes::f16,
                {first[lo], second[lo], first[hi], second[hi]},
                {column(lo), column(hi)}, c);
  }
  // D's columns 0 and 1 are on lane t = 0 of the group: c0, c1 (tile row g,
  // the first row) and c2, c3 (row g + 8, the second).
  Value src = arith::AndIOp::create(
      b, loc, arith::IndexCastOp::create(b, loc, b.getI32Type(), lane),
      m.i32(~int64_t{3}));
  Fragment sums;
  for (int64_t i = 0; i < 4; ++i)
    sums[i] = gpu::ShuffleOp::create(b, loc, c[i], src, m.i32(kWarpSize),
                                     gpu::ShuffleMode::IDX)
                  .getShuffleResult();
  return sums;
}

std::pair<Value, Value> MmaDecodeKernel::requantize(ArrayRef<Value> pairs,
                                                    ArrayRef<Value> kHat,
                                                    Value rowDecayed, Value u) {
  auto pairType = VectorType::get({2}, b.getF32Type());
  auto halfPair = VectorType::get({2}, b.getF16Type());
  auto splat = [&](Value x) {
    return arith::TruncFOp::create(
        b, loc, halfPair,
        vector::FromElementsOp::create(b, loc, pairType, ValueRange{x, x}));
  };
  // c >= max |S'| (|k̂_i| <= 1), at least 2^-100 so that a zero row divides
  // (its W is then zero, and so its scale).
  Value absU =
      arith::MaximumFOp::create(b, loc, u, arith::NegFOp::create(b, loc, u));
  Value c = arith::MaximumFOp::create(
      b, loc, m.add(m.mul(rowDecayed, m.f32(KernelMath::kE4M3Max)), absU),
      m.f32(0x1p-100));
  Value inv = m.div(m.f32(1.0), c);
  Value alpha = splat(m.mul(rowDecayed, inv)), beta = splat(m.mul(u, inv));
  SmallVector<Value> w;
  Value amax = arith::ConstantOp::create(
      b, loc, cast<TypedAttr>(b.getZeroAttr(halfPair)));
  for (auto [e, k] : llvm::zip_equal(pairs, kHat)) {
    w.push_back(m.add(m.mul(e, alpha), m.mul(k, beta)));
    amax = m.maxAbs(amax, w.back());
  }
  Value rowMax = arith::MaximumFOp::create(
      b, loc,
      arith::ExtFOp::create(
          b, loc, b.getF32Type(),
          Value(vector::ExtractOp::create(b, loc, amax, int64_t{0}))),
      arith::ExtFOp::create(
          b, loc, b.getF32Type(),
          Value(vector::ExtractOp::create(b, loc, amax, int64_t{1}))));
  rowMax = butterfly(rowMax, 2, 1, [&](Value x, Value y) {
    return arith::MaximumFOp::create(b, loc, x, y);
  });
  // m = 448 / max |W| rounded to f16 (at most its largest finite value);
  // the scale c / m then matches the multiplier the values took. A zero or
  // NaN maximum stores scale 0.
  Value some = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, rowMax,
                                     m.f32(0.0));
  Value mult = arith::MinimumFOp::create(
      b, loc, m.div(m.f32(KernelMath::kE4M3Max), rowMax), m.f32(kF16Max));
  Value mult16 = arith::TruncFOp::create(b, loc, b.getF16Type(), mult);
  Value scale = arith::SelectOp::create(
      b, loc, some,
      m.div(c, arith::ExtFOp::create(b, loc, b.getF32Type(), mult16)),
      m.f32(0.0));
  Value m2 = arith::SelectOp::create(
      b, loc, some,
      vector::FromElementsOp::create(b, loc, halfPair,
                                     ValueRange{mult16, mult16}),
      arith::ConstantOp::create(b, loc,
                                cast<TypedAttr>(b.getZeroAttr(halfPair))));
  // cvt.rn.satfinite.e4m3x2.f16x2: half i to byte i of the 16-bit word.
  Type e4m3 = b.getType<Float8E4M3FNType>();
  SmallVector<Value> words;
  for (Value x : w)
    words.push_back(NVVM::ConvertF16x2ToF8x2Op::create(
        b, loc, b.getI16Type(), m.mul(x, m2), /*relu=*/false, e4m3));
  Value packed = vector::FromElementsOp::create(
      b, loc, VectorType::get({int64_t(words.size())}, b.getI16Type()), words);
  return {
      vector::BitCastOp::create(
          b, loc, VectorType::get({2 * int64_t(words.size())}, e4m3), packed),
      scale};
}
