//===- TileIO.h - the state tile and the outputs in and out -----*- C++ -*-===//
//
// The state tile of a thread in one of two mappings: the register mapping
// of KernelContext.h (R columns x KL keys, 16-byte vectors along the
// contiguous dimension) or, with solve = tensor_cores, the m16n8k8
// accumulator fragments (TensorCoreSolve.cpp has the fragment layout). Loads
// and stores of the initial, final and per-token states, an EAGLE tree's
// parent state, and o. Private to convert-gdn-to-gpu.
//
//===----------------------------------------------------------------------===//
#ifndef GDN_LIB_CONVERSION_GDNTOGPU_TILEIO_H
#define GDN_LIB_CONVERSION_GDNTOGPU_TILEIO_H

#include "KernelFeatures.h"

namespace mlir {
namespace gdn {

class TileIO : public KernelFeatures {
public:
  using KernelFeatures::KernelFeatures;

protected:
  /// Element (r, j) of a register tile: V column r, key j of the lane.
  Value &at(SmallVectorImpl<Value> &tile, int64_t r, int64_t j) {
    return tile[r * kPerLane + j];
  }

  /// This lane's tile of the state at `prefix` + (V, K positions), widened
  /// to f32: 16-byte loads along the contiguous dimension, the exact
  /// elements storeTile writes. With `keep` (i1), zeros where it is false,
  /// selected on the loaded words (one select a 32-bit word, not an
  /// element). A quantized `src` is multiplied by its rows' scales, or,
  /// given `rowScales`, left in units of them (element (r, j) stands for
  /// rowScales[r] x it) with the R scales returned there.
  SmallVector<Value> loadTile(Value src, SmallVector<Value> prefix,
                              Value keep = {},
                              SmallVector<Value> *rowScales = nullptr);

  /// `raw` (a vector) where `keep`, else zeros, a 32-bit word at a time.
  Value keepOrZero(Value keep, Value raw);

  /// Stores the tile at `prefix` + (this lane's V and K positions), in the
  /// layout, 16-byte vectors along the contiguous dimension; under `cond`
  /// (uniform across the warp). An f8E4M3FN `dst` (a quantized state,
  /// whose scales are scalesOf(dst) at `prefix` + V) is stored quantized a
  /// row at a time (quantizeRows) with its scales.
  void storeTile(ValueRange results, Value dst, SmallVector<Value> prefix,
                 Value cond);

  /// storeVector of a state's `elements` (consecutive along dst's last
  /// dimension from `idx`), each rounded stochastically first where the op
  /// asks for it and `dst` is f8E4M3FN (KernelMath::e4m3Stochastic).
  void storeRounded(SmallVector<Value> elements, Value dst,
                    SmallVector<Value> idx);

  /// Whether `state` is f8E4M3FN: loaded times its row's scale and stored
  /// quantized (docs/math.md §6).
  static bool isScaled(Value state);
  /// The row scales of an f8E4M3FN state operand: intermediate_state_scale
  /// for intermediate_states, checkpoint_scale for state_checkpoints, else
  /// state_scale. A tile at `prefix` + (V, K
  /// positions) has its R scales at `prefix` + v0.
  Value scalesOf(Value state);
  SmallVector<Value> scaleIndex(ArrayRef<Value> prefix);
  /// Quantizes each of this lane's R rows of `tile` in place (times 448 /
  /// the row's max |S| over all its lanes) and returns the R scales.
  SmallVector<Value> quantizeRows(SmallVector<Value> &tile);
  /// For the R rows' maxima `amax` (each the same on the lanes that share
  /// the rows): {amax / 448, 448 / amax} of every row, one division a lane
  /// and 2R indexed shuffles (needs 2R <= lanesAlongK(); used from R = 2).
  std::pair<SmallVector<Value>, SmallVector<Value>>
  rowQuotientsAcrossLanes(ArrayRef<Value> amax);

  /// The state tile as m16n8k8 accumulator fragments: with (g, t) = (lane /
  /// 4, lane % 4), element r * K/4 + j is S[key 8 (j / 2) + 2t + j % 2]
  /// [column v0 + r] (v0 = the warp's first column + R g, R =
  /// columns_per_lane, 2 or 4). A quantized state
  /// is scaled by loadTile and quantized by storeTile, a column's max over
  /// the 4 lanes of its quad. `src` / `dst` is [..., V, K] where `vk`
  /// (the op's layout, or a segment map's f32 workspace), else [..., K, V].
  SmallVector<Value> loadFragments(Value src, SmallVector<Value> prefix,
                                   bool vk);
  void storeFragments(ArrayRef<Value> tile, Value dst,
                      SmallVector<Value> prefix, bool vk);

  /// S <- initial state (or 0), 16-byte loads along the contiguous dimension.
  /// A pool's padding row (slot < 0) starts from 0: behind a branch, or
  /// (`branchless`) by loading slot 0 and selecting 0, which keeps the
  /// kernel's entry one block that ptxas can schedule across. Given
  /// `rowScales`, a quantized state stays in units of its row scales
  /// (loadTile), returned there; they stay empty for any other state.
  SmallVector<Value> loadState(bool branchless = false,
                               SmallVector<Value> *rowScales = nullptr);

  /// The final state, after the launch hook of launch =
  /// programmatic_after_recurrence.
  void storeState(ValueRange results) {
    if (s.launchMode() == LaunchMode::programmatic_after_recurrence)
      launchDependents();
    if (Value fin = op.getFinalState())
      storeTile(results, fin, {stateRow, hv}, valid);
  }

  /// The state after token t into intermediate_states[row, t - lo, hv, ...]
  /// (verify), skipped for padding rows, rows without a slot and, in varlen,
  /// steps past the buffer.
  void storeIntermediate(Value t, ValueRange tile);

  /// After the sequence's first `done` tokens: the state into its
  /// state_checkpoints row when `done` is a positive multiple of
  /// checkpoint_interval (KernelMath::emitCheckpointRow); no-op without
  /// checkpoints.
  void storeCheckpoint(Value done, ValueRange tile);

  /// EAGLE tree: the state token t starts from, given its i32 `source`
  /// (KernelMath::emitParentSource): the carried tile, the parent's stored
  /// state intermediate_states[row, p] (this thread reads back exactly the
  /// elements it stored at step p, so program order suffices: no barrier),
  /// or the initial state (a root).
  SmallVector<Value> startState(Value source, ValueRange carried);

  /// The i32 parent source of token t (KernelMath::emitParentSource).
  Value parentSource(Value t) {
    return m.emitParentSource(op, n, arith::SubIOp::create(b, loc, t, tokenLo),
                              interValid);
  }

  /// o[t] for this lane's R columns (zeros for a padding row), written by the
  /// lanes of key group 0 (all lanes hold the sums).
  void storeOutputs(Value t, SmallVector<Value> outputs);
};

} // namespace gdn
} // namespace mlir

#endif // GDN_LIB_CONVERSION_GDNTOGPU_TILEIO_H
