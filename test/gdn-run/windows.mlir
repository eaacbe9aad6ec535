// Replay windows (k_window, v_window, g_window, beta_window) against the
// reference: each sequence's first L tokens as given (k, v exactly), their
// log decay and beta as the recurrence takes them (within f32's rounding),
// and every entry no token writes untouched: a pool with fused gating, and
// varlen sequences longer than the window with log-space g.
// RUN: split-file %s %t
// RUN: gdn-run --target=cpu --check --seed=1 %t/pool.mlir | FileCheck %s
// RUN: gdn-run --target=cpu --check --seed=2 %t/pool.mlir | FileCheck %s
// RUN: gdn-run --target=cpu --check --seed=3 %t/varlen.mlir | FileCheck %s
// CHECK: check k_window {{.*}} ok
// CHECK: check unwritten k_window steps: 0 of {{[0-9]+}} changed  ok
// CHECK: check v_window {{.*}} ok
// CHECK: check unwritten v_window steps: 0 of {{[0-9]+}} changed  ok
// CHECK: check g_window {{.*}} ok
// CHECK: check unwritten g_window steps: 0 of {{[0-9]+}} changed  ok
// CHECK: check beta_window {{.*}} ok
// CHECK: check unwritten beta_window steps: 0 of {{[0-9]+}} changed  ok
// CHECK: check o {{.*}} ok
// CHECK-NOT: FAILED

//--- pool.mlir
func.func @verify(%q: memref<3x4x1x16xbf16>, %k: memref<3x4x1x16xbf16>, %v: memref<3x4x2x16xbf16>,
                  %a: memref<3x4x2xbf16>, %A_log: memref<2xf32>, %dt_bias: memref<2xf32>,
                  %b: memref<3x4x2xbf16>, %idx: memref<3xi32>, %s: memref<6x2x16x16xf32>,
                  %kw: memref<6x1x4x16xbf16>, %vw: memref<6x2x4x16xbf16>, %gw: memref<6x2x4xf32>,
                  %bw: memref<6x2x4xf32>, %o: memref<3x4x2x16xbf16>) {
  gdn.recurrent q(%q : memref<3x4x1x16xbf16>) k(%k : memref<3x4x1x16xbf16>) v(%v : memref<3x4x2x16xbf16>)
      a(%a : memref<3x4x2xbf16>) A_log(%A_log : memref<2xf32>) dt_bias(%dt_bias : memref<2xf32>)
      b(%b : memref<3x4x2xbf16>) state_indices(%idx : memref<3xi32>) initial_state(%s : memref<6x2x16x16xf32>)
      k_window(%kw : memref<6x1x4x16xbf16>) v_window(%vw : memref<6x2x4x16xbf16>)
      g_window(%gw : memref<6x2x4xf32>) beta_window(%bw : memref<6x2x4xf32>)
      o(%o : memref<3x4x2x16xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

//--- varlen.mlir
func.func @varlen(%q: memref<1x10x1x16xf32>, %k: memref<1x10x1x16xf32>, %v: memref<1x10x2x8xf32>,
                  %g: memref<1x10x2xf32>, %beta: memref<1x10x2xf32>, %cu: memref<3xi32>,
                  %kw: memref<2x1x3x16xf32>, %vw: memref<2x2x3x8xf32>, %gw: memref<2x2x3xf32>,
                  %bw: memref<2x2x3xf32>, %o: memref<1x10x2x8xf32>) {
  gdn.recurrent q(%q : memref<1x10x1x16xf32>) k(%k : memref<1x10x1x16xf32>) v(%v : memref<1x10x2x8xf32>)
      g(%g : memref<1x10x2xf32>) beta(%beta : memref<1x10x2xf32>) cu_seqlens(%cu : memref<3xi32>)
      k_window(%kw : memref<2x1x3x16xf32>) v_window(%vw : memref<2x2x3x8xf32>)
      g_window(%gw : memref<2x2x3xf32>) beta_window(%bw : memref<2x2x3xf32>)
      o(%o : memref<1x10x2x8xf32>) {qk_l2norm}
  return
}
