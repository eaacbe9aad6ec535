//===- VerifyMode.h - Replay or snapshots for a speculative round -*- C++ -*-===//
//
// The cost model's choice between the two speculative-verify schemes for a
// caller's round: per-token state snapshots (gdn.recurrent with
// intermediate_states, then one gdn.commit a layer) or replay (gdn.recurrent
// with the replay windows, then one gdn.replay_commit for every layer). The
// rule and the measurements behind it: docs/cost-model.md#replay-or-snapshots.
//
//===----------------------------------------------------------------------===//
#ifndef GDN_CONVERSION_GDNTOGPU_VERIFYMODE_H
#define GDN_CONVERSION_GDNTOGPU_VERIFYMODE_H

#include <cstdint>

namespace mlir {
namespace gdn {

enum class VerifyMode { Snapshots, Replay };

/// The most window steps (L) gdn.replay_commit takes on the GPU: its token
/// loop unrolls every step, so the compile grows with L (about 1.2 s at
/// 256 on the 2-core development machine, 10 s and 1.3 GB at 1024, past
/// 18 GB at 4096). Speculative decoding's windows are a few dozen steps.
constexpr int64_t kMaxReplaySteps = 256;

/// One speculative round as the caller expects it.
struct VerifyRound {
  /// Bytes of a state element: 4 (f32) or 2 (bf16, f16).
  int64_t stateBytes;
  /// Draft tokens a row (>= 1), rows (>= 1), layers a round (>= 1).
  int64_t T, N, layers;
  /// The mean accepted tokens a row, in [0, T].
  double expectedAccepted;
  /// An EAGLE tree (its verify stores the parents' states either way).
  bool tree;
};

/// The scheme expected to be faster for `round` (a pure function; the
/// caller validated the fields); snapshots where T > kMaxReplaySteps. Measured on sm_90a (H200); every chip
/// takes this rule until another is measured.
VerifyMode chooseVerifyMode(const VerifyRound &round);

} // namespace gdn
} // namespace mlir

#endif // GDN_CONVERSION_GDNTOGPU_VERIFYMODE_H
