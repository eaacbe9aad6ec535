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
constexpr int64_t kWarpSize = 32;
constexpr StringLiteral kKernelModuleName = "gdn_kernels";

/// The thread-to-data mapping of one kernel.
struct Schedule {
  int64_t rows;     ///< R: V columns per lane
  int64_t warps;    ///< W: warps per CTA
  int64_t lanesV;   ///< lanes of a warp along V (the rest go along K)
  int64_t kPerLane; ///< KL = K / (32 / lanesV)
  int64_t chunk;    ///< tokens staged in shared memory at a time (0: none)
  int64_t unroll;   ///< staged tokens unrolled (1: a loop)
  int64_t lanesK() const { return kWarpSize / lanesV; }
  int64_t warpRows() const { return rows * lanesV; }
  int64_t blockRows() const { return rows * lanesV * warps; }
};

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

/// Lanes along V for `rows` columns a lane: 1 in vk (K is contiguous); in kv
/// as many as make a key row's share of a warp 64 contiguous bytes (two
/// sectors), as long as the shapes divide and the state tile stays <= 64
/// registers.
int64_t autoLanesV(RecurrentOp op, int64_t rows) {
  auto d = op.getDims();
  if (op.isVKLayout())
    return 1;
  for (int64_t l : {16, 8, 4, 2})
    if (rows * l * 4 <= 64 && d.V % (rows * l) == 0 &&
        d.K % (kWarpSize / l) == 0 && rows * d.K / (kWarpSize / l) <= 64)
      return l;
  return 1;
}

/// The cost model of the default schedule (measured on the H200, see
/// bench/results): decode is bound by memory latency at small N and by
/// bandwidth at large N. Few V columns a lane give many short warps, which
/// hides latency when the problem is small; more columns a lane give more
/// independent 16-byte loads in flight per thread, which wins once the grid
/// has enough warps to fill the machine. So take the most columns a lane
/// (8, 4, 2, 1) that still leaves at least kTargetWarps warps. With staged
/// tokens (T > 1) each token is a dependent chain of reductions, and 4 or 8
/// independent columns a lane beat more, shorter warps (T = 4 and 12, N = 1:
/// 4 columns 7-14% faster than 1). Once 8 columns a lane fill the machine
/// (T = 1), CTAs of one warp beat CTAs of four (N = 8 to 256: 2-8% faster,
/// bench/results/2026-11-29-s2-sweep).
constexpr int64_t kTargetWarps = 4096; // ~half the warp slots of 132 SMs

/// Tokens staged in shared memory at a time: none for a single token (it
/// would only add a barrier), else up to 16 (fixed T) or 8 (varlen, where
/// most sequences are short), within 32 KiB of buffers and one gate-computing
/// thread per token.
int64_t autoChunk(RecurrentOp op) {
  auto d = op.getDims();
  if (!op.isVarlen() && d.T == 1)
    return 0;
  return op.isVarlen() ? 8 : std::min<int64_t>(d.T, 16);
}

int64_t stagingBytes(RecurrentOp op, const Schedule &s, int64_t chunk) {
  auto d = op.getDims();
  auto bytes = [](Value x) {
    return cast<MemRefType>(x.getType()).getElementTypeBitWidth() / 8;
  };
  return chunk * (2 * d.K * bytes(op.getQ()) + s.blockRows() * bytes(op.getV()) +
                  8 + (op.hasParentTable() ? 4 : 0));
}

constexpr int64_t kMaxStagingBytes = 32 * 1024;
/// Staged tokens unrolled by default: none. Unrolling 4 or all 12 tokens
/// measured slower from N = 8 on (code size; kv T = 12: 1.2-2x) and gained at
/// most 7% at N = 1.
constexpr int64_t kAutoUnroll = 1;

FailureOr<Schedule> chooseSchedule(RecurrentOp op, int64_t rowsOpt,
                                   int64_t warpsOpt, int64_t lanesVOpt,
                                   int64_t chunkOpt, int64_t unrollOpt) {
  auto d = op.getDims();
  Schedule s{rowsOpt, warpsOpt, lanesVOpt, 0, 0, unrollOpt};
  bool staged = chunkOpt == 0 ? autoChunk(op) > 0 : chunkOpt > 0;
  bool bandwidthBound = false;
  if (s.rows == 0) {
    // In kv the lanes along V grow as the columns a lane shrink, so the warp
    // count does not change; 4 columns x 4 lanes measured best there (8 x 2
    // was 10-40% slower), hence the shorter candidate list.
    SmallVector<int64_t> candidates =
        !op.isVKLayout() ? SmallVector<int64_t>{4, 2, 1}
        : staged         ? SmallVector<int64_t>{8, 4}
                         : SmallVector<int64_t>{8, 4, 2, 1};
    int64_t bestWarps = -1;
    for (int64_t r : candidates) {
      if (d.V % r != 0)
        continue;
      int64_t lanes = lanesVOpt ? lanesVOpt : autoLanesV(op, r);
      int64_t warps = d.N * d.HV * (d.V / (r * lanes));
      if (warps > bestWarps) { // ties keep the larger r
        s.rows = r;
        bestWarps = warps;
      }
      if (warps >= kTargetWarps) {
        bandwidthBound = r == candidates.front();
        break;
      }
    }
  }
  if (s.lanesV == 0)
    s.lanesV = autoLanesV(op, s.rows);
  if (s.lanesV < 1 || s.lanesV > kWarpSize || !llvm::isPowerOf2_64(s.lanesV))
    return op.emitOpError() << "cannot be lowered to the GPU: v-lanes = "
                            << s.lanesV << " must be a power of two in [1, 32]";
  if (d.K % s.lanesK() != 0)
    return op.emitOpError() << "cannot be lowered to the GPU: K = " << d.K
                            << " must be a multiple of 32 / v-lanes = "
                            << s.lanesK();
  s.kPerLane = d.K / s.lanesK();
  if (s.warps == 0 && bandwidthBound && op.isVKLayout() && !staged)
    s.warps = 1;
  if (s.warps == 0) {
    s.warps = 1;
    for (int64_t w : {4, 2})
      if (d.V % (w * s.warpRows()) == 0) {
        s.warps = w;
        break;
      }
  }
  if (s.rows < 1 || s.rows > 16 || s.warps < 1 || s.warps > 32)
    return op.emitOpError() << "cannot be lowered to the GPU: rows-per-warp = "
                            << s.rows << " must be in [1, 16] and warps-per-block = "
                            << s.warps << " in [1, 32]";
  // The state tile lives in registers: keep it within a budget that ptxas
  // can hold without spilling (K = 256 with R = 4 in vk is 32 values).
  if (s.rows * s.kPerLane > 64)
    return op.emitOpError() << "cannot be lowered to the GPU: a thread would "
                               "hold rows-per-warp * K / (32 / v-lanes) = "
                            << s.rows * s.kPerLane
                            << " state values, more than 64 (K = " << d.K
                            << " must be at most 256 for this schedule)";
  if (d.V % s.blockRows() != 0)
    return op.emitOpError() << "cannot be lowered to the GPU: V = " << d.V
                            << " is not a multiple of rows-per-warp * v-lanes * "
                               "warps-per-block = "
                            << s.blockRows();
  if (d.V / s.blockRows() > std::numeric_limits<int32_t>::max())
    return op.emitOpError() << "cannot be lowered to the GPU: V / (rows-per-warp * "
                               "v-lanes * warps-per-block) = "
                            << d.V / s.blockRows()
                            << " blocks exceed the grid limit 2^31 - 1";
  if (chunkOpt == 0) {
    s.chunk = autoChunk(op);
    while (s.chunk > 1 && stagingBytes(op, s, s.chunk) > kMaxStagingBytes)
      s.chunk /= 2;
  } else if (chunkOpt < 0) {
    s.chunk = 0; // inputs straight from global memory
  } else {
    s.chunk = chunkOpt;
  }
  if (s.unroll == 0)
    s.unroll = kAutoUnroll;
  else if (s.unroll < 0)
    s.unroll = 1;
  if (s.unroll > 64)
    return op.emitOpError() << "cannot be lowered to the GPU: unroll-tokens = "
                            << s.unroll << " must be at most 64";
  if (s.chunk > s.warps * kWarpSize)
    return op.emitOpError() << "cannot be lowered to the GPU: stage-tokens = "
                            << s.chunk << " exceeds the " << s.warps * kWarpSize
                            << " threads of a CTA";
  if (stagingBytes(op, s, s.chunk) > 48 * 1024)
    return op.emitOpError() << "cannot be lowered to the GPU: stage-tokens = "
                            << s.chunk << " needs "
                            << stagingBytes(op, s, s.chunk)
                            << " bytes of shared memory, more than 48 KiB";
  if (d.HV > 65535 || d.N > 65535)
    return op.emitOpError() << "cannot be lowered to the GPU: N = " << d.N
                            << " and HV = " << d.HV
                            << " must each be at most 65535 (grid limits)";
  return s;
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
      auto loop = scf::ForOp::create(
        b, loc, tokenLo, hi, m.index(s.chunk), state,
        [&](OpBuilder &nb, Location, Value c, ValueRange carried) {
          OpBuilder::InsertionGuard g(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          Value count = arith::MinUIOp::create(
              b, loc, m.index(s.chunk), arith::SubIOp::create(b, loc, hi, c));
          scf::YieldOp::create(b, loc, chunk(c, count, carried));
        });
      storeState(loop.getResults());
    }
    // Unrolled tokens overlap the next token's shared-memory loads, norms and
    // gates with this token's dependent chain, at the cost of code size.
    for (scf::ForOp loop : tokenLoops) {
      std::optional<int64_t> trips = getConstantIntValue(loop.getUpperBound());
      if (trips && *trips <= s.unroll)
        (void)loopUnrollFull(loop);
      else if (s.unroll > 1)
        (void)loopUnrollByFactor(loop, s.unroll);
    }
  }

private:
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
    auto at2 = [&](Value x, Value y) {
      SmallVector<Value> idx = prefix;
      idx.push_back(x);
      idx.push_back(y);
      return idx;
    };
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
    auto at2 = [&](Value x, Value y) {
      SmallVector<Value> idx = prefix;
      idx.push_back(x);
      idx.push_back(y);
      return idx;
    };
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

  /// x <- x / sqrt(sum(x^2) + 1e-6) over the whole K (eps inside the sqrt).
  void l2Normalize(SmallVectorImpl<Value> &x) {
    Value ss = m.f32(0.0);
    for (Value e : x)
      ss = m.add(ss, m.mul(e, e));
    Value inv = m.div(m.f32(1.0), m.sqrt(m.add(warpSum(ss), m.f32(1e-6))));
    for (Value &e : x)
      e = m.mul(e, inv);
  }

  /// The shared-memory buffers of one chunk of tokens: q and k [chunk, K],
  /// this CTA's V columns of v [chunk, BV] (input dtypes), exp(g) and beta
  /// [chunk] (f32), and with a tree each token's parent source [chunk] (i32).
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
    qStage = buffer({s.chunk, d.K}, qk);
    kStage = buffer({s.chunk, d.K}, qk);
    vStage = buffer({s.chunk, s.blockRows()}, ve);
    decayStage = buffer({s.chunk}, b.getF32Type());
    betaStage = buffer({s.chunk}, b.getF32Type());
    if (op.hasParentTable())
      sourceStage = buffer({s.chunk}, b.getI32Type());
    threadId = tid;
    blockV0 = arith::MulIOp::create(b, loc, vBlock, m.index(s.blockRows()));
  }

  /// Copies rows [c, c + count) of `src` (a [.., T, .., width] slice at
  /// `idx(t, col)`) into `dst` [chunk, width]: 16-byte vectors spread over
  /// every thread of the CTA, all issued before anyone waits.
  void stageRows(Value src, Value dst, int64_t width, Value c, Value count,
                 function_ref<SmallVector<Value>(Value, Value)> idx) {
    Type et = cast<MemRefType>(src.getType()).getElementType();
    int64_t vec = 16 / (et.getIntOrFloatBitWidth() / 8);
    while (width % vec != 0)
      vec /= 2;
    int64_t perRow = width / vec;
    scf::ForOp::create(
        b, loc, threadId, m.index(s.chunk * perRow),
        m.index(s.warps * kWarpSize), ValueRange{},
        [&](OpBuilder &nb, Location, Value i, ValueRange) {
          OpBuilder::InsertionGuard g(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          Value j = arith::DivUIOp::create(b, loc, i, m.index(perRow));
          Value col = arith::MulIOp::create(
              b, loc, arith::RemUIOp::create(b, loc, i, m.index(perRow)),
              m.index(vec));
          Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                                j, count);
          auto ifOp = scf::IfOp::create(b, loc, inRange, /*withElseRegion=*/false);
          {
            OpBuilder::InsertionGuard inIf(b);
            b.setInsertionPointToStart(&ifOp.getThenRegion().front());
            Value x = loadVector(src, idx(arith::AddIOp::create(b, loc, c, j), col), vec);
            vector::StoreOp::create(b, loc, x, dst, ValueRange{j, col},
                                    /*nontemporal=*/false,
                                    llvm::MaybeAlign(vectorAlignment(vec, et)));
          }
          scf::YieldOp::create(b, loc);
        });
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
    {
      // Thread j computes token j's gates (chunk <= threads).
      Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                            threadId, count);
      auto ifOp = scf::IfOp::create(b, loc, inRange, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      Value t = arith::AddIOp::create(b, loc, c, threadId);
      memref::StoreOp::create(b, loc, m.emitDecay(op, tokenRow, t, hv),
                              decayStage, ValueRange{threadId});
      memref::StoreOp::create(b, loc, m.emitBeta(op, tokenRow, t, hv),
                              betaStage, ValueRange{threadId});
      if (op.hasParentTable())
        memref::StoreOp::create(b, loc, parentSource(t), sourceStage,
                                ValueRange{threadId});
    }
    gpu::BarrierOp::create(b, loc);
    auto body = [&](OpBuilder &nb, Location, Value j, ValueRange carried) {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
      Value t = arith::AddIOp::create(b, loc, c, j);
      SmallVector<Value> next = token(t, j, carried);
      storeIntermediate(t, next);
      scf::YieldOp::create(b, loc, next);
    };
    auto loop = scf::ForOp::create(b, loc, m.index(0), count, m.index(1),
                                   state, body);
    tokenLoops.push_back(loop); // unrolled once its results have their uses
    SmallVector<Value> results(loop.getResults());
    // The buffers are refilled by the next chunk only after every warp is done.
    if (op.isVarlen() || d.T > s.chunk)
      gpu::BarrierOp::create(b, loc);
    return results;
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
    if (op.getQkL2norm()) {
      l2Normalize(kf);
      l2Normalize(qf);
    }
    Value scale = m.f32(op.getScaleOrDefault());
    for (Value &e : qf)
      e = m.mul(e, scale);
    Value decay, beta;
    SmallVector<Value> vf;
    if (staged) {
      decay = memref::LoadOp::create(b, loc, decayStage, ValueRange{j});
      beta = memref::LoadOp::create(b, loc, betaStage, ValueRange{j});
      Value col = arith::SubIOp::create(b, loc, v0, blockV0);
      vf = extractAll(m.toF32(loadVector(vStage, {j, col}, s.rows)));
    } else {
      decay = m.emitDecay(op, tokenRow, t, hv);
      beta = m.emitBeta(op, tokenRow, t, hv);
      vf = extractAll(m.toF32(loadVector(op.getV(), {tokenRow, t, hv, v0}, s.rows)));
    }

    SmallVector<Value> outputs;
    for (int64_t r = 0; r < s.rows; ++r) {
      Value sk = m.f32(0.0);
      for (int64_t j = 0; j < s.kPerLane; ++j) {
        at(S, r, j) = m.mul(at(S, r, j), decay);
        sk = m.add(sk, m.mul(at(S, r, j), kf[j]));
      }
      Value u = m.mul(beta, m.sub(vf[r], warpSum(sk)));
      Value sq = m.f32(0.0);
      for (int64_t j = 0; j < s.kPerLane; ++j) {
        at(S, r, j) = m.add(at(S, r, j), m.mul(kf[j], u));
        sq = m.add(sq, m.mul(at(S, r, j), qf[j]));
      }
      Value out = warpSum(sq);
      if (valid) // padding rows output zeros
        out = arith::SelectOp::create(b, loc, valid, out, m.f32(0.0));
      outputs.push_back(out);
    }
    // The lanes of key group 0 write their R outputs (all lanes hold them).
    Value isLane0 = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          kLane, m.index(0));
    auto ifOp = scf::IfOp::create(b, loc, isLane0, /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      storeVector(outputs, op.getO(), {tokenRow, t, hv, v0});
    }
    return S;
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
    FailureOr<Schedule> s =
        chooseSchedule(op, rowsPerWarp, warpsPerBlock, vLanes, stageTokens,
                       unrollTokens);
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
    int32_t threads = s->warps * kWarpSize;
    kernel.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr({threads, 1, 1}));

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
