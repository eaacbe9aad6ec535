//===- GDNToGPU.cpp - gdn.recurrent to a register-tiled GPU kernel --------===//
//
// One CTA per (sequence n, value head hv, block of V columns). The 32 lanes
// of a warp are split into `lanesV` groups along V and lanesK = 32 / lanesV
// along K: lane l = kLane * lanesV + vLane owns the R value columns
// [v0, v0 + R) and the KL = K / lanesK key rows [kLane * KL, (kLane + 1) * KL)
// of the state, with v0 = block * BV + warp * R * lanesV + vLane * R. The
// state tile S[r][j] (R * KL fp32 values a thread) stays in registers for the
// whole token loop. Per token, every reduction over K (Sᵀk, Sᵀq, the L2 norms)
// is a per-lane partial sum and a butterfly shuffle tree over the kLane bits,
// so every lane ends with the full sum and the rank-1 update needs no
// communication.
//
// State traffic is coalesced in both layouts. `vk` ([V, K], K contiguous):
// lanesV = 1, each lane loads vector<KL> along K per row, a warp reads whole
// rows. `kv` ([K, V], V contiguous): lanesV = 4 with R = 4, each lane loads
// vector<R> along V per key row, and the 4 lanes of a key row read 64
// contiguous bytes (two full sectors).
//
//===----------------------------------------------------------------------===//
#include "gdn/Conversion/GDNToGPU/CommitToGPU.h"
#include "gdn/Conversion/GDNToGPU/Schedule.h"
#include "gdn/Conversion/KernelMath.h"
#include "gdn/Conversion/Passes.h"
#include "gdn/Dialect/GDN/IR/GDNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <limits>
#include <tuple>
#include "llvm/Support/MathExtras.h"

namespace mlir {
namespace gdn {
#define GEN_PASS_DEF_CONVERTGDNTOGPUPASS
#include "gdn/Conversion/Passes.h.inc"
} // namespace gdn
} // namespace mlir

using namespace mlir;
using namespace mlir::gdn;

namespace {
constexpr StringLiteral kKernelModuleName = "gdn_kernels";

using Schedule = GPUSchedule;

/// The chips the kernels are built and tested for, all PTX ISA 8.0 targets.
/// Other names would reach LLVM unchecked (unknown processors abort there).
constexpr StringLiteral kSupportedChips[] = {"sm_80", "sm_86", "sm_87",
                                             "sm_89", "sm_90", "sm_90a"};

bool isSupportedChip(StringRef chip) {
  return llvm::is_contained(kSupportedChips, chip);
}

/// A PTX-safe identifier made from `name`: [A-Za-z_][A-Za-z0-9_]*.
std::string kernelName(StringRef name) {
  std::string out;
  for (char c : name)
    out += llvm::isAlnum(c) ? c : '_';
  if (out.empty() || llvm::isDigit(out.front()))
    out.insert(out.begin(), '_');
  return out;
}

/// Byte alignment of a vector of `count` elements of `elementType` at an
/// offset that is a multiple of `count`: the largest power of two dividing its
/// size, at most 16.
int64_t vectorAlignment(int64_t count, Type elementType) {
  int64_t bytes = count * elementType.getIntOrFloatBitWidth() / 8;
  // Never more than the 16 bytes callers guarantee for their buffers (the C
  // API checks it); the offsets themselves are multiples of the vector size.
  return std::min<int64_t>(bytes & -bytes, 16);
}

/// Builds the body of one kernel. Method names follow the kernel's stages.
class KernelBuilder {
public:
  KernelBuilder(OpBuilder &b, Location loc, RecurrentOp op, Schedule s,
                gpu::GPUFuncOp kernel)
      : b(b), loc(loc), op(op), s(s), d(op.getDims()),
        m(b, loc, KernelMath::Flavor::GPU), kernel(kernel) {}

  void build() {
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
            b, loc,
            arith::MulIOp::create(b, loc, vBlock, m.index(s.blockRows())),
            arith::MulIOp::create(b, loc, warp, m.index(s.warpRows()))),
        arith::MulIOp::create(b, loc, vLane, m.index(s.rows)));
    k0 = arith::MulIOp::create(b, loc, kLane, m.index(s.kPerLane));

    std::tie(stateRow, valid) = m.emitStateSlot(op, n);
    Value hi;
    std::tie(tokenRow, tokenLo, hi) = m.emitTokenRange(op, n);
    std::tie(interRow, interValid) = m.emitIntermediateRow(op, n, valid);
    if (s.stages > 0) {
      buildWarpSpecialized(tid, warp, lane, vBlock, hi);
      unrollTokenLoops();
      return;
    }
    SmallVector<Value> state = loadState();
    if (s.chunk == 0) {
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
      storeState(forEachChunk(hi, state,
                              [&](Value c, Value count, Value, Value,
                                  ValueRange carried) {
                                return chunk(c, count, carried);
                              }));
    }
    unrollTokenLoops();
  }

private:
  /// Unrolled tokens overlap the next token's shared-memory loads, norms and
  /// gates with this token's dependent chain, at the cost of code size.
  void unrollTokenLoops() {
    for (scf::ForOp loop : tokenLoops) {
      std::optional<int64_t> trips = getConstantIntValue(loop.getUpperBound());
      if (trips && *trips <= s.unroll)
        (void)loopUnrollFull(loop);
      else if (s.unroll > 1)
        (void)loopUnrollByFactor(loop, s.unroll);
    }
  }

  /// The warp-specialized kernel (s.stages > 0). Warps [0, W) consume: they
  /// hold the state tile and run the tokens; warp W produces: per chunk it
  /// waits until ring slot `i % stages` is empty, lane j issues the bulk
  /// async copies (cp.async.bulk, completing on the slot's `full` mbarrier
  /// as transactions) of token j's q and k rows and the CTA's columns of v,
  /// computes the token's gates into the slot, and every producer lane
  /// arrives on `full`. Consumers wait on `full` with the chunk's phase
  /// parity, run its tokens from the slot and arrive on `empty`. With
  /// consumer_registers the producer is a warpgroup that gives registers
  /// back (setmaxnreg.dec) and the consumers take them (setmaxnreg.inc).
  void buildWarpSpecialized(Value tid, Value warp, Value lane, Value vBlock,
                            Value hi) {
    createStagingBuffers(tid, vBlock);
    auto space = gpu::AddressSpaceAttr::get(b.getContext(),
                                            gpu::AddressSpace::Workgroup);
    auto barriers = [&]() {
      Value buf = kernel.addWorkgroupAttribution(
          MemRefType::get({s.stages}, b.getI64Type(), MemRefLayoutAttrInterface(),
                          space),
          loc);
      kernel.setWorkgroupAttributionAttr(
          kernel.getNumWorkgroupAttributions() - 1,
          LLVM::LLVMDialect::getAlignAttrName(), b.getI64IntegerAttr(8));
      return buf;
    };
    full = barriers();
    empty = barriers();
    Value isThread0 = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                            tid, m.index(0));
    {
      auto ifOp = scf::IfOp::create(b, loc, isThread0, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      for (int64_t i = 0; i < s.stages; ++i) {
        NVVM::MBarrierInitOp::create(b, loc, barrierAt(full, m.index(i)),
                                     i32(kWarpSize), Value());
        NVVM::MBarrierInitOp::create(b, loc, barrierAt(empty, m.index(i)),
                                     i32(s.warps * kWarpSize), Value());
      }
    }
    gpu::BarrierOp::create(b, loc); // the barriers exist before anyone waits
    Value isConsumer = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                             warp, m.index(s.warps));
    auto roles = scf::IfOp::create(b, loc, isConsumer, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&roles.getElseRegion().front());
    if (s.consumerRegisters > 0)
      NVVM::SetMaxRegisterOp::create(b, loc, kProducerRegisters,
                                     NVVM::SetMaxRegisterAction::decrease);
    Value isCopier = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                           warp, m.index(s.warps));
    auto copier = scf::IfOp::create(b, loc, isCopier, /*withElseRegion=*/false);
    b.setInsertionPointToStart(&copier.getThenRegion().front());
    forEachChunk(hi, ValueRange{}, [&](Value c, Value count, Value slot,
                                       Value phase, ValueRange) {
      produceChunk(c, count, slot, phase, lane);
      return SmallVector<Value>{};
    });

    b.setInsertionPointToStart(&roles.getThenRegion().front());
    if (s.consumerRegisters > 0)
      NVVM::SetMaxRegisterOp::create(b, loc, s.consumerRegisters,
                                     NVVM::SetMaxRegisterAction::increase);
    SmallVector<Value> state = loadState();
    SmallVector<Value> last = forEachChunk(
        hi, state, [&](Value c, Value count, Value slot, Value phase,
                       ValueRange carried) {
          wait(full, slot, phase);
          SmallVector<Value> next = runChunk(
              c, count, arith::MulIOp::create(b, loc, slot, m.index(s.chunk)),
              carried);
          NVVM::MBarrierArriveOp::create(b, loc, Type(), barrierAt(empty, slot),
                                         Value());
          return next;
        });
    storeState(last);
  }

  /// for c in [tokenLo, hi) step chunk, with the chunk's token count and,
  /// with a producer's ring, its slot (i % stages of chunk i) and phase
  /// parity ((i / stages) % 2, i32).
  SmallVector<Value>
  forEachChunk(Value hi, ValueRange init,
               function_ref<SmallVector<Value>(Value, Value, Value, Value,
                                               ValueRange)>
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

  /// The producer warp's part of chunk [c, c + count) into ring `slot`. Its
  /// first use of a slot waits on parity 1, which a fresh mbarrier reports
  /// complete (the phase before its first).
  void produceChunk(Value c, Value count, Value slot, Value phase, Value lane) {
    Value one = i32(1);
    wait(empty, slot, arith::XOrIOp::create(b, loc, phase, one));
    Value rowBase = arith::MulIOp::create(b, loc, slot, m.index(s.chunk));
    forTokenOfThread(c, count, rowBase, lane, [&](Value t, Value row) {
      int64_t qBytes = d.K * elementBytes(op.getQ());
      int64_t vBytes = s.blockRows() * elementBytes(op.getV());
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
    });
    stageGates(c, count, rowBase, lane, kWarpSize);
    NVVM::MBarrierArriveOp::create(b, loc, Type(), barrierAt(full, slot), Value());
  }

  /// Waits until the mbarrier of ring `slot` in `bars` completes the phase
  /// of parity `phase` (mbarrier.try_wait.parity in a loop).
  void wait(Value bars, Value slot, Value phase) {
    NVVM::MBarrierTryWaitParityOp::create(b, loc, barrierAt(bars, slot), phase,
                                          i32(0x989680));
  }

  /// The shared-memory address of mbarrier `bars[slot]`.
  Value barrierAt(Value bars, Value slot) { return sharedAddress(bars, {slot}); }

  /// The address of element `idx` of `mem` (a dense buffer) as an integer.
  Value byteAddress(Value mem, ValueRange idx) {
    auto type = cast<MemRefType>(mem.getType());
    auto meta = memref::ExtractStridedMetadataOp::create(b, loc, mem);
    Value linear = meta.getOffset();
    for (auto [i, stride] : llvm::zip(idx, meta.getStrides()))
      linear = arith::AddIOp::create(b, loc, linear,
                                     arith::MulIOp::create(b, loc, i, stride));
    Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, mem);
    Value bytes = arith::MulIOp::create(
        b, loc, linear, m.index(type.getElementTypeBitWidth() / 8));
    return arith::IndexCastOp::create(b, loc, b.getI64Type(),
                                      arith::AddIOp::create(b, loc, base, bytes));
  }
  Value sharedAddress(Value mem, ValueRange idx) {
    return LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext(), /*shared=*/3),
        byteAddress(mem, idx));
  }
  /// The same shared memory in the shared::cluster window, which holds the
  /// CTA's own shared::cta window (PTX ISA, state spaces): the bulk copy's
  /// PTX 8.0 form takes that (its shared::cta form needs PTX 8.6).
  Value clusterAddress(Value mem, ValueRange idx) {
    return LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext(), /*cluster=*/7),
        byteAddress(mem, idx));
  }
  Value globalAddress(Value mem, ValueRange idx) {
    Value generic = LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext()), byteAddress(mem, idx));
    return LLVM::AddrSpaceCastOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext(), /*global=*/1),
        generic);
  }
  /// base + x, or x itself when base is the constant 0 (the kernels without
  /// a producer keep their staging rows unshifted).
  Value plus(Value base, Value x) {
    if (getConstantIntValue(base) == 0)
      return x;
    return arith::AddIOp::create(b, loc, base, x);
  }
  Value i32(int64_t c) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), c);
  }
  static int64_t elementBytes(Value x) {
    return cast<MemRefType>(x.getType()).getElementTypeBitWidth() / 8;
  }

  /// The element type of `g` or `a`.
  Type gateElementType() {
    Value gate = op.getG() ? op.getG() : op.getA();
    return cast<MemRefType>(gate.getType()).getElementType();
  }

  Value &at(SmallVectorImpl<Value> &tile, int64_t r, int64_t j) {
    return tile[r * s.kPerLane + j];
  }
  Value offset(Value base, int64_t i) {
    return i == 0 ? base : arith::AddIOp::create(b, loc, base, m.index(i));
  }
  SmallVector<Value> extractAll(Value vec) {
    SmallVector<Value> out;
    for (int64_t i = 0, e = cast<VectorType>(vec.getType()).getNumElements();
         i < e; ++i)
      out.push_back(vector::ExtractOp::create(b, loc, vec, i));
    return out;
  }
  Value loadVector(Value src, ValueRange idx, int64_t count) {
    Type et = cast<MemRefType>(src.getType()).getElementType();
    return vector::LoadOp::create(b, loc, VectorType::get({count}, et), src,
                                  idx, /*nontemporal=*/false,
                                  llvm::MaybeAlign(vectorAlignment(count, et)));
  }
  void storeVector(ArrayRef<Value> elements, Value dst, ValueRange idx) {
    Type et = cast<MemRefType>(dst.getType()).getElementType();
    int64_t count = elements.size();
    Value vec = vector::FromElementsOp::create(
        b, loc, VectorType::get({count}, b.getF32Type()), elements);
    vector::StoreOp::create(b, loc, m.fromF32(vec, et), dst, idx,
                            /*nontemporal=*/false, llvm::MaybeAlign(vectorAlignment(count, et)));
  }

  /// Butterfly all-reduce over the lanes that share this lane's V columns
  /// (the kLane bits): every one of them gets the sum over K.
  Value warpSum(Value x) {
    for (int32_t offset = kWarpSize / 2; offset >= s.lanesV; offset /= 2) {
      Value other = gpu::ShuffleOp::create(b, loc, x, offset, kWarpSize,
                                           gpu::ShuffleMode::XOR)
                        .getShuffleResult();
      x = m.add(x, other);
    }
    return x;
  }

  /// This lane's tile of the state at `prefix` + (V, K positions), widened
  /// to f32: 16-byte loads along the contiguous dimension, the exact
  /// elements storeTile writes.
  SmallVector<Value> loadTile(Value src, SmallVector<Value> prefix) {
    SmallVector<Value> tile(s.rows * s.kPerLane);
    auto at2 = [&](Value x, Value y) { return withIndices(prefix, x, y); };
    if (op.isVKLayout()) {
      for (int64_t r = 0; r < s.rows; ++r) {
        auto row = extractAll(m.toF32(
            loadVector(src, at2(offset(v0, r), k0), s.kPerLane)));
        for (int64_t j = 0; j < s.kPerLane; ++j)
          at(tile, r, j) = row[j];
      }
    } else {
      for (int64_t j = 0; j < s.kPerLane; ++j) {
        auto col = extractAll(
            m.toF32(loadVector(src, at2(offset(k0, j), v0), s.rows)));
        for (int64_t r = 0; r < s.rows; ++r)
          at(tile, r, j) = col[r];
      }
    }
    return tile;
  }

  /// `prefix` followed by x and y: the index of a state tile element.
  static SmallVector<Value> withIndices(ArrayRef<Value> prefix, Value x,
                                        Value y) {
    SmallVector<Value> idx(prefix);
    idx.push_back(x);
    idx.push_back(y);
    return idx;
  }

  /// S <- initial state (or 0), 16-byte loads along the contiguous dimension.
  SmallVector<Value> loadState() {
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

  void storeState(ValueRange results) {
    if (Value fin = op.getFinalState())
      storeTile(results, fin, {stateRow, hv}, valid);
  }

  /// The state after token t into intermediate_states[row, t - lo, hv, ...]
  /// (verify), skipped for padding rows, rows without a slot and, in varlen,
  /// steps past the buffer.
  void storeIntermediate(Value t, ValueRange tile) {
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

  /// EAGLE tree: the state token t starts from, given its i32 `source`
  /// (KernelMath::emitParentSource): the carried tile, the parent's stored
  /// state intermediate_states[row, p] (this thread reads back exactly the
  /// elements it stored at step p, so program order suffices: no barrier),
  /// or the initial state (a root).
  SmallVector<Value> startState(Value source, ValueRange carried) {
    SmallVector<Type> types(carried.size(), b.getF32Type());
    Value zero = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 0);
    Value fromBuffer = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                             source, zero);
    auto ifBuffer = scf::IfOp::create(b, loc, types, fromBuffer,
                                      /*withElseRegion=*/true);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifBuffer.getThenRegion().front());
    Value p = arith::IndexCastOp::create(b, loc, b.getIndexType(), source);
    scf::YieldOp::create(b, loc,
                         loadTile(op.getIntermediateStates(), {interRow, p, hv}));
    b.setInsertionPointToStart(&ifBuffer.getElseRegion().front());
    Value restart = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq, source,
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

  /// Stores the tile at `prefix` + (this lane's V and K positions), in the
  /// layout, 16-byte vectors along the contiguous dimension; under `cond`.
  void storeTile(ValueRange results, Value dst, SmallVector<Value> prefix,
                 Value cond) {
    SmallVector<Value> tile(results.begin(), results.end());
    OpBuilder::InsertionGuard g(b);
    if (cond) {
      auto ifOp = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    }
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

  /// This lane's KL entries of q or k for token t, widened to f32.
  SmallVector<Value> loadKeyChunk(Value src, Value t) {
    return extractAll(m.toF32(loadVector(src, {tokenRow, t, h, k0}, s.kPerLane)));
  }
  SmallVector<Value> loadStagedKeyChunk(Value stage, Value j) {
    return extractAll(m.toF32(loadVector(stage, {j, k0}, s.kPerLane)));
  }

  /// The shared-memory buffers of one chunk of tokens (of `stages` chunks,
  /// one after another, with a producer warp): q and k [chunk, K],
  /// this CTA's V columns of v [chunk, BV] (input dtypes), exp(g) [chunk]
  /// or per key [chunk, K] and beta [chunk] or per value channel
  /// [chunk, BV] (f32), and with a tree each token's parent source [chunk]
  /// (i32). The chunked solve stages the log gate g [chunk] instead of
  /// exp(g) and adds the Gram matrices [2, chunk, chunk] and the per-token
  /// decays and norms [3, chunk] (f32, see buildGram).
  void createStagingBuffers(Value tid, Value vBlock) {
    auto space = gpu::AddressSpaceAttr::get(b.getContext(),
                                            gpu::AddressSpace::Workgroup);
    auto buffer = [&](ArrayRef<int64_t> shape, Type et) -> Value {
      Value buf = kernel.addWorkgroupAttribution(
          MemRefType::get(shape, et, MemRefLayoutAttrInterface(), space), loc);
      // 16-byte vector accesses need 16-byte aligned buffers.
      kernel.setWorkgroupAttributionAttr(
          kernel.getNumWorkgroupAttributions() - 1,
          LLVM::LLVMDialect::getAlignAttrName(), b.getI64IntegerAttr(16));
      return buf;
    };
    Type qk = cast<MemRefType>(op.getQ().getType()).getElementType();
    Type ve = cast<MemRefType>(op.getV().getType()).getElementType();
    // A producer's ring: its slots one after another along the token rows.
    int64_t rows = s.chunk * std::max<int64_t>(s.stages, 1);
    qStage = buffer({rows, d.K}, qk);
    kStage = buffer({rows, d.K}, qk);
    vStage = buffer({rows, s.blockRows()}, ve);
    Type f32 = b.getF32Type();
    decayStage = op.hasPerKeyDecay() ? buffer({rows, d.K}, f32)
                                     : buffer({rows}, f32);
    betaStage = op.hasPerChannelBeta() ? buffer({rows, s.blockRows()}, f32)
                                       : buffer({rows}, f32);
    if (op.hasParentTable())
      sourceStage = buffer({rows}, b.getI32Type());
    if (s.chunkedSolve) {
      gramStage = buffer({2, s.chunk, s.chunk}, f32);
      tokenStage = buffer({3, s.chunk}, f32);
    }
    threadId = tid;
    blockV0 = arith::MulIOp::create(b, loc, vBlock, m.index(s.blockRows()));
  }

  /// Copies rows [c, c + count) of `src` (a [.., T, .., width] slice at
  /// `idx(t, col)`) into `dst` [chunk, width]: 16-byte vectors spread over
  /// every thread of the CTA, all issued before anyone waits.
  void stageRows(Value src, Value dst, int64_t width, Value c, Value count,
                 function_ref<SmallVector<Value>(Value, Value)> idx) {
    Type et = cast<MemRefType>(src.getType()).getElementType();
    stageRows(et, dst, width, c, count, m.index(0), threadId,
              s.warps * kWarpSize, [&](Value t, Value col, int64_t vec) {
                return loadVector(src, idx(t, col), vec);
              });
  }

  /// The general form: `load(t, col, vec)` gives the vector of `vec` values
  /// of token t at columns [col, col + vec) to store (vectors of 16 bytes of
  /// `srcType`) at row `rowBase` + (t - c) of `dst`, spread over `threads`
  /// threads of which this is `thread`.
  void stageRows(Type srcType, Value dst, int64_t width, Value c, Value count,
                 Value rowBase, Value thread, int64_t threads,
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
          Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                                j, count);
          // The chunked solve reads every row of the chunk: rows past
          // `count` are zeros, never stale or uninitialized values.
          auto ifOp = scf::IfOp::create(b, loc, inRange,
                                        /*withElseRegion=*/s.chunkedSolve);
          {
            OpBuilder::InsertionGuard inIf(b);
            b.setInsertionPointToStart(&ifOp.getThenRegion().front());
            Value x = load(arith::AddIOp::create(b, loc, c, j), col, vec);
            Value row = plus(rowBase, j);
            vector::StoreOp::create(b, loc, x, dst, ValueRange{row, col},
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

  /// exp(g) of token t for the `count` key channels [col, col + count)
  /// (KDA): exp(g[k]), or exp(-exp(A_log[hv]) softplus(a[k] + dt_bias[hv *
  /// K + k])), from 16-byte vector loads of g or a (and dt_bias).
  SmallVector<Value> perKeyDecay(Value t, Value col, int64_t count) {
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

  /// beta of token t for the `count` V columns [col, col + count) (beta per
  /// value channel), from a vector load of beta or b.
  SmallVector<Value> perChannelBeta(Value t, Value col, int64_t count) {
    Value input = op.getBeta() ? op.getBeta() : op.getB();
    SmallVector<Value> x =
        extractAll(m.toF32(loadVector(input, {tokenRow, t, hv, col}, count)));
    for (Value &e : x)
      e = m.betaOf(op, e);
    return x;
  }

  Value fromElements(ArrayRef<Value> elements) {
    return vector::FromElementsOp::create(
        b, loc, VectorType::get({int64_t(elements.size())}, b.getF32Type()),
        elements);
  }

  /// Tokens [c, c + count) through shared memory; returns the state after.
  SmallVector<Value> chunk(Value c, Value count, ValueRange state) {
    auto qkIdx = [&](Value t, Value col) {
      return SmallVector<Value>{tokenRow, t, h, col};
    };
    stageRows(op.getQ(), qStage, d.K, c, count, qkIdx);
    stageRows(op.getK(), kStage, d.K, c, count, qkIdx);
    stageRows(op.getV(), vStage, s.blockRows(), c, count, [&](Value t, Value col) {
      return SmallVector<Value>{tokenRow, t, hv,
                                arith::AddIOp::create(b, loc, blockV0, col)};
    });
    if (s.chunkedSolve)
      stageLogGates(c, count);
    else
      stageGates(c, count, m.index(0), threadId, s.warps * kWarpSize);
    gpu::BarrierOp::create(b, loc);
    SmallVector<Value> results = s.chunkedSolve
                                     ? chunkedSolve(c, count, state)
                                     : runChunk(c, count, m.index(0), state);
    // The buffers are refilled by the next chunk only after every warp is done.
    if (op.isVarlen() || d.T > s.chunk)
      gpu::BarrierOp::create(b, loc);
    return results;
  }

  /// The gates of tokens [c, c + count) into staging rows [rowBase, rowBase
  /// + count), computed by `threads` threads of which this is `thread`.
  void stageGates(Value c, Value count, Value rowBase, Value thread,
                  int64_t threads) {
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

  /// `body(t, row)` for thread `thread` < count: token t = c + thread, at
  /// staging row rowBase + thread.
  void forTokenOfThread(Value c, Value count, Value rowBase, Value thread,
                        function_ref<void(Value, Value)> body) {
    Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          thread, count);
    auto ifOp = scf::IfOp::create(b, loc, inRange, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    body(arith::AddIOp::create(b, loc, c, thread), plus(rowBase, thread));
  }

  /// Tokens [c, c + count) from staging rows [rowBase, rowBase + count);
  /// returns the state after.
  SmallVector<Value> runChunk(Value c, Value count, Value rowBase,
                              ValueRange state) {
    auto body = [&](OpBuilder &nb, Location, Value j, ValueRange carried) {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
      Value t = arith::AddIOp::create(b, loc, c, j);
      SmallVector<Value> next = token(t, plus(rowBase, j), carried);
      storeIntermediate(t, next);
      scf::YieldOp::create(b, loc, next);
    };
    auto loop = scf::ForOp::create(b, loc, m.index(0), count, m.index(1),
                                   state, body);
    tokenLoops.push_back(loop); // unrolled once its results have their uses
    return SmallVector<Value>(loop.getResults());
  }

  /// Chunked solve: thread j < chunk stages token j's log gate g_j and
  /// beta_j, or zeros past `count` (such a token then neither decays nor
  /// updates anything).
  void stageLogGates(Value c, Value count) {
    Value inChunk = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          threadId, m.index(s.chunk));
    auto ifChunk = scf::IfOp::create(b, loc, inChunk, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifChunk.getThenRegion().front());
    Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          threadId, count);
    Type f32 = b.getF32Type();
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{f32, f32}, inRange,
                                  /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard inIf(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      Value t = arith::AddIOp::create(b, loc, c, threadId);
      scf::YieldOp::create(b, loc,
                           ValueRange{m.emitLogDecay(op, tokenRow, t, hv),
                                      m.emitBeta(op, tokenRow, t, hv)});
      b.setInsertionPointToStart(&ifOp.getElseRegion().front());
      scf::YieldOp::create(b, loc, ValueRange{m.f32(0.0), m.f32(0.0)});
    }
    memref::StoreOp::create(b, loc, ifOp.getResult(0), decayStage,
                            ValueRange{threadId});
    memref::StoreOp::create(b, loc, ifOp.getResult(1), betaStage,
                            ValueRange{threadId});
  }

  /// The rows of the chunked solve: the chunk, or T when every token fits
  /// in one (fixed T).
  int64_t solveRows() {
    return op.isVarlen() ? s.chunk : std::min<int64_t>(s.chunk, d.T);
  }

  /// The chunk's Gram matrices, once a CTA from the staged q, k and log
  /// gates g (rows past `count` are zeros, g = 0): the threads split the
  /// (i, j) pairs, each a full K-long dot product from shared memory. With
  /// d(i, j) = exp(g_{j+1} + ... + g_i) = exp(G_i - G_j) (G the in-chunk
  /// cumulative log gate, summed directly, so a -inf gate gives 0, never a
  /// NaN from -inf - -inf):
  ///   gram[0, i, j] = d(i, j) k_i.k_j (j < i), gram[0, i, i] = k_i.k_i,
  ///   gram[1, i, j] = d(i, j) q_i.k_j (j <= i),
  ///   tok[0, i] = exp(G_i), tok[1, i] = exp(G_last - G_i), tok[2, i] = q_i.q_i
  /// all on the raw (un-normalized, unscaled) q and k.
  void buildGram() {
    int64_t rows = solveRows();
    Type qkType = cast<MemRefType>(op.getQ().getType()).getElementType();
    int64_t vec = 16 / (qkType.getIntOrFloatBitWidth() / 8);
    while (d.K % vec != 0)
      vec /= 2;
    auto total = [&](SmallVector<Value> parts) { // a sum as a tree
      for (int64_t w = int64_t(parts.size()) / 2; w >= 1; w /= 2)
        for (int64_t x = 0; x < w; ++x)
          parts[x] = m.add(parts[x], parts[x + w]);
      return parts.front();
    };
    scf::ForOp::create(
        b, loc, threadId, m.index(rows * rows), m.index(s.warps * kWarpSize),
        ValueRange{}, [&](OpBuilder &nb, Location, Value p, ValueRange) {
          OpBuilder::InsertionGuard g(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          Value i = arith::DivUIOp::create(b, loc, p, m.index(rows));
          Value j = arith::RemUIOp::create(b, loc, p, m.index(rows));
          Value lower = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule,
                                              j, i);
          auto ifLower = scf::IfOp::create(b, loc, lower, /*withElseRegion=*/false);
          b.setInsertionPointToStart(&ifLower.getThenRegion().front());
          // One K-long pass over k_i, q_i, k_j: a loop, so that only one
          // step's loads are live (unrolled, all of them are hoisted).
          auto dots = scf::ForOp::create(
              b, loc, m.index(0), m.index(d.K), m.index(vec),
              ValueRange{m.f32(0.0), m.f32(0.0), m.f32(0.0)},
              [&](OpBuilder &lb, Location, Value e, ValueRange acc) {
                OpBuilder::InsertionGuard inLoop(b);
                b.setInsertionPoint(lb.getInsertionBlock(), lb.getInsertionPoint());
                auto ki = extractAll(m.toF32(loadVector(kStage, {i, e}, vec)));
                auto qi = extractAll(m.toF32(loadVector(qStage, {i, e}, vec)));
                auto kj = extractAll(m.toF32(loadVector(kStage, {j, e}, vec)));
                SmallVector<Value> kk, qk, qq;
                for (int64_t x = 0; x < vec; ++x) {
                  kk.push_back(m.mul(ki[x], kj[x]));
                  qk.push_back(m.mul(qi[x], kj[x]));
                  qq.push_back(m.mul(qi[x], qi[x]));
                }
                scf::YieldOp::create(
                    b, loc,
                    ValueRange{m.add(acc[0], total(kk)), m.add(acc[1], total(qk)),
                               m.add(acc[2], total(qq))});
              });
          // Masked sums of the log gates: (j, i], [0, i] and (i, rows).
          Value between = m.f32(0.0), upTo = m.f32(0.0), after = m.f32(0.0);
          for (int64_t l = 0; l < rows; ++l) {
            Value gl = memref::LoadOp::create(b, loc, decayStage,
                                              ValueRange{m.index(l)});
            auto pick = [&](Value cond) -> Value {
              return arith::SelectOp::create(b, loc, cond, gl, m.f32(0.0));
            };
            Value le = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule,
                                             m.index(l), i);
            Value gt = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                             m.index(l), j);
            Value notLe = arith::XOrIOp::create(
                b, loc, le, arith::ConstantIntOp::create(b, loc, 1, 1));
            between = m.add(between, pick(arith::AndIOp::create(b, loc, le, gt)));
            upTo = m.add(upTo, pick(le));
            after = m.add(after, pick(notLe));
          }
          Value decay = m.exp(between);
          Value diag = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                             i, j);
          Value kkTotal = dots.getResult(0);
          memref::StoreOp::create(
              b, loc,
              arith::SelectOp::create(b, loc, diag, kkTotal,
                                      m.mul(decay, kkTotal)),
              gramStage, ValueRange{m.index(0), i, j});
          memref::StoreOp::create(b, loc, m.mul(decay, dots.getResult(1)), gramStage,
                                  ValueRange{m.index(1), i, j});
          auto ifDiag = scf::IfOp::create(b, loc, diag, /*withElseRegion=*/false);
          b.setInsertionPointToStart(&ifDiag.getThenRegion().front());
          memref::StoreOp::create(b, loc, m.exp(upTo), tokenStage,
                                  ValueRange{m.index(0), i});
          memref::StoreOp::create(b, loc, m.exp(after), tokenStage,
                                  ValueRange{m.index(1), i});
          memref::StoreOp::create(b, loc, dots.getResult(2), tokenStage,
                                  ValueRange{m.index(2), i});
          b.setInsertionPointAfter(ifLower);
          scf::YieldOp::create(b, loc);
        });
  }

  /// Tokens [c, c + count) of a staged chunk solved at once in the WY /
  /// UT-transform form of the chunked delta rule (FLA's
  /// chunk_gated_delta_rule; Yang et al. 2024, "Parallelizing Linear
  /// Transformers with the Delta Rule over Sequence Length"). With S0 the
  /// state at the chunk start, G_i the in-chunk cumulative log gate,
  /// k̂_i = ik_i k_i and q̂_i = iq_i scale q_i (ik, iq the L2-norm factors, 1
  /// without qk_l2norm), unrolling the per-token rule gives
  ///   S_i = exp(G_i) S0 + sum_{j<=i} exp(G_i - G_j) k̂_j u_jᵀ, so
  ///   u_i = beta_i (v_i - exp(G_i) S0ᵀk̂_i
  ///                 - sum_{j<i} exp(G_i - G_j) (k̂_i.k̂_j) u_j),
  ///   o_i = exp(G_i) S0ᵀq̂_i + sum_{j<=i} exp(G_i - G_j) (q̂_i.k̂_j) u_j,
  ///   S_C = exp(G_C) S0 + sum_j exp(G_C - G_j) k̂_j u_jᵀ.
  /// The Gram terms come from buildGram (once a CTA, raw q and k); S0ᵀk_i
  /// and S0ᵀq_i of every token are independent shuffle trees that run side
  /// by side; the forward substitution is per V column, in registers, on
  /// w_j = ik_j u_j:
  ///   w_i = ik_i beta_i (v_i - ik_i (exp(G_i) S0ᵀk_i + sum_{j<i} gram0_ij w_j)),
  ///   o_i = iq_i (exp(G_i) S0ᵀq_i + sum_{j<=i} gram1_ij w_j),
  ///   S_C = exp(G_C) S0 + sum_j tok1_j k_j w_jᵀ   (C FMAs an element).
  /// Rows past `count` hold zeros with g = beta = 0: w = 0 there, so they
  /// change nothing, and their outputs are not stored.
  SmallVector<Value> chunkedSolve(Value c, Value count, ValueRange state) {
    buildGram();
    gpu::BarrierOp::create(b, loc);
    int64_t rows = solveRows();
    SmallVector<Value> S(state.begin(), state.end());
    std::optional<int64_t> staticCount = getConstantIntValue(count);
    auto tok = [&](int64_t which, int64_t i) -> Value {
      return memref::LoadOp::create(b, loc, tokenStage,
                                    ValueRange{m.index(which), m.index(i)});
    };
    auto gram = [&](int64_t which, int64_t i, int64_t j) -> Value {
      return memref::LoadOp::create(
          b, loc, gramStage, ValueRange{m.index(which), m.index(i), m.index(j)});
    };
    // S0ᵀk_i and S0ᵀq_i (raw k, q) of every token and column: rows * R
    // independent shuffle trees each, side by side (Sᵀq's are built after
    // the substitution has consumed Sᵀk's, to hold fewer registers).
    auto reduceAll = [&](Value stage) {
      SmallVector<SmallVector<Value>> sums(rows);
      for (int64_t i = 0; i < rows; ++i) {
        SmallVector<Value> x = loadStagedKeyChunk(stage, m.index(i));
        for (int64_t r = 0; r < s.rows; ++r) {
          Value sum = m.f32(0.0);
          for (int64_t jj = 0; jj < s.kPerLane; ++jj)
            sum = m.add(sum, m.mul(at(S, r, jj), x[jj]));
          sums[i].push_back(warpSum(sum));
        }
      }
      return sums;
    };
    Value col = arith::SubIOp::create(b, loc, v0, blockV0);
    Value scale = m.f32(op.getScaleOrDefault());
    SmallVector<Value> ik(rows, m.f32(1.0)), iq(rows, scale), decay(rows);
    for (int64_t i = 0; i < rows; ++i) {
      if (op.getQkL2norm()) { // x / sqrt(sum(x^2) + 1e-6), eps inside the sqrt
        ik[i] = m.div(m.f32(1.0), m.sqrt(m.add(gram(0, i, i), m.f32(1e-6))));
        iq[i] = m.div(scale, m.sqrt(m.add(tok(2, i), m.f32(1e-6))));
      }
      decay[i] = tok(0, i);
    }
    // w_i = ik_i beta_i (v_i - ik_i (exp(G_i) S0ᵀk_i + sum_{j<i} gram0_ij w_j)).
    SmallVector<SmallVector<Value>> A = reduceAll(kStage), w(rows);
    for (int64_t i = 0; i < rows; ++i) {
      Value beta = memref::LoadOp::create(b, loc, betaStage,
                                          ValueRange{m.index(i)});
      Value ikBeta = m.mul(ik[i], beta);
      SmallVector<Value> vf = extractAll(
          m.toF32(loadVector(vStage, {m.index(i), col}, s.rows)));
      SmallVector<Value> kkRow;
      for (int64_t j = 0; j < i; ++j)
        kkRow.push_back(gram(0, i, j));
      for (int64_t r = 0; r < s.rows; ++r) {
        Value acc = m.mul(decay[i], A[i][r]);
        for (int64_t j = 0; j < i; ++j)
          acc = m.add(acc, m.mul(kkRow[j], w[j][r]));
        w[i].push_back(m.mul(ikBeta, m.sub(vf[r], m.mul(ik[i], acc))));
      }
    }
    // o_i = iq_i (exp(G_i) S0ᵀq_i + sum_{j<=i} gram1_ij w_j).
    SmallVector<SmallVector<Value>> B = reduceAll(qStage);
    for (int64_t i = 0; i < rows; ++i) {
      SmallVector<Value> qkRow;
      for (int64_t j = 0; j <= i; ++j)
        qkRow.push_back(gram(1, i, j));
      SmallVector<Value> outputs;
      for (int64_t r = 0; r < s.rows; ++r) {
        Value out = m.mul(decay[i], B[i][r]);
        for (int64_t j = 0; j <= i; ++j)
          out = m.add(out, m.mul(qkRow[j], w[j][r]));
        outputs.push_back(m.mul(iq[i], out));
      }
      Value t = arith::AddIOp::create(b, loc, c, m.index(i));
      if (staticCount && i < *staticCount) {
        storeOutputs(t, outputs);
        continue;
      }
      Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                            m.index(i), count);
      auto ifOp = scf::IfOp::create(b, loc, inRange, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      storeOutputs(t, outputs);
    }
    // S_C = exp(G_C) S0 + sum_j exp(G_C - G_j) k_j w_jᵀ, k_j read again
    // from shared memory.
    Value last = decay[rows - 1];
    for (Value &e : S)
      e = m.mul(last, e);
    for (int64_t j = 0; j < rows; ++j) {
      Value f = tok(1, j);
      SmallVector<Value> kf = loadStagedKeyChunk(kStage, m.index(j));
      for (int64_t jj = 0; jj < s.kPerLane; ++jj) {
        Value fk = m.mul(f, kf[jj]);
        for (int64_t r = 0; r < s.rows; ++r)
          at(S, r, jj) = m.add(at(S, r, jj), m.mul(fk, w[j][r]));
      }
    }
    return S;
  }

  /// The i32 parent source of token t (KernelMath::emitParentSource).
  Value parentSource(Value t) {
    return m.emitParentSource(op, n, arith::SubIOp::create(b, loc, t, tokenLo),
                              interValid);
  }

  /// One token: S <- exp(g) S; u = beta (v - Sᵀk); S <- S + k uᵀ; o = Sᵀq.
  /// Inputs come from global memory at token t, or staged at chunk row j.
  SmallVector<Value> token(Value t, Value j, ValueRange carried) {
    SmallVector<Value> S(carried.begin(), carried.end());
    bool staged = static_cast<bool>(j);
    // EAGLE tree: start from the parent's state (before any of the math).
    if (op.hasParentTable())
      S = startState(staged ? Value(memref::LoadOp::create(
                                  b, loc, sourceStage, ValueRange{j}))
                            : parentSource(t),
                     S);
    SmallVector<Value> kf = staged ? loadStagedKeyChunk(kStage, j)
                                   : loadKeyChunk(op.getK(), t);
    SmallVector<Value> qf = staged ? loadStagedKeyChunk(qStage, j)
                                   : loadKeyChunk(op.getQ(), t);
    // decay[j]: this lane's key rows k0 + j (one value unless per key);
    // beta[r]: its V columns v0 + r (one value unless per value channel).
    SmallVector<Value> decay, beta, vf;
    bool perKey = op.hasPerKeyDecay(), perChannel = op.hasPerChannelBeta();
    if (staged) {
      Value col = arith::SubIOp::create(b, loc, v0, blockV0);
      decay = perKey ? extractAll(loadVector(decayStage, {j, k0}, s.kPerLane))
                     : SmallVector<Value>{memref::LoadOp::create(
                           b, loc, decayStage, ValueRange{j})};
      beta = perChannel ? extractAll(loadVector(betaStage, {j, col}, s.rows))
                        : SmallVector<Value>{memref::LoadOp::create(
                              b, loc, betaStage, ValueRange{j})};
      vf = extractAll(m.toF32(loadVector(vStage, {j, col}, s.rows)));
    } else {
      decay = perKey ? perKeyDecay(t, k0, s.kPerLane)
                     : SmallVector<Value>{m.emitDecay(op, tokenRow, t, hv)};
      beta = perChannel ? perChannelBeta(t, v0, s.rows)
                        : SmallVector<Value>{m.emitBeta(op, tokenRow, t, hv)};
      vf = extractAll(m.toF32(loadVector(op.getV(), {tokenRow, t, hv, v0}, s.rows)));
    }
    auto decayAt = [&](int64_t jj) { return decay[perKey ? jj : 0]; };
    if (!s.overlapReductions) // the schedule never asks for it with KDA
      return tokenInTurn(t, S, kf, qf, decay.front(), beta.front(), vf);

    // Every K-reduction of a token reads only the raw q, k and the carried
    // state, so they all run side by side instead of one after another. With
    // k̂ = ik k and q̂ = iq scale q (ik, iq the L2-norm factors, 1 without
    // qk_l2norm) and D = diag(exp(g)) (one value unless per key, KDA):
    //   (D S)ᵀk̂ = ik Sᵀ(D k),        u = beta (v - ik Sᵀ(D k)),
    //   o = (D S + k̂ uᵀ)ᵀ q̂ = iq scale Sᵀ(D q) + (k̂·q̂) u,
    // where the norms and k·q do not depend on the state. A token's
    // dependent chain is one shuffle tree deep instead of three.
    Value kq = m.f32(0.0), kk = m.f32(0.0), qq = m.f32(0.0);
    for (int64_t jj = 0; jj < s.kPerLane; ++jj) {
      kq = m.add(kq, m.mul(kf[jj], qf[jj]));
      kk = m.add(kk, m.mul(kf[jj], kf[jj]));
      qq = m.add(qq, m.mul(qf[jj], qf[jj]));
    }
    Value ik = m.f32(1.0), iq = m.f32(op.getScaleOrDefault());
    if (op.getQkL2norm()) { // x / sqrt(sum(x^2) + 1e-6), eps inside the sqrt
      auto inverseNorm = [&](Value ss) {
        return m.div(m.f32(1.0), m.sqrt(m.add(warpSum(ss), m.f32(1e-6))));
      };
      ik = inverseNorm(kk);
      iq = m.mul(inverseNorm(qq), iq);
    }
    kq = m.mul(warpSum(kq), m.mul(ik, iq));
    SmallVector<Value> dk, dq; // D k and D q
    for (int64_t jj = 0; jj < s.kPerLane; ++jj) {
      dk.push_back(perKey ? m.mul(kf[jj], decayAt(jj)) : kf[jj]);
      dq.push_back(perKey ? m.mul(qf[jj], decayAt(jj)) : qf[jj]);
    }
    // One decay for the whole head factors out of the sums.
    Value fk = perKey ? ik : m.mul(decayAt(0), ik);
    Value fq = perKey ? iq : m.mul(decayAt(0), iq);
    SmallVector<Value> A, B; // Sᵀ(D k) and Sᵀ(D q) per column
    for (int64_t r = 0; r < s.rows; ++r) {
      Value sk = m.f32(0.0), sq = m.f32(0.0);
      for (int64_t jj = 0; jj < s.kPerLane; ++jj) {
        sk = m.add(sk, m.mul(at(S, r, jj), dk[jj]));
        sq = m.add(sq, m.mul(at(S, r, jj), dq[jj]));
      }
      A.push_back(warpSum(sk));
      B.push_back(warpSum(sq));
    }
    for (Value &e : kf) // k̂ for the rank-1 update
      e = m.mul(e, ik);
    SmallVector<Value> outputs;
    for (int64_t r = 0; r < s.rows; ++r) {
      Value u = m.mul(beta[perChannel ? r : 0], m.sub(vf[r], m.mul(fk, A[r])));
      for (int64_t jj = 0; jj < s.kPerLane; ++jj)
        at(S, r, jj) = m.add(m.mul(at(S, r, jj), decayAt(jj)), m.mul(kf[jj], u));
      Value out = m.add(m.mul(fq, B[r]), m.mul(kq, u));
      outputs.push_back(out);
    }
    storeOutputs(t, outputs);
    return S;
  }

  /// The same token with its steps in turn, as the math reads: normalize q
  /// and k, S <- exp(g) S, A = Sᵀk, S <- S + k uᵀ, o = Sᵀq. Three shuffle
  /// trees deep, but fewer live registers, which pays once the grid is
  /// bandwidth-bound. Per-head decay and beta only.
  SmallVector<Value> tokenInTurn(Value t, SmallVector<Value> S,
                                 SmallVector<Value> kf, SmallVector<Value> qf,
                                 Value decay, Value beta, ArrayRef<Value> vf) {
    if (op.getQkL2norm()) { // x / sqrt(sum(x^2) + 1e-6), eps inside the sqrt
      for (SmallVector<Value> *x : {&kf, &qf}) {
        Value ss = m.f32(0.0);
        for (Value e : *x)
          ss = m.add(ss, m.mul(e, e));
        Value inv = m.div(m.f32(1.0), m.sqrt(m.add(warpSum(ss), m.f32(1e-6))));
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

  /// o[t] for this lane's R columns (zeros for a padding row), written by the
  /// lanes of key group 0 (all lanes hold the sums).
  void storeOutputs(Value t, SmallVector<Value> outputs) {
    if (valid)
      for (Value &out : outputs)
        out = arith::SelectOp::create(b, loc, valid, out, m.f32(0.0));
    Value isLane0 = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          kLane, m.index(0));
    auto ifOp = scf::IfOp::create(b, loc, isLane0, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    storeVector(outputs, op.getO(), {tokenRow, t, hv, v0});
  }

  OpBuilder &b;
  Location loc;
  RecurrentOp op;
  Schedule s;
  RecurrentOp::Dims d;
  KernelMath m;
  Value kLane, n, hv, h, v0, k0;
  Value stateRow, valid; ///< state row (n or its pool slot); pool row is real
  Value tokenRow;        ///< batch row of the token tensors (n, or 0 varlen)
  Value tokenLo;         ///< first token of the sequence along T
  Value interRow, interValid; ///< intermediate_states row, and whether to write
  gpu::GPUFuncOp kernel;
  Value qStage, kStage, vStage, decayStage, betaStage; ///< staging buffers
  Value sourceStage; ///< staged parent sources (EAGLE tree)
  Value gramStage, tokenStage; ///< chunked solve: Gram matrices, decays, norms
  Value full, empty; ///< a producer's ring: mbarriers of full / empty slots
  Value threadId, blockV0; ///< thread in the CTA; first V column of the CTA
  SmallVector<scf::ForOp> tokenLoops; ///< staged token loops, to unroll
};

/// The kernel module of `module` for `chip`: `@gdn_kernels` when it exists
/// with exactly this target (an earlier run of the pass), else a new one whose
/// name the symbol table makes unique.
gpu::GPUModuleOp getOrCreateKernelModule(ModuleOp module, StringRef chip) {
  MLIRContext *ctx = module.getContext();
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  UnitAttr::get(ctx));
  auto target = NVVM::NVVMTargetAttr::get(ctx, /*optLevel=*/3,
                                          "nvptx64-nvidia-cuda", chip, "+ptx80");
  ArrayAttr targets = ArrayAttr::get(ctx, {target});
  if (auto existing = module.lookupSymbol<gpu::GPUModuleOp>(kKernelModuleName))
    if (existing.getTargetsAttr() == targets)
      return existing;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto kernels = gpu::GPUModuleOp::create(b, module.getLoc(), kKernelModuleName,
                                          targets);
  SymbolTable(module).insert(kernels); // renames on a clash
  return kernels;
}

struct ConvertGDNToGPUPass
    : gdn::impl::ConvertGDNToGPUPassBase<ConvertGDNToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<RecurrentOp> ops;
    module.walk([&](RecurrentOp op) { ops.push_back(op); });
    SmallVector<CommitOp> commits; // lowered in CommitToGPU.cpp
    module.walk([&](CommitOp op) { commits.push_back(op); });
    if (ops.empty() && commits.empty())
      return;
    for (RecurrentOp op : ops)
      if (failed(op.requireMemRefForm("convert-gdn-to-gpu")))
        return signalPassFailure();
    for (CommitOp op : commits)
      if (failed(op.requireMemRefForm("convert-gdn-to-gpu")))
        return signalPassFailure();
    if (!isSupportedChip(chip)) {
      Operation *first = ops.empty() ? commits.front().getOperation()
                                     : ops.front().getOperation();
      InFlightDiagnostic diag = first->emitOpError()
                                << "cannot be lowered to the GPU: unsupported chip '"
                                << chip << "' (supported: ";
      llvm::interleaveComma(kSupportedChips, diag);
      diag << ")";
      return signalPassFailure();
    }
    // One kernel module per enclosing module (the op may sit in a nested one).
    llvm::MapVector<Operation *, std::pair<gpu::GPUModuleOp, SymbolTable *>> modules;
    std::vector<std::unique_ptr<SymbolTable>> tables;
    auto kernelModule = [&](Operation *op) {
      auto parent = op->getParentOfType<ModuleOp>();
      auto &entry = modules[parent];
      if (!entry.first) {
        entry.first = getOrCreateKernelModule(parent, chip);
        tables.push_back(std::make_unique<SymbolTable>(entry.first));
        entry.second = tables.back().get();
      }
      return entry;
    };
    for (RecurrentOp op : ops) {
      auto [kernels, symbols] = kernelModule(op);
      if (failed(lower(op, kernels, *symbols)))
        return signalPassFailure();
    }
    for (CommitOp op : commits) {
      auto [kernels, symbols] = kernelModule(op);
      std::string name = "gdn_commit";
      if (auto func = op->getParentOfType<FunctionOpInterface>())
        name = kernelName(func.getName()) + "_commit";
      if (failed(lowerCommitToGPU(op, kernels, *symbols, name)))
        return signalPassFailure();
    }
  }

  LogicalResult lower(RecurrentOp op, gpu::GPUModuleOp kernels,
                      SymbolTable &symbols) {
    if (op.getDims().N == 0) { // varlen with no sequence: nothing to run
      op->erase();
      return success();
    }
    // The schedule gdn-select-schedule pinned on the op, or the cost model's.
    FailureOr<GPUScheduleOptions> options = scheduleOptionsOf(op);
    if (failed(options))
      return failure();
    options->smCount = defaultSMCount(chip);
    options->bulkAsyncCopies = hasBulkAsyncCopies(StringRef(chip));
    FailureOr<Schedule> s =
        selectGPUSchedule(op, *options);
    if (failed(s))
      return failure();
    auto d = op.getDims();
    Location loc = op.getLoc();
    std::string name = "gdn_recurrent";
    if (auto func = op->getParentOfType<FunctionOpInterface>())
      name = kernelName(func.getName()) + "_recurrent";

    // Kernel signature: the op's operands, in order.
    SmallVector<Type> argTypes(op->getOperandTypes());
    OpBuilder b = OpBuilder::atBlockEnd(&kernels.getBodyRegion().front());
    auto kernel = gpu::GPUFuncOp::create(b, loc, name,
                                         b.getFunctionType(argTypes, {}));
    symbols.insert(kernel); // uniquifies the name
    kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
    int32_t threads = s->threads();
    if (s->consumerRegisters > 0) {
      if (StringRef(chip) != "sm_90a")
        return op.emitOpError() << "cannot be lowered to the GPU: "
                                   "consumer-registers (setmaxnreg) needs "
                                   "sm_90a, not "
                                << chip;
      // setmaxnreg needs a register count fixed at entry: the exact block
      // size and one CTA an SM guaranteed (known_block_size must then go:
      // ptxas rejects it together with reqntid), ptxas warning C7508.
      kernel->setAttr(NVVM::NVVMDialect::getReqntidAttrName(),
                      b.getDenseI32ArrayAttr({threads, 1, 1}));
      kernel->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                      b.getI32IntegerAttr(1));
    } else {
      kernel.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr({threads, 1, 1}));
    }

    Block &entry = kernel.getBody().front();
    b.setInsertionPointToStart(&entry);
    IRMapping mapping;
    mapping.map(op->getOperands(), entry.getArguments());
    auto kop = cast<RecurrentOp>(b.clone(*op, mapping));
    KernelBuilder(b, loc, kop, *s, kernel).build();
    kop->erase();
    gpu::ReturnOp::create(b, loc);

    // Host side: the launch over (V blocks, HV, N).
    OpBuilder hb(op);
    auto idx = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(hb, loc, v);
    };
    gpu::KernelDim3 grid{idx(d.V / s->blockRows()), idx(d.HV), idx(d.N)};
    gpu::KernelDim3 block{idx(threads), idx(1), idx(1)};
    gpu::LaunchFuncOp::create(hb, loc, kernel, grid, block,
                              /*dynamicSharedMemorySize=*/Value(),
                              op->getOperands());
    op->erase();
    return success();
  }
};
} // namespace
