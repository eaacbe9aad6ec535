// RUN: gdn-opt %s -split-input-file | FileCheck %s
// RUN: gdn-opt %s -split-input-file | gdn-opt -split-input-file | FileCheck %s
// Round trip of replayed verify: gdn.recurrent writing the replay windows,
// and gdn.replay_commit in memref and tensor form.

// FlashInfer's ReplaySSM verify: a pool of 6 slots, windows of T = 4 steps,
// the checkpoint only read.
// CHECK-LABEL: func @verify
// CHECK: initial_state(%{{.*}} : memref<6x4x16x16xf32>) k_window(%{{.*}} : memref<6x2x4x16xbf16>) v_window(%{{.*}} : memref<6x4x4x16xbf16>) g_window(%{{.*}} : memref<6x4x4xf32>) beta_window(%{{.*}} : memref<6x4x4xf32>) o(
func.func @verify(%q: memref<3x4x2x16xbf16>, %k: memref<3x4x2x16xbf16>, %v: memref<3x4x4x16xbf16>,
                  %a: memref<3x4x4xbf16>, %A_log: memref<4xf32>, %dt_bias: memref<4xf32>,
                  %b: memref<3x4x4xbf16>, %idx: memref<3xi32>, %s: memref<6x4x16x16xf32>,
                  %kw: memref<6x2x4x16xbf16>, %vw: memref<6x4x4x16xbf16>, %gw: memref<6x4x4xf32>,
                  %bw: memref<6x4x4xf32>, %o: memref<3x4x4x16xbf16>) {
  gdn.recurrent q(%q : memref<3x4x2x16xbf16>) k(%k : memref<3x4x2x16xbf16>) v(%v : memref<3x4x4x16xbf16>)
      a(%a : memref<3x4x4xbf16>) A_log(%A_log : memref<4xf32>) dt_bias(%dt_bias : memref<4xf32>)
      b(%b : memref<3x4x4xbf16>) state_indices(%idx : memref<3xi32>) initial_state(%s : memref<6x4x16x16xf32>)
      k_window(%kw : memref<6x2x4x16xbf16>) v_window(%vw : memref<6x4x4x16xbf16>)
      g_window(%gw : memref<6x4x4xf32>) beta_window(%bw : memref<6x4x4xf32>)
      o(%o : memref<3x4x4x16xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// Three layers in one commit, a pool, i64 counts.
// CHECK-LABEL: func @commit
// CHECK: gdn.replay_commit k_window(%{{.*}} : memref<3x6x2x4x16xbf16>) v_window(%{{.*}} : memref<3x6x4x4x16xbf16>) g_window(%{{.*}} : memref<3x6x4x4xf32>) beta_window(%{{.*}} : memref<3x6x4x4xf32>) accepted(%{{.*}} : memref<2xi64>) state_indices(%{{.*}} : memref<2xi32>) state(%{{.*}} : memref<3x6x4x16x16xf32>) {qk_l2norm, state_layout = #gdn.layout<vk>}
func.func @commit(%kw: memref<3x6x2x4x16xbf16>, %vw: memref<3x6x4x4x16xbf16>, %gw: memref<3x6x4x4xf32>,
                  %bw: memref<3x6x4x4xf32>, %acc: memref<2xi64>, %idx: memref<2xi32>,
                  %s: memref<3x6x4x16x16xf32>) {
  gdn.replay_commit k_window(%kw : memref<3x6x2x4x16xbf16>) v_window(%vw : memref<3x6x4x4x16xbf16>)
      g_window(%gw : memref<3x6x4x4xf32>) beta_window(%bw : memref<3x6x4x4xf32>)
      accepted(%acc : memref<2xi64>) state_indices(%idx : memref<2xi32>)
      state(%s : memref<3x6x4x16x16xf32>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// Tensor form, no pool (row n is slot n), kv layout, bf16 state.
// CHECK-LABEL: func @tensor
// CHECK: %{{.*}} = gdn.replay_commit k_window(%{{.*}} : tensor<1x2x1x3x8xf32>) v_window(%{{.*}} : tensor<1x2x2x3x8xf32>) g_window(%{{.*}} : tensor<1x2x2x3xf32>) beta_window(%{{.*}} : tensor<1x2x2x3xf32>) accepted(%{{.*}} : tensor<2xi32>) state(%{{.*}} : tensor<1x2x2x8x8xbf16>) -> tensor<1x2x2x8x8xbf16>
func.func @tensor(%kw: tensor<1x2x1x3x8xf32>, %vw: tensor<1x2x2x3x8xf32>, %gw: tensor<1x2x2x3xf32>,
                  %bw: tensor<1x2x2x3xf32>, %acc: tensor<2xi32>, %s: tensor<1x2x2x8x8xbf16>)
    -> tensor<1x2x2x8x8xbf16> {
  %r = gdn.replay_commit k_window(%kw : tensor<1x2x1x3x8xf32>) v_window(%vw : tensor<1x2x2x3x8xf32>)
      g_window(%gw : tensor<1x2x2x3xf32>) beta_window(%bw : tensor<1x2x2x3xf32>)
      accepted(%acc : tensor<2xi32>) state(%s : tensor<1x2x2x8x8xbf16>) -> tensor<1x2x2x8x8xbf16>
  return %r : tensor<1x2x2x8x8xbf16>
}

// -----

// EAGLE tree: the verify stores its per-token states (the parents') and
// writes the windows; the commit takes the same parent table.
// CHECK-LABEL: func @tree
// CHECK: retrieve_parent_token(%{{.*}} : memref<2x3xi32>) intermediate_states(%{{.*}} : memref<2x3x1x8x8xf32>) k_window(
// CHECK: gdn.replay_commit {{.*}} accepted(%{{.*}} : memref<2xi32>) retrieve_parent_token(%{{.*}} : memref<2x3xi32>) state(%{{.*}} : memref<1x2x1x8x8xf32>)
func.func @tree(%q: memref<2x3x1x8xf32>, %kw: memref<2x1x3x8xf32>, %vw: memref<2x1x3x8xf32>,
                %gw: memref<2x1x3xf32>, %bw: memref<2x1x3xf32>,
                %p: memref<2x3xi32>, %inter: memref<2x3x1x8x8xf32>, %o: memref<2x3x1x8xf32>,
                %acc: memref<2xi32>, %s: memref<1x2x1x8x8xf32>) {
  gdn.recurrent q(%q : memref<2x3x1x8xf32>) k(%q : memref<2x3x1x8xf32>) v(%q : memref<2x3x1x8xf32>)
      retrieve_parent_token(%p : memref<2x3xi32>) intermediate_states(%inter : memref<2x3x1x8x8xf32>)
      k_window(%kw : memref<2x1x3x8xf32>) v_window(%vw : memref<2x1x3x8xf32>) g_window(%gw : memref<2x1x3xf32>)
      beta_window(%bw : memref<2x1x3xf32>) o(%o : memref<2x3x1x8xf32>)
  %kw1 = memref.expand_shape %kw [[0, 1], [2], [3], [4]] output_shape [1, 2, 1, 3, 8] : memref<2x1x3x8xf32> into memref<1x2x1x3x8xf32>
  %gw1 = memref.expand_shape %gw [[0, 1], [2], [3]] output_shape [1, 2, 1, 3] : memref<2x1x3xf32> into memref<1x2x1x3xf32>
  gdn.replay_commit k_window(%kw1 : memref<1x2x1x3x8xf32>) v_window(%kw1 : memref<1x2x1x3x8xf32>)
      g_window(%gw1 : memref<1x2x1x3xf32>) beta_window(%gw1 : memref<1x2x1x3xf32>)
      accepted(%acc : memref<2xi32>) retrieve_parent_token(%p : memref<2x3xi32>)
      state(%s : memref<1x2x1x8x8xf32>)
  return
}

// -----

// f8E4M3FN checkpoints with their row scales.
// CHECK-LABEL: func @fp8
// CHECK: gdn.replay_commit {{.*}} accepted(%{{.*}} : memref<3xi32>) state_indices(%{{.*}} : memref<3xi32>) state_scale(%{{.*}} : memref<2x6x4x16xf32>) state(%{{.*}} : memref<2x6x4x16x32xf8E4M3FN>)
func.func @fp8(%kw: memref<2x6x2x4x32xbf16>, %vw: memref<2x6x4x4x16xbf16>, %gw: memref<2x6x4x4xf32>,
               %acc: memref<3xi32>, %idx: memref<3xi32>, %sc: memref<2x6x4x16xf32>, %s: memref<2x6x4x16x32xf8E4M3FN>) {
  gdn.replay_commit k_window(%kw : memref<2x6x2x4x32xbf16>) v_window(%vw : memref<2x6x4x4x16xbf16>)
      g_window(%gw : memref<2x6x4x4xf32>) beta_window(%gw : memref<2x6x4x4xf32>)
      accepted(%acc : memref<3xi32>) state_indices(%idx : memref<3xi32>) state_scale(%sc : memref<2x6x4x16xf32>)
      state(%s : memref<2x6x4x16x32xf8E4M3FN>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
