//===- KernelMath.h - fp32 math shared by the gdn lowerings -----*- C++ -*-===//
//
// The per-token scalar math of gdn.recurrent (gating, beta, norms) built once
// for both lowerings. The GPU flavour emits `ex2.approx.f32`/`lg2.approx.f32`
// (inline PTX) so that kernels never need libdevice, marks its fp32 arithmetic
// `contract` (fused multiply-adds) and takes approximate reciprocals and
// reciprocal square roots; the CPU flavour emits `math` dialect ops and
// rounds every operation.
//
//===----------------------------------------------------------------------===//
#ifndef GDN_CONVERSION_KERNELMATH_H
#define GDN_CONVERSION_KERNELMATH_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"

#include <tuple>

namespace mlir {
namespace gdn {
class RecurrentOp;
class CommitOp;

class KernelMath {
public:
  enum class Flavor { CPU, GPU };
  KernelMath(OpBuilder &b, Location loc, Flavor flavor)
      : b(b), loc(loc), flavor(flavor) {}

  Value f32(double c);
  Value index(int64_t c);
  Value i32(int64_t c);
  /// Builds every later f32/index/i32 constant once, at the start of `block`
  /// (which must dominate every use: a kernel's entry block). The unrolled
  /// GPU kernels use the same few dozen constants thousands of times; each
  /// op built is converted, CSEd and verified again and again.
  void uniqueConstantsIn(Block *block) { constantBlock = block; }
  /// Widens bf16/f16/f8E4M3FN (scalar or vector) to f32 (exactly); f32
  /// passes through.
  Value toF32(Value x);
  /// An f8E4M3FN vector of an even length (GPU flavour) as its pairs widened
  /// to vector<2xf16> by cvt.rn.f16x2.e4m3x2 (exact: e4m3 is a subset of
  /// f16), pair j holding elements 2j, 2j + 1.
  SmallVector<Value> e4m3HalfPairs(Value x);
  /// Rounds f32 (scalar or vector) to `type`'s element type (round to
  /// nearest even; f8E4M3FN saturates to +-448, docs/math.md §6).
  Value fromF32(Value x, Type elementType);
  /// The largest finite f8E4M3FN, 448.
  static constexpr double kE4M3Max = 448.0;
  /// The least row max amax that is quantized: 2^-119, the least power of
  /// two whose 448 / amax is finite in f32; a row below it (or NaN) stores
  /// as a row of zeros would (inverse 0), not 0 x inf = NaN.
  static constexpr double kE4M3MinAmax = 0x1p-119;
  /// A quantized state row's scale and its inverse from the row's max |S|
  /// `amax` (f32): {amax / 448, 448 / amax}, the inverse 0 for amax below
  /// kE4M3MinAmax or NaN (the row's elements then store 0); IEEE divisions
  /// in both flavours, so both lowerings store the same bits
  /// (docs/math.md §6).
  std::pair<Value, Value> e4m3Scale(Value amax);
  /// max(acc, |x|) of f32 scalars, acc >= 0 (NaN propagates).
  Value maxAbs(Value acc, Value x);
  /// Stochastic rounding of an f32 scalar `y` (a row element times 448 /
  /// amax) onto the e4m3 grid, as f32: one of the two neighbouring e4m3
  /// values, the upper with probability (y - lower) / (upper - lower),
  /// saturating at +-448, NaN kept; fromF32 then stores it exactly. The
  /// random bits are hash32(bits(y) ^ hash32(position)), `position` the
  /// element's i32 index (positionIn); docs/math.md §6.
  Value e4m3Stochastic(Value y, Value position);
  /// The row-major position of element `indices` of `memref` over its
  /// logical shape (strides and offset aside), as i32 (mod 2^32): the
  /// element's name for e4m3Stochastic, the same in both lowerings.
  Value positionIn(Value memref, ValueRange indices);
  /// lowbias32 (docs/math.md §6), a 32-bit integer hash: each input bit
  /// flips each output bit with probability about 1/2.
  Value hash32(Value x);

  Value add(Value x, Value y);
  Value sub(Value x, Value y);
  Value mul(Value x, Value y);
  Value div(Value x, Value y);
  Value exp(Value x);
  Value log(Value x);
  Value sqrt(Value x);
  /// 1 / x for x >= 1e-6 (GPU: rcp.approx.ftz.f32, 1 ulp; CPU: IEEE divide).
  Value rcp(Value x);
  /// 1 / sqrt(x) for x >= 1e-6 (GPU: rsqrt.approx.f32, relative error
  /// 2^-22.9; CPU: IEEE sqrt and divide).
  Value rsqrt(Value x);
  /// 1 / (1 + exp(-x)): 0 at -inf, 1 at +inf, never NaN for non-NaN x.
  Value sigmoid(Value x);
  /// log(1 + exp(x)) for x <= 20, x otherwise (FLA/SGLang threshold).
  Value softplus(Value x);
  /// g = -exp(A_log) * softplus(a + dt_bias); 0 where softplus is 0, so that
  /// exp(A_log) = inf gives -inf or 0, never NaN.
  Value fusedGate(Value a, Value aLog, Value dtBias);

  /// exp(g) of token (n, t) of value head hv: 1 without decay, exp(g) for a
  /// log-space g, exp(fusedGate(...)) for fused gating. Indices are `index`.
  /// With a per-key decay (KDA) `key` is the key channel k: g[n, t, hv, k],
  /// or a[n, t, hv, k] with dt_bias[hv * K + k].
  Value emitDecay(RecurrentOp op, Value n, Value t, Value hv,
                  Value key = Value());
  /// The same decay in log space: g itself (0 without decay,
  /// fusedGate(...) for fused gating), so that sums of gates never form
  /// products of exponentials (-inf stays -inf, never NaN).
  Value emitLogDecay(RecurrentOp op, Value n, Value t, Value hv,
                     Value key = Value());
  /// beta of token (n, t), head hv: 1, beta, or sigmoid(b) (2 sigmoid(b) with
  /// allow_neg_eigval). With a per-channel beta `column` is the V column.
  Value emitBeta(RecurrentOp op, Value n, Value t, Value hv,
                 Value column = Value());
  /// The decay factor from a gate input x already in f32 (scalar): exp(x)
  /// for a log-space g, exp(fusedGate(x, aLog, dtBias)) for fused gating.
  Value decayOf(RecurrentOp op, Value x, Value aLog, Value dtBias);
  /// log of decayOf: x for a log-space g, fusedGate(x, aLog, dtBias).
  Value logDecayOf(RecurrentOp op, Value x, Value aLog, Value dtBias);
  /// beta from its input x in f32: x (given), sigmoid(x) or 2 sigmoid(x).
  Value betaOf(RecurrentOp op, Value x);
  /// The gate inputs of token (n, t), head hv, as stored (loads only, no
  /// conversion or math), so a kernel can issue every load of a token before
  /// any math waits on one: the gate (g or a; null without decay), A_log and
  /// dt_bias (fused gating, else null) and beta or b (null without). One
  /// value a head: not for a per-key decay or a per-channel beta.
  /// gateDecay and gateBeta finish them: emitDecay and emitBeta in two steps.
  struct GateInputs {
    Value gate, aLog, dtBias, beta;
  };
  GateInputs loadGates(RecurrentOp op, Value n, Value t, Value hv);
  Value gateDecay(RecurrentOp op, const GateInputs &in);
  Value gateBeta(RecurrentOp op, const GateInputs &in);
  /// The state row of sequence n: n itself, or with a pool its slot
  /// state_indices[n] (as index) and `valid` = (0 <= slot < slots), an i1;
  /// `valid` is null without a pool. Padding rows (slot < 0) and slots past
  /// the pool touch no state.
  std::pair<Value, Value> emitStateSlot(RecurrentOp op, Value n);
  /// The i1 0 <= `i64Index` < dim 0 of `buffer` (one unsigned compare).
  Value inRange(Value i64Index, Value buffer);
  /// Where sequence n's tokens are: the batch row of the token tensors and
  /// the token range [lo, hi) along T: (n, 0, T), or with cu_seqlens
  /// (0, lo, hi) with lo = clamp(cu[n], 0, T) and hi = clamp(cu[n + 1], lo,
  /// T): no cu_seqlens reads or writes outside the packed tokens. Indices
  /// are `index`.
  std::tuple<Value, Value, Value> emitTokenRange(RecurrentOp op, Value n);
  /// The intermediate_states row of sequence n (n, or its
  /// intermediate_state_indices entry) and the i1 "write it" (null when
  /// always): false for padding rows (`poolValid` false) and rows outside
  /// [0, R).
  std::pair<Value, Value> emitIntermediateRow(RecurrentOp op, Value n,
                                              Value poolValid);
  /// Sequence n's rows of state_checkpoints, [lo, hi) with lo =
  /// clamp(checkpoint_offsets[n], 0, C) and hi = clamp(offsets[n + 1], lo,
  /// C): no row outside the buffer, whatever the offsets hold (`index`).
  std::pair<Value, Value> emitCheckpointRange(RecurrentOp op, Value n);
  /// After the sequence's first `done` tokens (index): the checkpoint row
  /// lo + done / interval - 1 and the i1 "write it": done a positive
  /// multiple of checkpoint_interval, the row below hi, and `poolValid`
  /// (null: always) true.
  std::pair<Value, Value> emitCheckpointRow(RecurrentOp op, Value lo, Value hi,
                                            Value done, Value poolValid);

  /// EAGLE tree verify (`retrieve_parent_token`): where the token at `step`
  /// (index, 0-based within sequence n) starts from, as an i32 "source":
  /// p >= 0 to reload intermediate_states[row, p] (a parent 0 <= p < step - 1),
  /// kCarried to keep the carried state (step 0, a chain p = step - 1, a row
  /// without a buffer row — `rowValid` false; null means always valid — or in
  /// varlen a step past the table), kRestart for the initial state (a root:
  /// p < 0, and p >= step, which is no tree and is treated as p = -1). The
  /// table load is clamped into [n, 0, steps), so no entry is out of bounds.
  static constexpr int32_t kCarried = -1, kRestart = -2;
  Value emitParentSource(RecurrentOp op, Value n, Value step, Value rowValid);

  /// Where row n of a gdn.commit goes: the state row `slot` (n, or
  /// state_indices[n]), the buffer row `row` (n, or
  /// intermediate_state_indices[n]) and `step` = min(accepted[n], T) - 1, all
  /// `index`, and `valid` (i1): 0 <= slot < slots, 0 <= row < R and
  /// accepted[n] >= 1.
  /// Only under `valid` are the others in range.
  struct CommitRow {
    Value slot, row, step, valid;
  };
  CommitRow emitCommitRow(CommitOp op, Value n);

  OpBuilder &builder() { return b; }
  Location location() { return loc; }

  /// memref[idx] of an i32 or i64 memref, sign-extended to i64.
  Value loadI64(Value memref, ValueRange idx);

private:
  /// `contract` for the GPU flavour (fma contraction), none for the CPU.
  arith::FastMathFlags contraction() const;
  /// f8E4M3FN (scalar or vector) to f32 and back (round to nearest even,
  /// saturating), in integer arithmetic: the CPU's conversion, and the
  /// GPU's for what is not a vector of pairs.
  Value e4m3ToF32(Value x);
  Value e4m3FromF32(Value x);
  /// The i32 constant v, a splat vector when `shape` is a vector.
  Value i32Like(Type shape, int64_t v);
  /// min(a, 448) of f32 a >= 0 (scalar or vector; a NaN gives 448).
  Value saturateE4M3(Value a);

  Value ptx(StringRef instruction, Value x);
  Value constant(TypedAttr value);
  OpBuilder &b;
  Location loc;
  Flavor flavor;
  Block *constantBlock = nullptr;
  llvm::DenseMap<Attribute, Value> constants; ///< in constantBlock
};

} // namespace gdn
} // namespace mlir

#endif // GDN_CONVERSION_KERNELMATH_H
