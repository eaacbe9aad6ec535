// RUN: gdn-opt %s -gdn-select-schedule -convert-gdn-to-gpu | FileCheck %s
// A verify that writes replay windows of more steps than its CTA has
// threads: T = L = 65 on chunk_parallel's 2 warps (64 threads). Each
// thread writes the gates of steps thread, thread + 64, ... (a loop), not
// only of step thread, which left step 64 of g_window and beta_window
// stale (found by a fault hunt).
// CHECK-LABEL: gpu.func @verify_recurrent
// CHECK-SAME: known_block_size = array<i32: 64, 1, 1>
// CHECK: scf.for %[[STEP:.*]] = %thread_id_x to %c65 step %c64 {
// CHECK: memref.store %{{.*}}, %arg11[%{{.*}}, %{{.*}}, %[[STEP]]] : memref<3x2x65xf32>
// CHECK: memref.store %{{.*}}, %arg12[%{{.*}}, %{{.*}}, %[[STEP]]] : memref<3x2x65xf32>
func.func @verify(%q: memref<1x65x1x128xbf16>, %k: memref<1x65x1x128xbf16>, %v: memref<1x65x2x128xbf16>,
                  %a: memref<1x65x2xbf16>, %A_log: memref<2xf32>, %dt_bias: memref<2xf32>,
                  %b: memref<1x65x2xbf16>, %idx: memref<1xi32>, %s: memref<3x2x128x128xf32>,
                  %kw: memref<3x1x65x128xbf16>, %vw: memref<3x2x65x128xbf16>, %gw: memref<3x2x65xf32>,
                  %bw: memref<3x2x65xf32>, %o: memref<1x65x2x128xbf16>) {
  gdn.recurrent q(%q : memref<1x65x1x128xbf16>) k(%k : memref<1x65x1x128xbf16>) v(%v : memref<1x65x2x128xbf16>)
      a(%a : memref<1x65x2xbf16>) A_log(%A_log : memref<2xf32>) dt_bias(%dt_bias : memref<2xf32>)
      b(%b : memref<1x65x2xbf16>) state_indices(%idx : memref<1xi32>) initial_state(%s : memref<3x2x128x128xf32>)
      k_window(%kw : memref<3x1x65x128xbf16>) v_window(%vw : memref<3x2x65x128xbf16>)
      g_window(%gw : memref<3x2x65xf32>) beta_window(%bw : memref<3x2x65xf32>)
      o(%o : memref<1x65x2x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
