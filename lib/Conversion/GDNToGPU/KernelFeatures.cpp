//===- KernelFeatures.cpp - programmatic launch and L2 prefetch hooks -----===//
//
// The features a schedule adds at named points of a kernel
// (KernelFeatures.h): programmatic dependent launch (launch = programmatic*:
// griddepcontrol.launch_dependents and the wait before the first read of
// what the previous kernel wrote) and the L2 prefetches of a later CTA's
// state tile (state_prefetch_distance) or staged inputs
// (input_prefetch_distance).
//
//===----------------------------------------------------------------------===//

#include "KernelFeatures.h"

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

void KernelFeatures::enter() {
  enterKernel([&] {
    if (s.launchMode() == LaunchMode::programmatic_at_start)
      launchDependents();
  });
}

void KernelFeatures::launchDependents() {
  // The next kernel of the stream may launch now: it waits for this grid
  // itself before it reads what this one writes.
  NVVM::GriddepcontrolOp::create(b, loc,
                                 NVVM::GridDepActionKind::launch_dependents);
}

void KernelFeatures::waitForPreviousGrid() {
  if (s.launchMode() == LaunchMode::ordinary)
    return;
  waitForGrid();
}

void KernelFeatures::waitForGrid() {
  // As inline PTX with a memory clobber (CUDA's
  // cudaGridDependencySynchronize): the intrinsic is IntrNoMem, so LLVM
  // could move a later load of the previous kernel's output above it.
  memoryPTX("griddepcontrol.wait;", "", Type(), ValueRange{});
}

std::array<Value, 3> KernelFeatures::laterBlock(int64_t threads,
                                                int64_t distance) {
  // Launch order: the x block index varies fastest, then y (hv), then z (n).
  int64_t blocksV = d.V / s.blockColumns();
  int64_t total = blocksV * d.HV * d.N;
  Value linear = arith::AddIOp::create(
      b, loc, vBlock,
      arith::MulIOp::create(
          b, loc, m.index(blocksV),
          arith::AddIOp::create(b, loc, hv,
                                arith::MulIOp::create(b, loc, m.index(d.HV),
                                                      n))));
  Value later =
      arith::AddIOp::create(b, loc, linear, m.index(distance));
  Value mine = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, tid,
                                     m.index(threads));
  Value inGrid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, later,
                                       m.index(total));
  auto ifOp = scf::IfOp::create(b, loc,
                                arith::AndIOp::create(b, loc, mine, inGrid),
                                /*withElseRegion=*/false);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  Value laterV = arith::RemUIOp::create(b, loc, later, m.index(blocksV));
  Value rest = arith::DivUIOp::create(b, loc, later, m.index(blocksV));
  return {laterV, arith::RemUIOp::create(b, loc, rest, m.index(d.HV)),
          arith::DivUIOp::create(b, loc, rest, m.index(d.HV))};
}

void KernelFeatures::prefetchLaterInputs() {
  if (*s.getInputPrefetchDistance() <= 0) // the schedule checked the rest
    return;
  OpBuilder::InsertionGuard g(b);
  // Thread t < T: token t's rows, a prefetch a 128-byte line.
  std::array<Value, 3> later = laterBlock(d.T, *s.getInputPrefetchDistance());
  Value laterV = later[0], laterHV = later[1], laterN = later[2];
  Value laterH = arith::DivUIOp::create(b, loc, laterHV, m.index(d.HV / d.H));
  Value column0 =
      arith::MulIOp::create(b, loc, laterV, m.index(s.blockColumns()));
  // mem[laterN, t, head, col + ...] over `width` elements (col null: the
  // one element mem[laterN, t, head]).
  auto row = [&](Value mem, Value head, Value col, int64_t width) {
    int64_t perLine = 128 / elementBytes(mem);
    for (int64_t c = 0; c < width; c += perLine) {
      SmallVector<Value> idx = {laterN, tid, head};
      if (col)
        idx.push_back(offset(col, c));
      NVVM::PrefetchOp::create(
          b, loc,
          NVVM::PrefetchCacheLevelAttr::get(b.getContext(),
                                            NVVM::PrefetchCacheLevel::L2),
          /*evictPriority=*/nullptr, globalAddress(mem, idx),
          /*predicate=*/Value(), /*tensormap=*/false, /*uniform=*/false,
          /*in_param_space=*/false);
    }
  };
  row(op.getQ(), laterH, m.index(0), d.K);
  row(op.getK(), laterH, m.index(0), d.K);
  row(op.getV(), laterHV, column0, s.blockColumns());
  // The gates: one value a token and head, or a row along K (a per-key
  // decay) or along the CTA's V columns (a per-channel beta).
  Value gate = op.getG() ? op.getG() : op.getA();
  Value beta = op.getBeta() ? op.getBeta() : op.getB();
  for (auto [x, col, width] :
       {std::tuple<Value, Value, int64_t>{gate, m.index(0), d.K},
        {beta, column0, s.blockColumns()}}) {
    if (!x)
      continue;
    if (cast<MemRefType>(x.getType()).getRank() == 4)
      row(x, laterHV, col, width);
    else
      row(x, laterHV, Value(), 1);
  }
}

void KernelFeatures::prefetchLaterState() {
  Value init = op.getInitialState();
  if (*s.getStatePrefetchDistance() <= 0) // the schedule checked the rest
    return;
  OpBuilder::InsertionGuard g(b);
  // Thread 0: the later CTA's state tile, one bulk prefetch.
  auto [laterV, laterHV, laterN] = laterBlock(1, *s.getStatePrefetchDistance());
  auto [row, rowValid] = m.emitStateSlot(op, laterN);
  if (rowValid) { // a padding row (slot < 0) has no state to fetch
    auto ifValid = scf::IfOp::create(b, loc, rowValid, false);
    b.setInsertionPointToStart(&ifValid.getThenRegion().front());
  }
  int64_t bytes = s.blockColumns() * d.K * elementBytes(init);
  NVVM::CpAsyncBulkPrefetchOp::create(
      b, loc,
      globalAddress(init, {row, laterHV,
                           arith::MulIOp::create(b, loc, laterV,
                                                 m.index(s.blockColumns())),
                           m.index(0)}),
      i32(bytes), Value());
}
