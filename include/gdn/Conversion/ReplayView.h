//===- ReplayView.h - gdn.replay_commit as a gdn.recurrent ------*- C++ -*-===//
//
// Both lowerings build a gdn.replay_commit from the recurrence's own pieces,
// so that the replayed tokens run the arithmetic of a plain gdn.recurrent
// (the op's exactness contract): for one layer, the windows are viewed as
// the token operands of a gdn.recurrent (q = k = the k window, v and o = the
// v window, g and beta the gate windows, the state in place), which the
// lowering reads but never lowers on its own; ReplayRows says how its rows
// differ from a plain recurrence's.
//
//===----------------------------------------------------------------------===//
#ifndef GDN_CONVERSION_REPLAYVIEW_H
#define GDN_CONVERSION_REPLAYVIEW_H

#include "gdn/Dialect/GDN/IR/GDNOps.h"

#include "mlir/IR/Builders.h"

namespace mlir {
namespace gdn {
class KernelMath;

/// How a replay's rows differ from the view's (a plain recurrence over
/// `slots` sequences of L tokens): there are `rows` rows (the accepted
/// counts), row n reads its tokens from the window row of its slot (the
/// state's row), runs the first clamp(accepted[n], 0, L) of them (of a
/// tree: the path to step clamp(accepted[n], 0, P) - 1), touches no state
/// when that is 0, and stores no output.
struct ReplayRows {
  Value accepted;        ///< [N] i32 or i64
  int64_t rows;          ///< N
  int64_t steps;         ///< L
  Value parents = {};    ///< [N, P] i32 or i64 (EAGLE tree), or null
  int64_t treeSteps = 0; ///< P
};

/// The recurrence view of layer `layer` (an index) of `op`, built at `b`'s
/// insertion point from `operands`, the values standing for the op's
/// operands in their order (k_window, v_window, g_window, beta_window,
/// accepted, state_indices or null, retrieve_parent_token or null,
/// state_scale or null, state): rank-reduced subviews at the
/// layer, the windows transposed to [slots, L, heads, ...]. The caller
/// erases the returned op once it has built the replay from it.
RecurrentOp buildReplayView(OpBuilder &b, ReplayCommitOp op,
                            ArrayRef<Value> operands, Value layer);

/// The operands of `op` in buildReplayView's order, null for absent ones.
inline SmallVector<Value> replayOperands(ReplayCommitOp op) {
  return {op.getKWindow(),
          op.getVWindow(),
          op.getGWindow(),
          op.getBetaWindow(),
          op.getAccepted(),
          op.getStateIndices(),
          op.getRetrieveParentToken(),
          op.getStateScale(),
          op.getState()};
}

/// Erases `view` and the views it alone used (buildReplayView's ops).
void eraseReplayView(RecurrentOp view);

/// ReplayRows of `op` with `accepted` and `parents` standing for its
/// accepted counts and parent table (null without one).
inline ReplayRows replayRows(ReplayCommitOp op, Value accepted,
                             Value parents) {
  ReplayCommitOp::Dims d = op.getDims();
  int64_t P =
      parents ? cast<ShapedType>(parents.getType()).getDimSize(1) : 0;
  return ReplayRows{accepted, d.N, d.L, parents, P};
}

/// The window steps row n may replay, as an index: clamp(accepted[n], 0, L)
/// (a tree's: clamp(accepted[n], 0, P)); steps >= it are never run.
Value emitReplayCount(KernelMath &m, const ReplayRows &replay, Value n);

/// A tree row's path (gdn.replay_commit): an i64 whose bit s is set when
/// window step s is on the path from the checkpoint to step count - 1
/// (0 when count is 0); null for a chain. Walks the parent table from the
/// last step, at most P loads, none outside row n's P entries.
Value emitReplayPath(KernelMath &m, const ReplayRows &replay, Value n,
                     Value count);

/// Whether window step `t` (an index) runs: t < count, or for a tree bit t
/// of `path`.
Value emitReplayRuns(KernelMath &m, Value t, Value count, Value path);

} // namespace gdn
} // namespace mlir

#endif // GDN_CONVERSION_REPLAYVIEW_H
