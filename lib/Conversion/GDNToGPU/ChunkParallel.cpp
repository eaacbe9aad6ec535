//===- ChunkParallel.cpp - every chunk's WY solve in a launch of its own --===//
//
// solve = chunk_parallel's first launch (ChunkSolvesKernel, KernelForms.h):
// one CTA a chunk of a (sequence, head), all chunks at once (a varlen
// batch's sequences through their record slots), writes the
// chunk's Tm, M and token factors (docs/math.md §5) to its record of the
// workspace, where the scan (TensorCoreSolveKernel with a workspace) reads
// them; RecurrentToGPU.cpp creates both launches and the workspace.
//
//===----------------------------------------------------------------------===//

#include "KernelForms.h"
#include "ScheduleRules.h"
#include "StagingLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <functional>
#include <optional>

using namespace mlir;
using namespace mlir::gdn;

void ChunkSolvesKernel::build() {
  workspace = kernel.getArgument(op->getNumOperands());
  if (s.concurrentSolves())
    return buildPersistent();
  enter();
  solveChunk();
}

void ChunkSolvesKernel::solveChunk(Value prefetched) {
  if (!prefetched) // else buildPersistent made them, two of q and k
    createStagingBuffers();
  int64_t C = *s.getStagedTokens();
  // The grid's x is the record slot (enter() calls it vBlock; no V is read
  // here): a fixed batch's chunk, or a varlen batch's slot of a sequence.
  Value c;
  std::optional<OpBuilder::InsertionGuard> afterIf; // the kernel ends after it
  if (!op.isVarlen()) {
    c = arith::MulIOp::create(b, loc, vBlock, m.index(C));
  } else {
    n = sequenceOfSlot(vBlock);
    std::tie(tokenRow, tokenLo, hi) = m.emitTokenRange(op, n);
    Value first = firstSlot(n, tokenLo);
    Value chunk = arith::SubIOp::create(b, loc, vBlock, first);
    c = arith::AddIOp::create(b, loc, tokenLo,
                              arith::MulIOp::create(b, loc, chunk, m.index(C)));
    // A slot before the first sequence's (cu_seqlens[0] >= C; chunk and c
    // wrapped) or past its sequence's last chunk (one at most between two
    // sequences, and those after the last one's) holds no record: the CTA
    // does nothing, and reads and writes nothing.
    Value inSequence = arith::AndIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, vBlock, first),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, c, hi));
    auto ifOp = scf::IfOp::create(b, loc, inSequence, false);
    afterIf.emplace(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  }
  Value count = chunkCount(c);
  // q and k as cp.async copies, all in flight before any wait, the log
  // gates staged meanwhile: a thread waits for one memory latency, not one
  // a 16-byte item as stageQK's load-then-store loop did
  // (docs/cost-model.md#chunk-solves-copies).
  // sharedGram: the grid's y is the key head h, and the CTA solves the
  // chunk for each of its value heads in turn, the Gram products formed
  // once (docs/cost-model.md#shared-gram).
  int64_t heads = 1;
  if (sharedGram(op, s, C)) {
    heads = d.HV / d.H;
    h = hv;
  }
  // Prefetched (concurrent_solves): this item's copies were issued an item
  // ago, and the next item's, issued since, may still fly.
  Value group =
      prefetched ? prefetched : asyncGroup(asyncQKCopies(c, count));
  int32_t pending = prefetched ? 1 : 0;
  for (int64_t r = 0; r < heads; ++r) {
    if (heads > 1) {
      hv = offset(arith::MulIOp::create(b, loc, h, m.index(heads)), r);
      if (r > 0) // the last value head's record is copied out
        groupBarrier();
    }
    if (op.hasPerKeyDecay()) // KDA: each key's decays (KeyDecayChunks.cpp)
      stageKeyDecays(c, count, /*betas=*/true);
    else
      stageLogGates(c, count);
    if (r == 0)
      nvgpu::DeviceAsyncWaitOp::create(b, loc, group,
                                       b.getI32IntegerAttr(pending));
    groupBarrier();
    if (op.hasPerKeyDecay())
      buildKeyDecayGram();
    else
      buildTensorCoreGram(/*products=*/r == 0);
    buildSolveMatrices();
    copyRecord(c, /*toWorkspace=*/true);
  }
}

namespace {
/// The index of the count of (row n, value head hv)'s group of record
/// `slot` in concurrent_solves' counts [N, HV, groups].
Value groupCount(KernelMath &m, Value n, Value hv, Value slot, int64_t groups,
                 int64_t HV) {
  OpBuilder &b = m.builder();
  Location loc = m.location();
  Value row = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, n, m.index(HV)), hv);
  return arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, row, m.index(groups)),
      arith::DivUIOp::create(b, loc, slot, m.index(kSolveGroupChunks)));
}
} // namespace

void ChunkSolvesKernel::buildPersistent() {
  solveCounts = kernel.getArgument(op->getNumOperands() + 1);
  m.uniqueConstantsIn(b.getInsertionBlock()); // the kernel's entry block
  // Every CTA starts at once (the grid fits the SMs beside the scan's
  // CTAs): the scan, launched programmatically after this grid, may start
  // as soon as each CTA has signalled (docs/cost-model.md#concurrent-solves).
  launchDependents();
  int64_t C = *s.getStagedTokens();
  int64_t slots = recordSlots(op, C), groups = solveGroups(op, C);
  int64_t perHead = sharedGram(op, s, C) ? d.HV / d.H : 1;
  int64_t heads = d.HV / perHead, rowItems = heads * d.N;
  // Item i's (slot, head, n): slots outermost, so the CTAs solve the chunks
  // in the scan's order.
  auto enterItem = [&](Value item) {
    Value slot = arith::DivUIOp::create(b, loc, item, m.index(rowItems));
    Value rest = arith::RemUIOp::create(b, loc, item, m.index(rowItems));
    workItem = {slot, arith::RemUIOp::create(b, loc, rest, m.index(heads)),
                arith::DivUIOp::create(b, loc, rest, m.index(heads))};
    enterKernel([] {});
  };
  // q and k of the item entered last into (q, k): its copies in flight
  // (a fixed batch: chunk slot * C, its key head h or, shared, hv).
  auto prefetch = [&](std::pair<Value, Value> buffers) {
    std::tie(qStage, kStage) = buffers;
    if (perHead > 1)
      h = hv;
    Value c = arith::MulIOp::create(b, loc, vBlock, m.index(C));
    return asyncGroup(asyncQKCopies(c, chunkCount(c)));
  };
  // Two sets of q and k: item j's in set j % 2 (j counting this CTA's
  // items), item j + 1's copied into the other while item j is solved
  // (docs/cost-model.md#concurrent-solves).
  Value first = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value grid = gpu::GridDimOp::create(b, loc, gpu::Dimension::x);
  enterItem(first);
  createStagingBuffers();
  StagingLayout layout = stagingLayout(op, s, C, 1);
  std::array<std::pair<Value, Value>, 2> sets = {
      std::pair{qStage, kStage},
      std::pair{workgroupBuffer(layout.q.shape, layout.q.elementType, 16),
                workgroupBuffer(layout.k.shape, layout.k.elementType, 16)}};
  prefetch(sets[0]);
  Value total = m.index(slots * rowItems);
  scf::ForOp::create(
      b, loc, first, total, grid, ValueRange{},
      [&](OpBuilder &nb, Location, Value item, ValueRange) {
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        Value j = arith::DivUIOp::create(
            b, loc, arith::SubIOp::create(b, loc, item, first), grid);
        Value odd = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::eq,
            arith::RemUIOp::create(b, loc, j, m.index(2)), m.index(1));
        auto pick = [&](bool other) {
          const auto &[x, y] = other ? std::pair{sets[1], sets[0]}
                                     : std::pair{sets[0], sets[1]};
          return std::pair<Value, Value>{
              arith::SelectOp::create(b, loc, odd, y.first, x.first),
              arith::SelectOp::create(b, loc, odd, y.second, x.second)};
        };
        // The next item (this one again past the last: copied, unread)
        // into the set the previous item left at its closing barrier.
        Value next = arith::AddIOp::create(b, loc, item, grid);
        Value more =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, next,
                                  total);
        enterItem(arith::SelectOp::create(b, loc, more, next, item));
        Value copies = prefetch(pick(/*other=*/true));
        enterItem(item);
        std::tie(qStage, kStage) = pick(/*other=*/false);
        solveChunk(copies);
        // Every thread's record stores before thread 0's release (and the
        // item's buffers free for the item after next).
        groupBarrier();
        Value slot = (*workItem)[0], head = (*workItem)[1],
              row = (*workItem)[2];
        Operation *thread0 = openIfZero(tid);
        for (int64_t r = 0; r < perHead; ++r) {
          Value headR = arith::AddIOp::create(
              b, loc, arith::MulIOp::create(b, loc, head, m.index(perHead)),
              m.index(r));
          Value count = groupCount(m, row, headR, slot, groups, d.HV);
          memoryPTX("red.release.gpu.global.add.u32 [$0], 1;", "l", Type(),
                    {globalAddress(solveCounts, {count})});
        }
        b.setInsertionPointAfter(thread0);
        scf::YieldOp::create(b, loc);
      });
  // The last copies (into a set nobody reads) land before the CTA exits.
  drainAsyncCopies();
}

Value ChunkSolvesKernel::sequenceOfSlot(Value x) {
  // firstSlot increases with n by at least 1 a sequence (by 1 + the chunks
  // lo crosses) while cu_seqlens increases: the last n with firstSlot(n) <=
  // x, a branch-free binary search over [0, N) unrolled (N is static); 0
  // where none is (a slot before sequence 0's first, which build() skips).
  Value base = m.index(0);
  for (int64_t len = op.getDims().N; len > 1; len -= len / 2) {
    Value candidate = offset(base, len / 2);
    Value lo = std::get<1>(m.emitTokenRange(op, candidate));
    Value below = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule,
                                        firstSlot(candidate, lo), x);
    base = arith::SelectOp::create(b, loc, below, candidate, base);
  }
  return base;
}

int64_t TensorCoreSolveKernel::recordSlots(RecurrentOp op, int64_t C) {
  auto d = op.getDims();
  return llvm::divideCeil(d.T, C) + (op.isVarlen() ? d.N : 0);
}

int64_t TensorCoreSolveKernel::solveGroups(RecurrentOp op, int64_t C) {
  return llvm::divideCeil(recordSlots(op, C), kSolveGroupChunks);
}

std::pair<Value, Value> TensorCoreSolveKernel::recordGroup(Value c) {
  Value slot = arith::DivUIOp::create(
      b, loc, arith::SubIOp::create(b, loc, c, tokenLo),
      m.index(*s.getStagedTokens()));
  return {groupCount(m, n, hv, slot, solveGroups(op, *s.getStagedTokens()),
                     d.HV),
          slot};
}

void TensorCoreSolveKernel::awaitRecordGroup(Value c) {
  int64_t slots = recordSlots(op, *s.getStagedTokens());
  auto [count, slot] = recordGroup(c);
  Value firstOfGroup = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq,
      arith::RemUIOp::create(b, loc, slot, m.index(kSolveGroupChunks)),
      m.index(0));
  auto ifOp = scf::IfOp::create(b, loc, firstOfGroup, false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  // The group's chunks: kSolveGroupChunks, fewer in a row's last group.
  Value expected = arith::IndexCastOp::create(
      b, loc, b.getI32Type(),
      arith::MinUIOp::create(b, loc, m.index(kSolveGroupChunks),
                             arith::SubIOp::create(b, loc, m.index(slots),
                                                   slot)));
  Value address = globalAddress(solveCounts, {count});
  // Every thread acquires the count itself (ld.acquire.gpu; a warp's loads
  // of one address are one request): its copies of the records that follow
  // are ordered after the solves' releases, with no barrier between. Where
  // the group is not done yet, it polls with ld.relaxed.gpu and a short
  // nanosleep (an acquire a poll would drop the SM's L1 lines the solves
  // beside it use), then acquires again.
  auto acquire = [&] {
    return memoryPTX("ld.acquire.gpu.global.b32 $0, [$1];", "=r,l",
                     b.getI32Type(), {address});
  };
  auto unfinished = [&](Value done) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, done,
                                 expected);
  };
  auto notYet = scf::IfOp::create(b, loc, unfinished(acquire()), false);
  b.setInsertionPointToStart(&notYet.getThenRegion().front());
  auto loop = scf::WhileOp::create(b, loc, TypeRange{}, ValueRange{});
  {
    OpBuilder::InsertionGuard loopGuard(b);
    b.createBlock(&loop.getBefore());
    memoryPTX("nanosleep.u32 64;", "", Type(), ValueRange{});
    scf::ConditionOp::create(
        b, loc,
        unfinished(memoryPTX("ld.relaxed.gpu.global.b32 $0, [$1];", "=r,l",
                         b.getI32Type(), {address})),
        ValueRange{});
    b.createBlock(&loop.getAfter());
    scf::YieldOp::create(b, loc);
  }
  acquire();
}

Value TensorCoreSolveKernel::firstSlot(Value n, Value lo) {
  return arith::AddIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, lo, m.index(*s.getStagedTokens())),
      n);
}

Value TensorCoreSolveKernel::recordOf(Value c) {
  int64_t C = *s.getStagedTokens();
  Value slot = arith::DivUIOp::create(
      b, loc, arith::SubIOp::create(b, loc, c, tokenLo), m.index(C));
  Value row = hv; // a varlen batch: a row a head
  if (op.isVarlen())
    slot = arith::AddIOp::create(b, loc, slot, firstSlot(n, tokenLo));
  else
    row = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, n, m.index(d.HV)), hv);
  Value record = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, row, m.index(recordSlots(op, C))),
      slot);
  return arith::MulIOp::create(b, loc, record, m.index(recordFloats(C)));
}

void TensorCoreSolveKernel::stageChunkExtras(Value c) {
  if (solveCounts)
    awaitRecordGroup(c);
  if (workspace)
    copyRecord(c, /*toWorkspace=*/false);
}

void TensorCoreSolveKernel::forEachRecordPiece(Value c, RecordPiece piece) {
  // The record (recordFloats): solveStage [2, C, C + 4] in 16-byte vectors
  // over every thread, then factor rows 0-2 (3 C floats over every thread)
  // and gamma_C (thread 0's). A thread past the end has none: its index is
  // clamped to the last piece (its loads stay in bounds) under a false
  // onlyIf, where taking the last piece again had every such lane of a
  // warp write one address (docs/cost-model.md#record-copies).
  int64_t C = *s.getStagedTokens(), threads = groupThreads();
  Value record = recordOf(c);
  // Element i0 + tid of `count`, clamped to the last, and whether it is
  // one (null: always).
  auto spread = [&](int64_t i0, int64_t count) -> std::pair<Value, Value> {
    Value i = offset(tid, i0);
    if (i0 + threads <= count)
      return {i, Value()};
    Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, i,
                                          m.index(count));
    return {arith::MinUIOp::create(b, loc, i, m.index(count - 1)), inRange};
  };
  int64_t rowVectors = (C + 4) / 4, solveVectors = 2 * C * rowVectors;
  for (int64_t i0 = 0; i0 < solveVectors; i0 += threads) {
    auto [i, inRange] = spread(i0, solveVectors);
    Value row = arith::DivUIOp::create(b, loc, i, m.index(rowVectors));
    piece(solveStage,
          {arith::DivUIOp::create(b, loc, row, m.index(C)),
           arith::RemUIOp::create(b, loc, row, m.index(C)),
           arith::MulIOp::create(
               b, loc, arith::RemUIOp::create(b, loc, i, m.index(rowVectors)),
               m.index(4))},
          plus(record, arith::MulIOp::create(b, loc, i, m.index(4))), 4,
          inRange);
  }
  Value factorBase = offset(record, 2 * C * (C + 4));
  for (int64_t i0 = 0; i0 < 3 * C; i0 += threads) {
    auto [i, inRange] = spread(i0, 3 * C);
    piece(factorStage,
          {arith::DivUIOp::create(b, loc, i, m.index(C)),
           arith::RemUIOp::create(b, loc, i, m.index(C))},
          plus(factorBase, i), 1, inRange);
  }
  piece(
      tokenStage, {m.index(0), m.index(C - 1)}, offset(factorBase, 3 * C), 1,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, m.index(0)));
}

void TensorCoreSolveKernel::copyRecord(Value c, bool toWorkspace) {
  // Every load is issued before the first store, so a chunk's copy is one
  // memory round trip.
  SmallVector<std::function<void()>> stores;
  forEachRecordPiece(c, [&](Value stage, SmallVector<Value, 3> staged, Value at,
                            int64_t floats, Value onlyIf) {
    Value src = toWorkspace ? stage : workspace;
    Value dst = toWorkspace ? workspace : stage;
    SmallVector<Value, 3> from =
        toWorkspace ? staged : SmallVector<Value, 3>{at};
    SmallVector<Value, 3> to = toWorkspace ? SmallVector<Value, 3>{at} : staged;
    // A piece of 4 floats is 16-byte aligned on both sides: a record is
    // recordFloats(C) floats, a multiple of 4 (C % 4 == 0), from the
    // workspace's base (a device allocation of its own); a solveStage row
    // is C + 4 floats in a 16-byte aligned buffer. Said to LLVM (loadVector's
    // alignment), the copy is one 16-byte access a piece, not four of 4
    // bytes (docs/cost-model.md#record-copies).
    Value x = floats == 4
                  ? loadVector(src, from, 4)
                  : memref::LoadOp::create(b, loc, src, from).getResult();
    stores.push_back([=] {
      OpBuilder::InsertionGuard guard(b);
      if (onlyIf) {
        auto ifOp = scf::IfOp::create(b, loc, onlyIf, /*withElseRegion=*/false);
        b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      }
      if (floats == 4) // storeVector's alignment, the vector as loaded
        vector::StoreOp::create(
            b, loc, x, dst, to, /*nontemporal=*/false,
            llvm::MaybeAlign(vectorAlignment(4, b.getF32Type())));
      else
        memref::StoreOp::create(b, loc, x, dst, to);
    });
  });
  for (auto &store : stores)
    store();
}

SmallVector<Value> TensorCoreSolveKernel::asyncChunkExtras(Value c,
                                                           Value issued) {
  SmallVector<Value> copies;
  if (!workspace)
    return copies;
  if (solveCounts)
    awaitRecordGroup(c);
  // A piece under a condition (past the pieces, or gamma_C: thread 0's) is
  // copied inside an scf.if whose token, where it does not run, is `issued`:
  // the chunk's group is committed by every thread all the same.
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  forEachRecordPiece(c, [&](Value stage, SmallVector<Value, 3> staged, Value at,
                            int64_t floats, Value onlyIf) {
    auto copy = [&] {
      return nvgpu::DeviceAsyncCopyOp::create(
                 b, loc, tokenType, stage, staged, workspace, at,
                 b.getIndexAttr(floats), Value(),
                 floats == 4 ? b.getUnitAttr() : UnitAttr())
          .getResult();
    };
    if (!onlyIf) {
      copies.push_back(copy());
      return;
    }
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{tokenType}, onlyIf,
                                  /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    scf::YieldOp::create(b, loc, copy());
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    scf::YieldOp::create(b, loc, issued);
    copies.push_back(ifOp.getResult(0));
  });
  return copies;
}
