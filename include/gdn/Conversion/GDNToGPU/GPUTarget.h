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
  /// CUDA compute capability, major * 10 + minor (sm_90 and sm_90a: 90).
  int computeCapability;
  /// Arch-specific features (the "a" variant): among the rows of one
  /// compute capability, the chip a device of it gets (chipForDevice).
  bool archSpecific;
  /// Features of the #nvvm.target: the PTX ISA version the kernels need on
  /// this chip ("+ptx80"; Blackwell's processors need PTX 8.6).
  llvm::StringLiteral ptxFeatures;
  /// Multiprocessors of the largest part of the chip (H100 SXM / H200: 132;
  /// A100: 108; B200: 148): the cost model's default sm-count.
  int64_t smCount;
  /// Shared memory a CTA may use, static plus opted-in dynamic, in bytes
  /// (CUDA's sharedMemPerBlockOptin: H100 / H200 / B200 227 KiB, A100 and
  /// Orin 163 KiB, sm_86 / sm_89 99 KiB).
  int64_t maxSharedBytes;
  /// cp.async.bulk with mbarrier transactions, cp.async.bulk.prefetch and
  /// prefetch.global.L2 as LLVM selects it (sm_90 on): a producer warp and
  /// the L2 prefetches.
  bool bulkAsyncCopies;
  /// griddepcontrol (sm_90 on): launch = programmatic*.
  bool gridDependencyControl;
  /// setmaxnreg (sm_90a, sm_100a): consumer_registers.
  bool setMaxNReg;
  /// mma.sync m16n8k8 with tf32 operands (sm_80 on): solve = tensor_cores.
  bool mmaSyncTF32;
  /// cvt between f32 pairs and e4m3x2 (sm_89 on, PTX 7.8): an f8E4M3FN
  /// state.
  bool e4m3Conversions;
  /// Whether kernels for this chip have run on one (a row without is built
  /// and assembled by ptxas in the tests, never run).
  bool measured;
};

/// The row of `chip`, or null when gdn does not build for it.
const GPUTarget *lookupGPUTarget(llvm::StringRef chip);

/// "sm_80, sm_86, ..., sm_90a": the supported chips, for diagnostics.
std::string supportedGPUChips();

/// The chip gdn builds for on a device of compute capability major.minor:
/// the arch-specific row of that capability if there is one, else its row;
/// null when no row has it.
const GPUTarget *chipForDevice(int major, int minor);

} // namespace gdn
} // namespace mlir

#endif // GDN_CONVERSION_GDNTOGPU_GPUTARGET_H
