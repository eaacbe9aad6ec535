//===- SegmentScan.cpp - chunk_parallel's scan split along T -------------===//
//
// Context parallelism within one GPU (segments = P > 1): a sequence's
// chunks in P segments, each scanned by CTAs of its own, so one long
// sequence fills the SMs. The recurrence is affine in the state, S_end =
// S_start A + B (docs/math.md §7), so three launches after chunk_parallel's
// record launch give each segment its start state:
//   maps  (TensorCoreSolveKernel, SegmentPart::maps) segment p's B from a
//         zero state (segment 0: from the initial state, its end state
//         then) and its A as the state rows of the identity with v = 0;
//   join  (SegmentJoinKernel) X_{p+1} = X_p A_p + B_p in turn;
//   scan  (TensorCoreSolveKernel, SegmentPart::scan) each segment from
//         X_p, its o and checkpoints; the last stores the final state.
// The maps' workspace holds P slots a sequence: slot p the state segment p
// starts from in its rows [0, V) (slot 0 a copy of the initial state, which
// the maps take; slot p + 1 first segment p's end state B_p, which the join
// turns into X_{p+1}), and segment p's transition A_p in slot p + 1's rows
// [V, V + K).
// RecurrentToGPU.cpp creates the launches and the workspaces.
//
//===----------------------------------------------------------------------===//

#include "KernelForms.h"
#include "ScheduleRules.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/Support/MathExtras.h"

#include <numeric>
#include <optional>

using namespace mlir;
using namespace mlir::gdn;

MemRefType TensorCoreSolveKernel::segmentMapsType(RecurrentOp op,
                                                  ScheduleAttr s) {
  auto d = op.getDims();
  return MemRefType::get({d.N * *s.getSegments(), d.HV, d.V + d.K, d.K},
                         Float32Type::get(op.getContext()));
}

Value TensorCoreSolveKernel::segmentMapRow(Value p) {
  return arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, n, m.index(*s.getSegments())), p);
}

void TensorCoreSolveKernel::buildSegment() {
  bool maps = segmentPart == SegmentPart::maps;
  segmentMaps = kernel.getArgument(op->getNumOperands() + 1);
  segmentsInZ = maps ? *s.getSegments() - 1 : *s.getSegments();
  enter();
  // The segment's tokens of the sequence's [tokenLo, hi), clamped to it: a
  // short sequence's later segments are empty (no chunk, the state passes
  // through).
  Value L = m.index(segmentTokens(op, s));
  chunkLo = arith::MinUIOp::create(
      b, loc, hi,
      arith::AddIOp::create(b, loc, tokenLo,
                            arith::MulIOp::create(b, loc, segment, L)));
  hi = arith::MinUIOp::create(b, loc, hi,
                              arith::AddIOp::create(b, loc, chunkLo, L));
  std::optional<OpBuilder::InsertionGuard> afterIf; // the kernel ends after it
  if (maps) {
    transitionBlock =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, vBlock,
                              m.index(d.V / s.blockColumns()));
    // Segment 0's end state starts from the initial state, so its
    // transition is never read: those CTAs do nothing.
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        segment, m.index(0));
    Value skip = arith::AndIOp::create(b, loc, transitionBlock, first);
    Value run = arith::XOrIOp::create(
        b, loc, skip, arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1));
    auto ifOp = scf::IfOp::create(b, loc, run, /*withElseRegion=*/false);
    afterIf.emplace(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  }
  SmallVector<Value> state = segmentStartState();
  createStagingBuffers();
  if (transitionBlock) // its v copies read block 0's columns, in bounds
    vSource0 =
        arith::SelectOp::create(b, loc, transitionBlock, m.index(0), blockV0);
  chunkCheckpoints = !maps;
  storeSegmentEnd(
      runStagedChunks(state, [&](Value c, Value count, ValueRange current) {
        return tensorCoreSolve(c, count, current);
      }));
}

SmallVector<Value> TensorCoreSolveKernel::segmentStartState() {
  if (segmentPart == SegmentPart::scan) // X_p (X_0: the maps' copy)
    return loadFragments(segmentMaps, {segmentMapRow(segment), hv},
                         /*vk=*/true);
  // The maps: segment 0's value blocks start from the initial state (a
  // segment 0 transition block never runs: buildSegment skips it).
  int64_t elements = *s.getColumnsPerLane() * kPerLane;
  SmallVector<Type> types(elements, b.getF32Type());
  Value fromInitial = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, segment,
                            m.index(0)),
      arith::XOrIOp::create(
          b, loc, transitionBlock,
          arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1)));
  auto ifOp = scf::IfOp::create(b, loc, types, fromInitial,
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  // With its copy X_0 for the scan's segment 0, which so reads no operand
  // that the scan's last segment writes (an in-place final state: another
  // CTA's of the same grid, in no order).
  SmallVector<Value> initial = loadState();
  storeFragments(initial, segmentMaps, {segmentMapRow(m.index(0)), hv},
                 /*vk=*/true);
  scf::YieldOp::create(b, loc, initial);
  // Else a value block starts from zeros, a transition block from the
  // identity's rows v0 - V + r, r < columns_per_lane (its fragment element
  // (r, j) is key 8 (j / 2) + 2t + j % 2 of row v0 + r,
  // TileIO::loadFragments).
  b.setInsertionPointToStart(&ifOp.getElseRegion().front());
  SmallVector<Value> tile(elements);
  for (int64_t r = 0; r < *s.getColumnsPerLane(); ++r) {
    Value row = arith::SubIOp::create(b, loc, offset(v0, r), m.index(d.V));
    for (int64_t j = 0; j < kPerLane; ++j) {
      Value key = offset(k0, 8 * (j / 2) + j % 2);
      Value one = arith::AndIOp::create(
          b, loc, transitionBlock,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, row, key));
      at(tile, r, j) =
          arith::SelectOp::create(b, loc, one, m.f32(1.0), m.f32(0.0));
    }
  }
  scf::YieldOp::create(b, loc, tile);
  return SmallVector<Value>(ifOp.getResults());
}

void TensorCoreSolveKernel::storeSegmentEnd(ValueRange state) {
  if (segmentPart == SegmentPart::maps) { // segment p's maps: slot p + 1
    storeFragments(SmallVector<Value>(state), segmentMaps,
                   {segmentMapRow(offset(segment, 1)), hv}, /*vk=*/true);
    return;
  }
  Value last = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, segment,
                                     m.index(*s.getSegments() - 1));
  auto ifOp = scf::IfOp::create(b, loc, last, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  storeState(state);
}

void SegmentJoinKernel::build() {
  Value maps = kernel.getArgument(op->getNumOperands() + 1);
  int64_t P = *s.getSegments(), K = d.K;
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value rowBlock = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value head = gpu::BlockIdOp::create(b, loc, gpu::Dimension::y);
  Value seq = gpu::BlockIdOp::create(b, loc, gpu::Dimension::z);
  Value row0 =
      arith::MulIOp::create(b, loc, rowBlock, m.index(kSegmentJoinRows));
  Value base = arith::MulIOp::create(b, loc, seq, m.index(P));
  // The thread's columns of the state: tid + kSegmentJoinThreads i, those under
  // K.
  int64_t groups = llvm::divideCeil(K, kSegmentJoinThreads);
  SmallVector<Value> columns;
  for (int64_t i = 0; i < groups; ++i) {
    Value c = offset(tid, kSegmentJoinThreads * i);
    if (kSegmentJoinThreads * (i + 1) > K) // clamped, its result not stored
      c = arith::MinUIOp::create(b, loc, c, m.index(K - 1));
    columns.push_back(c);
  }
  auto columnStored = [&](int64_t i) -> Value {
    if (kSegmentJoinThreads * (i + 1) <= K)
      return Value();
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                 offset(tid, kSegmentJoinThreads * i),
                                 m.index(K));
  };
  auto load = [&](Value slot, Value row, Value col) -> Value {
    return memref::LoadOp::create(b, loc, maps,
                                  ValueRange{slot, head, row, col});
  };
  // The CTA's rows of X_p in shared memory, each thread's columns written
  // by it: every thread reads all K of a row (broadcasts).
  Value xs = workgroupBuffer({kSegmentJoinRows, K}, b.getF32Type(), 16);
  // store(r, i) for each of the CTA's rows r and the thread's columns i,
  // none past K.
  auto forStoredColumns = [&](function_ref<void(int64_t r, int64_t i)> store) {
    for (int64_t r = 0; r < kSegmentJoinRows; ++r)
      for (int64_t i = 0; i < groups; ++i) {
        OpBuilder::InsertionGuard g(b);
        if (Value cond = columnStored(i))
          b.setInsertionPointToStart(
              &scf::IfOp::create(b, loc, cond, false).getThenRegion().front());
        store(r, i);
      }
  };
  auto stageRows = [&](function_ref<Value(int64_t r, int64_t i)> value) {
    forStoredColumns([&](int64_t r, int64_t i) {
      memref::StoreOp::create(b, loc, value(r, i), xs,
                              ValueRange{m.index(r), columns[i]});
    });
  };
  // X_1 (segment 0's end state, the maps') from slot 1.
  stageRows([&](int64_t r, int64_t i) {
    return load(offset(base, 1), offset(row0, r), columns[i]);
  });
  // Keys a trip: A_p's column loads of a trip come before its FMAs in the
  // PTX, so a step can wait on one round trip to L2, not one a trip (a
  // register each: at most kSegmentJoinKeysATrip a thread). ptxas keeps
  // them together from P = 6 (182-222 registers at K = 128) and interleaves
  // them with the FMAs below (38).
  int64_t unroll =
      std::gcd(K, std::max<int64_t>(1, kSegmentJoinKeysATrip / groups));
  for (int64_t p = 1; p + 1 < P; ++p) {
    // X_p in xs (and slot p), segment p's maps A_p, B_p in slot p + 1.
    Value at = offset(base, p + 1);
    // acc[r][i] = B_p[row0 + r][column i], then + sum_j X_p[r][j] A_p[j][c].
    SmallVector<Value> init;
    for (int64_t r = 0; r < kSegmentJoinRows; ++r)
      for (int64_t i = 0; i < groups; ++i)
        init.push_back(load(at, offset(row0, r), columns[i]));
    // xs written (the rows staged above, or the last step's sums).
    gpu::BarrierOp::create(b, loc);
    auto loop = scf::ForOp::create(
        b, loc, m.index(0), m.index(K), m.index(unroll), init,
        [&](OpBuilder &nb, Location, Value j0, ValueRange acc) {
          OpBuilder::InsertionGuard g(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          SmallVector<Value> a; // a[u * groups + i]
          for (int64_t u = 0; u < unroll; ++u)
            for (int64_t i = 0; i < groups; ++i)
              a.push_back(load(at, offset(j0, d.V + u), columns[i]));
          SmallVector<Value> next(acc.begin(), acc.end());
          for (int64_t u = 0; u < unroll; ++u)
            for (int64_t r = 0; r < kSegmentJoinRows; ++r) {
              Value x = memref::LoadOp::create(
                  b, loc, xs, ValueRange{m.index(r), offset(j0, u)});
              for (int64_t i = 0; i < groups; ++i) {
                Value &e = next[r * groups + i];
                e = m.add(e, m.mul(x, a[u * groups + i]));
              }
            }
          scf::YieldOp::create(b, loc, next);
        });
    forStoredColumns([&](int64_t r, int64_t i) {
      memref::StoreOp::create(
          b, loc, loop.getResult(r * groups + i), maps,
          ValueRange{at, head, offset(row0, r), columns[i]});
    });
    if (p + 2 == P)
      break;
    // X_{p+1} into xs once every thread has read X_p.
    gpu::BarrierOp::create(b, loc);
    stageRows([&](int64_t r, int64_t i) {
      return loop.getResult(r * groups + i);
    });
  }
}
