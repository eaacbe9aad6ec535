// RUN: gdn-opt %s -split-input-file | FileCheck %s
// RUN: gdn-opt %s -split-input-file | gdn-opt -split-input-file | FileCheck %s
// Round trip of a quantized state: f8E4M3FN states with their row scales
// (state_scale [rows, HV, V] f32).

// SGLang's pool decode on an fp8 pool, updated in place.
// CHECK-LABEL: func @pool
// CHECK: initial_state(%{{.*}} : memref<6x4x16x32xf8E4M3FN>) state_scale(%{{.*}} : memref<6x4x16xf32>) final_state(%{{.*}} : memref<6x4x16x32xf8E4M3FN>) o(
func.func @pool(%q: memref<3x1x2x32xbf16>, %v: memref<3x1x4x16xbf16>, %g: memref<3x1x4xf32>,
                %idx: memref<3xi32>, %s: memref<6x4x16x32xf8E4M3FN>, %sc: memref<6x4x16xf32>,
                %o: memref<3x1x4x16xbf16>) {
  gdn.recurrent q(%q : memref<3x1x2x32xbf16>) k(%q : memref<3x1x2x32xbf16>) v(%v : memref<3x1x4x16xbf16>)
      g(%g : memref<3x1x4xf32>) state_indices(%idx : memref<3xi32>)
      initial_state(%s : memref<6x4x16x32xf8E4M3FN>) state_scale(%sc : memref<6x4x16xf32>)
      final_state(%s : memref<6x4x16x32xf8E4M3FN>)
      o(%o : memref<3x1x4x16xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// The same with stochastic rounding of the stored pool.
// CHECK-LABEL: func @pool_stochastic
// CHECK: {qk_l2norm, state_layout = #gdn.layout<vk>, stochastic_rounding}
func.func @pool_stochastic(%q: memref<3x1x2x32xbf16>, %v: memref<3x1x4x16xbf16>, %g: memref<3x1x4xf32>,
                           %idx: memref<3xi32>, %s: memref<6x4x16x32xf8E4M3FN>, %sc: memref<6x4x16xf32>,
                           %o: memref<3x1x4x16xbf16>) {
  gdn.recurrent q(%q : memref<3x1x2x32xbf16>) k(%q : memref<3x1x2x32xbf16>) v(%v : memref<3x1x4x16xbf16>)
      g(%g : memref<3x1x4xf32>) state_indices(%idx : memref<3xi32>)
      initial_state(%s : memref<6x4x16x32xf8E4M3FN>) state_scale(%sc : memref<6x4x16xf32>)
      final_state(%s : memref<6x4x16x32xf8E4M3FN>)
      o(%o : memref<3x1x4x16xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>, stochastic_rounding}
  return
}

// -----

// A verify: the fp8 pool only read, bf16 per-token states; a kv layout.
// CHECK-LABEL: func @verify
// CHECK: initial_state(%{{.*}} : memref<2x4x32x16xf8E4M3FN>) intermediate_states(%{{.*}} : memref<2x3x4x32x16xbf16>) state_scale(%{{.*}} : memref<2x4x16xf32>) o(
func.func @verify(%q: memref<2x3x2x32xbf16>, %v: memref<2x3x4x16xbf16>, %s: memref<2x4x32x16xf8E4M3FN>,
                  %sc: memref<2x4x16xf32>, %inter: memref<2x3x4x32x16xbf16>, %o: memref<2x3x4x16xbf16>) {
  gdn.recurrent q(%q : memref<2x3x2x32xbf16>) k(%q : memref<2x3x2x32xbf16>) v(%v : memref<2x3x4x16xbf16>)
      initial_state(%s : memref<2x4x32x16xf8E4M3FN>) intermediate_states(%inter : memref<2x3x4x32x16xbf16>)
      state_scale(%sc : memref<2x4x16xf32>) o(%o : memref<2x3x4x16xbf16>)
  return
}
