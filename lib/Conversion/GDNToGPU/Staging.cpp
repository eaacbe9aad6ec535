//===- Staging.cpp - the tokens' inputs in shared memory --------------------===//
//
// The staging buffers, the copies of q, k and v, the gates once a CTA, and
// the loop over chunks (Staging.h).
//
//===----------------------------------------------------------------------===//

#include "Staging.h"
#include "ScheduleRules.h"
#include "StagingLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::gdn;

void Staging::createStagingBuffers() {
  // A producer's ring: its slots one after another along the token rows
  // (a solving producer's: a second set of the chunk's buffers,
  // createChunkBuffers).
  int64_t slots = s.producerSolves()
                      ? 1
                      : std::max<int64_t>(*s.getProducerStages(), 1);
  StagingLayout layout = stagingLayout(op, s, *s.getStagedTokens(), slots);
  // 16-byte vector accesses need 16-byte aligned buffers; past what a
  // kernel may declare statically (counting each buffer's padding and a
  // producer's two 8-byte mbarriers a slot, which stay static), they are
  // views of dynamic shared memory.
  bool dynamic = layout.alignedBytes(16) + 16 * *s.getProducerStages() >
                 kStaticSharedBytes;
  auto buffer = [&](const StagingBuffer &x) {
    return dynamic ? dynamicBuffer(x.shape, x.elementType, 16)
                   : workgroupBuffer(x.shape, x.elementType, 16);
  };
  auto bufferIf = [&](const std::optional<StagingBuffer> &x) {
    return x ? buffer(*x) : Value();
  };
  qStage = buffer(layout.q);
  kStage = buffer(layout.k);
  vStage = buffer(layout.v);
  decayStage = buffer(layout.decay);
  betaStage = buffer(layout.beta);
  sourceStage = bufferIf(layout.source);
  normStage = bufferIf(layout.norms);
  gramStage = bufferIf(layout.gram);
  maskedGramStage = layout.maskedGram ? buffer(*layout.maskedGram) : gramStage;
  tokenStage = bufferIf(layout.tokens);
  solveStage = bufferIf(layout.solve);
  factorStage = bufferIf(layout.factors);
  tailStage = bufferIf(layout.tailKeys);
  lastDecayStage = bufferIf(layout.lastDecay);
  blockV0 = arith::MulIOp::create(b, loc, vBlock, m.index(s.blockColumns()));
  vSource0 = blockV0;
}

Staging::ChunkBuffers Staging::createChunkBuffers() {
  // Static: the schedule checked that they fit (chunkPrefetchBytes).
  StagingLayout layout = stagingLayout(op, s, *s.getStagedTokens(), 1);
  auto buffer = [&](const std::optional<StagingBuffer> &x) {
    return x ? workgroupBuffer(x->shape, x->elementType, 16) : Value();
  };
  return {buffer(layout.q),     buffer(layout.k),       buffer(layout.v),
          buffer(layout.solve), buffer(layout.factors), buffer(layout.tokens)};
}

SmallVector<Value> Staging::runStagedChunks(ValueRange state,
                                            ChunkSolve solve) {
  if (*s.getChunkPrefetchDistance() > 0) {
    // The tensor-core forms (a chunked solve of log gates, no producer).
    assert(s.tensorCores() && "chunk_prefetch_distance outside tensor cores");
    return runPrefetchedChunks(state, solve);
  }
  if (!op.isVarlen() && d.T <= *s.getStagedTokens())
    return chunk(m.index(0), m.index(d.T), state, solve);
  return forEachChunk(
      state, [&](Value c, Value count, Value, Value, ValueRange carried) {
        return chunk(c, count, carried, solve);
      });
}

SmallVector<Value> Staging::chunk(Value c, Value count,
                                        ValueRange state,
                                  ChunkSolve solve) {
  stageQK(c, count);
  stageRows(op.getV(), vStage, s.blockColumns(), c, count,
            [&](Value t, Value col) { return vIndex(t, col); });
  if (s.chunkParallel())
    stageChunkExtras(c);
  stageChunkGates(c, count);
  SmallVector<Value> current(state.begin(), state.end());
  if (current.empty()) // not loaded yet (build())
    current = loadState();
  return solveStaged(c, count, current, solve);
}

void Staging::stageChunkGates(Value c, Value count) {
  if (s.chunkParallel()) {   // the gates are in the chunk's record
    if (op.hasPerKeyDecay()) // but for each key's decays (KDA)
      stageKeyDecays(c, count, /*betas=*/false);
    return;
  }
  if (s.chunkedSolve())
    stageLogGates(c, count);
  else
    stageGates(c, count, m.index(0), tid, groupThreads());
}

SmallVector<Value> Staging::solveStaged(Value c, Value count, ValueRange state,
                                        ChunkSolve solve) {
  groupBarrier();
  SmallVector<Value> results = solve(c, count, state);
  storeChunkCheckpoint(c, count, results);
  // The buffers are refilled by the next chunk only after every warp is done.
  if (op.isVarlen() || d.T > *s.getStagedTokens())
    groupBarrier();
  return results;
}

Value Staging::chunkCount(Value c) {
  return arith::MinUIOp::create(b, loc, m.index(*s.getStagedTokens()),
                                arith::SubIOp::create(b, loc, hi, c));
}

Value Staging::asyncGroup(ValueRange copies) {
  return nvgpu::DeviceAsyncCreateGroupOp::create(
      b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), copies);
}

void Staging::drainAsyncCopies() {
  nvgpu::DeviceAsyncWaitOp::create(b, loc, asyncGroup({}),
                                   b.getI32IntegerAttr(0));
}

SmallVector<Value> Staging::runPrefetchedChunks(ValueRange state,
                                                ChunkSolve solve) {
  int64_t C = *s.getStagedTokens();
  std::array<ChunkBuffers, 2> sets;
  sets[0] = chunkBuffers();
  sets[1] = createChunkBuffers();
  useChunkBuffers(sets[0]);
  asyncGroup(asyncChunkCopies(chunkLo, chunkCount(chunkLo)));
  SmallVector<Value> initial(state.begin(), state.end());
  if (initial.empty()) // not loaded yet (build()): behind the first copies
    initial = loadState();
  SmallVector<Value> results = forEachChunk(initial, [&](Value c, Value count,
                                                         Value, Value,
                                                         ValueRange carried) {
    // Chunk i is in set i % 2; chunk i + 1 (or chunk i again past the
    // last, unread) goes to the other set, which chunk i - 1 left at
    // the barrier closing it.
    Value i = arith::DivUIOp::create(
        b, loc, arith::SubIOp::create(b, loc, c, chunkLo), m.index(C));
    Value odd = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq,
        arith::RemUIOp::create(b, loc, i, m.index(2)), m.index(1));
    Value next = offset(c, C);
    Value more =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, next, hi);
    Value from = arith::SelectOp::create(b, loc, more, next, c);
    useChunkBuffers(selectChunkBuffers(odd, sets[1], sets[0]));
    Value copies = asyncGroup(asyncChunkCopies(from, chunkCount(from)));
    // This thread's copies of chunk i are done (those of chunk i + 1
    // may still fly); the barrier makes every thread's visible.
    nvgpu::DeviceAsyncWaitOp::create(b, loc, copies, b.getI32IntegerAttr(1));
    useChunkBuffers(selectChunkBuffers(odd, sets[0], sets[1]));
    stageChunkGates(c, count);
    return solveStaged(c, count, carried, solve);
  });
  // The last copies (into a set nobody reads) land before the CTA exits.
  drainAsyncCopies();
  useChunkBuffers(sets[0]);
  return results;
}

Staging::ChunkBuffers Staging::selectChunkBuffers(Value second,
                                                  const ChunkBuffers &x,
                                                  const ChunkBuffers &y) {
  auto pick = [&](Value a, Value b2) -> Value {
    return arith::SelectOp::create(b, loc, second, b2, a);
  };
  return ChunkBuffers{pick(x.q, y.q),         pick(x.k, y.k),
                      pick(x.v, y.v),         pick(x.solve, y.solve),
                      pick(x.factors, y.factors), pick(x.tokens, y.tokens)};
}

void Staging::createRing(int64_t producers, int64_t consumers) {
  // One 8-byte mbarrier a ring slot.
  auto barriers = [&]() {
    return workgroupBuffer({*s.getProducerStages()}, b.getI64Type(), 8);
  };
  full = barriers();
  empty = barriers();
  Value isThread0 =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, m.index(0));
  {
    auto ifOp = scf::IfOp::create(b, loc, isThread0, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    for (int64_t i = 0; i < *s.getProducerStages(); ++i) {
      NVVM::MBarrierInitOp::create(b, loc, barrierAt(full, m.index(i)),
                                   i32(producers), Value());
      NVVM::MBarrierInitOp::create(b, loc, barrierAt(empty, m.index(i)),
                                   i32(consumers), Value());
    }
  }
  gpu::BarrierOp::create(b, loc); // the barriers exist before anyone waits
}

void Staging::wait(Value bars, Value slot, Value phase) {
  NVVM::MBarrierTryWaitParityOp::create(b, loc, barrierAt(bars, slot), phase,
                                        i32(0x989680));
}

void Staging::arrive(Value bars, Value slot) {
  NVVM::MBarrierArriveOp::create(b, loc, Type(), barrierAt(bars, slot),
                                 Value());
}

SmallVector<Value> Staging::consumeRing(
    ValueRange state,
    function_ref<SmallVector<Value>(Value, Value, Value, ValueRange)> run) {
  return forEachChunk(state, [&](Value c, Value count, Value slot,
                                 Value phase, ValueRange carried) {
    wait(full, slot, phase);
    SmallVector<Value> next = run(c, count, slot, carried);
    storeChunkCheckpoint(c, count, next);
    arrive(empty, slot); // this thread's reads of the slot are done
    return next;
  });
}

SmallVector<Value> Staging::asyncQKCopies(Value c, Value count) {
  auto qk = [&](Value t, Value col) { return qkIndex(t, col); };
  SmallVector<Value> copies = asyncRows(op.getQ(), qStage, d.K, c, count, qk);
  llvm::append_range(copies, asyncRows(op.getK(), kStage, d.K, c, count, qk));
  return copies;
}

SmallVector<Value> Staging::asyncChunkCopies(Value c, Value count) {
  SmallVector<Value> copies = asyncQKCopies(c, count);
  llvm::append_range(
      copies, asyncRows(op.getV(), vStage, s.blockColumns(), c, count,
                        [&](Value t, Value col) { return vIndex(t, col); }));
  llvm::append_range(copies, asyncChunkExtras(c, copies.back()));
  return copies;
}

std::tuple<Value, Value, Value> Staging::stagedItem(Value i, int64_t perRow,
                                                    int64_t vec, Value count) {
  Value j = arith::DivUIOp::create(b, loc, i, m.index(perRow));
  Value col = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, i, m.index(perRow)), m.index(vec));
  Value inRange =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, j, count);
  return {j, col, inRange};
}

SmallVector<Value>
Staging::asyncRows(Value src, Value dst, int64_t width, Value c, Value count,
                   function_ref<SmallVector<Value>(Value, Value)> idx) {
  int64_t vec = 16 / elementBytes(src);
  int64_t perRow = width / vec, items = *s.getStagedTokens() * perRow,
          threads = groupThreads();
  SmallVector<Value> copies;
  for (int64_t i0 = 0; i0 < items; i0 += threads) {
    // Item i0 + tid, clamped to the last (copied twice, the same bytes).
    Value i = offset(tid, i0);
    if (i0 + threads > items)
      i = arith::MinUIOp::create(b, loc, i, m.index(items - 1));
    auto [j, col, inRange] = stagedItem(i, perRow, vec, count);
    // A row past `count` reads nothing (source size 0) from row c.
    Value t = arith::SelectOp::create(b, loc, inRange,
                                      arith::AddIOp::create(b, loc, c, j), c);
    Value size =
        arith::SelectOp::create(b, loc, inRange, m.index(vec), m.index(0));
    copies.push_back(nvgpu::DeviceAsyncCopyOp::create(
        b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), dst,
        ValueRange{j, stagedColumn(dst, j, col)}, src, idx(t, col),
        b.getIndexAttr(vec), size, b.getUnitAttr()));
  }
  return copies;
}

void Staging::stageQK(Value c, Value count) {
  auto qk = [&](Value t, Value col) { return qkIndex(t, col); };
  stageRows(op.getQ(), qStage, d.K, c, count, qk);
  stageRows(op.getK(), kStage, d.K, c, count, qk);
}

SmallVector<Value> Staging::forEachChunk(
    ValueRange init,
    function_ref<SmallVector<Value>(Value, Value, Value, Value, ValueRange)>
        body) {
  auto loop = scf::ForOp::create(
      b, loc, chunkLo, hi, m.index(*s.getStagedTokens()), init,
      [&](OpBuilder &nb, Location, Value c, ValueRange carried) {
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        Value count = chunkCount(c);
        Value slot, phase; // only with a producer's ring
        if (*s.getProducerStages() > 0) {
          Value i = arith::DivUIOp::create(
              b, loc, arith::SubIOp::create(b, loc, c, chunkLo),
              m.index(*s.getStagedTokens()));
          slot = arith::RemUIOp::create(b, loc, i,
                                        m.index(*s.getProducerStages()));
          Value round = arith::DivUIOp::create(b, loc, i,
                                               m.index(*s.getProducerStages()));
          phase = arith::IndexCastOp::create(
              b, loc, b.getI32Type(),
              arith::RemUIOp::create(b, loc, round, m.index(2)));
        }
        scf::YieldOp::create(b, loc, body(c, count, slot, phase, carried));
      });
  return SmallVector<Value>(loop.getResults());
}

void Staging::stageRows(
    Value src, Value dst, int64_t width, Value c, Value count,
    function_ref<SmallVector<Value>(Value, Value)> idx) {
  Type et = cast<MemRefType>(src.getType()).getElementType();
  stageRows(et, dst, width, c, count, m.index(0), tid,
            groupThreads(), [&](Value t, Value col, int64_t vec) {
              return loadVector(src, idx(t, col), vec);
            });
}

void Staging::stageRows(Type srcType, Value dst, int64_t width, Value c,
                              Value count, Value rowBase, Value thread,
                              int64_t threads,
                              function_ref<Value(Value, Value, int64_t)> load) {
  int64_t vec = 16 / (srcType.getIntOrFloatBitWidth() / 8);
  while (width % vec != 0)
    vec /= 2;
  int64_t perRow = width / vec;
  Type dstType = cast<MemRefType>(dst.getType()).getElementType();
  scf::ForOp::create(
      b, loc, thread, m.index(*s.getStagedTokens() * perRow), m.index(threads),
      ValueRange{}, [&](OpBuilder &nb, Location, Value i, ValueRange) {
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        auto [j, col, inRange] = stagedItem(i, perRow, vec, count);
        // The chunked solve reads every row of the chunk: rows past
        // `count` are zeros, never stale or uninitialized values.
        auto ifOp = scf::IfOp::create(b, loc, inRange,
                                      /*withElseRegion=*/s.chunkedSolve());
        {
          OpBuilder::InsertionGuard inIf(b);
          b.setInsertionPointToStart(&ifOp.getThenRegion().front());
          Value x = load(arith::AddIOp::create(b, loc, c, j), col, vec);
          Value row = plus(rowBase, j);
          vector::StoreOp::create(
              b, loc, x, dst, ValueRange{row, stagedColumn(dst, row, col)},
              /*nontemporal=*/false,
              llvm::MaybeAlign(vectorAlignment(vec, dstType)));
          if (s.chunkedSolve()) {
            b.setInsertionPointToStart(&ifOp.getElseRegion().front());
            auto type = cast<VectorType>(x.getType());
            Value zeros = arith::ConstantOp::create(
                b, loc, type,
                DenseElementsAttr::get(
                    type, b.getFloatAttr(type.getElementType(), 0.0)));
            Value row = plus(rowBase, j);
            vector::StoreOp::create(
                b, loc, zeros, dst,
                ValueRange{row, stagedColumn(dst, row, col)},
                /*nontemporal=*/false,
                llvm::MaybeAlign(vectorAlignment(vec, dstType)));
          }
        }
        scf::YieldOp::create(b, loc);
      });
}

SmallVector<Value> Staging::perKeyDecay(Value t, Value col,
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

SmallVector<Value> Staging::perChannelBeta(Value t, Value col,
                                                 int64_t count) {
  Value input = op.getBeta() ? op.getBeta() : op.getB();
  SmallVector<Value> x =
      extractAll(m.toF32(loadVector(input, {tokenRow, t, hv, col}, count)));
  for (Value &e : x)
    e = m.betaOf(op, e);
  return x;
}

void Staging::stageGates(Value c, Value count, Value rowBase,
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
              s.blockColumns(), c, count, rowBase, thread, threads,
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

void Staging::forTokenOfThread(Value c, Value count, Value rowBase,
                                     Value thread,
                                     function_ref<void(Value, Value)> body) {
  Value inRange =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, thread, count);
  auto ifOp = scf::IfOp::create(b, loc, inRange, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  body(arith::AddIOp::create(b, loc, c, thread), plus(rowBase, thread));
}

void Staging::stageLogGates(Value c, Value count) {
  stageTokenScalars(c, count, {decayStage, betaStage}, [&](Value t) {
    return SmallVector<Value>{m.emitLogDecay(op, tokenRow, t, hv),
                              m.emitBeta(op, tokenRow, t, hv)};
  });
}

void Staging::stageTokenScalars(
    Value c, Value count, ArrayRef<Value> buffers,
    function_ref<SmallVector<Value>(Value)> values) {
  Value inChunk = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, tid,
                                        m.index(*s.getStagedTokens()));
  auto ifChunk = scf::IfOp::create(b, loc, inChunk, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&ifChunk.getThenRegion().front());
  Value inRange =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, tid, count);
  SmallVector<Type> types(buffers.size(), b.getF32Type());
  auto ifOp = scf::IfOp::create(b, loc, types, inRange,
                                /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard inIf(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    scf::YieldOp::create(b, loc, values(arith::AddIOp::create(b, loc, c, tid)));
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    scf::YieldOp::create(b, loc,
                         SmallVector<Value>(buffers.size(), m.f32(0.0)));
  }
  for (auto [buffer, x] : llvm::zip(buffers, ifOp.getResults()))
    memref::StoreOp::create(b, loc, x, buffer, ValueRange{tid});
}

void Staging::stageKeyDecays(Value c, Value count, bool betas) {
  int64_t C = *s.getStagedTokens(), vec = 4, perRow = d.K / vec,
          items = C * perRow, threads = groupThreads();
  assert(d.K % vec == 0 && "tensor cores: K a multiple of 8");
  Type f32 = b.getF32Type();
  auto type = VectorType::get({vec}, f32);
  for (int64_t i0 = 0; i0 < items; i0 += threads) {
    Value i = offset(tid, i0);
    std::optional<OpBuilder::InsertionGuard> inItems;
    if (i0 + threads > items) {
      auto ifOp = scf::IfOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, i,
                                m.index(items)),
          /*withElseRegion=*/false);
      inItems.emplace(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    }
    auto [j, col, inRange] = stagedItem(i, perRow, vec, count);
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{type}, inRange,
                                  /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard inIf(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      scf::YieldOp::create(b, loc,
                           fromElements(perKeyDecay(
                               arith::AddIOp::create(b, loc, c, j), col, vec)));
      b.setInsertionPointToStart(&ifOp.getElseRegion().front());
      scf::YieldOp::create(
          b, loc,
          Value(arith::ConstantOp::create(
              b, loc, type,
              DenseElementsAttr::get(type, b.getF32FloatAttr(1.0f)))));
    }
    vector::StoreOp::create(b, loc, ifOp.getResult(0), decayStage,
                            ValueRange{j, col}, /*nontemporal=*/false,
                            llvm::MaybeAlign(vectorAlignment(vec, f32)));
  }
  if (betas)
    stageTokenScalars(c, count, {betaStage}, [&](Value t) {
      return SmallVector<Value>{m.emitBeta(op, tokenRow, t, hv)};
    });
}

int64_t Staging::solveRows() {
  return op.isVarlen() ? *s.getStagedTokens()
                       : std::min<int64_t>(*s.getStagedTokens(), d.T);
}
