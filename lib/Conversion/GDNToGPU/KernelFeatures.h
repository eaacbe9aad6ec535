//===- KernelFeatures.h - hooks a schedule adds to a kernel -----*- C++ -*-===//
//
// The features a schedule adds at named points of every kernel form:
// programmatic dependent launch (launch = programmatic*) and the L2
// prefetches of a later CTA's state tile (state_prefetch_distance) or
// staged inputs (input_prefetch_distance). Private to convert-gdn-to-gpu
// (KernelContext.h).
//
//===----------------------------------------------------------------------===//
#ifndef GDN_LIB_CONVERSION_GDNTOGPU_KERNELFEATURES_H
#define GDN_LIB_CONVERSION_GDNTOGPU_KERNELFEATURES_H

#include "KernelContext.h"

#include <array>

namespace mlir {
namespace gdn {

class KernelFeatures : public KernelContext {
public:
  using KernelContext::KernelContext;

protected:
  /// The kernel's entry (enterKernel) with its launch hook: a launch =
  /// programmatic_at_start kernel lets the next one launch first thing.
  void enter();

  /// Schedule state_prefetch_distance > 0: thread 0 issues one bulk prefetch
  /// into L2 (cp.async.bulk.prefetch.L2) of the initial-state tile
  /// (blockColumns() rows of K, contiguous in vk) of the CTA that many CTAs
  /// later in launch order, if the grid has one (and, with a pool, its slot
  /// is >= 0). Called after the CTA's own state loads are issued.
  void prefetchLaterState();
  /// Schedule input_prefetch_distance > 0 (the tensor-core solve of a single
  /// chunk): thread t < T prefetches into L2 (prefetch.global.L2, a 128-byte
  /// line each) token t's q, k and v rows and gates of the CTA that many CTAs
  /// later in launch order, if the grid has one, before this CTA's own loads.
  void prefetchLaterInputs();
  /// Opens `if (tid < threads && the CTA `distance` later exists)` at the
  /// builder (the caller restores the insertion point) and returns that
  /// CTA's (V block, hv, n).
  std::array<Value, 3> laterBlock(int64_t threads, int64_t distance);
  /// Schedule launch = programmatic*: griddepcontrol.wait, where a thread has
  /// issued its initial-state loads and reads or writes nothing else yet (the
  /// previous kernel of the stream has then finished and its writes are
  /// visible).
  void waitForPreviousGrid();
  /// griddepcontrol.wait whatever the schedule's launch: the grid this one
  /// was launched beside has finished and its writes are visible.
  void waitForGrid();
  /// griddepcontrol.launch_dependents (the first thread of a CTA to run it
  /// counts for the CTA): at the kernel's start or, once the recurrence is
  /// done, before the final state store
  /// (LaunchMode::programmatic_after_recurrence).
  void launchDependents();
};

} // namespace gdn
} // namespace mlir

#endif // GDN_LIB_CONVERSION_GDNTOGPU_KERNELFEATURES_H
