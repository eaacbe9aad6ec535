//===- TensorCoreSolve.cpp - the chunked solve on tensor cores ------------===//
//
// Schedule `solve = tensor_cores`: a staged chunk's tokens solved at once
// (KernelForms.h, tensorCoreSolve()) with the state tile held as the
// accumulators of m16n8k8 tf32 mma.sync.
//
// Fragments of mma.m16n8k8 with .tf32 operands (PTX ISA, "Matrix Fragments
// for mma.m16n8k8"), with g = lane / 4 and t = lane % 4:
//   A (16 x 8, row): a0 = A[g][t], a1 = A[g + 8][t], a2 = A[g][t + 4],
//                    a3 = A[g + 8][t + 4]
//   B (8 x 8, col):  b0 = B[t][g], b1 = B[t + 4][g]
//   C, D (16 x 8):   c0 = C[g][2t], c1 = C[g][2t + 1], c2 = C[g + 8][2t],
//                    c3 = C[g + 8][2t + 1]
// An accumulator tile is the A operand of the next product with no shuffle
// once the reduction index is permuted: a = (c0, c2, c1, c3) makes A's
// column t the tile's column 2t and its column t + 4 column 2t + 1, so B's
// rows are read in the same order, b0 = B[2t][g], b1 = B[2t + 1][g]. A warp
// holds Sᵀ (16 V columns x K keys, a row tile) as K / 8 such tiles, or two
// row tiles (32 V columns) with columns_per_lane = 4; row tile i's row g is
// the warp's V column R g + 2i and row g + 8 column R g + 2i + 1 (R =
// columns_per_lane; any order of the rows works, as long as the state, v
// and o agree), so a lane's R columns sit side by side: 4 R-byte state
// accesses in kv, R columns of o at once.
//
// tf32 keeps 10 mantissa bits. An operand that is not exact in tf32 (the
// state, the solve's matrices, f32 q and k) is split into hi = its top 19
// bits and lo = the rest (its own top 19 bits), and a product is hi*hi +
// hi*lo + lo*hi (3xTF32, as in CUTLASS), about 2^-20 relative, under
// `precision = tf32x3`; under `precision = tf32` it is rounded to the
// nearest tf32 and a product is one mma (docs/math.md §5). bf16 and f16 q
// and k are exact and take one term less; bf16 ones form the Gram products
// on bf16 m16n8k16 mma, 16 keys an mma (exact too). Under `precision = bf16`
// the products with bf16 q and k (P, R, the state update) take bf16 m16n8k16
// mma (productBF16), the state and the update's factor rounded to bf16.
//
//===----------------------------------------------------------------------===//

#include "KernelForms.h"
#include "MmaSync.h"
#include "ScheduleRules.h"

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

#include <functional>
#include <utility>

using namespace mlir;
using namespace mlir::gdn;

namespace {

/// An mma operand's registers, the i32 bits of tf32 values that mma.sync
/// takes, formed once however many tiles use them: hi, and lo unless the
/// values are exact in tf32.
struct Operand {
  SmallVector<Value> hi, lo;
};

/// The i32 bits of f32 `x` as a tf32 value (the low 13 mantissa bits
/// cleared): truncated, or rounded to the nearest, ties away from zero
/// (cvt.rna.tf32.f32's rounding: add half the last kept bit first;
/// docs/math.md §5).
Value tf32Bits(KernelMath &m, Value x, bool nearest = false) {
  OpBuilder &b = m.builder();
  Location loc = m.location();
  Value bits = arith::BitcastOp::create(b, loc, b.getI32Type(), x);
  if (nearest)
    bits = arith::AddIOp::create(b, loc, bits, m.i32(0x1000));
  return arith::AndIOp::create(b, loc, bits,
                               m.i32(static_cast<int32_t>(0xffffe000)));
}

/// How an operand's f32 values become tf32: as they are (bf16 or f16
/// widened, exact), split in two (3xTF32) or rounded to the nearest.
enum class OperandForm { exact, split, rounded };

/// The form of f32 operands under `s` (its `precision`), and of q and k
/// (exact when bf16 or f16).
OperandForm wideForm(ScheduleAttr s) {
  return s.singleTF32() ? OperandForm::rounded : OperandForm::split;
}
OperandForm qkForm(RecurrentOp op, ScheduleAttr s) {
  Type qkType = cast<ShapedType>(op.getQ().getType()).getElementType();
  return qkType.isBF16() || qkType.isF16() ? OperandForm::exact : wideForm(s);
}

/// f32 `values` as an operand of the given form: for split, hi = x in
/// tf32 and lo = (x - hi) in tf32.
Operand operand(KernelMath &m, ArrayRef<Value> values, OperandForm form) {
  OpBuilder &b = m.builder();
  Location loc = m.location();
  Operand o;
  for (Value x : values) {
    if (form == OperandForm::exact) {
      o.hi.push_back(arith::BitcastOp::create(b, loc, b.getI32Type(), x));
      continue;
    }
    if (form == OperandForm::rounded) {
      o.hi.push_back(tf32Bits(m, x, /*nearest=*/true));
      continue;
    }
    Value hi = tf32Bits(m, x);
    Value rest = arith::SubFOp::create(
        b, loc, x, arith::BitcastOp::create(b, loc, b.getF32Type(), hi));
    o.hi.push_back(hi);
    o.lo.push_back(tf32Bits(m, rest));
  }
  return o;
}

/// D = A B + C for one m16n8k8 tile with tf32 operands: a 4 and b 2
/// registers (Operand's i32 bits).
Fragment mma(OpBuilder &b, Location loc, ArrayRef<Value> a, ArrayRef<Value> bb,
             const Fragment &c) {
  return mmaSync(b, loc, {16, 8, 8}, NVVM::MMATypes::tf32, a, bb, c);
}

/// D = A B + C in split precision: the small terms first, the accumulator
/// carried from one mma to the next.
Fragment product(OpBuilder &b, Location loc, const Operand &a,
                 const Operand &bb, const Fragment &c) {
  Fragment d = c;
  if (!bb.lo.empty())
    d = mma(b, loc, a.hi, bb.lo, d);
  if (!a.lo.empty())
    d = mma(b, loc, a.lo, bb.hi, d);
  return mma(b, loc, a.hi, bb.hi, d);
}

/// The A operand of an accumulator tile, reduction index permuted.
SmallVector<Value> asA(const Fragment &c) { return {c[0], c[2], c[1], c[3]}; }

/// bf16 values, or f32 ones rounded to the nearest bf16, as the i32
/// registers of an m16n8k16 operand: two a register, the first in the low
/// half, which productBF16 hands to nvvm.mma.sync as they are.
SmallVector<Value> bf16Registers(OpBuilder &b, Location loc,
                                 ArrayRef<Value> xs) {
  Type bf16 = b.getBF16Type();
  SmallVector<Value> regs;
  for (size_t i = 0; i < xs.size(); i += 2) {
    SmallVector<Value> pair;
    for (Value x : xs.slice(i, 2))
      pair.push_back(
          x.getType().isBF16() ? x : arith::TruncFOp::create(b, loc, bf16, x));
    Value v = vector::FromElementsOp::create(b, loc, VectorType::get({2}, bf16),
                                             pair);
    v = vector::BitCastOp::create(b, loc, VectorType::get({1}, b.getI32Type()),
                                  v);
    regs.push_back(vector::ExtractOp::create(b, loc, v, int64_t{0}));
  }
  return regs;
}

/// A vector<2xbf16> as it was loaded (two adjacent values) as one i32
/// register of an m16n8k16 operand: no unpacking into scalars and packing
/// again.
Value bf16Register(OpBuilder &b, Location loc, Value pair) {
  Value bits = vector::BitCastOp::create(
      b, loc, VectorType::get({1}, b.getI32Type()), pair);
  return vector::ExtractOp::create(b, loc, bits, int64_t{0});
}

/// D = A B + C for one m16n8k16 tile with bf16 operands (precision =
/// bf16): `a` 4 and `bb` 2 registers of bf16Registers, holding the PTX
/// ISA's fragments ("Matrix Fragments for mma.m16n8k16"), with g = lane / 4,
/// t = lane % 4:
///   A (16 x 16, row): a0, a1 = A[g][2t, 2t + 1],
///                     a2, a3 = A[g + 8][2t, 2t + 1],
///                     a4..a7 the same, 8 columns on;
///   B (16 x 8, col):  b0, b1 = B[2t, 2t + 1][g],
///                     b2, b3 = B[2t + 8, 2t + 9][g].
/// Two accumulator tiles side by side (columns 0-7 and 8-15) are such an
/// A operand as they are: c0..c3 of the first, then of the second.
Fragment productBF16(OpBuilder &b, Location loc, ArrayRef<Value> a,
                     ArrayRef<Value> bb, const Fragment &c) {
  return mmaSync(b, loc, {16, 8, 16}, NVVM::MMATypes::bf16, a, bb, c);
}

/// `count` (2 or 4) 8 x 8 tiles of the bf16 [rows, keys] staging buffer
/// `buf` (its rows 16-byte aligned, as StagingLayout pads them) in one
/// ldmatrix (PTX ISA, "ldmatrix"): lane l < 8 count gives the address of
/// row l % 8 of tile l / 8, whose first row and key are `corner`(l / 8)
/// (the other lanes' addresses are not read). Register i (an i32 of two
/// bf16) holds tile i's row g, keys 2t and 2t + 1, or with `transpose` its
/// rows 2t and 2t + 1 of key g (g = lane / 4, t = lane % 4): the fragments
/// of productBF16's operands, without a load of 32 bits each, or two of 16
/// bits and a pack.
SmallVector<Value, 4>
loadTiles(KernelMath &m, Value buf, Value lane, int64_t count, bool transpose,
          function_ref<std::pair<Value, Value>(Value tile)> corner) {
  OpBuilder &b = m.builder();
  Location loc = m.location();
  Value tile = arith::DivUIOp::create(b, loc, lane, m.index(8));
  if (count < 4) // keep the unread lanes' addresses in the buffer too
    tile = arith::RemUIOp::create(b, loc, tile, m.index(count));
  auto [row, key] = corner(tile);
  row = arith::AddIOp::create(b, loc, row,
                              arith::RemUIOp::create(b, loc, lane, m.index(8)));
  Type bf16 = b.getBF16Type();
  Value tiles =
      nvgpu::LdMatrixOp::create(b, loc, VectorType::get({count, 2}, bf16), buf,
                                ValueRange{row, key}, transpose, count);
  SmallVector<Value, 4> regs;
  for (int64_t i = 0; i < count; ++i)
    regs.push_back(
        bf16Register(b, loc, vector::ExtractOp::create(b, loc, tiles, i)));
  return regs;
}

/// loadTiles' corner of tile i (0-3) of a 2 x 2 block of 8 x 8 tiles whose
/// first is at row tile `row0` and key tile `key0`: row tile row0 + i / 2,
/// key tile key0 + i % 2, or with `keysOuter` row0 + i % 2, key0 + i / 2.
std::pair<Value, Value> blockCorner(KernelMath &m, Value i, int64_t row0,
                                    int64_t key0, bool keysOuter) {
  OpBuilder &b = m.builder();
  Location loc = m.location();
  auto tileStart = [&](bool outer, int64_t base) -> Value {
    Value two = m.index(2);
    Value t = outer ? Value(arith::DivUIOp::create(b, loc, i, two))
                    : Value(arith::RemUIOp::create(b, loc, i, two));
    if (base != 0)
      t = arith::AddIOp::create(b, loc, t, m.index(base));
    return arith::MulIOp::create(b, loc, t, m.index(8));
  };
  Value row = tileStart(!keysOuter, row0);
  return {row, tileStart(keysOuter, key0)};
}

/// Whether the bf16 products take their staged operands by ldmatrix
/// (loadTiles) rather than one 32-bit word (or two 16-bit values) a
/// register: in chunk_parallel's launches of 4 warps a CTA or more, where
/// it measured faster, and so in the warp-specialized solve of 4 consumer
/// warps or more (producerSolves); at 2 warps a CTA (one CTA an SM at N =
/// 1) the word loads' scan is faster, and the one-launch tensor_cores form
/// has not been measured with it (docs/cost-model.md#scan-operand-loads).
bool ldmatrixOperands(ScheduleAttr s) {
  return (s.chunkParallel() || s.producerSolves()) && *s.getWarps() >= 4;
}
} // namespace

void TensorCoreSolveKernel::build() {
  if (kernel.getNumArguments() > op->getNumOperands()) // chunk_parallel's scan
    workspace = kernel.getArgument(op->getNumOperands());
  if (s.concurrentSolves()) // (checked: chunk_parallel's unsplit scan)
    solveCounts = kernel.getArgument(op->getNumOperands() + 1);
  if (segmentPart != SegmentPart::none)
    return buildSegment();
  enter();
  // A single chunk in CTAs of 4 or more warps loads the state after the
  // chunk's staging loads (chunk()), so the staging barrier does not wait
  // behind the state's loads; the state is first read by the products after
  // the Gram pass and the substitution. T = 12, N = 64 / 256: 4-6% / 1-7%
  // faster with 8 / 4 warps; with 2 warps (N = 1) 2-4% slower, where the
  // state's latency is the CTA's critical path
  // (docs/cost-model.md#tensor-core-late-state).
  bool lateState =
      *s.getWarps() >= 4 && !op.isVarlen() && d.T <= *s.getStagedTokens();
  prefetchLaterInputs();
  SmallVector<Value> state =
      lateState ? SmallVector<Value>() : loadState();
  waitForPreviousGrid();
  writeReplayWindows();
  runStagedForm(state, [&](Value c, Value count, ValueRange current) {
    return tensorCoreSolve(c, count, current);
  });
  // Launched beside the solves (concurrent_solves): this grid ends after
  // theirs, so the stream's next kernel finds both done.
  if (solveCounts)
    waitForGrid();
}

void TensorCoreSolveKernel::buildTensorCoreGram(bool products) {
  int64_t C = *s.getStagedTokens(), tiles = C / 8,
          threads = groupThreads();
  Value g = arith::DivUIOp::create(b, loc, mmaLane, m.index(4));
  Value t2 = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, mmaLane, m.index(4)), m.index(2));
  Value warp = arith::DivUIOp::create(b, loc, tid, m.index(kWarpSize));
  OperandForm qk = qkForm(op, s);
  // q and k are staged as they are (StagingLayout).
  bool bf16Gram = bf16QueriesAndKeys(op) && d.K % 16 == 0;
  bool ldm = ldmatrixOperands(s);
  auto gate = [&](int64_t l) -> Value {
    return memref::LoadOp::create(b, loc, decayStage, ValueRange{m.index(l)});
  };
  auto cmp = [&](arith::CmpIPredicate pred, Value x, Value y) -> Value {
    return arith::CmpIOp::create(b, loc, pred, x, y);
  };
  // The raw Gram products on tensor cores, one job a 16-row tile r of a
  // matrix (rows 16 r + g and 16 r + g + 8; rows past the chunk, as in C = 8,
  // are 0 and not stored), the jobs dealt to the warps in turn: K Kᵀ and
  // Q Kᵀ into gramStage on and below the diagonal only (the column tiles n
  // with 8 n <= 16 r + 15), and with qk_l2norm the diagonal of Q Qᵀ into
  // tokenStage[2]. Element e of tile n is (i, j) = (16 r + g + 8 (e / 2),
  // 8 n + 2t + e % 2).
  auto gramOf = [&](Value x, Value y, int64_t r, int64_t n0,
                    function_ref<void(Value, Value, Value)> store) {
    int64_t n1 = std::min(tiles, 2 * r + 2);
    Fragment zero = {m.f32(0.0), m.f32(0.0), m.f32(0.0), m.f32(0.0)};
    SmallVector<Fragment> acc(n1 - n0, zero);
    Value top = offset(g, 16 * r), bottom = offset(g, 16 * r + 8);
    bool hasBottom = 16 * r + 8 < C;
    // bf16 q and k: 16 keys an m16n8k16 mma on the pairs as staged (the
    // products are exact either way, in half the mma; docs/math.md §5),
    // loaded a 32-bit pair a register or (ldm) by ldmatrix: tile i of a row
    // tile (rows 8 (2r + i % 2) of x, keys 16 p + 8 (i / 2)) is A's
    // register i; a bottom half past the chunk (C % 16 == 8) is zeros.
    // Tile i of column tiles n, n + 1 (rows 8 (n + i / 2) of y, keys
    // 16 p + 8 (i % 2)): B's registers of n, then of n + 1.
    auto pairOf = [&](Value buf, Value row, Value key, bool real) {
      return real ? bf16Register(b, loc, loadVector(buf, {row, key}, 2))
                  : m.i32(0);
    };
    for (int64_t p = 0; bf16Gram && !ldm && p < d.K / 16; ++p) {
      Value key = offset(t2, 16 * p), keyHi = offset(t2, 16 * p + 8);
      SmallVector<Value> aRegs = {
          pairOf(x, top, key, true), pairOf(x, bottom, key, hasBottom),
          pairOf(x, top, keyHi, true), pairOf(x, bottom, keyHi, hasBottom)};
      for (int64_t n = n0; n < n1; ++n) {
        Value row = offset(g, 8 * n);
        acc[n - n0] = productBF16(
            b, loc, aRegs,
            {pairOf(y, row, key, true), pairOf(y, row, keyHi, true)},
            acc[n - n0]);
      }
    }
    for (int64_t p = 0; bf16Gram && ldm && p < d.K / 16; ++p) {
      SmallVector<Value> aRegs;
      if (hasBottom) {
        aRegs = llvm::to_vector(loadTiles(m, x, mmaLane, 4, false, [&](Value i) {
          return blockCorner(m, i, 2 * r, 2 * p, /*keysOuter=*/true);
        }));
      } else {
        SmallVector<Value, 4> top2 = loadTiles(
            m, x, mmaLane, 2, false, [&](Value i) -> std::pair<Value, Value> {
              Value key = arith::MulIOp::create(b, loc, offset(i, 2 * p),
                                                m.index(8));
              return {m.index(16 * r), key};
            });
        aRegs = {top2[0], m.i32(0), top2[1], m.i32(0)};
      }
      for (int64_t n = n0; n < n1; n += 2) {
        int64_t count = std::min<int64_t>(2, n1 - n);
        SmallVector<Value, 4> bRegs = loadTiles(
            m, y, mmaLane, 2 * count, false,
            [&](Value i) {
              return blockCorner(m, i, n, 2 * p, /*keysOuter=*/false);
            });
        for (int64_t j = 0; j < count; ++j)
          acc[n + j - n0] = productBF16(
              b, loc, aRegs, {bRegs[2 * j], bRegs[2 * j + 1]}, acc[n + j - n0]);
      }
    }
    for (int64_t p = 0; !bf16Gram && p < d.K / 8; ++p) {
      Value key = offset(t2, 8 * p);
      auto up = extractAll(m.toF32(loadVector(x, {top, key}, 2)));
      SmallVector<Value> down = {m.f32(0.0), m.f32(0.0)};
      if (hasBottom)
        down = extractAll(m.toF32(loadVector(x, {bottom, key}, 2)));
      Operand a = operand(m, {up[0], down[0], up[1], down[1]}, qk);
      for (int64_t n = n0; n < n1; ++n)
        acc[n - n0] = product(b, loc, a,
                              operand(m,
                                      extractAll(m.toF32(loadVector(
                                          y, {offset(g, 8 * n), key}, 2))),
                                      qk),
                              acc[n - n0]);
    }
    for (int64_t n = n0; n < n1; ++n)
      for (int64_t e = 0; e < 4; ++e)
        if (e / 2 == 0 || hasBottom)
          store(e / 2 ? bottom : top, offset(t2, 8 * n + e % 2),
                acc[n - n0][e]);
  };
  int64_t rowTiles = llvm::divideCeil(C, 16);
  SmallVector<std::function<void()>> jobs;
  for (int64_t r = rowTiles - 1; r >= 0; --r)
    jobs.push_back([&, r] {
      gramOf(kStage, kStage, r, 0, [&](Value i, Value j, Value kk) {
        memref::StoreOp::create(b, loc, kk, gramStage,
                                ValueRange{m.index(0), i, j});
      });
    });
  for (int64_t r = rowTiles - 1; r >= 0; --r)
    jobs.push_back([&, r] {
      gramOf(qStage, kStage, r, 0, [&](Value i, Value j, Value qDotK) {
        memref::StoreOp::create(b, loc, qDotK, gramStage,
                                ValueRange{m.index(1), i, j});
      });
    });
  if (op.getQkL2norm()) // q's norms: only the diagonal is read
    for (int64_t r = rowTiles - 1; r >= 0; --r)
      jobs.push_back([&, r] {
        gramOf(qStage, qStage, r, 2 * r, [&](Value i, Value j, Value qq) {
          ifThen(cmp(arith::CmpIPredicate::eq, i, j), [&] {
            memref::StoreOp::create(b, loc, qq, tokenStage,
                                    ValueRange{m.index(2), i});
          });
        });
      });
  int64_t warps = groupThreads() / kWarpSize;
  if (!products)
    jobs.clear();
  for (int64_t w = 0; w < std::min<int64_t>(warps, jobs.size()); ++w)
    ifThen(cmp(arith::CmpIPredicate::eq, warp, m.index(w)), [&] {
      for (size_t job = w; job < jobs.size(); job += warps)
        jobs[job]();
    });
  // Side by side, every thread: the decay masks d(i, j) = exp(g_{j+1} + ...
  // + g_i) of its pairs (i, j) = (p / C, p % C), p = tid, tid + threads, ...
  // (summed directly: a -inf gate gives 0, never -inf - -inf), and thread
  // i < C token i's exp(G_i), exp(G_last - G_i); all kept in registers.
  SmallVector<std::tuple<Value, Value, Value, Value>> pairs; // i, j, d, real
  for (int64_t p0 = 0; p0 < C * C; p0 += threads) {
    Value p = offset(tid, p0);
    Value i = arith::DivUIOp::create(b, loc, p, m.index(C));
    Value j = arith::RemUIOp::create(b, loc, p, m.index(C));
    Value between = m.f32(0.0);
    for (int64_t l = 0; l < C; ++l) {
      Value in = arith::AndIOp::create(
          b, loc, cmp(arith::CmpIPredicate::ugt, m.index(l), j),
          cmp(arith::CmpIPredicate::ule, m.index(l), i));
      between = m.add(
          between, arith::SelectOp::create(b, loc, in, gate(l), m.f32(0.0)));
    }
    Value real = p0 + threads <= C * C
                     ? Value()
                     : cmp(arith::CmpIPredicate::ult, p, m.index(C * C));
    pairs.emplace_back(i, j, m.exp(between), real);
  }
  Value upTo = m.f32(0.0), after = m.f32(0.0);
  for (int64_t l = 0; l < C; ++l) {
    Value le = cmp(arith::CmpIPredicate::ule, m.index(l), tid);
    Value gl = gate(l);
    upTo = m.add(upTo, arith::SelectOp::create(b, loc, le, gl, m.f32(0.0)));
    after = m.add(after, arith::SelectOp::create(b, loc, le, m.f32(0.0), gl));
  }
  Value gamma = m.exp(upTo), tail = m.exp(after);
  groupBarrier();
  // Each thread scales its own pairs: gram0 = d k_i.k_j below the diagonal
  // (k_i.k_i stays on it), gram1 = d q_i.k_j on and below it.
  for (const auto &pair : pairs) {
    Value i = std::get<0>(pair), j = std::get<1>(pair),
          dij = std::get<2>(pair), real = std::get<3>(pair);
    auto scale = [&](int64_t which, arith::CmpIPredicate pred) {
      Value cond = cmp(pred, j, i);
      if (real)
        cond = arith::AndIOp::create(b, loc, cond, real);
      ifThen(cond, [&] {
        SmallVector<Value, 3> at{m.index(which), i, j};
        Value x = memref::LoadOp::create(b, loc, gramStage, at);
        memref::StoreOp::create(b, loc, m.mul(dij, x), maskedGramStage, at);
      });
    };
    scale(0, arith::CmpIPredicate::ult);
    scale(1, arith::CmpIPredicate::ule);
  }
  storeTokenFactors(gamma, tail);
}

void TensorCoreSolveKernel::ifThen(Value cond, function_ref<void()> body) {
  auto ifOp = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  body();
}

void TensorCoreSolveKernel::storeTokenFactors(Value gamma, Value tail) {
  int64_t C = *s.getStagedTokens();
  // Thread i < C: token i's factors gamma ik, gamma iq, ik tok1, ik, iq.
  ifThen(
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, tid, m.index(C)),
      [&] {
        Value i = tid;
        Value scale = m.f32(op.getScaleOrDefault());
        Value ik = m.f32(1.0), iq = scale;
        if (op.getQkL2norm()) { // x / sqrt(sum(x^2) + 1e-6), eps inside the
                                // sqrt
          Value kk = memref::LoadOp::create(b, loc, gramStage,
                                            ValueRange{m.index(0), i, i});
          Value qq = memref::LoadOp::create(b, loc, tokenStage,
                                            ValueRange{m.index(2), i});
          ik = m.rsqrt(m.add(kk, m.f32(1e-6)));
          iq = m.mul(scale, m.rsqrt(m.add(qq, m.f32(1e-6))));
        }
        memref::StoreOp::create(b, loc, gamma, tokenStage,
                                ValueRange{m.index(0), i});
        Value factors[] = {m.mul(gamma, ik), m.mul(gamma, iq), m.mul(ik, tail),
                           ik, iq};
        for (auto [w, f] : llvm::enumerate(factors))
          memref::StoreOp::create(b, loc, f, factorStage,
                                  ValueRange{m.index(w), i});
      });
  groupBarrier();
}

void TensorCoreSolveKernel::buildSolveMatrices() {
  int64_t C = *s.getStagedTokens();
  auto load = [&](Value buf, ArrayRef<int64_t> idx) -> Value {
    SmallVector<Value> at;
    for (int64_t i : idx)
      at.push_back(m.index(i));
    return memref::LoadOp::create(b, loc, buf, at);
  };
  Value inChunk = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                        tid, m.index(C));
  auto ifOp = scf::IfOp::create(b, loc, inChunk, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    // Column j of Tm = (I + L)^-1 diag(beta) by forward substitution,
    // x_i = [i == j] beta_j - sum_{l<i} L_il x_l (zero above j), and of M.
    // Rows from solveRows() on (past a fixed T) are zeros: beta = 0 there,
    // and gram1 = 0 in M. The substitution runs over the real rows only.
    int64_t rows = solveRows();
    Value j = tid;
    SmallVector<Value> ik, beta;
    for (int64_t l = 0; l < rows; ++l) {
      ik.push_back(load(factorStage, {3, l}));
      beta.push_back(load(betaStage, {l}));
    }
    Value betaJ = memref::LoadOp::create(b, loc, betaStage, ValueRange{j});
    Value ikJ =
        memref::LoadOp::create(b, loc, factorStage, ValueRange{m.index(3), j});
    SmallVector<Value> x;
    for (int64_t i = rows; i < C; ++i)
      for (int64_t which = 0; which < 2; ++which)
        memref::StoreOp::create(b, loc, m.f32(0.0), solveStage,
                                ValueRange{m.index(which), m.index(i), j});
    for (int64_t i = 0; i < rows; ++i) {
      Value sum = m.f32(0.0);
      for (int64_t l = 0; l < i; ++l)
        sum = m.add(sum,
                    m.mul(m.mul(load(maskedGramStage, {0, i, l}), ik[l]), x[l]));
      Value isJ = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, j,
                                        m.index(i));
      Value below = m.sub(m.f32(0.0), m.mul(m.mul(beta[i], ik[i]), sum));
      x.push_back(arith::SelectOp::create(b, loc, isJ, betaJ, below));
      memref::StoreOp::create(b, loc, x.back(), solveStage,
                              ValueRange{m.index(0), m.index(i), j});
      // M_ij = iq_i ik_j gram1_ij on and below the diagonal.
      Value lower = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, j,
                                          m.index(i));
      Value gram1 = memref::LoadOp::create(
          b, loc, maskedGramStage, ValueRange{m.index(1), m.index(i), j});
      Value mij = m.mul(m.mul(load(factorStage, {4, i}), ikJ), gram1);
      memref::StoreOp::create(
          b, loc, arith::SelectOp::create(b, loc, lower, mij, m.f32(0.0)),
          solveStage, ValueRange{m.index(1), m.index(i), j});
    }
  }
  groupBarrier();
}

Value TensorCoreSolveKernel::stagedColumn(Value buffer, Value row, Value col) {
  auto type = cast<MemRefType>(buffer.getType());
  if (buffer != vStage || type.getElementTypeBitWidth() != 16 ||
      s.blockColumns() % 64 != 0)
    return col;
  // Bits 4-5 of the column (a 16-byte copy is 8 columns: bits 0-2) take
  // bits 1-2 of the row: the X step's lanes read token rows 2t + e % 2, t
  // in [0, 4), at 8 column pairs, so the 4 rows land in 4 banks' groups.
  Value mask = arith::ShLIOp::create(
      b, loc,
      arith::AndIOp::create(
          b, loc, arith::ShRUIOp::create(b, loc, row, m.index(1)), m.index(3)),
      m.index(4));
  return arith::XOrIOp::create(b, loc, col, mask);
}

SmallVector<Value> TensorCoreSolveKernel::tensorCoreSolve(Value c, Value count,
                                                          ValueRange state) {
  int64_t C = *s.getStagedTokens(), tiles = C / 8, keyTiles = d.K / 8;
  // Tm, M and the token factors: solved here, or staged from the chunk's
  // record of the first launch (chunk_parallel, stageChunkExtras), or
  // solved by the producer warpgroup (solvedAhead).
  if (!workspace && !solvedAhead) {
    buildTensorCoreGram();
    buildSolveMatrices();
  }
  // KDA: q and k decayed per key, the update's keys to the chunk's end
  // (KeyDecayChunks.cpp); the record's factors then hold no decay.
  bool keyDecays = workspace && op.hasPerKeyDecay();
  if (keyDecays)
    decayKeys();
  Value updateKeys = keyDecays ? tailStage : kStage;
  SmallVector<Value> S(state.begin(), state.end());
  // A warp holds rowTiles tiles of 16 V columns (columns_per_lane = 2
  // rowTiles): tile i's rows g and g + 8 are the lane's columns v0 + 2i and
  // v0 + 2i + 1. The tiles share every operand but the state and v: each
  // fragment of q, k, Tm, M and each token factor loaded once serves
  // rowTiles mma (docs/cost-model.md#scan-row-tiles).
  int64_t rowTiles = s.rowTiles();
  Value g = arith::DivUIOp::create(b, loc, mmaLane, m.index(4));
  Value t2 = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, mmaLane, m.index(4)), m.index(2));
  Value col = arith::SubIOp::create(b, loc, v0, blockV0); // R g + 8 R warp
  OperandForm qk = qkForm(op, s), wide = wideForm(s);
  auto f32At = [&](Value buf, ValueRange idx) {
    return extractAll(m.toF32(loadVector(buf, idx, 1))).front();
  };
  auto pairAt = [&](Value buf, ValueRange idx) {
    return extractAll(m.toF32(loadVector(buf, idx, 2)));
  };
  auto factor = [&](int64_t which, Value j) -> Value {
    return memref::LoadOp::create(b, loc, factorStage,
                                  ValueRange{m.index(which), j});
  };
  // Fragment element e of token tile n holds token 8n + 2t + e % 2 and
  // column col + 2i + e / 2 of row tile i.
  auto tokenOf = [&](int64_t n, int64_t e) {
    return offset(t2, 8 * n + e % 2);
  };
  auto tileOf = [&](int64_t i, int64_t p) -> Fragment {
    return {at(S, 2 * i, 2 * p), at(S, 2 * i, 2 * p + 1),
            at(S, 2 * i + 1, 2 * p), at(S, 2 * i + 1, 2 * p + 1)};
  };
  Fragment zero = {m.f32(0.0), m.f32(0.0), m.f32(0.0), m.f32(0.0)};
  // [row tile][token tile] fragments.
  auto fragments = [&]() {
    return SmallVector<SmallVector<Fragment>>(
        rowTiles, SmallVector<Fragment>(tiles, zero));
  };

  // P = S0ᵀKᵀ and R = S0ᵀQᵀ: B[key][token] = k[token][key]. A segment
  // map has no o, so no R.
  bool outputs = segmentPart != SegmentPart::maps;
  SmallVector<SmallVector<Fragment>> P = fragments(), R = fragments();
  bool bf16 = s.bf16Products();
  bool ldm = ldmatrixOperands(s);
  // checkPrecision: bf16 products need whole m16n8k16 tiles, so the
  // ldmatrix.x4 loads below (two token or key tiles each) stay in kStage.
  assert((!bf16 || (tiles % 2 == 0 && keyTiles % 2 == 0)) &&
         "bf16 products with a staged_tokens or K not a multiple of 16");
  for (int64_t p = 0; bf16 && p < keyTiles; p += 2) { // 16 keys an mma
    SmallVector<SmallVector<Value>> a;
    for (int64_t i = 0; i < rowTiles; ++i) {
      Fragment lo = tileOf(i, p), hi = tileOf(i, p + 1);
      a.push_back(bf16Registers(
          b, loc, {lo[0], lo[1], lo[2], lo[3], hi[0], hi[1], hi[2], hi[3]}));
    }
    // A 32-bit pair a register, or token tiles n0, n0 + 1 (tiles is even:
    // staged_tokens % 16 == 0) by ldmatrix: tile i = (token tile
    // n0 + i / 2, keys 8 p + 8 (i % 2)), so registers 2 n and 2 n + 1 are
    // B[key][token] = k[token][key] of token tile n0 + n, keys 2t, 2t + 1
    // and 8 on, the two B registers.
    Value key = offset(t2, 8 * p);
    for (int64_t n = 0; !ldm && n < tiles; ++n) {
      Value token = offset(g, 8 * n);
      auto keyPairs = [&](Value buf) -> SmallVector<Value> {
        return {
            bf16Register(b, loc, loadVector(buf, {token, key}, 2)),
            bf16Register(b, loc, loadVector(buf, {token, offset(key, 8)}, 2))};
      };
      SmallVector<Value> kb = keyPairs(kStage);
      SmallVector<Value> qb = outputs ? keyPairs(qStage) : SmallVector<Value>();
      for (int64_t i = 0; i < rowTiles; ++i) {
        P[i][n] = productBF16(b, loc, a[i], kb, P[i][n]);
        if (outputs)
          R[i][n] = productBF16(b, loc, a[i], qb, R[i][n]);
      }
    }
    for (int64_t n0 = 0; ldm && n0 < tiles; n0 += 2) {
      auto corner = [&](Value i) {
        return blockCorner(m, i, n0, p, /*keysOuter=*/false);
      };
      SmallVector<Value, 4> kRegs =
          loadTiles(m, kStage, mmaLane, 4, false, corner);
      SmallVector<Value, 4> qRegs =
          outputs ? loadTiles(m, qStage, mmaLane, 4, false, corner)
                  : SmallVector<Value, 4>();
      for (int64_t n = n0; n < n0 + 2; ++n) {
        int64_t r = 2 * (n - n0);
        for (int64_t i = 0; i < rowTiles; ++i) {
          P[i][n] = productBF16(b, loc, a[i], {kRegs[r], kRegs[r + 1]},
                                P[i][n]);
          if (outputs)
            R[i][n] = productBF16(b, loc, a[i], {qRegs[r], qRegs[r + 1]},
                                  R[i][n]);
        }
      }
    }
  }
  for (int64_t p = 0; !bf16 && p < keyTiles; ++p) {
    SmallVector<Operand> a;
    for (int64_t i = 0; i < rowTiles; ++i)
      a.push_back(operand(m, asA(tileOf(i, p)), wide));
    Value key = offset(t2, 8 * p);
    for (int64_t n = 0; n < tiles; ++n) {
      Value token = offset(g, 8 * n);
      Operand kb = operand(m, pairAt(kStage, {token, key}), qk);
      std::optional<Operand> qb;
      if (outputs)
        qb = operand(m, pairAt(qStage, {token, key}), qk);
      for (int64_t i = 0; i < rowTiles; ++i) {
        P[i][n] = product(b, loc, a[i], kb, P[i][n]);
        if (outputs)
          R[i][n] = product(b, loc, a[i], *qb, R[i][n]);
      }
    }
  }
  // X = Vᵀ - P diag(gamma ik); Uᵀ = X Tmᵀ: B[j][i] = Tm[i][j].
  SmallVector<Value> gammaIk;
  for (int64_t p = 0; p < tiles; ++p)
    for (int64_t e = 0; e < 2; ++e)
      gammaIk.push_back(factor(0, tokenOf(p, e)));
  SmallVector<SmallVector<Operand>> X(rowTiles);
  for (int64_t i = 0; i < rowTiles; ++i)
    for (int64_t p = 0; p < tiles; ++p) {
      Fragment x;
      // Rows 2i and 2i + 1 share v's column permutation, which keeps column
      // pairs together (stagedColumn): one permuted column a fragment, so
      // the pairs still load as one word.
      Value vCol = stagedColumn(vStage, tokenOf(p, 0), offset(col, 2 * i));
      for (int64_t e = 0; e < 4; ++e) {
        Value j = tokenOf(p, e);
        Value v = f32At(vStage, {j, offset(vCol, e / 2)});
        if (transitionBlock) // a segment's transition: v = 0
          v = arith::SelectOp::create(b, loc, transitionBlock, m.f32(0.0), v);
        x[e] = m.sub(v, m.mul(P[i][p][e], gammaIk[2 * p + e % 2]));
      }
      X[i].push_back(operand(m, asA(x), wide));
    }
  auto solveB = [&](int64_t which, int64_t p, int64_t n) {
    return operand(m,
                   pairAt(solveStage, {m.index(which), offset(g, 8 * n),
                                       offset(t2, 8 * p)}),
                   wide);
  };
  SmallVector<SmallVector<Fragment>> U = fragments();
  for (int64_t n = 0; n < tiles; ++n)
    for (int64_t p = 0; p < tiles; ++p) {
      Operand tm = solveB(0, p, n);
      for (int64_t i = 0; i < rowTiles; ++i)
        U[i][n] = product(b, loc, X[i][p], tm, U[i][n]);
    }
  SmallVector<SmallVector<Operand>> UA(rowTiles);
  for (int64_t i = 0; i < rowTiles; ++i)
    for (int64_t p = 0; p < tiles; ++p)
      UA[i].push_back(operand(m, asA(U[i][p]), wide));
  // Oᵀ = R diag(gamma iq) + Uᵀ Mᵀ, stored for the chunk's real tokens.
  for (int64_t n = 0; outputs && n < tiles; ++n) {
    // Elements e and e + 2 are token 8n + 2t + e % 2: one factor each.
    Value gammaIq[2] = {factor(1, tokenOf(n, 0)), factor(1, tokenOf(n, 1))};
    SmallVector<Fragment> o(rowTiles);
    for (int64_t i = 0; i < rowTiles; ++i)
      for (int64_t e = 0; e < 4; ++e)
        o[i][e] = m.mul(R[i][n][e], gammaIq[e % 2]);
    for (int64_t p = 0; p < tiles; ++p) {
      Operand mb = solveB(1, p, n);
      for (int64_t i = 0; i < rowTiles; ++i)
        o[i] = product(b, loc, UA[i][p], mb, o[i]);
    }
    for (int64_t e = 0; e < 2; ++e) { // token 8n + 2t + e, the lane's columns
      Value j = tokenOf(n, e);
      SmallVector<Value> out;
      for (int64_t i = 0; i < rowTiles; ++i)
        out.append({o[i][e], o[i][e + 2]});
      if (valid) // a padding pool row writes zeros
        for (Value &x : out)
          x = arith::SelectOp::create(b, loc, valid, x, m.f32(0.0));
      Value inRange =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, j, count);
      auto ifOp = scf::IfOp::create(b, loc, inRange, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      storeVector(out, op.getO(),
                  {tokenRow, arith::AddIOp::create(b, loc, c, j), hv, v0});
    }
  }
  // S_Cᵀ = gamma_C S0ᵀ + (Uᵀ diag(ik tok1)) K: B[token][key] = k[token][key].
  // KDA: S_Cᵀ = S0ᵀ diag(Gamma_C) + Uᵀ diag(ik) K_tail, state element
  // (r, 2 q + e) of key 8 q + 2t + e.
  int64_t columns = *s.getColumnsPerLane();
  if (keyDecays) {
    for (int64_t q = 0; q < keyTiles; ++q) {
      SmallVector<Value> decay =
          extractAll(loadVector(lastDecayStage, {offset(t2, 8 * q)}, 2));
      for (int64_t r = 0; r < columns; ++r)
        for (int64_t e = 0; e < 2; ++e)
          at(S, r, 2 * q + e) = m.mul(decay[e], at(S, r, 2 * q + e));
    }
  } else {
    Value last = memref::LoadOp::create(b, loc, tokenStage,
                                        ValueRange{m.index(0), m.index(C - 1)});
    for (Value &e : S)
      e = m.mul(last, e);
  }
  // The update's A operands, each formed once for all key tiles: a tf32
  // tile of 8 tokens, or bf16 registers of 16 (two tiles).
  SmallVector<Value> ikTok1;
  for (int64_t p = 0; p < tiles; ++p)
    for (int64_t e = 0; e < 2; ++e)
      ikTok1.push_back(factor(2, tokenOf(p, e)));
  SmallVector<SmallVector<Operand>> Y(rowTiles);
  SmallVector<SmallVector<SmallVector<Value>>> Y16(rowTiles);
  for (int64_t i = 0; i < rowTiles; ++i) {
    SmallVector<Value> pending;
    for (int64_t p = 0; p < tiles; ++p) {
      Fragment y;
      for (int64_t e = 0; e < 4; ++e)
        y[e] = m.mul(U[i][p][e], ikTok1[2 * p + e % 2]);
      if (!bf16) {
        Y[i].push_back(operand(m, asA(y), wide));
        continue;
      }
      llvm::append_range(pending, y);
      if (p % 2 == 1)
        Y16[i].push_back(bf16Registers(b, loc, std::exchange(pending, {})));
    }
  }
  // In bf16, 16 tokens an mma: B[token][key] = k[token][key], the two
  // tokens of a register 2t and 2t + 1 of one key, two 16-bit loads and a
  // pack or (ldm) ldmatrix.trans of tiles
  // i = (token tile p + i % 2, key tile q + i / 2) for key tiles q and q + 1
  // (keyTiles is even: K % 16 == 0), registers 0-1 and 2-3.
  SmallVector<SmallVector<Value, 4>> kPairs; // [p / 2]: key tiles q, q + 1
  for (int64_t q = 0; q < keyTiles; ++q) {
    SmallVector<Fragment> acc;
    for (int64_t i = 0; i < rowTiles; ++i)
      acc.push_back(tileOf(i, q));
    Value key = offset(g, 8 * q);
    auto kAt = [&](int64_t p, int64_t e) {
      return extractAll(loadVector(updateKeys, {tokenOf(p, e), key}, 1))
          .front();
    };
    for (int64_t p = 0; bf16 && !ldm && p < tiles; p += 2) {
      SmallVector<Value> kb = bf16Registers(
          b, loc, {kAt(p, 0), kAt(p, 1), kAt(p + 1, 0), kAt(p + 1, 1)});
      for (int64_t i = 0; i < rowTiles; ++i)
        acc[i] = productBF16(b, loc, Y16[i][p / 2], kb, acc[i]);
    }
    for (int64_t p = 0; bf16 && ldm && q % 2 == 0 && p < tiles; p += 2) {
      if (p == 0)
        kPairs.clear();
      kPairs.push_back(loadTiles(m, updateKeys, mmaLane, 4, true, [&](Value i) {
        return blockCorner(m, i, p, q, /*keysOuter=*/true);
      }));
    }
    for (int64_t p = 0; bf16 && ldm && p < tiles; p += 2) {
      const SmallVector<Value, 4> &regs = kPairs[p / 2];
      int64_t r = 2 * (q % 2);
      for (int64_t i = 0; i < rowTiles; ++i)
        acc[i] =
            productBF16(b, loc, Y16[i][p / 2], {regs[r], regs[r + 1]}, acc[i]);
    }
    for (int64_t p = 0; !bf16 && p < tiles; ++p) {
      Value k0Row = f32At(updateKeys, {tokenOf(p, 0), key});
      Value k1Row = f32At(updateKeys, {tokenOf(p, 1), key});
      Operand kb = operand(m, {k0Row, k1Row}, qk);
      for (int64_t i = 0; i < rowTiles; ++i)
        acc[i] = product(b, loc, Y[i][p], kb, acc[i]);
    }
    for (int64_t i = 0; i < rowTiles; ++i) {
      at(S, 2 * i, 2 * q) = acc[i][0];
      at(S, 2 * i, 2 * q + 1) = acc[i][1];
      at(S, 2 * i + 1, 2 * q) = acc[i][2];
      at(S, 2 * i + 1, 2 * q + 1) = acc[i][3];
    }
  }
  return S;
}
