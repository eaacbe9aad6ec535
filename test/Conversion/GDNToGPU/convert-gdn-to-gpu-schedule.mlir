// RUN: gdn-opt %s -split-input-file -gdn-select-schedule -convert-gdn-to-gpu | FileCheck %s
// The default schedule's cost model: V columns a lane = the most of 8, 4, 2, 1
// that still leaves >= 4096 warps (docs/cost-model.md#columns-per-lane: few
// columns hide latency at small N, more columns keep more loads in flight at
// large N).

// Qwen3-Next decode, N = 1: 32 x 128 value rows -> 1 column a lane over 2
// lanes along V (a grid this small: shallower reductions), 2048 warps, 16
// CTAs of 4 warps per head.
// CHECK-LABEL: func.func @decode_n1
// CHECK: gpu.launch_func @gdn_kernels::@decode_n1_recurrent blocks in (%c16, %c32{{.*}}, %c1{{.*}}) threads in (%c128,
func.func @decode_n1(%q: memref<1x1x16x128xbf16>, %k: memref<1x1x16x128xbf16>, %v: memref<1x1x32x128xbf16>,
                     %s: memref<1x32x128x128xf32>, %o: memref<1x1x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x1x16x128xbf16>) k(%k : memref<1x1x16x128xbf16>) v(%v : memref<1x1x32x128xbf16>)
      initial_state(%s : memref<1x32x128x128xf32>) final_state(%s : memref<1x32x128x128xf32>)
      o(%o : memref<1x1x32x128xbf16>) {state_layout = #gdn.layout<vk>}
  return
}

// -----

// N = 64: 8 columns a lane (32768 warps); bandwidth-bound, so CTAs of one
// warp: 16 per head.
// CHECK-LABEL: func.func @decode_n64
// CHECK: gpu.launch_func @gdn_kernels::@decode_n64_recurrent blocks in (%c16, %c32, %c64) threads in (%c32{{.*}},
func.func @decode_n64(%q: memref<64x1x16x128xbf16>, %k: memref<64x1x16x128xbf16>, %v: memref<64x1x32x128xbf16>,
                      %s: memref<64x32x128x128xf32>, %o: memref<64x1x32x128xbf16>) {
  gdn.recurrent q(%q : memref<64x1x16x128xbf16>) k(%k : memref<64x1x16x128xbf16>) v(%v : memref<64x1x32x128xbf16>)
      initial_state(%s : memref<64x32x128x128xf32>) final_state(%s : memref<64x32x128x128xf32>)
      o(%o : memref<64x1x32x128xbf16>) {state_layout = #gdn.layout<vk>}
  return
}

// -----

// Staged tokens (T = 4), N = 1: a warp's 8 V columns split 2 a lane over 4
// lanes along V (K trees 3 deep), 512 warps in CTAs of 4: 4 CTAs per head.
// CHECK-LABEL: func.func @mtp_n1
// CHECK: gpu.launch_func @gdn_kernels::@mtp_n1_recurrent blocks in (%c4, %c32{{.*}}, %c1{{.*}}) threads in (%c128,
func.func @mtp_n1(%q: memref<1x4x16x128xbf16>, %k: memref<1x4x16x128xbf16>, %v: memref<1x4x32x128xbf16>,
                  %s: memref<1x32x128x128xf32>, %o: memref<1x4x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x4x16x128xbf16>) k(%k : memref<1x4x16x128xbf16>) v(%v : memref<1x4x32x128xbf16>)
      initial_state(%s : memref<1x32x128x128xf32>) final_state(%s : memref<1x32x128x128xf32>)
      o(%o : memref<1x4x32x128xbf16>) {state_layout = #gdn.layout<vk>}
  return
}
