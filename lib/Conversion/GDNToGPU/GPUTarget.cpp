//===- GPUTarget.cpp - What the GPU lowering knows of each chip -----------===//
#include "gdn/Conversion/GDNToGPU/GPUTarget.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::gdn;

// Every supported chip, in the order diagnostics list them. Other chip names
// would reach LLVM unchecked (unknown processors abort there), hence a closed
// list. sm_89 takes PTX ISA 8.1: NVPTX selects its cvt with e4m3x2 operands
// (an e4m3 state) from there on, and aborts on them under 8.0.
// clang-format off
static constexpr GPUTarget kGPUTargets[] = {
    // chip     cc  arch   PTX      SMs  smem          bulk   gdc    maxnreg mma   e4m3  measured
    {"sm_80", 80, false, "+ptx80", 108, 163 * 1024, false, false, false, true, false, false}, // A100
    {"sm_86", 86, false, "+ptx80", 84, 99 * 1024, false, false, false, true, false, false},   // RTX A6000, 3090
    {"sm_87", 87, false, "+ptx80", 16, 163 * 1024, false, false, false, true, false, false},  // Jetson AGX Orin
    {"sm_89", 89, false, "+ptx81", 128, 99 * 1024, false, false, false, true, true, false},   // RTX 4090, L40
    {"sm_90", 90, false, "+ptx80", 132, 227 * 1024, true, true, false, true, true, false},    // H100 SXM, H200
    {"sm_90a", 90, true, "+ptx80", 132, 227 * 1024, true, true, true, true, true, true},      // H100 SXM, H200
    {"sm_100", 100, false, "+ptx86", 148, 227 * 1024, true, true, false, true, true, false},  // B200
    {"sm_100a", 100, true, "+ptx86", 148, 227 * 1024, true, true, true, true, true, false},   // B200
};
// clang-format on

const GPUTarget *gdn::lookupGPUTarget(StringRef chip) {
  const GPUTarget *row = llvm::find_if(
      kGPUTargets, [&](const GPUTarget &t) { return t.chip == chip; });
  return row == std::end(kGPUTargets) ? nullptr : row;
}

std::string gdn::supportedGPUChips() {
  return llvm::join(
      llvm::map_range(kGPUTargets, [](const GPUTarget &t) { return t.chip; }),
      ", ");
}

const GPUTarget *gdn::chipForDevice(int major, int minor) {
  // A capability is major.minor with one minor digit (no row reads -1.99
  // as 8.9).
  if (major < 0 || major > 100 || minor < 0 || minor > 9)
    return nullptr;
  const GPUTarget *found = nullptr;
  for (const GPUTarget &t : kGPUTargets)
    if (t.computeCapability == major * 10 + minor && (!found || t.archSpecific))
      found = &t;
  return found;
}
