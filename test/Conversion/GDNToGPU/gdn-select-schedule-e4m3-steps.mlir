// RUN: gdn-opt %s -split-input-file -gdn-select-schedule | FileCheck %s
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<warps = 2>}" | FileCheck %s --check-prefix=PINNED

// The mapping of a verify into e4m3 per-token states (SGLang's verify over
// an fp8 pool, Qwen3-Next's heads; docs/cost-model.md#e4m3-step-states).
// On the tiny grid (N = 1) the bf16 verify's 2 columns x 4 lanes along V
// behind a producer warp; where 8 columns a lane fill the grid (N = 8,
// 64), 4 x 4 (16 keys a lane: a row's quantization over twice the
// elements, 16-byte stores), reductions side by side, no producer, 4
// warps a CTA. A pinned warps is kept.
// CHECK-LABEL: func.func @verify_fp8_n1
// CHECK: columns_per_lane = 2, lanes_along_v = 4, warps = 4, {{.*}}reductions = side_by_side, {{.*}}producer_stages = 2,
// CHECK-LABEL: func.func @verify_fp8_n8
// CHECK: columns_per_lane = 4, lanes_along_v = 4, warps = 4, {{.*}}reductions = side_by_side, {{.*}}producer_stages = 0,
// CHECK-LABEL: func.func @verify_fp8_n64
// CHECK: columns_per_lane = 4, lanes_along_v = 4, warps = 4, {{.*}}reductions = side_by_side, {{.*}}producer_stages = 0,
// PINNED-LABEL: func.func @verify_fp8_n64
// PINNED: columns_per_lane = 4, lanes_along_v = 4, warps = 2, {{.*}}reductions = side_by_side, {{.*}}producer_stages = 0,
func.func @verify_fp8_n1(%q: memref<1x4x16x128xbf16>, %k: memref<1x4x16x128xbf16>, %v: memref<1x4x32x128xbf16>,
                      %a: memref<1x4x32xbf16>, %A_log: memref<32xf32>, %dt_bias: memref<32xf32>,
                      %b: memref<1x4x32xbf16>, %idx: memref<1xi32>,
                      %iidx: memref<1xi32>, %s: memref<2x32x128x128xf8E4M3FN>,
                      %inter: memref<1x4x32x128x128xf8E4M3FN>, %isc: memref<1x4x32x128xf32>,
                      %sc: memref<2x32x128xf32>, %o: memref<1x4x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x4x16x128xbf16>) k(%k : memref<1x4x16x128xbf16>) v(%v : memref<1x4x32x128xbf16>)
      a(%a : memref<1x4x32xbf16>) A_log(%A_log : memref<32xf32>) dt_bias(%dt_bias : memref<32xf32>)
      b(%b : memref<1x4x32xbf16>) state_indices(%idx : memref<1xi32>)
      intermediate_state_indices(%iidx : memref<1xi32>)
      initial_state(%s : memref<2x32x128x128xf8E4M3FN>)
      intermediate_states(%inter : memref<1x4x32x128x128xf8E4M3FN>)
      intermediate_state_scale(%isc : memref<1x4x32x128xf32>)
      state_scale(%sc : memref<2x32x128xf32>) o(%o : memref<1x4x32x128xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @verify_fp8_n8(%q: memref<8x4x16x128xbf16>, %k: memref<8x4x16x128xbf16>, %v: memref<8x4x32x128xbf16>,
                      %a: memref<8x4x32xbf16>, %A_log: memref<32xf32>, %dt_bias: memref<32xf32>,
                      %b: memref<8x4x32xbf16>, %idx: memref<8xi32>,
                      %iidx: memref<8xi32>, %s: memref<9x32x128x128xf8E4M3FN>,
                      %inter: memref<8x4x32x128x128xf8E4M3FN>, %isc: memref<8x4x32x128xf32>,
                      %sc: memref<9x32x128xf32>, %o: memref<8x4x32x128xbf16>) {
  gdn.recurrent q(%q : memref<8x4x16x128xbf16>) k(%k : memref<8x4x16x128xbf16>) v(%v : memref<8x4x32x128xbf16>)
      a(%a : memref<8x4x32xbf16>) A_log(%A_log : memref<32xf32>) dt_bias(%dt_bias : memref<32xf32>)
      b(%b : memref<8x4x32xbf16>) state_indices(%idx : memref<8xi32>)
      intermediate_state_indices(%iidx : memref<8xi32>)
      initial_state(%s : memref<9x32x128x128xf8E4M3FN>)
      intermediate_states(%inter : memref<8x4x32x128x128xf8E4M3FN>)
      intermediate_state_scale(%isc : memref<8x4x32x128xf32>)
      state_scale(%sc : memref<9x32x128xf32>) o(%o : memref<8x4x32x128xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @verify_fp8_n64(%q: memref<64x4x16x128xbf16>, %k: memref<64x4x16x128xbf16>, %v: memref<64x4x32x128xbf16>,
                      %a: memref<64x4x32xbf16>, %A_log: memref<32xf32>, %dt_bias: memref<32xf32>,
                      %b: memref<64x4x32xbf16>, %idx: memref<64xi32>,
                      %iidx: memref<64xi32>, %s: memref<65x32x128x128xf8E4M3FN>,
                      %inter: memref<64x4x32x128x128xf8E4M3FN>, %isc: memref<64x4x32x128xf32>,
                      %sc: memref<65x32x128xf32>, %o: memref<64x4x32x128xbf16>) {
  gdn.recurrent q(%q : memref<64x4x16x128xbf16>) k(%k : memref<64x4x16x128xbf16>) v(%v : memref<64x4x32x128xbf16>)
      a(%a : memref<64x4x32xbf16>) A_log(%A_log : memref<32xf32>) dt_bias(%dt_bias : memref<32xf32>)
      b(%b : memref<64x4x32xbf16>) state_indices(%idx : memref<64xi32>)
      intermediate_state_indices(%iidx : memref<64xi32>)
      initial_state(%s : memref<65x32x128x128xf8E4M3FN>)
      intermediate_states(%inter : memref<64x4x32x128x128xf8E4M3FN>)
      intermediate_state_scale(%isc : memref<64x4x32x128xf32>)
      state_scale(%sc : memref<65x32x128xf32>) o(%o : memref<64x4x32x128xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
