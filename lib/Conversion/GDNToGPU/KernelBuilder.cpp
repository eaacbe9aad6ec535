//===- KernelBuilder.cpp - the body of a gdn.recurrent GPU kernel
//----------===//
//
// The state tile in registers, the token loop (one token after another,
// its reductions side by side or in turn), staging of the tokens' inputs
// in shared memory, the state and output stores (KernelBuilder.h).
//
//===----------------------------------------------------------------------===//
#include "KernelBuilder.h"

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

#include <algorithm>
#include <utility>

using namespace mlir;
using namespace mlir::gdn;

namespace {
/// Byte alignment of a vector of `count` elements of `elementType` at an
/// offset that is a multiple of `count`: the largest power of two dividing its
/// size, at most 16.
int64_t vectorAlignment(int64_t count, Type elementType) {
  int64_t bytes = count * elementType.getIntOrFloatBitWidth() / 8;
  // Never more than the 16 bytes callers guarantee for their buffers (the C
  // API checks it); the offsets themselves are multiples of the vector size.
  return std::min<int64_t>(bytes & -bytes, 16);
}
} // namespace

void KernelBuilder::build() {
  m.uniqueConstantsIn(b.getInsertionBlock()); // the kernel's entry block
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value warpSize = m.index(kWarpSize);
  Value lane = arith::RemUIOp::create(b, loc, tid, warpSize);
  Value warp = arith::DivUIOp::create(b, loc, tid, warpSize);
  kLane = arith::DivUIOp::create(b, loc, lane, m.index(s.lanesV));
  Value vLane = arith::RemUIOp::create(b, loc, lane, m.index(s.lanesV));
  Value vBlock = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  hv = gpu::BlockIdOp::create(b, loc, gpu::Dimension::y);
  n = gpu::BlockIdOp::create(b, loc, gpu::Dimension::z);
  h = arith::DivUIOp::create(b, loc, hv, m.index(d.HV / d.H));
  v0 = arith::AddIOp::create(
      b, loc,
      arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, vBlock, m.index(s.blockRows())),
          arith::MulIOp::create(b, loc, warp, m.index(s.warpRows()))),
      arith::MulIOp::create(b, loc, vLane, m.index(s.rows)));
  k0 = arith::MulIOp::create(b, loc, kLane, m.index(s.kPerLane));
  if (s.tensorCores()) { // m16n8k8 fragments (TensorCoreSolve.cpp)
    mmaLane = lane;     // tile rows g, g + 8: the warp's columns 2g, 2g + 1
    v0 = arith::AddIOp::create(
        b, loc,
        arith::AddIOp::create(
            b, loc,
            arith::MulIOp::create(b, loc, vBlock, m.index(s.blockRows())),
            arith::MulIOp::create(b, loc, warp, m.index(s.warpRows()))),
        arith::MulIOp::create(
            b, loc, arith::DivUIOp::create(b, loc, lane, m.index(4)),
            m.index(2)));
    k0 = arith::MulIOp::create(
        b, loc, arith::RemUIOp::create(b, loc, lane, m.index(4)), m.index(2));
  }

  if (s.programmaticLaunch == GPUSchedule::kLaunchAtStart)
    launchDependents();
  std::tie(stateRow, valid) = m.emitStateSlot(op, n);
  Value hi;
  std::tie(tokenRow, tokenLo, hi) = m.emitTokenRange(op, n);
  std::tie(interRow, interValid) = m.emitIntermediateRow(op, n, valid);
  if (s.stages > 0) {
    buildWarpSpecialized(tid, warp, lane, vBlock, hi);
    unrollTokenLoops();
    return;
  }
  // The tensor-core solve of a single chunk in CTAs of 4 or more warps loads
  // the state after the chunk's staging loads (chunk()), so the staging
  // barrier does not wait behind the state's loads; the state is first read
  // by the products after the Gram pass and the substitution. T = 12, N =
  // 64 / 256: 4-6% / 1-7% faster with 8 / 4 warps; with 2 warps (N = 1)
  // 2-4% slower, where the state's latency is the CTA's critical path
  // (docs/cost-model.md#tensor-core-late-state).
  bool lateState = s.tensorCores() && s.warps >= 4 && !op.isVarlen() &&
                   d.T <= s.chunk;
  if (s.tensorCores())
    prefetchLaterInputs(tid, vBlock);
  // Decode (one token) from a pool: the token's inputs are loaded before the
  // state, so their loads are in flight while the slot index arrives; the
  // state's loads wait on it, and in-order issue would otherwise hold the
  // token's loads behind them. (After a programmatic launch's wait they
  // must stay: the previous grid may write them.)
  // The state then loads without a branch (loadState), so ptxas may order
  // all the entry's loads before any math waits on one.
  tokenFirst = valid && s.chunk == 0 && !op.isVarlen() && d.T == 1 &&
               !op.hasParentTable() && !s.programmaticLaunch;
  if (tokenFirst)
    firstToken = loadToken(tokenLo, Value());
  SmallVector<Value> state =
      lateState ? SmallVector<Value>() : loadState(tokenFirst);
  waitForPreviousGrid();
  if (s.chunk == 0) {
    prefetchLaterState(tid, vBlock);
    auto loop = scf::ForOp::create(
        b, loc, tokenLo, hi, m.index(1), state,
        [&](OpBuilder &nb, Location, Value t, ValueRange carried) {
          OpBuilder::InsertionGuard g(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          SmallVector<Value> next = token(t, Value(), carried);
          storeIntermediate(t, next);
          scf::YieldOp::create(b, loc, next);
        });
    storeState(loop.getResults());
    return;
  }
  // Staged: the tokens' inputs come through shared memory, `chunk` tokens
  // at a time, all loaded at once before the chunk's recurrence starts, so
  // the loop pays one memory latency a chunk instead of one a token.
  createStagingBuffers(tid, vBlock);
  if (!op.isVarlen() && d.T <= s.chunk) {
    storeState(chunk(m.index(0), m.index(d.T), state));
  } else {
    storeState(forEachChunk(
        hi, state, [&](Value c, Value count, Value, Value, ValueRange carried) {
          return chunk(c, count, carried);
        }));
  }
  unrollTokenLoops();
}

void KernelBuilder::unrollTokenLoops() {
  // unroll_tokens counts tokens; an iteration of a pair loop takes two.
  for (scf::ForOp loop : tokenLoops) {
    int64_t perIteration = getConstantIntValue(loop.getStep()).value_or(1);
    std::optional<int64_t> lo = getConstantIntValue(loop.getLowerBound());
    std::optional<int64_t> hi = getConstantIntValue(loop.getUpperBound());
    if (lo && hi &&
        llvm::divideCeil(std::max<int64_t>(*hi - *lo, 0), perIteration) *
                perIteration <=
            s.unroll)
      (void)loopUnrollFull(loop);
    else if (s.unroll / perIteration > 1)
      (void)loopUnrollByFactor(loop, s.unroll / perIteration);
  }
}

SmallVector<Value> KernelBuilder::forEachChunk(
    Value hi, ValueRange init,
    function_ref<SmallVector<Value>(Value, Value, Value, Value, ValueRange)>
        body) {
  auto loop = scf::ForOp::create(
      b, loc, tokenLo, hi, m.index(s.chunk), init,
      [&](OpBuilder &nb, Location, Value c, ValueRange carried) {
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        Value count = arith::MinUIOp::create(
            b, loc, m.index(s.chunk), arith::SubIOp::create(b, loc, hi, c));
        Value slot, phase; // only with a producer's ring
        if (s.stages > 0) {
          Value i = arith::DivUIOp::create(
              b, loc, arith::SubIOp::create(b, loc, c, tokenLo),
              m.index(s.chunk));
          slot = arith::RemUIOp::create(b, loc, i, m.index(s.stages));
          Value round = arith::DivUIOp::create(b, loc, i, m.index(s.stages));
          phase = arith::IndexCastOp::create(
              b, loc, b.getI32Type(),
              arith::RemUIOp::create(b, loc, round, m.index(2)));
        }
        scf::YieldOp::create(b, loc, body(c, count, slot, phase, carried));
      });
  return SmallVector<Value>(loop.getResults());
}

SmallVector<Value> KernelBuilder::extractAll(Value vec) {
  SmallVector<Value> out;
  for (int64_t i = 0, e = cast<VectorType>(vec.getType()).getNumElements();
       i < e; ++i)
    out.push_back(vector::ExtractOp::create(b, loc, vec, i));
  return out;
}

Value KernelBuilder::loadVector(Value src, ValueRange idx, int64_t count) {
  Type et = cast<MemRefType>(src.getType()).getElementType();
  return vector::LoadOp::create(b, loc, VectorType::get({count}, et), src, idx,
                                /*nontemporal=*/false,
                                llvm::MaybeAlign(vectorAlignment(count, et)));
}

void KernelBuilder::storeVector(ArrayRef<Value> elements, Value dst,
                                ValueRange idx) {
  Type et = cast<MemRefType>(dst.getType()).getElementType();
  int64_t count = elements.size();
  Value vec = vector::FromElementsOp::create(
      b, loc, VectorType::get({count}, b.getF32Type()), elements);
  vector::StoreOp::create(b, loc, m.fromF32(vec, et), dst, idx,
                          /*nontemporal=*/false,
                          llvm::MaybeAlign(vectorAlignment(count, et)));
}

Value KernelBuilder::butterflySum(Value x, int64_t from, int64_t to) {
  for (int64_t offset = from; offset >= to; offset /= 2) {
    Value other = gpu::ShuffleOp::create(b, loc, x, offset, kWarpSize,
                                         gpu::ShuffleMode::XOR)
                      .getShuffleResult();
    x = m.add(x, other);
  }
  return x;
}

SmallVector<Value> KernelBuilder::loadTile(Value src,
                                           SmallVector<Value> prefix) {
  if (s.tensorCores())
    return loadFragments(src, prefix);
  SmallVector<Value> tile(s.rows * s.kPerLane);
  auto at2 = [&](Value x, Value y) { return withIndices(prefix, x, y); };
  if (op.isVKLayout()) {
    for (int64_t r = 0; r < s.rows; ++r) {
      auto row = extractAll(
          m.toF32(loadVector(src, at2(offset(v0, r), k0), s.kPerLane)));
      for (int64_t j = 0; j < s.kPerLane; ++j)
        at(tile, r, j) = row[j];
    }
  } else {
    for (int64_t j = 0; j < s.kPerLane; ++j) {
      auto col =
          extractAll(m.toF32(loadVector(src, at2(offset(k0, j), v0), s.rows)));
      for (int64_t r = 0; r < s.rows; ++r)
        at(tile, r, j) = col[r];
    }
  }
  return tile;
}

SmallVector<Value> KernelBuilder::withIndices(ArrayRef<Value> prefix, Value x,
                                              Value y) {
  SmallVector<Value> idx(prefix);
  idx.push_back(x);
  idx.push_back(y);
  return idx;
}

SmallVector<Value> KernelBuilder::loadState(bool branchless) {
  SmallVector<Value> tile(s.rows * s.kPerLane);
  Value init = op.getInitialState();
  if (!init) {
    for (Value &e : tile)
      e = m.f32(0.0);
    return tile;
  }
  auto load = [&]() { tile = loadTile(init, {stateRow, hv}); };
  if (!valid) {
    load();
    return tile;
  }
  if (branchless && cast<ShapedType>(init.getType()).getDimSize(0) >= 1) {
    Value row = arith::SelectOp::create(b, loc, valid, stateRow, m.index(0));
    tile = loadTile(init, {row, hv});
    for (Value &e : tile)
      e = arith::SelectOp::create(b, loc, valid, e, m.f32(0.0));
    return tile;
  }
  // Pool: a padding row (slot < 0) reads nothing and starts from zero.
  SmallVector<Type> types(tile.size(), b.getF32Type());
  auto ifOp = scf::IfOp::create(b, loc, types, valid, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    load();
    scf::YieldOp::create(b, loc, tile);
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    SmallVector<Value> zeros(tile.size(), m.f32(0.0));
    scf::YieldOp::create(b, loc, zeros);
  }
  return SmallVector<Value>(ifOp.getResults());
}

void KernelBuilder::storeIntermediate(Value t, ValueRange tile) {
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

SmallVector<Value> KernelBuilder::startState(Value source, ValueRange carried) {
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

void KernelBuilder::storeTile(ValueRange results, Value dst,
                              SmallVector<Value> prefix, Value cond) {
  SmallVector<Value> tile(results.begin(), results.end());
  OpBuilder::InsertionGuard g(b);
  if (cond) {
    auto ifOp = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  }
  if (s.tensorCores())
    return storeFragments(tile, dst, prefix);
  auto at2 = [&](Value x, Value y) { return withIndices(prefix, x, y); };
  if (op.isVKLayout()) {
    for (int64_t r = 0; r < s.rows; ++r) {
      SmallVector<Value> row;
      for (int64_t j = 0; j < s.kPerLane; ++j)
        row.push_back(at(tile, r, j));
      storeVector(row, dst, at2(offset(v0, r), k0));
    }
  } else {
    for (int64_t j = 0; j < s.kPerLane; ++j) {
      SmallVector<Value> col;
      for (int64_t r = 0; r < s.rows; ++r)
        col.push_back(at(tile, r, j));
      storeVector(col, dst, at2(offset(k0, j), v0));
    }
  }
}

void KernelBuilder::createStagingBuffers(Value tid, Value vBlock) {
  auto space =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  auto buffer = [&](ArrayRef<int64_t> shape, Type et) -> Value {
    Value buf = kernel.addWorkgroupAttribution(
        MemRefType::get(shape, et, MemRefLayoutAttrInterface(), space), loc);
    // 16-byte vector accesses need 16-byte aligned buffers.
    kernel.setWorkgroupAttributionAttr(kernel.getNumWorkgroupAttributions() - 1,
                                       LLVM::LLVMDialect::getAlignAttrName(),
                                       b.getI64IntegerAttr(16));
    return buf;
  };
  Type qk = cast<MemRefType>(op.getQ().getType()).getElementType();
  Type ve = cast<MemRefType>(op.getV().getType()).getElementType();
  // A producer's ring: its slots one after another along the token rows.
  int64_t rows = s.chunk * std::max<int64_t>(s.stages, 1);
  // On tensor cores a row of q and k is 16 bytes longer: the 8 rows an mma
  // fragment reads then start in 8 different banks.
  int64_t qkRow = d.K + (s.tensorCores() ? 16 * 8 / qk.getIntOrFloatBitWidth() : 0);
  qStage = buffer({rows, qkRow}, qk);
  kStage = buffer({rows, qkRow}, qk);
  vStage = buffer({rows, s.blockRows()}, ve);
  Type f32 = b.getF32Type();
  decayStage =
      op.hasPerKeyDecay() ? buffer({rows, d.K}, f32) : buffer({rows}, f32);
  betaStage = op.hasPerChannelBeta() ? buffer({rows, s.blockRows()}, f32)
                                     : buffer({rows}, f32);
  if (op.hasParentTable())
    sourceStage = buffer({rows}, b.getI32Type());
  if (producerNorms(op, s))
    normStage = buffer({rows, 4}, f32);
  if (s.chunkedSolve) {
    gramStage = buffer({2, s.chunk, s.chunk}, f32);
    tokenStage = buffer({3, s.chunk}, f32);
  }
  if (s.tensorCores()) {
    solveStage = buffer({2, s.chunk, s.chunk + 4}, f32);
    factorStage = buffer({5, s.chunk}, f32);
  }
  threadId = tid;
  blockV0 = arith::MulIOp::create(b, loc, vBlock, m.index(s.blockRows()));
}

void KernelBuilder::stageRows(
    Value src, Value dst, int64_t width, Value c, Value count,
    function_ref<SmallVector<Value>(Value, Value)> idx) {
  Type et = cast<MemRefType>(src.getType()).getElementType();
  stageRows(et, dst, width, c, count, m.index(0), threadId, s.warps * kWarpSize,
            [&](Value t, Value col, int64_t vec) {
              return loadVector(src, idx(t, col), vec);
            });
}

void KernelBuilder::stageRows(Type srcType, Value dst, int64_t width, Value c,
                              Value count, Value rowBase, Value thread,
                              int64_t threads,
                              function_ref<Value(Value, Value, int64_t)> load) {
  int64_t vec = 16 / (srcType.getIntOrFloatBitWidth() / 8);
  while (width % vec != 0)
    vec /= 2;
  int64_t perRow = width / vec;
  Type dstType = cast<MemRefType>(dst.getType()).getElementType();
  scf::ForOp::create(
      b, loc, thread, m.index(s.chunk * perRow), m.index(threads), ValueRange{},
      [&](OpBuilder &nb, Location, Value i, ValueRange) {
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        Value j = arith::DivUIOp::create(b, loc, i, m.index(perRow));
        Value col = arith::MulIOp::create(
            b, loc, arith::RemUIOp::create(b, loc, i, m.index(perRow)),
            m.index(vec));
        Value inRange =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, j, count);
        // The chunked solve reads every row of the chunk: rows past
        // `count` are zeros, never stale or uninitialized values.
        auto ifOp = scf::IfOp::create(b, loc, inRange,
                                      /*withElseRegion=*/s.chunkedSolve != 0);
        {
          OpBuilder::InsertionGuard inIf(b);
          b.setInsertionPointToStart(&ifOp.getThenRegion().front());
          Value x = load(arith::AddIOp::create(b, loc, c, j), col, vec);
          Value row = plus(rowBase, j);
          vector::StoreOp::create(
              b, loc, x, dst, ValueRange{row, col},
              /*nontemporal=*/false,
              llvm::MaybeAlign(vectorAlignment(vec, dstType)));
          if (s.chunkedSolve) {
            b.setInsertionPointToStart(&ifOp.getElseRegion().front());
            auto type = cast<VectorType>(x.getType());
            Value zeros = arith::ConstantOp::create(
                b, loc, type,
                DenseElementsAttr::get(
                    type, b.getFloatAttr(type.getElementType(), 0.0)));
            vector::StoreOp::create(
                b, loc, zeros, dst, ValueRange{plus(rowBase, j), col},
                /*nontemporal=*/false,
                llvm::MaybeAlign(vectorAlignment(vec, dstType)));
          }
        }
        scf::YieldOp::create(b, loc);
      });
}

SmallVector<Value> KernelBuilder::perKeyDecay(Value t, Value col,
                                              int64_t count) {
  Value gate = op.getG() ? op.getG() : op.getA();
  SmallVector<Value> x =
      extractAll(m.toF32(loadVector(gate, {tokenRow, t, hv, col}, count)));
  SmallVector<Value> bias(count);
  Value aLog;
  if (op.hasFusedGating()) {
    aLog = memref::LoadOp::create(b, loc, op.getALog(), ValueRange{hv});
    Value at = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, hv, m.index(d.K)), col);
    bias = extractAll(loadVector(op.getDtBias(), {at}, count));
  }
  for (int64_t i = 0; i < count; ++i)
    x[i] = m.decayOf(op, x[i], aLog, bias[i]);
  return x;
}

SmallVector<Value> KernelBuilder::perChannelBeta(Value t, Value col,
                                                 int64_t count) {
  Value input = op.getBeta() ? op.getBeta() : op.getB();
  SmallVector<Value> x =
      extractAll(m.toF32(loadVector(input, {tokenRow, t, hv, col}, count)));
  for (Value &e : x)
    e = m.betaOf(op, e);
  return x;
}

Value KernelBuilder::fromElements(ArrayRef<Value> elements) {
  return vector::FromElementsOp::create(
      b, loc, VectorType::get({int64_t(elements.size())}, b.getF32Type()),
      elements);
}

SmallVector<Value> KernelBuilder::chunk(Value c, Value count,
                                        ValueRange state) {
  auto qkIdx = [&](Value t, Value col) {
    return SmallVector<Value>{tokenRow, t, h, col};
  };
  stageRows(op.getQ(), qStage, d.K, c, count, qkIdx);
  stageRows(op.getK(), kStage, d.K, c, count, qkIdx);
  stageRows(op.getV(), vStage, s.blockRows(), c, count,
            [&](Value t, Value col) {
              return SmallVector<Value>{
                  tokenRow, t, hv, arith::AddIOp::create(b, loc, blockV0, col)};
            });
  if (s.chunkedSolve)
    stageLogGates(c, count);
  else
    stageGates(c, count, m.index(0), threadId, s.warps * kWarpSize);
  SmallVector<Value> current(state.begin(), state.end());
  if (current.empty()) // not loaded yet (build())
    current = loadState();
  gpu::BarrierOp::create(b, loc);
  SmallVector<Value> results =
      s.tensorCores()   ? tensorCoreSolve(c, count, current)
      : s.chunkedSolve ? chunkedSolve(c, count, current)
                        : runChunk(c, count, m.index(0), current);
  // The buffers are refilled by the next chunk only after every warp is done.
  if (op.isVarlen() || d.T > s.chunk)
    gpu::BarrierOp::create(b, loc);
  return results;
}

void KernelBuilder::stageGates(Value c, Value count, Value rowBase,
                               Value thread, int64_t threads) {
  bool perKey = op.hasPerKeyDecay(), perChannel = op.hasPerChannelBeta();
  // Per-channel gates: every thread computes some (token, channel)
  // vectors, each once a CTA.
  if (perKey)
    stageRows(gateElementType(), decayStage, d.K, c, count, rowBase, thread,
              threads, [&](Value t, Value col, int64_t vec) {
                return fromElements(perKeyDecay(t, col, vec));
              });
  if (perChannel) {
    Value input = op.getBeta() ? op.getBeta() : op.getB();
    stageRows(cast<MemRefType>(input.getType()).getElementType(), betaStage,
              s.blockRows(), c, count, rowBase, thread, threads,
              [&](Value t, Value col, int64_t vec) {
                Value v = arith::AddIOp::create(b, loc, blockV0, col);
                return fromElements(perChannelBeta(t, v, vec));
              });
  }
  if (perKey && perChannel && !op.hasParentTable())
    return;
  // Thread j computes token j's per-head gates and its parent source
  // (chunk <= threads).
  forTokenOfThread(c, count, rowBase, thread, [&](Value t, Value row) {
    if (!perKey)
      memref::StoreOp::create(b, loc, m.emitDecay(op, tokenRow, t, hv),
                              decayStage, ValueRange{row});
    if (!perChannel)
      memref::StoreOp::create(b, loc, m.emitBeta(op, tokenRow, t, hv),
                              betaStage, ValueRange{row});
    if (op.hasParentTable())
      memref::StoreOp::create(b, loc, parentSource(t), sourceStage,
                              ValueRange{row});
  });
}

void KernelBuilder::forTokenOfThread(Value c, Value count, Value rowBase,
                                     Value thread,
                                     function_ref<void(Value, Value)> body) {
  Value inRange =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, thread, count);
  auto ifOp = scf::IfOp::create(b, loc, inRange, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  body(arith::AddIOp::create(b, loc, c, thread), plus(rowBase, thread));
}

SmallVector<Value> KernelBuilder::runChunk(Value c, Value count, Value rowBase,
                                           ValueRange state) {
  // Two tokens a step (pairTokens): pairs j, j + 1 while j + 1 < count, then
  // the last token of an odd count on its own.
  bool pairs = s.pairTokens;
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

KernelBuilder::TokenInputs KernelBuilder::loadToken(Value t, Value j) {
  bool staged = static_cast<bool>(j);
  TokenInputs in;
  in.kf = staged ? loadStagedKeyChunk(kStage, j) : loadKeyChunk(op.getK(), t);
  in.qf = staged ? loadStagedKeyChunk(qStage, j) : loadKeyChunk(op.getQ(), t);
  bool perKey = op.hasPerKeyDecay(), perChannel = op.hasPerChannelBeta();
  if (staged) {
    Value col = arith::SubIOp::create(b, loc, v0, blockV0);
    in.decay = perKey ? extractAll(loadVector(decayStage, {j, k0}, s.kPerLane))
                      : SmallVector<Value>{memref::LoadOp::create(
                            b, loc, decayStage, ValueRange{j})};
    in.beta = perChannel ? extractAll(loadVector(betaStage, {j, col}, s.rows))
                         : SmallVector<Value>{memref::LoadOp::create(
                               b, loc, betaStage, ValueRange{j})};
    in.vf = extractAll(m.toF32(loadVector(vStage, {j, col}, s.rows)));
  } else if (tokenFirst && !perKey && !perChannel) {
    // Every load before the gates' math: under in-order issue an exp or a
    // sigmoid waiting on its input would hold the loads after it. (Only
    // with a pool: on a state in place at N = 1 this order measured 3-5%
    // slower, 2.78 -> 2.91 us; docs/cost-model.md#pool-decode-token-first.)
    Value vRaw = loadVector(op.getV(), {tokenRow, t, hv, v0}, s.rows);
    KernelMath::GateInputs gates = m.loadGates(op, tokenRow, t, hv);
    in.vf = extractAll(m.toF32(vRaw));
    in.decay = {m.gateDecay(op, gates)};
    in.beta = {m.gateBeta(op, gates)};
  } else {
    in.decay = perKey ? perKeyDecay(t, k0, s.kPerLane)
                      : SmallVector<Value>{m.emitDecay(op, tokenRow, t, hv)};
    in.beta = perChannel ? perChannelBeta(t, v0, s.rows)
                         : SmallVector<Value>{m.emitBeta(op, tokenRow, t, hv)};
    in.vf = extractAll(
        m.toF32(loadVector(op.getV(), {tokenRow, t, hv, v0}, s.rows)));
  }
  return in;
}

KernelBuilder::TokenNorms KernelBuilder::normsAt(Value j,
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

SmallVector<Value> KernelBuilder::token(Value t, Value j, ValueRange carried) {
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
  if (!s.overlapReductions) // the schedule never asks for it with KDA
    return tokenInTurn(t, S, in.kf, in.qf, in.decay.front(), in.beta.front(),
                       in.vf);

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
  advance(t, S, in, norms, f, sums[0], sums[1]);
  return S;
}

std::pair<SmallVector<Value>, SmallVector<Value>>
KernelBuilder::decayed(const TokenInputs &in, ArrayRef<Value> x,
                       ArrayRef<Value> y) {
  std::pair<SmallVector<Value>, SmallVector<Value>> out{x, y};
  if (op.hasPerKeyDecay()) // one decay a head factors out of the sums
    for (int64_t jj = 0; jj < s.kPerLane; ++jj) {
      out.first[jj] = m.mul(x[jj], in.decay[jj]);
      out.second[jj] = m.mul(y[jj], in.decay[jj]);
    }
  return out;
}

SmallVector<SmallVector<Value>>
KernelBuilder::stateSums(SmallVector<Value> &S,
                         ArrayRef<SmallVector<Value>> xs) {
  SmallVector<SmallVector<Value>> sums(xs.size());
  for (int64_t r = 0; r < s.rows; ++r) {
    SmallVector<Value> partial(xs.size(), m.f32(0.0));
    for (int64_t jj = 0; jj < s.kPerLane; ++jj)
      for (auto [p, x] : llvm::zip_equal(partial, xs))
        p = m.add(p, m.mul(at(S, r, jj), x[jj]));
    for (auto [sum, p] : llvm::zip_equal(sums, partial))
      sum.push_back(warpSum(p));
  }
  return sums;
}

KernelBuilder::Factors KernelBuilder::factors(const TokenInputs &in,
                                              const TokenNorms &norms) {
  if (op.hasPerKeyDecay())
    return {norms.ik, norms.iq};
  // One decay for the whole head factors out of the sums.
  return {m.mul(in.decay[0], norms.ik), m.mul(in.decay[0], norms.iq)};
}

SmallVector<Value> KernelBuilder::advance(Value t, SmallVector<Value> &S,
                                          const TokenInputs &in,
                                          const TokenNorms &norms,
                                          const Factors &f, ArrayRef<Value> A,
                                          ArrayRef<Value> B) {
  bool perKey = op.hasPerKeyDecay(), perChannel = op.hasPerChannelBeta();
  auto [ik, iq, kq] = norms;
  auto [fk, fq] = f;
  SmallVector<Value> kHat; // k̂ for the rank-1 update
  for (Value e : in.kf)
    kHat.push_back(m.mul(e, ik));
  SmallVector<Value> outputs, us;
  for (int64_t r = 0; r < s.rows; ++r) {
    Value u =
        m.mul(in.beta[perChannel ? r : 0], m.sub(in.vf[r], m.mul(fk, A[r])));
    for (int64_t jj = 0; jj < s.kPerLane; ++jj)
      at(S, r, jj) = m.add(m.mul(at(S, r, jj), in.decay[perKey ? jj : 0]),
                           m.mul(kHat[jj], u));
    outputs.push_back(m.add(m.mul(fq, B[r]), m.mul(kq, u)));
    us.push_back(u);
  }
  storeOutputs(t, outputs);
  return us;
}

SmallVector<Value> KernelBuilder::tokenPair(Value t, Value j,
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
  for (int64_t jj = 0; jj < s.kPerLane; ++jj) {
    ck = m.add(ck, m.mul(in0.kf[jj], dk1[jj]));
    cq = m.add(cq, m.mul(in0.kf[jj], dq1[jj]));
  }
  ck = m.mul(warpSum(ck), n0.ik);
  cq = m.mul(warpSum(cq), n0.ik);
  SmallVector<Value> u0 = advance(t, S, in0, n0, f0, sums[0], sums[1]);
  storeIntermediate(t, S);
  SmallVector<Value> A1, B1;
  for (int64_t r = 0; r < s.rows; ++r) {
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

KernelBuilder::TokenNorms
KernelBuilder::tokenNorms(ArrayRef<Value> kf, ArrayRef<Value> qf,
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

SmallVector<Value> KernelBuilder::tokenInTurn(Value t, SmallVector<Value> S,
                                              SmallVector<Value> kf,
                                              SmallVector<Value> qf,
                                              Value decay, Value beta,
                                              ArrayRef<Value> vf) {
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
  for (int64_t r = 0; r < s.rows; ++r) {
    Value sk = m.f32(0.0);
    for (int64_t jj = 0; jj < s.kPerLane; ++jj) {
      at(S, r, jj) = m.mul(at(S, r, jj), decay);
      sk = m.add(sk, m.mul(at(S, r, jj), kf[jj]));
    }
    Value u = m.mul(beta, m.sub(vf[r], warpSum(sk)));
    Value sq = m.f32(0.0);
    for (int64_t jj = 0; jj < s.kPerLane; ++jj) {
      at(S, r, jj) = m.add(at(S, r, jj), m.mul(kf[jj], u));
      sq = m.add(sq, m.mul(at(S, r, jj), qf[jj]));
    }
    outputs.push_back(warpSum(sq));
  }
  storeOutputs(t, outputs);
  return S;
}

void KernelBuilder::storeOutputs(Value t, SmallVector<Value> outputs) {
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
