// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="rows-per-warp=8" -convert-gdn-to-gpu -verify-diagnostics
// Shapes the register-tiled kernel cannot take get a diagnostic, not a crash.

func.func @k_not_multiple_of_key_lanes(%q: memref<1x1x1x48xf32>, %k: memref<1x1x1x48xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  // expected-error @+1 {{cannot be lowered to the GPU: K = 48 must be a multiple of 32 / v-lanes = 32}}
  gdn.recurrent q(%q : memref<1x1x1x48xf32>) k(%k : memref<1x1x1x48xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>) {state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @k_too_large(%q: memref<1x1x1x512xf32>, %k: memref<1x1x1x512xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  // expected-error @+1 {{cannot be lowered to the GPU: a thread would hold rows-per-warp * K / (32 / v-lanes) = 128 state values, more than 64 (K = 512 must be at most 256 for this schedule)}}
  gdn.recurrent q(%q : memref<1x1x1x512xf32>) k(%k : memref<1x1x1x512xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>) {state_layout = #gdn.layout<vk>}
  return
}
