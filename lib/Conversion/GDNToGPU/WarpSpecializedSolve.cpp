//===- WarpSpecializedSolve.cpp - chunks solved a chunk ahead -------------===//
//
// producerSolves (solve = tensor_cores, producer_stages = 2): a producer
// warpgroup stages each chunk and solves it (Gram, decay masks, token
// factors, the substitution's Tm and M) into a ring slot of shared memory
// while the consumer warps run the previous chunk's state products from the
// other slot (WarpSpecializedSolveKernel, KernelForms.h). The ring is two
// sets of the chunk's buffers (Staging::ChunkBuffers) under full / empty
// mbarriers; the producer's own phases wait at named barrier 1.
//
//===----------------------------------------------------------------------===//
#include "KernelForms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <array>

using namespace mlir;
using namespace mlir::gdn;

/// The producer's named barrier (0 is gpu.barrier's, the whole CTA).
static constexpr int64_t kSolverBarrier = 1;

void WarpSpecializedSolveKernel::build() {
  assert(*s.getProducerStages() == 2 &&
         "checkSolvingProducer: two slots, a set of buffers each");
  solvedAhead = true;
  enter();
  createStagingBuffers();
  std::array<ChunkBuffers, 2> sets = {chunkBuffers(), createChunkBuffers()};
  int64_t consumers = *s.getWarps() * kWarpSize;
  int64_t producers = s.producerWarps() * kWarpSize;
  createRing(producers, consumers);
  Value isConsumer = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                           warp, m.index(*s.getWarps()));
  auto roles = scf::IfOp::create(b, loc, isConsumer, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard g(b);

  b.setInsertionPointToStart(&roles.getElseRegion().front());
  waitForPreviousGrid(); // before the producer's first read of the tokens
  inThreadGroup(consumers, producers, kSolverBarrier, [&] {
    forEachChunk(ValueRange{}, [&](Value c, Value count, Value slot,
                                   Value phase, ValueRange) {
      produceChunk(c, count, slot, phase, sets);
      return SmallVector<Value>{};
    });
  });

  b.setInsertionPointToStart(&roles.getThenRegion().front());
  SmallVector<Value> state = loadState();
  waitForPreviousGrid();
  SmallVector<Value> last = consumeRing(
      state, [&](Value c, Value count, Value slot, ValueRange carried) {
        useSlotBuffers(slot, sets);
        return tensorCoreSolve(c, count, carried);
      });
  storeState(last);
}

void WarpSpecializedSolveKernel::produceChunk(Value c, Value count, Value slot,
                                              Value phase,
                                              ArrayRef<ChunkBuffers> sets) {
  // A slot's first use waits on parity 1, which a fresh mbarrier reports
  // complete (the phase before its first).
  wait(empty, slot, arith::XOrIOp::create(b, loc, phase, i32(1)));
  useSlotBuffers(slot, sets);
  // q, k and the CTA's columns of v in flight while the gates are staged
  // (rows past `count` zeros, gates and betas 0 there).
  Value copies = asyncGroup(asyncChunkCopies(c, count));
  stageLogGates(c, count);
  nvgpu::DeviceAsyncWaitOp::create(b, loc, copies, b.getI32IntegerAttr(0));
  groupBarrier();
  // Both end at the producer's barrier: the gates and decays, the Gram's
  // buffers (the producer's own, one set) are free for the next chunk.
  buildTensorCoreGram();
  buildSolveMatrices();
  // Release: this thread's copies (waited for above) and stores into the
  // slot are visible to the consumers that see the phase complete.
  arrive(full, slot);
}

void WarpSpecializedSolveKernel::useSlotBuffers(Value slot,
                                                ArrayRef<ChunkBuffers> sets) {
  useChunkBuffers(selectChunkBuffers(
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, slot, m.index(1)),
      sets[0], sets[1]));
}
