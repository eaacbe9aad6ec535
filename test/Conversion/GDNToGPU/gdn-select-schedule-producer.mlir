// RUN: gdn-opt %s -split-input-file -gdn-select-schedule=chip=sm_80 | FileCheck %s --check-prefix=SM80
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule | FileCheck %s
// RUN: not gdn-opt %s -split-input-file -gdn-select-schedule="chip=sm_80 schedule={#gdn.schedule<producer_stages = 2>}" 2>&1 | FileCheck %s --check-prefix=PINNED

// Where the cost model's producer warp (verify on a tiny grid, N = 1) may
// not go: a chip
// without bulk async copies (sm_80: the default stays without one, a pinned
// one is a diagnostic), and a ring over 48 KiB (a per-key decay and f32
// inputs, 16 tokens a slot: no producer, the staged chunk alone fits).
// SM80-LABEL: func.func @verify
// SM80: producer_stages = 0,
// CHECK-LABEL: func.func @verify
// CHECK: producer_stages = 2,
// PINNED: error: 'gdn.recurrent' op cannot be lowered to the GPU: producer_stages = 2 needs bulk async copies and mbarrier transactions (sm_90 on)
func.func @verify(%q: memref<1x4x16x128xbf16>,
    %k: memref<1x4x16x128xbf16>,
    %v: memref<1x4x32x128xbf16>,
    %a: memref<1x4x32xbf16>,
    %A_log: memref<32xf32>,
    %dt_bias: memref<32xf32>,
    %b: memref<1x4x32xbf16>,
    %state_indices: memref<1xi32>,
    %intermediate_state_indices: memref<1xi32>,
    %pool: memref<12x32x128x128xbf16>,
    %intermediate: memref<12x4x32x128x128xbf16>,
    %o: memref<1x4x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x4x16x128xbf16>)
      k(%k : memref<1x4x16x128xbf16>)
      v(%v : memref<1x4x32x128xbf16>)
      a(%a : memref<1x4x32xbf16>)
      A_log(%A_log : memref<32xf32>)
      dt_bias(%dt_bias : memref<32xf32>)
      b(%b : memref<1x4x32xbf16>)
      state_indices(%state_indices : memref<1xi32>)
      intermediate_state_indices(%intermediate_state_indices : memref<1xi32>)
      initial_state(%pool : memref<12x32x128x128xbf16>)
      intermediate_states(%intermediate : memref<12x4x32x128x128xbf16>)
      o(%o : memref<1x4x32x128xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// CHECK-LABEL: func.func @kda_verify
// CHECK: gdn.schedule = #gdn.schedule<columns_per_lane = 2, {{.*}}staged_tokens = 16, {{.*}}producer_stages = 0, {{.*}}launch = ordinary, segments = 1, concurrent_solves = 0>
func.func @kda_verify(%q: memref<1x16x32x128xf32>,
    %k: memref<1x16x32x128xf32>,
    %v: memref<1x16x32x128xf32>,
    %g: memref<1x16x32x128xf32>,
    %beta: memref<1x16x32xf32>,
    %s: memref<1x32x128x128xf32>,
    %inter: memref<1x16x32x128x128xf32>,
    %o: memref<1x16x32x128xf32>) {
  gdn.recurrent q(%q : memref<1x16x32x128xf32>)
      k(%k : memref<1x16x32x128xf32>)
      v(%v : memref<1x16x32x128xf32>)
      g(%g : memref<1x16x32x128xf32>)
      beta(%beta : memref<1x16x32xf32>)
      initial_state(%s : memref<1x32x128x128xf32>)
      intermediate_states(%inter : memref<1x16x32x128x128xf32>)
      o(%o : memref<1x16x32x128xf32>)
      {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// EAGLE trees (a parent table), like every verify, take the producer on a
// tiny grid only: N = 1 with one, N = 8 (4096 warps of 8 columns) and 64
// without.
// CHECK-LABEL: func.func @verify_tree_n1
// CHECK: producer_stages = 2,
func.func @verify_tree_n1(%q: memref<1x4x16x128xbf16>,
    %k: memref<1x4x16x128xbf16>,
    %v: memref<1x4x32x128xbf16>,
    %a: memref<1x4x32xbf16>,
    %A_log: memref<32xf32>,
    %dt_bias: memref<32xf32>,
    %b: memref<1x4x32xbf16>,
    %state_indices: memref<1xi32>,
    %intermediate_state_indices: memref<1xi32>,
    %retrieve_parent_token: memref<1x4xi32>,
    %pool: memref<12x32x128x128xbf16>,
    %intermediate: memref<12x4x32x128x128xbf16>,
    %o: memref<1x4x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x4x16x128xbf16>)
      k(%k : memref<1x4x16x128xbf16>)
      v(%v : memref<1x4x32x128xbf16>)
      a(%a : memref<1x4x32xbf16>)
      A_log(%A_log : memref<32xf32>)
      dt_bias(%dt_bias : memref<32xf32>)
      b(%b : memref<1x4x32xbf16>)
      state_indices(%state_indices : memref<1xi32>)
      intermediate_state_indices(%intermediate_state_indices : memref<1xi32>)
      retrieve_parent_token(%retrieve_parent_token : memref<1x4xi32>)
      initial_state(%pool : memref<12x32x128x128xbf16>)
      intermediate_states(%intermediate : memref<12x4x32x128x128xbf16>)
      o(%o : memref<1x4x32x128xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// CHECK-LABEL: func.func @verify_tree_n64
// CHECK: producer_stages = 0,
func.func @verify_tree_n64(%q: memref<64x4x16x128xbf16>,
    %k: memref<64x4x16x128xbf16>,
    %v: memref<64x4x32x128xbf16>,
    %a: memref<64x4x32xbf16>,
    %A_log: memref<32xf32>,
    %dt_bias: memref<32xf32>,
    %b: memref<64x4x32xbf16>,
    %state_indices: memref<64xi32>,
    %intermediate_state_indices: memref<64xi32>,
    %retrieve_parent_token: memref<64x4xi32>,
    %pool: memref<80x32x128x128xbf16>,
    %intermediate: memref<80x4x32x128x128xbf16>,
    %o: memref<64x4x32x128xbf16>) {
  gdn.recurrent q(%q : memref<64x4x16x128xbf16>)
      k(%k : memref<64x4x16x128xbf16>)
      v(%v : memref<64x4x32x128xbf16>)
      a(%a : memref<64x4x32xbf16>)
      A_log(%A_log : memref<32xf32>)
      dt_bias(%dt_bias : memref<32xf32>)
      b(%b : memref<64x4x32xbf16>)
      state_indices(%state_indices : memref<64xi32>)
      intermediate_state_indices(%intermediate_state_indices : memref<64xi32>)
      retrieve_parent_token(%retrieve_parent_token : memref<64x4xi32>)
      initial_state(%pool : memref<80x32x128x128xbf16>)
      intermediate_states(%intermediate : memref<80x4x32x128x128xbf16>)
      o(%o : memref<64x4x32x128xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// Verify with fp32 per-token states (FlashInfer's MTP buffers): one lane
// along V and no producer warp, on a tiny grid (N = 1: 4 columns a lane) as
// on a full one (N = 8: 8 columns a lane). Schedule.cpp, fp32StepStates.
// CHECK-LABEL: func.func @verify_f32_steps_N1
// CHECK: gdn.schedule = #gdn.schedule<columns_per_lane = 4, lanes_along_v = 1, {{.*}}staged_tokens = 4, unroll_tokens = 1, reductions = side_by_side, {{.*}}producer_stages = 0, {{.*}}launch = ordinary, segments = 1, concurrent_solves = 0>
// CHECK-LABEL: func.func @verify_f32_steps_N8
// CHECK: gdn.schedule = #gdn.schedule<columns_per_lane = 8, lanes_along_v = 1, {{.*}}staged_tokens = 4, unroll_tokens = 1, reductions = in_turn, {{.*}}producer_stages = 0, {{.*}}launch = ordinary, segments = 1, concurrent_solves = 0>
func.func @verify_f32_steps_N1(%q: memref<1x4x16x128xbf16>,
    %k: memref<1x4x16x128xbf16>,
    %v: memref<1x4x32x128xbf16>,
    %a: memref<1x4x32xbf16>,
    %A_log: memref<32xf32>,
    %dt_bias: memref<32xf32>,
    %b: memref<1x4x32xbf16>,
    %state_indices: memref<1xi32>,
    %pool: memref<4x32x128x128xf32>,
    %intermediate: memref<4x4x32x128x128xf32>,
    %o: memref<1x4x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x4x16x128xbf16>)
      k(%k : memref<1x4x16x128xbf16>)
      v(%v : memref<1x4x32x128xbf16>)
      a(%a : memref<1x4x32xbf16>)
      A_log(%A_log : memref<32xf32>)
      dt_bias(%dt_bias : memref<32xf32>)
      b(%b : memref<1x4x32xbf16>)
      state_indices(%state_indices : memref<1xi32>)
      intermediate_state_indices(%state_indices : memref<1xi32>)
      initial_state(%pool : memref<4x32x128x128xf32>)
      intermediate_states(%intermediate : memref<4x4x32x128x128xf32>)
      o(%o : memref<1x4x32x128xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

func.func @verify_f32_steps_N8(%q: memref<8x4x16x128xbf16>,
    %k: memref<8x4x16x128xbf16>,
    %v: memref<8x4x32x128xbf16>,
    %a: memref<8x4x32xbf16>,
    %A_log: memref<32xf32>,
    %dt_bias: memref<32xf32>,
    %b: memref<8x4x32xbf16>,
    %state_indices: memref<8xi32>,
    %pool: memref<8x32x128x128xf32>,
    %intermediate: memref<8x4x32x128x128xf32>,
    %o: memref<8x4x32x128xbf16>) {
  gdn.recurrent q(%q : memref<8x4x16x128xbf16>)
      k(%k : memref<8x4x16x128xbf16>)
      v(%v : memref<8x4x32x128xbf16>)
      a(%a : memref<8x4x32xbf16>)
      A_log(%A_log : memref<32xf32>)
      dt_bias(%dt_bias : memref<32xf32>)
      b(%b : memref<8x4x32xbf16>)
      state_indices(%state_indices : memref<8xi32>)
      intermediate_state_indices(%state_indices : memref<8xi32>)
      initial_state(%pool : memref<8x32x128x128xf32>)
      intermediate_states(%intermediate : memref<8x4x32x128x128xf32>)
      o(%o : memref<8x4x32x128xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
