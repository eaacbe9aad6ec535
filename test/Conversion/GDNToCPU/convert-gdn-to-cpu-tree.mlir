// RUN: gdn-opt %s -split-input-file -convert-gdn-to-cpu | FileCheck %s

// EAGLE tree verify: at the top of each token, the parent source of step
// s = t - lo (p >= 0: reload step p, -1: carried, -2: restart) picks what the
// scratch state S holds before the token's math: the stored parent state
// intermediate_states[row, p] (bf16, widened as stored), or the initial state.
// CHECK-LABEL: func.func @tree
// CHECK: %[[S:.*]] = memref.alloc() : memref<32x8xf32>
// CHECK: scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step
// CHECK: scf.for %[[HV:.*]] = %{{.*}} to %{{.*}} step
// CHECK: memref.load %arg3[%[[N]]] : memref<2xi64>
// CHECK: %[[ROW:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT: %[[STEP:.*]] = arith.subi %[[T]], %{{.*}} : index
// CHECK-NEXT: memref.load %arg4[%[[N]], %[[STEP]]] : memref<2x3xi32>
// CHECK: %[[SRC:.*]] = arith.trunci %{{.*}} : i64 to i32
// CHECK: %[[RELOAD:.*]] = arith.cmpi sge, %[[SRC]], %{{.*}} : i32
// CHECK-NEXT: scf.if %[[RELOAD]] {
// CHECK-NEXT: %[[P:.*]] = arith.index_cast %[[SRC]] : i32 to index
// CHECK: %[[X:.*]] = memref.load %arg6[%[[ROW]], %[[P]], %[[HV]], %[[K:.*]], %[[V:.*]]] : memref<4x3x1x32x8xbf16>
// CHECK-NEXT: %[[XF:.*]] = arith.extf %[[X]] : bf16 to f32
// CHECK-NEXT: memref.store %[[XF]], %[[S]][%[[K]], %[[V]]]
// CHECK: } else {
// CHECK: %[[ROOT:.*]] = arith.cmpi eq, %[[SRC]], %c-2_i32 : i32
// CHECK-NEXT: scf.if %[[ROOT]] {
// CHECK: memref.load %arg5[%[[N]], %[[HV]], %{{.*}}, %{{.*}}] : memref<2x1x32x8xf32>
// CHECK: memref.store %{{.*}}, %[[S]]
// Then the token's math: k of token t.
// CHECK: memref.load %arg1[%[[N]], %[[T]], %{{.*}}, %{{.*}}] : memref<2x3x1x32xf32>
func.func @tree(%q: memref<2x3x1x32xf32>, %k: memref<2x3x1x32xf32>, %v: memref<2x3x1x8xf32>,
                %iidx: memref<2xi64>, %par: memref<2x3xi32>,
                %s: memref<2x1x32x8xf32>, %inter: memref<4x3x1x32x8xbf16>, %o: memref<2x3x1x8xf32>) {
  gdn.recurrent q(%q : memref<2x3x1x32xf32>) k(%k : memref<2x3x1x32xf32>) v(%v : memref<2x3x1x8xf32>)
      intermediate_state_indices(%iidx : memref<2xi64>) retrieve_parent_token(%par : memref<2x3xi32>)
      initial_state(%s : memref<2x1x32x8xf32>) intermediate_states(%inter : memref<4x3x1x32x8xbf16>)
      o(%o : memref<2x3x1x8xf32>)
  return
}

// -----

// Varlen: a sequence may run past the table's 2 steps; its entry index is
// clamped to steps - 1 and such steps keep the carried state (s < 2).
// CHECK-LABEL: func.func @varlen
// CHECK: %[[STEP:.*]] = arith.subi %{{.*}}, %{{.*}} : index
// CHECK: %[[E:.*]] = arith.minui %[[STEP]], %c1{{.*}} : index
// CHECK-NEXT: memref.load %arg4[%{{.*}}, %[[E]]] : memref<2x2xi64>
// CHECK: arith.cmpi slt, %{{.*}}, %c2_i64 : i64
func.func @varlen(%q: memref<1x5x1x32xf32>, %k: memref<1x5x1x32xf32>, %v: memref<1x5x1x8xf32>,
                  %cu: memref<3xi32>, %par: memref<2x2xi64>,
                  %inter: memref<2x2x1x8x32xf32>, %o: memref<1x5x1x8xf32>) {
  gdn.recurrent q(%q : memref<1x5x1x32xf32>) k(%k : memref<1x5x1x32xf32>) v(%v : memref<1x5x1x8xf32>)
      cu_seqlens(%cu : memref<3xi32>) retrieve_parent_token(%par : memref<2x2xi64>)
      intermediate_states(%inter : memref<2x2x1x8x32xf32>)
      o(%o : memref<1x5x1x8xf32>) {state_layout = #gdn.layout<vk>}
  return
}
