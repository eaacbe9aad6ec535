// RUN: gdn-opt %s -split-input-file -verify-diagnostics -gdn-select-schedule="schedule={#gdn.schedule<columns_per_lane = 3>}"

// A replay's schedule is checked on its recurrence view (the token loop it
// runs), and a refusal names the replay, not the internal view.
func.func @pinned(%kw: memref<1x2x1x3x128xf32>, %vw: memref<1x2x1x3x128xf32>, %gw: memref<1x2x1x3xf32>,
                  %bw: memref<1x2x1x3xf32>, %acc: memref<2xi32>, %s: memref<1x2x1x128x128xf32>) {
  // expected-error @+1 {{'gdn.replay_commit' op cannot be lowered to the GPU: V = 128 is not a multiple of columns_per_lane * lanes_along_v * warps = 3}}
  gdn.replay_commit k_window(%kw : memref<1x2x1x3x128xf32>) v_window(%vw : memref<1x2x1x3x128xf32>)
      g_window(%gw : memref<1x2x1x3xf32>) beta_window(%bw : memref<1x2x1x3xf32>)
      accepted(%acc : memref<2xi32>) state(%s : memref<1x2x1x128x128xf32>)
  return
}
