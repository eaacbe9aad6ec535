// RUN: not gdn-opt %s -convert-gdn-to-gpu="chip=sm_75" 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not gdn-opt %s -convert-gdn-to-gpu="chip=gfx90a" 2>&1 | FileCheck %s --check-prefix=BADCHIP
// RUN: not gdn-opt %s -gdn-select-schedule="schedule={#gdn.schedule<columns_per_lane = 3>}" -convert-gdn-to-gpu 2>&1 | FileCheck %s --check-prefix=ROWS
// RUN: not gdn-opt %s -gdn-select-schedule="schedule={#gdn.schedule<warps = 64>}" -convert-gdn-to-gpu 2>&1 | FileCheck %s --check-prefix=WARPS
// RUN: gdn-opt %s -gdn-select-schedule="chip=sm_80" -convert-gdn-to-gpu="chip=sm_80" | FileCheck %s --check-prefix=SM80
// Chip names LLVM would abort on (unknown processor, PTX ISA too old).
// RUN: not gdn-opt %s -convert-gdn-to-gpu="chip=sm_80a" 2>&1 | FileCheck %s --check-prefix=BADCHIP2
// RUN: not gdn-opt %s -convert-gdn-to-gpu="chip=sm_120" 2>&1 | FileCheck %s --check-prefix=BADCHIP2
// RUN: not gdn-opt %s --gdn-lower-to-ptx="chip=sm_9999" 2>&1 | FileCheck %s --check-prefix=BADCHIP2
// RUN: not gdn-opt %s -gdn-select-schedule="chip=sm_75" 2>&1 | FileCheck %s --check-prefix=BADCHIP2
// RUN: not gdn-opt %s -gdn-select-schedule="schedule={#gdn.schedule<warps = 1, staged_tokens = 64>}" -convert-gdn-to-gpu 2>&1 | FileCheck %s --check-prefix=STAGE
// RUN: not gdn-opt %s -gdn-select-schedule="schedule={#gdn.schedule<staged_tokens = 4096>}" -convert-gdn-to-gpu 2>&1 | FileCheck %s --check-prefix=STAGESMEM
// Bad pass options are diagnostics with a location, never an LLVM abort.

// CHIP: convert-gdn-to-gpu-options.mlir:[[@LINE+9]]:3: error: 'gdn.recurrent' op cannot be lowered to the GPU: unsupported chip 'sm_75' (supported: sm_80, sm_86, sm_87, sm_89, sm_90, sm_90a, sm_100, sm_100a)
// BADCHIP: error: 'gdn.recurrent' op cannot be lowered to the GPU: unsupported chip 'gfx90a'
// ROWS: error: 'gdn.recurrent' op cannot be lowered to the GPU: V = 8 is not a multiple of columns_per_lane * lanes_along_v * warps = 3
// WARPS: error: 'gdn.recurrent' op cannot be lowered to the GPU: columns_per_lane = 4 must be in [1, 16] and warps = 64 in [1, 32]
// BADCHIP2: error: 'gdn.recurrent' op cannot be lowered to the GPU: unsupported chip 'sm_
// STAGE: error: 'gdn.recurrent' op cannot be lowered to the GPU: staged_tokens = 64 exceeds the 32 threads of a CTA
// STAGESMEM: error: 'gdn.recurrent' op cannot be lowered to the GPU: staged_tokens = 4096 exceeds the
// SM80: #nvvm.target<chip = "sm_80", features = "+ptx80">
func.func @f(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x2x8xf32>, %o: memref<1x1x2x8xf32>) {
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x2x8xf32>) o(%o : memref<1x1x2x8xf32>)
  return
}
