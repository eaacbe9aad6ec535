//===- GPUTarget.h - What the GPU lowering knows of each chip ---*- C++ -*-===//
//
// One row per chip the kernels are built and tested for (all PTX ISA 8.0
// targets of LLVM's NVPTX backend), read by the cost model, the legality
// checks and the kernels instead of comparing chip names. A new chip is a
// new row.
//
//===----------------------------------------------------------------------===//
#ifndef GDN_CONVERSION_GDNTOGPU_GPUTARGET_H
#define GDN_CONVERSION_GDNTOGPU_GPUTARGET_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace mlir {
namespace gdn {

struct GPUTarget {
  /// The NVPTX processor name, e.g. "sm_90a".
  llvm::StringLiteral chip;
  /// Multiprocessors of the largest part of the chip (H100 SXM / H200: 132;
  /// A100: 108): the cost model's default sm-count.
  int64_t smCount;
  /// cp.async.bulk with mbarrier transactions, cp.async.bulk.prefetch,
  /// prefetch.global.L2 as LLVM selects it, and griddepcontrol (sm_90 and
  /// sm_90a): a producer warp, the L2 prefetches and programmatic launch.
  bool bulkAsyncCopies;
  /// setmaxnreg (sm_90a only): consumer_registers.
  bool setMaxNReg;
};

/// The row of `chip`, or null when gdn does not build for it.
const GPUTarget *lookupGPUTarget(llvm::StringRef chip);

/// "sm_80, sm_86, ..., sm_90a": the supported chips, for diagnostics.
std::string supportedGPUChips();

} // namespace gdn
} // namespace mlir

#endif // GDN_CONVERSION_GDNTOGPU_GPUTARGET_H
