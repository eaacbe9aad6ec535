//===- WarpSpecialization.cpp - the warp-specialized token loop ----------===//
//
// Schedule `producer_stages`: a producer warp fills a ring of staged chunks
// with cp.async.bulk under full/empty mbarriers, with the tokens' gates and
// norm factors, while the consumer warps run the tokens;
// `consumer_registers` adds setmaxnreg (KernelForms.h).
//
// Raw NVVM, not nvgpu: upstream has no op for the non-tensor bulk copy, and
// nvgpu's mbarrier group lives in a module global and fuses expect_tx into
// an arrive, where here each producer lane expects its own copies' bytes
// before the warp arrives and the ring sits next to the staging buffers.
//
//===----------------------------------------------------------------------===//
#include "KernelForms.h"

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

void WarpSpecializedKernel::build() {
  enter();
  createStagingBuffers();
  createRing(kWarpSize, *s.getWarps() * kWarpSize);
  Value isConsumer = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                           warp, m.index(*s.getWarps()));
  auto roles = scf::IfOp::create(b, loc, isConsumer, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&roles.getElseRegion().front());
  if (*s.getConsumerRegisters() > 0)
    NVVM::SetMaxRegisterOp::create(b, loc, kProducerRegisters,
                                   NVVM::SetMaxRegisterAction::decrease);
  waitForPreviousGrid(); // before the producer's first read of the tokens
  // The producer warps write a replayed verify's windows.
  writeReplayWindows(
      arith::SubIOp::create(b, loc, tid, m.index(*s.getWarps() * kWarpSize)),
      s.producerWarps() * kWarpSize);
  Value isCopier = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, warp,
                                         m.index(*s.getWarps()));
  auto copier = scf::IfOp::create(b, loc, isCopier, /*withElseRegion=*/false);
  b.setInsertionPointToStart(&copier.getThenRegion().front());
  forEachChunk(ValueRange{},
               [&](Value c, Value count, Value slot, Value phase, ValueRange) {
                 produceChunk(c, count, slot, phase);
                 return SmallVector<Value>{};
               });

  b.setInsertionPointToStart(&roles.getThenRegion().front());
  if (*s.getConsumerRegisters() > 0)
    NVVM::SetMaxRegisterOp::create(b, loc, *s.getConsumerRegisters(),
                                   NVVM::SetMaxRegisterAction::increase);
  SmallVector<Value> state = loadState();
  waitForPreviousGrid();
  SmallVector<Value> last = consumeRing(
      state, [&](Value c, Value count, Value slot, ValueRange carried) {
        return runChunk(
            c, count,
            arith::MulIOp::create(b, loc, slot, m.index(*s.getStagedTokens())),
            carried);
      });
  storeState(last);
  unrollTokenLoops();
}

void WarpSpecializedKernel::produceChunk(Value c, Value count, Value slot,
                                         Value phase) {
  Value rowBase =
      arith::MulIOp::create(b, loc, slot, m.index(*s.getStagedTokens()));
  auto copyToken = [&](Value t, Value row) {
    int64_t qBytes = d.K * elementBytes(op.getQ());
    int64_t vBytes = s.blockColumns() * elementBytes(op.getV());
    Value bar = barrierAt(full, slot);
    // The transactions are expected before this lane's arrival, so the
    // phase cannot complete before the copies do.
    NVVM::MBarrierExpectTxOp::create(b, loc, bar, i32(2 * qBytes + vBytes));
    auto copy = [&](Value dst, Value src, ValueRange idx, int64_t bytes) {
      NVVM::CpAsyncBulkGlobalToSharedClusterOp::create(
          b, loc, clusterAddress(dst, {row, m.index(0)}),
          globalAddress(src, idx), bar, i32(bytes), Value(), Value());
    };
    copy(qStage, op.getQ(), {tokenRow, t, h, m.index(0)}, qBytes);
    copy(kStage, op.getK(), {tokenRow, t, h, m.index(0)}, qBytes);
    copy(vStage, op.getV(), {tokenRow, t, hv, blockV0}, vBytes);
  };
  auto fill = [&]() {
    wait(empty, slot, arith::XOrIOp::create(b, loc, phase, i32(1)));
    forTokenOfThread(c, count, rowBase, lane, copyToken);
    stageGates(c, count, rowBase, lane, kWarpSize);
  };
  // The norms' loads read no slot: they go out before the wait for it.
  if (normStage)
    stageNorms(c, count, rowBase, fill);
  else
    fill();
  // Release: the gates and norms stored above are visible to the consumers
  // that see the phase complete (try_wait acquires).
  arrive(full, slot);
}

void WarpSpecializedKernel::stageNorms(Value c, Value count, Value rowBase,
                                       function_ref<void()> overlapped) {
  // L lanes a token: the most that leave a single pass over the chunk, and
  // at least as many as keep a lane's slice of q within 128 bytes (the f32
  // values of q and k: 64 registers).
  int64_t qkBytes = elementBytes(op.getQ());
  int64_t group = std::max<int64_t>(
      kWarpSize / llvm::PowerOf2Ceil(*s.getStagedTokens()),
      llvm::PowerOf2Ceil(llvm::divideCeil(d.K * qkBytes, 128)));
  group = std::min<int64_t>(group, kWarpSize);
  while (group > 1 && d.K % group != 0)
    group /= 2;
  int64_t perLane = d.K / group, vec = 16 / qkBytes;
  while (perLane % vec != 0)
    vec /= 2;
  int64_t tokensPerPass = kWarpSize / group;
  Value first = arith::DivUIOp::create(b, loc, lane, m.index(group));
  Value col0 = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, lane, m.index(group)),
      m.index(perLane));
  Value last = arith::SubIOp::create(b, loc, count, m.index(1));
  // Pass p takes token i = first + p * tokensPerPass of the chunk: entries
  // [col0, col0 + perLane) of its k and q, as loaded (widened only after
  // `overlapped`, so that nothing waits on the loads before it). The passes
  // whose loads fit in 256 bytes a lane (64 registers) load before
  // `overlapped`, any others right before their arithmetic.
  int64_t passes = llvm::divideCeil(*s.getStagedTokens(), tokensPerPass);
  int64_t early = std::max<int64_t>(1, 256 / (2 * perLane * qkBytes));
  SmallVector<Value> tokens;
  for (int64_t p = 0; p < passes; ++p)
    tokens.push_back(offset(first, p * tokensPerPass));
  auto load = [&](int64_t p) {
    Value t = arith::AddIOp::create(
        b, loc, c, arith::MinUIOp::create(b, loc, tokens[p], last));
    std::pair<SmallVector<Value>, SmallVector<Value>> kq;
    for (int64_t e = 0; e < perLane; e += vec) {
      SmallVector<Value> idx{tokenRow, t, h, offset(col0, e)};
      kq.first.push_back(loadVector(op.getK(), idx, vec));
      kq.second.push_back(loadVector(op.getQ(), idx, vec));
    }
    return kq;
  };
  SmallVector<std::pair<SmallVector<Value>, SmallVector<Value>>> loads;
  for (int64_t p = 0; p < std::min(passes, early); ++p)
    loads.push_back(load(p));
  overlapped();
  Value isFirst = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq,
      arith::RemUIOp::create(b, loc, lane, m.index(group)), m.index(0));
  auto widen = [&](ArrayRef<Value> vectors) {
    SmallVector<Value> x;
    for (Value v : vectors)
      llvm::append_range(x, extractAll(m.toF32(v)));
    return x;
  };
  for (int64_t p = 0; p < passes; ++p) {
    auto [k, q] = p < early ? loads[p] : load(p);
    // Every lane of the warp takes part in the shuffles.
    TokenNorms norms = tokenNorms(widen(k), widen(q), [&](Value x) {
      return butterflySum(x, group / 2, 1);
    });
    Value store = arith::AndIOp::create(
        b, loc, isFirst,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, tokens[p],
                              count));
    auto ifOp = scf::IfOp::create(b, loc, store, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    storeVector({norms.ik, norms.iq, norms.kq, m.f32(0.0)}, normStage,
                {plus(rowBase, tokens[p]), m.index(0)});
  }
}
