//===- GPUTarget.cpp - What the GPU lowering knows of each chip -----------===//
#include "gdn/Conversion/GDNToGPU/GPUTarget.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::gdn;

// Every supported chip, in the order diagnostics list them. Other chip names would reach LLVM unchecked (unknown processors abort
// there), hence a closed list.
static constexpr GPUTarget kGPUTargets[] = {
    // chip      SMs  bulk   setmaxnreg
    {"sm_80", 108, false, false}, // A100
    {"sm_86", 84, false, false},  // RTX A6000 / RTX 3090 class
    {"sm_87", 16, false, false},  // Jetson AGX Orin
    {"sm_89", 128, false, false}, // RTX 4090 / L40 class
    {"sm_90", 132, true, false},  // H100 SXM / H200
    {"sm_90a", 132, true, true},  // H100 SXM / H200, arch-specific features
};

const GPUTarget *gdn::lookupGPUTarget(StringRef chip) {
  const GPUTarget *row = llvm::find_if(
      kGPUTargets, [&](const GPUTarget &t) { return t.chip == chip; });
  return row == std::end(kGPUTargets) ? nullptr : row;
}

std::string gdn::supportedGPUChips() {
  return llvm::join(llvm::map_range(kGPUTargets,
                                    [](const GPUTarget &t) { return t.chip; }),
                    ", ");
}
