//===- CommitToGPU.cpp - gdn.commit to a GPU copy kernel ------------------===//
//
// gdn.commit is a gather-copy: row n moves one step of its buffer row
// ([HV, ...], contiguous) into its slot of the pool ([HV, ...], contiguous),
// or nothing. The kernel runs over (chunk of a head, hv, n): a CTA reads
// row n's count and indices (KernelMath::emitCommitRow), returns unless the
// row commits, and copies `threads * unroll` vectors of its head. A vector
// is 16 bytes of the wider dtype along the contiguous dimension (the last
// one, K in vk, V in kv), consecutive threads take consecutive vectors (so a
// warp moves 512 contiguous bytes), and a thread issues its `unroll` loads
// before its stores so that they are in flight together. Offsets are `index`
// (64-bit after convert-gpu-to-nvvm): pools past 2^31 elements are fine.
//
// An e4m3 buffer (intermediate_state_scale) into a pool of another dtype is
// widened times its rows' scales; into an e4m3 pool its bits are copied and
// CTA 0 of the head copies the row scales.
//
// An f8E4M3FN pool (vk, with state_scale) from a buffer of another dtype
// takes another plan: a warp a row
// (V column v) of the head, 4 warps a CTA, its lanes along the row's K keys
// in 16-byte vectors of the buffer; the row's amax by xor shuffles, its
// scale stored by lane 0, the elements times 448 / amax rounded to e4m3
// (docs/math.md §6), as the recurrence stores a quantized state.
//
//===----------------------------------------------------------------------===//
#include "gdn/Conversion/GDNToGPU/CommitToGPU.h"
#include "gdn/Conversion/GDNToGPU/GPUTarget.h"
#include "gdn/Conversion/KernelMath.h"
#include "gdn/Dialect/GDN/IR/GDNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace mlir::gdn;

namespace {
constexpr int64_t kWarpSize = 32;
constexpr int64_t kMaxThreads = 128;     ///< 4 warps a CTA
constexpr int64_t kVectorsPerThread = 4; ///< loads in flight a thread
constexpr int64_t kVectorBytes = 16;     ///< widest global access

/// How the copy of one head (rows x cols elements) is split.
struct CopyPlan {
  int64_t vector;         ///< elements a vector
  int64_t vectorsPerHead; ///< rows * cols / vector
  int64_t threads;        ///< threads a CTA
  int64_t unroll;         ///< vectors a thread
  int64_t chunks;         ///< CTAs a head
  /// Whether the last chunk runs past the head (a bounds check is needed).
  bool ragged() const { return chunks * threads * unroll != vectorsPerHead; }
};

CopyPlan planCopy(CommitOp op) {
  auto buffer = cast<MemRefType>(op.getIntermediateStates().getType());
  auto state = cast<MemRefType>(op.getState().getType());
  int64_t rows = buffer.getDimSize(3), cols = buffer.getDimSize(4);
  int64_t bytes = std::max(buffer.getElementTypeBitWidth(),
                           state.getElementTypeBitWidth()) /
                  8;
  CopyPlan p;
  // 16 bytes of the wider dtype, as long as vectors tile the contiguous
  // dimension (so no vector crosses a row and every one is aligned).
  p.vector = kVectorBytes / bytes;
  while (cols % p.vector != 0)
    p.vector /= 2;
  p.vectorsPerHead = rows * cols / p.vector;
  p.threads = std::min<int64_t>(kMaxThreads,
                                llvm::alignTo(p.vectorsPerHead, kWarpSize));
  p.unroll = std::min<int64_t>(kVectorsPerThread,
                               llvm::divideCeil(p.vectorsPerHead, p.threads));
  p.chunks = llvm::divideCeil(p.vectorsPerHead, p.threads * p.unroll);
  return p;
}

/// The plan of a quantized commit: `vector` buffer elements a lane access,
/// `perLane` accesses a lane along the row, 4 warps (rows) a CTA, `chunks`
/// CTAs a head.
struct RowPlan {
  int64_t vector, vectorsPerRow, perLane, chunks;
};

RowPlan planRows(CommitOp op) {
  auto buffer = cast<MemRefType>(op.getIntermediateStates().getType());
  int64_t rows = buffer.getDimSize(3), cols = buffer.getDimSize(4);
  RowPlan p;
  p.vector = kVectorBytes / (buffer.getElementTypeBitWidth() / 8);
  while (cols % p.vector != 0)
    p.vector /= 2;
  p.vectorsPerRow = cols / p.vector;
  p.perLane = llvm::divideCeil(p.vectorsPerRow, kWarpSize);
  p.chunks = llvm::divideCeil(rows, kMaxThreads / kWarpSize);
  return p;
}

/// Byte alignment of `count` elements of `type` at a multiple of `count`
/// elements (buffers are 16-byte aligned; the C API checks it).
int64_t alignment(int64_t count, Type type) {
  int64_t bytes = count * type.getIntOrFloatBitWidth() / 8;
  return std::min<int64_t>(bytes & -bytes, kVectorBytes);
}

/// What both kernel bodies start from: the buffer and the pool with their
/// element types, the thread and block ids (chunk of the head, hv), and
/// row n's commit (n = block z).
struct KernelEntry {
  Value buffer, state;
  Type from, to;
  Value tid, chunk, hv;
  KernelMath::CommitRow r;
};

KernelEntry enterKernel(KernelMath &m, CommitOp op) {
  OpBuilder &b = m.builder();
  Location loc = m.location();
  KernelEntry e;
  e.buffer = op.getIntermediateStates();
  e.state = op.getState();
  e.from = cast<MemRefType>(e.buffer.getType()).getElementType();
  e.to = cast<MemRefType>(e.state.getType()).getElementType();
  e.tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  e.chunk = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  e.hv = gpu::BlockIdOp::create(b, loc, gpu::Dimension::y);
  e.r = m.emitCommitRow(op, gpu::BlockIdOp::create(b, loc, gpu::Dimension::z));
  return e;
}

/// Builds the kernel body for the clone `op` of the op, whose operands are
/// the kernel's arguments.
void buildCopy(OpBuilder &b, Location loc, CommitOp op, const CopyPlan &p) {
  KernelMath m(b, loc, KernelMath::Flavor::GPU);
  // (Named copies, not a structured binding, which C++17 lambdas cannot
  // capture.)
  KernelEntry entry = enterKernel(m, op);
  Value buffer = entry.buffer, state = entry.state, tid = entry.tid,
        chunk = entry.chunk, hv = entry.hv;
  Type from = entry.from, to = entry.to;
  const KernelMath::CommitRow &r = entry.r;
  int64_t cols = cast<MemRefType>(buffer.getType()).getDimSize(4);

  // Rows that commit nothing (padding, a negative buffer row, accepted <= 0)
  // leave the CTA at once; the condition is uniform over the CTA.
  auto ifValid = scf::IfOp::create(b, loc, r.valid, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&ifValid.getThenRegion().front());

  // Vector u of this thread: first + u * threads, element (i, j) of the head.
  Value first = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, chunk, m.index(p.threads * p.unroll)), tid);
  struct Access {
    Value vector, i, j;
  };
  SmallVector<Access> accesses;
  for (int64_t u = 0; u < p.unroll; ++u) {
    Value vi =
        u == 0 ? first
               : arith::AddIOp::create(b, loc, first, m.index(u * p.threads));
    Value e = arith::MulIOp::create(b, loc, vi, m.index(p.vector));
    accesses.push_back({vi, arith::DivUIOp::create(b, loc, e, m.index(cols)),
                        arith::RemUIOp::create(b, loc, e, m.index(cols))});
  }
  auto load = [&](const Access &a) -> Value {
    return vector::LoadOp::create(
        b, loc, VectorType::get({p.vector}, from), buffer,
        ValueRange{r.row, r.step, hv, a.i, a.j}, /*nontemporal=*/false,
        llvm::MaybeAlign(alignment(p.vector, from)));
  };
  // An e4m3 buffer's row scales: row v is i in vk (one scale a vector),
  // j .. j + vector - 1 in kv (one an element).
  Value bufferScales = op.getIntermediateStateScale();
  auto scaleOf = [&](const Access &a) -> Value {
    if (op.isVKLayout())
      return vector::BroadcastOp::create(
          b, loc, VectorType::get({p.vector}, b.getF32Type()),
          memref::LoadOp::create(b, loc, bufferScales,
                                 ValueRange{r.row, r.step, hv, a.i}));
    return vector::LoadOp::create(
        b, loc, VectorType::get({p.vector}, b.getF32Type()), bufferScales,
        ValueRange{r.row, r.step, hv, a.j}, /*nontemporal=*/false,
        llvm::MaybeAlign(alignment(p.vector, b.getF32Type())));
  };
  auto store = [&](const Access &a, Value x) {
    // Equal dtypes copy the bits (e4m3 with its scales, below); others
    // round once from f32, an e4m3 buffer times its rows' scales.
    if (from != to) {
      x = m.toF32(x);
      if (bufferScales)
        x = arith::MulFOp::create(b, loc, x, scaleOf(a));
      x = m.fromF32(x, to);
    }
    vector::StoreOp::create(b, loc, x, state, ValueRange{r.slot, hv, a.i, a.j},
                            /*nontemporal=*/false,
                            llvm::MaybeAlign(alignment(p.vector, to)));
  };
  // e4m3 to e4m3: chunk 0 copies the row scales of the head with the bits.
  if (Value poolScales = op.getStateScale()) {
    int64_t V = cast<MemRefType>(poolScales.getType()).getDimSize(2);
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, chunk,
                                        m.index(0));
    auto ifFirst = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard inFirst(b);
    b.setInsertionPointToStart(&ifFirst.getThenRegion().front());
    auto loop = scf::ForOp::create(b, loc, tid, m.index(V), m.index(p.threads));
    b.setInsertionPointToStart(loop.getBody());
    Value v = loop.getInductionVar();
    memref::StoreOp::create(
        b, loc,
        memref::LoadOp::create(b, loc, bufferScales,
                               ValueRange{r.row, r.step, hv, v}),
        poolScales, ValueRange{r.slot, hv, v});
  }
  if (!p.ragged()) {
    // Every vector is in the head: all loads, then all stores.
    SmallVector<Value> values;
    for (const Access &a : accesses)
      values.push_back(load(a));
    for (auto [a, x] : llvm::zip(accesses, values))
      store(a, x);
    return;
  }
  // The last chunk runs past the head: each vector under a bounds check.
  for (const Access &a : accesses) {
    Value inHead = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                         a.vector, m.index(p.vectorsPerHead));
    auto ifIn = scf::IfOp::create(b, loc, inHead, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(&ifIn.getThenRegion().front());
    store(a, load(a));
  }
}

/// The kernel body of a quantized commit (RowPlan) for the clone `op`.
void buildQuantizedCopy(OpBuilder &b, Location loc, CommitOp op,
                        const RowPlan &p) {
  KernelMath m(b, loc, KernelMath::Flavor::GPU);
  // (Named copies, not a structured binding, which C++17 lambdas cannot
  // capture.)
  KernelEntry entry = enterKernel(m, op);
  Value buffer = entry.buffer, state = entry.state, tid = entry.tid,
        chunk = entry.chunk, hv = entry.hv;
  Type from = entry.from, to = entry.to;
  const KernelMath::CommitRow &r = entry.r;
  int64_t rows = cast<MemRefType>(buffer.getType()).getDimSize(3);
  Value lane = arith::RemUIOp::create(b, loc, tid, m.index(kWarpSize));
  Value v = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, chunk, m.index(kMaxThreads / kWarpSize)),
      arith::DivUIOp::create(b, loc, tid, m.index(kWarpSize)));
  // Uniform over the warp: the row commits and v is a row of the head, so
  // the shuffles below run on all 32 lanes.
  Value go = arith::AndIOp::create(
      b, loc, r.valid,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, v,
                            m.index(rows)));
  auto ifGo = scf::IfOp::create(b, loc, go, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&ifGo.getThenRegion().front());

  // Access u of the lane: vector lane + 32 u of the row; past the row (a
  // row of fewer than 32 x perLane vectors) it reads vector 0, counts 0 to
  // the max and stores nothing.
  struct Access {
    Value inRow, k;
    SmallVector<Value> x;
  };
  SmallVector<Access> accesses;
  Value amax = m.f32(0.0);
  for (int64_t u = 0; u < p.perLane; ++u) {
    Value vi = arith::AddIOp::create(b, loc, lane, m.index(u * kWarpSize));
    Access a;
    a.inRow = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, vi,
                                    m.index(p.vectorsPerRow));
    Value safe = arith::SelectOp::create(b, loc, a.inRow, vi, m.index(0));
    a.k = arith::MulIOp::create(b, loc, safe, m.index(p.vector));
    Value raw = vector::LoadOp::create(
        b, loc, VectorType::get({p.vector}, from), buffer,
        ValueRange{r.row, r.step, hv, v, a.k}, /*nontemporal=*/false,
        llvm::MaybeAlign(alignment(p.vector, from)));
    Value wide = m.toF32(raw);
    for (int64_t e = 0; e < p.vector; ++e) {
      a.x.push_back(vector::ExtractOp::create(b, loc, wide, e));
      amax = arith::SelectOp::create(b, loc, a.inRow,
                                     m.maxAbs(amax, a.x.back()), amax);
    }
    accesses.push_back(std::move(a));
  }
  for (int64_t offset = kWarpSize / 2; offset >= 1; offset /= 2) {
    Value other = gpu::ShuffleOp::create(b, loc, amax, offset, kWarpSize,
                                         gpu::ShuffleMode::XOR)
                      .getShuffleResult();
    amax = arith::MaximumFOp::create(b, loc, amax, other);
  }
  auto [scale, inv] = m.e4m3Scale(amax);
  Value isLane0 =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, m.index(0));
  auto ifLane0 = scf::IfOp::create(b, loc, isLane0, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard inLane0(b);
    b.setInsertionPointToStart(&ifLane0.getThenRegion().front());
    memref::StoreOp::create(b, loc, scale, op.getStateScale(),
                            ValueRange{r.slot, hv, v});
  }
  for (Access &a : accesses) {
    SmallVector<Value> scaled;
    for (Value x : a.x)
      scaled.push_back(m.mul(x, inv));
    Value wide = vector::FromElementsOp::create(
        b, loc, VectorType::get({p.vector}, b.getF32Type()), scaled);
    auto ifIn = scf::IfOp::create(b, loc, a.inRow, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard inRow(b);
    b.setInsertionPointToStart(&ifIn.getThenRegion().front());
    vector::StoreOp::create(
        b, loc, m.fromF32(wide, to), state, ValueRange{r.slot, hv, v, a.k},
        /*nontemporal=*/false, llvm::MaybeAlign(alignment(p.vector, to)));
  }
}
} // namespace

LogicalResult mlir::gdn::lowerCommitToGPU(CommitOp op, const GPUTarget &target,
                                          gpu::GPUModuleOp kernels,
                                          SymbolTable &symbols,
                                          StringRef name) {
  auto d = op.getDims();
  CopyPlan p = planCopy(op);
  // Quantized: an f8E4M3FN pool from a buffer of another dtype (an e4m3
  // buffer's bits and scales are copied as they are).
  bool quantized = op.getStateScale() && !op.getIntermediateStateScale();
  bool e4m3 = op.getStateScale() || op.getIntermediateStateScale();
  if (quantized && !op.isVKLayout())
    return op.emitOpError()
           << "cannot be lowered to the GPU: an f8E4M3FN pool in layout kv "
              "(its row scales run across the strided dimension); use "
              "layout vk, or the CPU lowering";
  if (e4m3 && !target.e4m3Conversions)
    return op.emitOpError()
           << "cannot be lowered to the GPU: an f8E4M3FN pool or buffer "
              "needs cvt with e4m3x2 operands (sm_89 on), not "
           << target.chip;
  RowPlan rp = planRows(op);
  if (quantized) { // the launch below reads p's threads and chunks
    p.threads = kMaxThreads;
    p.chunks = rp.chunks;
  }
  if (d.HV > 65535 || d.N > 65535)
    return op.emitOpError() << "cannot be lowered to the GPU: N = " << d.N
                            << " and HV = " << d.HV
                            << " must each be at most 65535 (grid limits)";
  if (p.chunks > std::numeric_limits<int32_t>::max())
    return op.emitOpError() << "cannot be lowered to the GPU: a head of "
                            << p.vectorsPerHead * p.vector
                            << " elements needs more than 2^31 - 1 CTAs";
  Location loc = op.getLoc();

  // Kernel signature: the op's operands, in order.
  SmallVector<Type> argTypes(op->getOperandTypes());
  OpBuilder b = OpBuilder::atBlockEnd(&kernels.getBodyRegion().front());
  auto kernel =
      gpu::GPUFuncOp::create(b, loc, name, b.getFunctionType(argTypes, {}));
  symbols.insert(kernel); // uniquifies the name
  kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  kernel.setKnownBlockSizeAttr(
      b.getDenseI32ArrayAttr({static_cast<int32_t>(p.threads), 1, 1}));

  Block &entry = kernel.getBody().front();
  b.setInsertionPointToStart(&entry);
  IRMapping mapping;
  mapping.map(op->getOperands(), entry.getArguments());
  auto kop = cast<CommitOp>(b.clone(*op, mapping));
  if (quantized)
    buildQuantizedCopy(b, loc, kop, rp);
  else
    buildCopy(b, loc, kop, p);
  kop->erase();
  gpu::ReturnOp::create(b, loc);

  // Host side: the launch over (chunks, HV, N).
  OpBuilder hb(op);
  auto idx = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(hb, loc, v);
  };
  gpu::KernelDim3 grid{idx(p.chunks), idx(d.HV), idx(d.N)};
  gpu::KernelDim3 block{idx(p.threads), idx(1), idx(1)};
  gpu::LaunchFuncOp::create(hb, loc, kernel, grid, block,
                            /*dynamicSharedMemorySize=*/Value(),
                            op->getOperands());
  op->erase();
  return success();
}
