// RUN: gdn-opt %s -split-input-file -verify-diagnostics -gdn-select-schedule

// A replay unrolls every window step: past 256 steps it is refused with a
// diagnostic, not compiled for minutes (L = 4096 took more than 18 GB).
func.func @long(%kw: memref<1x2x1x4096x128xbf16>, %vw: memref<1x2x1x4096x128xbf16>, %gw: memref<1x2x1x4096xf32>,
                %bw: memref<1x2x1x4096xf32>, %acc: memref<2xi64>, %s: memref<1x2x1x128x128xf32>) {
  // expected-error @+1 {{'gdn.replay_commit' op cannot be lowered to the GPU: windows of L = 4096 steps; its replay unrolls every step, at most 256}}
  gdn.replay_commit k_window(%kw : memref<1x2x1x4096x128xbf16>) v_window(%vw : memref<1x2x1x4096x128xbf16>)
      g_window(%gw : memref<1x2x1x4096xf32>) beta_window(%bw : memref<1x2x1x4096xf32>)
      accepted(%acc : memref<2xi64>) state(%s : memref<1x2x1x128x128xf32>)
  return
}

// -----

// 256 steps are taken.
func.func @most(%kw: memref<1x2x1x256x128xbf16>, %vw: memref<1x2x1x256x128xbf16>, %gw: memref<1x2x1x256xf32>,
                %bw: memref<1x2x1x256xf32>, %acc: memref<2xi64>, %s: memref<1x2x1x128x128xf32>) {
  gdn.replay_commit k_window(%kw : memref<1x2x1x256x128xbf16>) v_window(%vw : memref<1x2x1x256x128xbf16>)
      g_window(%gw : memref<1x2x1x256xf32>) beta_window(%bw : memref<1x2x1x256xf32>)
      accepted(%acc : memref<2xi64>) state(%s : memref<1x2x1x128x128xf32>)
  return
}
