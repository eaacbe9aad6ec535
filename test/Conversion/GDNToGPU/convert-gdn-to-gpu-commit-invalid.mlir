// RUN: gdn-opt %s -split-input-file -convert-gdn-to-gpu -verify-diagnostics
// RUN: not gdn-opt %s -split-input-file -convert-gdn-to-gpu="chip=sm_70" 2>&1 | FileCheck %s --check-prefix=CHIP
// A gdn.commit the grid cannot take, or for a chip the pass does not build
// for, gets a diagnostic, not a crash.

// CHIP: error: 'gdn.commit' op cannot be lowered to the GPU: unsupported chip 'sm_70' (supported: sm_80, sm_86, sm_87, sm_89, sm_90, sm_90a, sm_100, sm_100a)

func.func @too_many_rows(%buf: memref<70000x1x1x8x4xf32>, %acc: memref<70000xi32>, %s: memref<70000x1x8x4xf32>) {
  // expected-error @+1 {{cannot be lowered to the GPU: N = 70000 and HV = 1 must each be at most 65535 (grid limits)}}
  gdn.commit intermediate_states(%buf : memref<70000x1x1x8x4xf32>) accepted(%acc : memref<70000xi32>) state(%s : memref<70000x1x8x4xf32>)
  return
}

// -----

func.func @fp8_kv(%buf: memref<2x3x1x8x4xf32>, %acc: memref<2xi32>, %sc: memref<2x1x4xf32>, %s: memref<2x1x8x4xf8E4M3FN>) {
  // expected-error @+1 {{cannot be lowered to the GPU: an f8E4M3FN pool in layout kv (its row scales run across the strided dimension); use layout vk, or the CPU lowering}}
  gdn.commit intermediate_states(%buf : memref<2x3x1x8x4xf32>) accepted(%acc : memref<2xi32>) state_scale(%sc : memref<2x1x4xf32>) state(%s : memref<2x1x8x4xf8E4M3FN>)
  return
}

// -----

// A buffer of more than 2^40 elements, refused before the copy plan's
// arithmetic on its sizes.
func.func @commit(%b: memref<2x3x4x4611686018427387904x16xf32>, %acc: memref<2xi32>,
                  %s: memref<2x4x4611686018427387904x16xf32>) {
  // expected-error @+1 {{'gdn.commit' op cannot be lowered to the GPU: operand #0}}
  gdn.commit intermediate_states(%b : memref<2x3x4x4611686018427387904x16xf32>) accepted(%acc : memref<2xi32>)
      state(%s : memref<2x4x4611686018427387904x16xf32>)
  return
}
