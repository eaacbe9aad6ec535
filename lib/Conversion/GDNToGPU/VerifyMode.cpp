//===- VerifyMode.cpp - Replay or snapshots for a speculative round ------===//
//
// Small named rules, first match wins; the numbers behind each are in
// docs/cost-model.md#replay-or-snapshots.
//
//===----------------------------------------------------------------------===//
#include "gdn/Conversion/GDNToGPU/VerifyMode.h"

using namespace mlir;
using namespace mlir::gdn;

VerifyMode gdn::chooseVerifyMode(const VerifyRound &r) {
  double a = r.expectedAccepted;
  bool narrow = r.stateBytes < 4;
  // A tree's verify stores its parents' states anyway: replay saves no
  // verify bytes there.
  if (r.tree)
    return VerifyMode::Snapshots;
  // A replay of more steps is refused on the GPU (ReplayToGPU.cpp).
  if (r.T > kMaxReplaySteps)
    return VerifyMode::Snapshots;
  // Many rows: bandwidth-bound, and a replay round moves fewer bytes.
  if (r.N >= 64)
    return VerifyMode::Replay;
  // One row of one layer: latency-bound, the snapshot verify's one launch
  // beats verify + replay once a token is accepted (always at 16 bits).
  if (r.N == 1 && r.layers == 1 && (narrow || a >= 1))
    return VerifyMode::Snapshots;
  // 16-bit states of few rows accepting much: the replay's token math
  // costs more than the small snapshots save.
  bool few = r.N == 1 || (r.N <= 8 && r.T <= 8);
  bool much = a >= r.T || (r.layers == 1 && 2 * a >= r.T);
  if (narrow && few && much)
    return VerifyMode::Snapshots;
  return VerifyMode::Replay;
}
