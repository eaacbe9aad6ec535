// RUN: gdn-opt %s -split-input-file -convert-gdn-to-cpu | FileCheck %s
// RUN: gdn-opt %s -split-input-file -gdn-lower-to-cpu | FileCheck %s --check-prefix=LLVM
// Replayed verify on the CPU: the verify's window writes, and the commit as
// the recurrence loops of each layer's view.

// Verify: per token, if its step < L = 4 and the row is not padding, raw k
// (from the group's first value head), raw v, the log decay and beta into
// the slot's window row. o is still written.
// CHECK-LABEL: func.func @verify
// CHECK: %[[SLOT:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step
// CHECK: memref.store %{{.*}}, %arg13[%{{.*}}, %[[T]], %{{.*}}, %{{.*}}] : memref<3x4x2x16xbf16>
// CHECK: %[[STEP_OK:.*]] = arith.cmpi slt, %{{.*}}, %{{.*}} : index
// CHECK: scf.if
// CHECK: memref.load %arg1[%{{.*}}, %[[T]], %{{.*}}, %{{.*}}] : memref<3x4x1x16xbf16>
// CHECK: memref.store %{{.*}}, %arg9[%[[SLOT]], %{{.*}}, %{{.*}}, %{{.*}}] : memref<6x1x4x16xbf16>
// CHECK: memref.store %{{.*}}, %arg10[%[[SLOT]], %{{.*}}, %{{.*}}, %{{.*}}] : memref<6x2x4x16xbf16>
// CHECK: memref.store %{{.*}}, %arg11[%[[SLOT]], %{{.*}}, %{{.*}}] : memref<6x2x4xf32>
// CHECK: memref.store %{{.*}}, %arg12[%[[SLOT]], %{{.*}}, %{{.*}}] : memref<6x2x4xf32>
// LLVM-LABEL: llvm.func @verify
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

// -----

// Commit: a loop over the 3 layers, each viewing its windows as token
// operands ([slots, L, heads, ...]) and its state, then per row the count
// clamped to [0, L], the row skipped when it is 0 or the slot is outside
// [0, 6), and that many tokens read from the slot's window row. A skipped row
// runs no token at all (count and window row 0): its slot, e.g. -2^31, is no
// row of the windows. Nothing is written but the state.
// CHECK-LABEL: func.func @commit
// CHECK-NOT: gdn.replay_commit
// CHECK: scf.for %[[L:.*]] = %{{.*}} to %{{.*}} step
// CHECK: memref.reinterpret_cast %arg0 to offset: [%{{.*}}], sizes: [6, 4, 2, 16], strides: [128, 16, 64, 1]
// CHECK: memref.load %arg4[%{{.*}}] : memref<2xi64>
// CHECK: arith.maxsi
// CHECK: %[[COUNT:.*]] = arith.minsi
// CHECK: %[[SOME:.*]] = arith.cmpi sgt, %[[COUNT]]
// CHECK: %[[SLOTS:.*]] = arith.constant 6 : i64
// CHECK: %[[INPOOL:.*]] = arith.cmpi ult, %{{.*}}, %[[SLOTS]] : i64
// CHECK: %[[RUNS:.*]] = arith.andi %[[INPOOL]], %[[SOME]] : i1
// CHECK: arith.select %[[RUNS]], %{{.*}}, %{{.*}} : index
// CHECK: %[[HI:.*]] = arith.select %[[RUNS]], %[[COUNT]], %{{.*}} : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[HI]] step
// CHECK-NOT: memref.store {{.*}}, %arg0[
// CHECK-NOT: memref.store {{.*}}, %arg1[
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<6x4x16x16xf32, strided<[1024, 256, 16, 1], offset: ?>>
// LLVM-LABEL: llvm.func @commit
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

// EAGLE tree commit: the count is clamped to P = 3 (the table's steps), the
// path is walked up the parent table from step count - 1 into a mask, and
// each window step runs only when its bit is set.
// CHECK-LABEL: func.func @commit_tree
// CHECK: %[[P:.*]] = arith.constant 3 : index
// CHECK: arith.minsi %{{.*}}, %[[P]] : index
// CHECK: %[[PATH:.*]]:2 = scf.while
// CHECK: scf.condition
// CHECK: arith.shli
// CHECK: arith.ori
// CHECK: memref.load %arg6[%{{.*}}, %{{.*}}] : memref<2x3xi64>
// CHECK: scf.yield
// CHECK: arith.shrui %[[PATH]]#1
// CHECK: scf.if
// LLVM-LABEL: llvm.func @commit_tree
func.func @commit_tree(%kw: memref<2x6x2x4x16xbf16>, %vw: memref<2x6x4x4x16xbf16>, %gw: memref<2x6x4x4xf32>,
                       %bw: memref<2x6x4x4xf32>, %acc: memref<2xi32>, %idx: memref<2xi32>,
                       %p: memref<2x3xi64>, %s: memref<2x6x4x16x16xf32>) {
  gdn.replay_commit k_window(%kw : memref<2x6x2x4x16xbf16>) v_window(%vw : memref<2x6x4x4x16xbf16>)
      g_window(%gw : memref<2x6x4x4xf32>) beta_window(%bw : memref<2x6x4x4xf32>)
      accepted(%acc : memref<2xi32>) state_indices(%idx : memref<2xi32>)
      retrieve_parent_token(%p : memref<2x3xi64>)
      state(%s : memref<2x6x4x16x16xf32>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
