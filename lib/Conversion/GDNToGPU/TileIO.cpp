//===- TileIO.cpp - the state tile and the outputs in and out ---------------===//
//
// Register tiles and mma fragments of the state, the initial, final,
// per-token and parent states, and o (TileIO.h).
//
//===----------------------------------------------------------------------===//

#include "TileIO.h"

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

SmallVector<Value> TileIO::loadTile(Value src, SmallVector<Value> prefix,
                                    Value keep, SmallVector<Value> *rowScales) {
  if (s.tensorCores()) {
    SmallVector<Value> tile = loadFragments(src, prefix, op.isVKLayout());
    if (isScaled(src)) { // e4m3 x the scales of the lane's columns [v0, v0 + R)
      int64_t R = *s.getColumnsPerLane();
      SmallVector<Value> scale =
          extractAll(loadVector(scalesOf(src), scaleIndex(prefix), R));
      for (int64_t r = 0; r < R; ++r)
        for (int64_t j = 0; j < kPerLane; ++j)
          at(tile, r, j) = m.mul(at(tile, r, j), scale[r]);
    }
    if (keep)
      for (Value &e : tile)
        e = arith::SelectOp::create(b, loc, keep, e, m.f32(0.0));
    return tile;
  }
  auto load = [&](Value from, ValueRange idx, int64_t count) {
    Value raw = loadVector(from, idx, count);
    return keep ? keepOrZero(keep, raw) : raw;
  };
  SmallVector<Value> tile(*s.getColumnsPerLane() * kPerLane);
  auto at2 = [&](Value x, Value y) { return withIndices(prefix, x, y); };
  if (op.isVKLayout()) {
    for (int64_t r = 0; r < *s.getColumnsPerLane(); ++r) {
      auto row =
          extractAll(m.toF32(load(src, at2(offset(v0, r), k0), kPerLane)));
      for (int64_t j = 0; j < kPerLane; ++j)
        at(tile, r, j) = row[j];
    }
  } else {
    for (int64_t j = 0; j < kPerLane; ++j) {
      auto col = extractAll(
          m.toF32(load(src, at2(offset(k0, j), v0), *s.getColumnsPerLane())));
      for (int64_t r = 0; r < *s.getColumnsPerLane(); ++r)
        at(tile, r, j) = col[r];
    }
  }
  if (isScaled(src)) { // e4m3 x its row's scale (the lane's R rows, one load)
    SmallVector<Value> scale = extractAll(
        load(scalesOf(src), scaleIndex(prefix), *s.getColumnsPerLane()));
    if (rowScales) {
      *rowScales = scale;
      return tile;
    }
    for (int64_t r = 0; r < *s.getColumnsPerLane(); ++r)
      for (int64_t j = 0; j < kPerLane; ++j)
        at(tile, r, j) = m.mul(at(tile, r, j), scale[r]);
  }
  return tile;
}

Value TileIO::keepOrZero(Value keep, Value raw) {
  auto vt = cast<VectorType>(raw.getType());
  int64_t width = vt.getElementTypeBitWidth();
  int64_t bits = vt.getNumElements() * width;
  Value words = raw;
  if (width != 32 && bits % 32 == 0)
    words = vector::BitCastOp::create(
        b, loc, VectorType::get({bits / 32}, b.getI32Type()), raw);
  Value zeros = arith::ConstantOp::create(
      b, loc, cast<TypedAttr>(b.getZeroAttr(words.getType())));
  Value kept = arith::SelectOp::create(b, loc, keep, words, zeros);
  if (words == raw)
    return kept;
  return vector::BitCastOp::create(b, loc, vt, kept);
}

bool TileIO::isScaled(Value state) {
  return isa<Float8E4M3FNType>(
      cast<MemRefType>(state.getType()).getElementType());
}

SmallVector<Value> TileIO::scaleIndex(ArrayRef<Value> prefix) {
  SmallVector<Value> idx(prefix);
  idx.push_back(v0);
  return idx;
}

Value TileIO::scalesOf(Value state) {
  if (state == op.getIntermediateStates())
    return op.getIntermediateStateScale();
  if (state == op.getStateCheckpoints())
    return op.getCheckpointScale();
  return op.getStateScale();
}

SmallVector<Value> TileIO::quantizeRows(SmallVector<Value> &tile) {
  int64_t rows = *s.getColumnsPerLane();
  SmallVector<Value> amax;
  for (int64_t r = 0; r < rows; ++r) {
    Value partial = m.f32(0.0);
    for (int64_t j = 0; j < kPerLane; ++j)
      partial = m.maxAbs(partial, at(tile, r, j));
    // mma fragments: a column's keys are on the 4 lanes of a quad (lane % 4).
    amax.push_back(s.tensorCores() ? butterfly(partial, 2, 1,
                                               [&](Value a, Value c) {
                                                 return m.maxAbs(a, c);
                                               })
                                   : warpMaxAbs(partial));
  }
  SmallVector<Value> scales, invs;
  // Spread over the lanes from 2 rows a lane: with one row (decode on the
  // tiny grid) one division is saved and a shuffle joins the latency-bound
  // chain (docs/cost-model.md#e4m3-step-states).
  if (!s.tensorCores() && rows >= 2 && 2 * rows <= s.lanesAlongK()) {
    std::tie(scales, invs) = rowQuotientsAcrossLanes(amax);
  } else {
    for (Value a : amax) {
      auto [scale, inv] = m.e4m3Scale(a);
      scales.push_back(scale);
      invs.push_back(inv);
    }
  }
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < kPerLane; ++j)
      at(tile, r, j) = m.mul(at(tile, r, j), invs[r]);
  return scales;
}

std::pair<SmallVector<Value>, SmallVector<Value>>
TileIO::rowQuotientsAcrossLanes(ArrayRef<Value> amax) {
  // The R rows' 2R quotients are the same on the lanes that share the rows
  // (each amax is their all-reduced max): lane kLane = i of them computes
  // quotient i, 448 / amax[i] for i < R (0 where amax[i] is 0 or NaN, as
  // KernelMath::e4m3Scale) and amax[i - R] / 448 above, and every lane
  // takes the R of each kind by an indexed shuffle from lane i * lanesV +
  // vLane: one IEEE division a lane instead of 2R, the same bits.
  int64_t rows = amax.size(), lanesV = *s.getLanesAlongV();
  auto i32 = [&](Value index) {
    return arith::IndexCastOp::create(b, loc, b.getI32Type(), index);
  };
  auto c32 = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  };
  Value i = i32(kLane);
  Value row = arith::RemUIOp::create(b, loc, i, c32(rows));
  Value a = amax[0];
  for (int64_t r = 1; r < rows; ++r)
    a = arith::SelectOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, row, c32(r)),
        amax[r], a);
  Value isInv =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, i, c32(rows));
  Value max = m.f32(KernelMath::kE4M3Max);
  Value q = m.div(arith::SelectOp::create(b, loc, isInv, max, a),
                  arith::SelectOp::create(b, loc, isInv, a, max));
  Value none = // amax below kE4M3MinAmax (0 included) or NaN
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ULT, a,
                            m.f32(KernelMath::kE4M3MinAmax));
  q = arith::SelectOp::create(b, loc,
                              arith::AndIOp::create(b, loc, isInv, none),
                              m.f32(0.0), q);
  Value vLane = arith::SubIOp::create(
      b, loc, i32(lane), arith::MulIOp::create(b, loc, i, c32(lanesV)));
  auto from = [&](int64_t quotient) {
    Value src = arith::AddIOp::create(b, loc, vLane, c32(quotient * lanesV));
    return gpu::ShuffleOp::create(b, loc, q, src, c32(kWarpSize),
                                  gpu::ShuffleMode::IDX)
        .getShuffleResult();
  };
  SmallVector<Value> scales, invs;
  for (int64_t r = 0; r < rows; ++r) {
    invs.push_back(from(r));
    scales.push_back(from(rows + r));
  }
  return {scales, invs};
}

void TileIO::storeTile(ValueRange results, Value dst,
                              SmallVector<Value> prefix, Value cond) {
  SmallVector<Value> tile(results.begin(), results.end());
  // A quantized state: every lane of the warp takes part in its rows'
  // max, before the branch.
  SmallVector<Value> scales;
  if (isScaled(dst))
    scales = quantizeRows(tile);
  OpBuilder::InsertionGuard g(b);
  if (cond) {
    auto ifOp = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  }
  if (s.tensorCores()) {
    if (!scales.empty()) { // lane 4g stores its columns' R scales
      Value first = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::eq,
          arith::RemUIOp::create(b, loc, lane, m.index(4)), m.index(0));
      auto ifFirst = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard inFirst(b);
      b.setInsertionPointToStart(&ifFirst.getThenRegion().front());
      storeVector(scales, scalesOf(dst), scaleIndex(prefix));
    }
    return storeFragments(tile, dst, prefix, op.isVKLayout());
  }
  // The lanes of key group 0 store the R scales. A tree reads a parent's
  // per-token state back (startState) with no barrier, each lane its own
  // stores: there every lane stores its rows' scales (the same values).
  bool everyLane = dst == op.getIntermediateStates() && op.hasParentTable();
  if (!scales.empty() && everyLane) {
    storeVector(scales, scalesOf(dst), scaleIndex(prefix));
  } else if (!scales.empty()) {
    Value isLane0 = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          kLane, m.index(0));
    auto ifLane0 = scf::IfOp::create(b, loc, isLane0, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard inLane0(b);
    b.setInsertionPointToStart(&ifLane0.getThenRegion().front());
    storeVector(scales, scalesOf(dst), scaleIndex(prefix));
  }
  auto at2 = [&](Value x, Value y) { return withIndices(prefix, x, y); };
  if (op.isVKLayout()) {
    for (int64_t r = 0; r < *s.getColumnsPerLane(); ++r) {
      SmallVector<Value> row;
      for (int64_t j = 0; j < kPerLane; ++j)
        row.push_back(at(tile, r, j));
      storeRounded(row, dst, at2(offset(v0, r), k0));
    }
  } else {
    for (int64_t j = 0; j < kPerLane; ++j) {
      SmallVector<Value> col;
      for (int64_t r = 0; r < *s.getColumnsPerLane(); ++r)
        col.push_back(at(tile, r, j));
      storeRounded(col, dst, at2(offset(k0, j), v0));
    }
  }
}

SmallVector<Value> TileIO::loadFragments(Value src, SmallVector<Value> prefix,
                                         bool vk) {
  SmallVector<Value> tile(*s.getColumnsPerLane() * kPerLane);
  int64_t R = *s.getColumnsPerLane();
  if (!vk) { // kv: the lane's R columns side by side, a key each
    for (int64_t j = 0; j < kPerLane; ++j) {
      Value key = offset(k0, 8 * (j / 2) + j % 2);
      auto columns =
          extractAll(m.toF32(loadVector(src, withIndices(prefix, key, v0), R)));
      for (int64_t r = 0; r < R; ++r)
        at(tile, r, j) = columns[r];
    }
    return tile;
  }
  // vk: keys 8p + 2t, 8p + 2t + 1
  for (int64_t r = 0; r < *s.getColumnsPerLane(); ++r) {
    Value v = offset(v0, r);
    for (int64_t p = 0; p < d.K / 8; ++p) {
      auto pair = extractAll(m.toF32(
          loadVector(src, withIndices(prefix, v, offset(k0, 8 * p)), 2)));
      at(tile, r, 2 * p) = pair[0];
      at(tile, r, 2 * p + 1) = pair[1];
    }
  }
  return tile;
}

void TileIO::storeFragments(ArrayRef<Value> tile, Value dst,
                            SmallVector<Value> prefix, bool vk) {
  auto at = [&](int64_t r, int64_t j) { return tile[r * kPerLane + j]; };
  if (!vk) { // kv: the lane's R columns side by side
    for (int64_t j = 0; j < kPerLane; ++j) {
      SmallVector<Value> columns;
      for (int64_t r = 0; r < *s.getColumnsPerLane(); ++r)
        columns.push_back(at(r, j));
      storeRounded(columns, dst,
                   withIndices(prefix, offset(k0, 8 * (j / 2) + j % 2), v0));
    }
    return;
  }
  for (int64_t r = 0; r < *s.getColumnsPerLane(); ++r) {
    Value v = offset(v0, r);
    for (int64_t p = 0; p < d.K / 8; ++p)
      storeRounded({at(r, 2 * p), at(r, 2 * p + 1)}, dst,
                   withIndices(prefix, v, offset(k0, 8 * p)));
  }
}

void TileIO::storeRounded(SmallVector<Value> elements, Value dst,
                          SmallVector<Value> idx) {
  if (op.getStochasticRounding() && isScaled(dst)) {
    Value first = m.positionIn(dst, idx);
    for (auto [i, e] : llvm::enumerate(elements)) {
      Value position =
          i == 0 ? first
                 : arith::AddIOp::create(
                       b, loc, first,
                       arith::ConstantIntOp::create(b, loc, b.getI32Type(), i));
      e = m.e4m3Stochastic(e, position);
    }
  }
  storeVector(elements, dst, idx);
}

SmallVector<Value> TileIO::loadState(bool branchless,
                                     SmallVector<Value> *rowScales) {
  SmallVector<Value> tile(*s.getColumnsPerLane() * kPerLane);
  Value init = op.getInitialState();
  if (!init) {
    for (Value &e : tile)
      e = m.f32(0.0);
    return tile;
  }
  if (!isScaled(init) || s.tensorCores()) // fragments are scaled on load
    rowScales = nullptr;
  if (!valid)
    return loadTile(init, {stateRow, hv}, Value(), rowScales);
  if (branchless && cast<ShapedType>(init.getType()).getDimSize(0) >= 1) {
    Value row = arith::SelectOp::create(b, loc, valid, stateRow, m.index(0));
    return loadTile(init, {row, hv}, valid, rowScales);
  }
  // Pool: a padding row (slot < 0) reads nothing and starts from zero (its
  // row scales too).
  SmallVector<Value> scales;
  size_t count = tile.size() + (rowScales ? *s.getColumnsPerLane() : 0);
  SmallVector<Type> types(count, b.getF32Type());
  auto ifOp = scf::IfOp::create(b, loc, types, valid, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    SmallVector<Value> loaded =
        loadTile(init, {stateRow, hv}, Value(), rowScales ? &scales : nullptr);
    loaded.append(scales);
    scf::YieldOp::create(b, loc, loaded);
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    scf::YieldOp::create(b, loc, SmallVector<Value>(count, m.f32(0.0)));
  }
  ValueRange results = ifOp.getResults();
  if (rowScales)
    rowScales->assign(results.begin() + tile.size(), results.end());
  return SmallVector<Value>(results.take_front(tile.size()));
}

void TileIO::storeIntermediate(Value t, ValueRange tile) {
  Value inter = op.getIntermediateStates();
  if (!inter)
    return;
  Value step = arith::SubIOp::create(b, loc, t, tokenLo);
  Value cond = interValid;
  if (op.isVarlen()) {
    int64_t steps = cast<MemRefType>(inter.getType()).getDimSize(1);
    Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                          step, m.index(steps));
    cond = cond ? Value(arith::AndIOp::create(b, loc, cond, inRange)) : inRange;
  }
  storeTile(tile, inter, {interRow, step, hv}, cond);
}

void TileIO::storeCheckpoint(Value done, ValueRange tile) {
  if (!op.hasCheckpoints())
    return;
  auto [row, cond] =
      m.emitCheckpointRow(op, checkpointLo, checkpointHi, done, valid);
  // The condition is the CTA's (one sequence, one token count): an e4m3
  // checkpoint's row maxima and quotients are computed only where a row is
  // stored, not after every token.
  OpBuilder::InsertionGuard g(b);
  if (cond) {
    auto ifOp = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  }
  storeTile(tile, op.getStateCheckpoints(), {row, hv}, Value());
}

SmallVector<Value> TileIO::startState(Value source, ValueRange carried) {
  SmallVector<Type> types(carried.size(), b.getF32Type());
  Value zero = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 0);
  Value fromBuffer =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, source, zero);
  auto ifBuffer = scf::IfOp::create(b, loc, types, fromBuffer,
                                    /*withElseRegion=*/true);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&ifBuffer.getThenRegion().front());
  Value p = arith::IndexCastOp::create(b, loc, b.getIndexType(), source);
  scf::YieldOp::create(b, loc,
                       loadTile(op.getIntermediateStates(), {interRow, p, hv}));
  b.setInsertionPointToStart(&ifBuffer.getElseRegion().front());
  Value restart =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, source,
                            arith::ConstantIntOp::create(b, loc, b.getI32Type(),
                                                         KernelMath::kRestart));
  auto ifRoot = scf::IfOp::create(b, loc, types, restart,
                                  /*withElseRegion=*/true);
  scf::YieldOp::create(b, loc, ifRoot.getResults());
  b.setInsertionPointToStart(&ifRoot.getThenRegion().front());
  scf::YieldOp::create(b, loc, loadState());
  b.setInsertionPointToStart(&ifRoot.getElseRegion().front());
  scf::YieldOp::create(b, loc, carried);
  return SmallVector<Value>(ifBuffer.getResults());
}

void TileIO::storeOutputs(Value t, SmallVector<Value> outputs) {
  if (replay) // a replay has no output
    return;
  if (valid)
    for (Value &out : outputs)
      out = arith::SelectOp::create(b, loc, valid, out, m.f32(0.0));
  Value isLane0 = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, kLane,
                                        m.index(0));
  auto ifOp = scf::IfOp::create(b, loc, isLane0, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  storeVector(outputs, op.getO(), {tokenRow, t, hv, v0});
}
