//===- KernelIndices.cpp - a kernel thread's place in the grid and the op -===//
//
// The entry of every kernel form: which CTA, warp and lane this is, which
// state columns and keys it holds (KernelContext.h), and which rows of the
// op's buffers its sequence reads and writes (KernelMath).
//
//===----------------------------------------------------------------------===//
#include "KernelContext.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

#include <tuple>

using namespace mlir;
using namespace mlir::gdn;

void KernelContext::enterKernel(function_ref<void()> atStart) {
  if (!workItem) // else a persistent loop's body: the entry block's are set
    m.uniqueConstantsIn(b.getInsertionBlock()); // the kernel's entry block
  tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  if (workItem) {
    // A persistent loop's item: tid plus a zero neither LLVM nor ptxas can
    // fold (the item's x, under 2^48, shifted right by 48 in inline PTX),
    // so the thread's staging addresses, derived from tid, are computed in
    // each item where they are used rather than hoisted out of the loop
    // and held across it: the solves at N = 4 T = 4096 HV = 32 take 103
    // registers uncapped (124 with tid as is; 71 outside a loop) and spill
    // 44 bytes under concurrent_solves' 64 (80 with tid as is).
    Value x = arith::IndexCastUIOp::create(b, loc, b.getI64Type(),
                                           (*workItem)[0]);
    Value zero = memoryPTX("shr.u64 $0, $1, 48;", "=l,l", b.getI64Type(), {x});
    tid = arith::AddIOp::create(
        b, loc, tid,
        arith::IndexCastUIOp::create(b, loc, b.getIndexType(), zero));
  }
  Value warpSize = m.index(kWarpSize);
  lane = arith::RemUIOp::create(b, loc, tid, warpSize);
  warp = arith::DivUIOp::create(b, loc, tid, warpSize);
  kLane = arith::DivUIOp::create(b, loc, lane, m.index(*s.getLanesAlongV()));
  Value vLane =
      arith::RemUIOp::create(b, loc, lane, m.index(*s.getLanesAlongV()));
  if (workItem) {
    vBlock = (*workItem)[0];
    hv = (*workItem)[1];
    n = (*workItem)[2];
  } else {
    vBlock = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
    hv = gpu::BlockIdOp::create(b, loc, gpu::Dimension::y);
    n = gpu::BlockIdOp::create(b, loc, gpu::Dimension::z);
  }
  if (replay) // z = layer * rows + n
    n = arith::RemUIOp::create(b, loc, n, m.index(replay->rows));
  if (segmentsInZ > 0) { // z = n * segments + segment
    segment = arith::RemUIOp::create(b, loc, n, m.index(segmentsInZ));
    n = arith::DivUIOp::create(b, loc, n, m.index(segmentsInZ));
  }
  h = arith::DivUIOp::create(b, loc, hv, m.index(d.HV / d.H));
  // The warp's first V column, and a lane's first one, `rows` a lane group.
  Value warpFirst = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, vBlock, m.index(s.blockColumns())),
      arith::MulIOp::create(b, loc, warp, m.index(s.warpColumns())));
  auto firstColumn = [&](Value group, int64_t rows) -> Value {
    return arith::AddIOp::create(
        b, loc, warpFirst, arith::MulIOp::create(b, loc, group, m.index(rows)));
  };
  v0 = firstColumn(vLane, *s.getColumnsPerLane());
  k0 = arith::MulIOp::create(b, loc, kLane, m.index(kPerLane));
  Value quad = arith::DivUIOp::create(b, loc, lane, m.index(4)); // g
  if (s.mmaReductions()) { // m16n8k16 tiles (MmaDecode.cpp): lane 4g + t
    kLane = arith::RemUIOp::create(b, loc, lane, m.index(4));
    v0 = firstColumn(quad, *s.getColumnsPerLane());
    k0 = arith::MulIOp::create(b, loc, kLane, m.index(kPerLane));
  }
  if (s.tensorCores()) { // m16n8k8 fragments (TileIO::loadFragments)
    mmaLane = lane; // tile i's rows g, g + 8: the warp's columns R g + 2i, + 1
    v0 = firstColumn(quad, *s.getColumnsPerLane());
    k0 = arith::MulIOp::create(
        b, loc, arith::RemUIOp::create(b, loc, lane, m.index(4)), m.index(2));
  }

  atStart();
  std::tie(stateRow, valid) = m.emitStateSlot(op, n);
  std::tie(tokenRow, tokenLo, hi) = m.emitTokenRange(op, n);
  chunkLo = tokenLo;
  std::tie(interRow, interValid) = m.emitIntermediateRow(op, n, valid);
  if (op.hasCheckpoints())
    std::tie(checkpointLo, checkpointHi) = m.emitCheckpointRange(op, n);
  if (!replay)
    return;
  // A replay row's tokens are the first `count` of its slot's window row;
  // a padding row or one with nothing accepted runs none and touches no
  // state (ReplayView.h).
  Value count = emitReplayCount(m, *replay, n);
  if (valid)
    count = arith::SelectOp::create(b, loc, valid, count, m.index(0));
  // (Row 0 for a padding row: the replay loads its windows unguarded.)
  tokenRow = valid
                 ? arith::SelectOp::create(b, loc, valid, stateRow, m.index(0))
                 : stateRow;
  hi = count;
  replayPath = emitReplayPath(m, *replay, n, count);
  valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, count,
                                m.index(0));
}
