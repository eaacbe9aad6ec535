// RUN: gdn-opt %s -convert-gdn-to-gpu | FileCheck %s

// Two staged tokens a step (overlap_reductions = 2). T = 3 in one chunk of
// 4: the pair loop runs j = 0 only (to count - 1, step 2), then the odd
// last token on its own under an scf.if. A pair's shuffle trees (32 lanes
// along K, 5 levels each) all read the state before the pair: k·q of both
// tokens, the four state sums (Sᵀ D0 k0, Sᵀ D0 q0, Sᵀ D0 D1 k1,
// Sᵀ D0 D1 q1) and the two state-free k0·k1, k0·q1: 8 trees, 40 shuffles.
// The single token: k·q and its two state sums, 15 shuffles.
// CHECK-LABEL: gpu.func @pairs_recurrent
// CHECK: %[[END:.*]] = arith.subi %{{.*}}, %c1 : index
// CHECK: %[[PAIRS:.*]] = scf.for %{{.*}} = %c0 to %[[END]] step %c2 iter_args
// CHECK-COUNT-40: gpu.shuffle  xor
// CHECK-NOT: gpu.shuffle
// CHECK: scf.yield
// CHECK: %[[ODD_BIT:.*]] = arith.andi %{{.*}}, %c1 : index
// CHECK: %[[ODD:.*]] = arith.cmpi ne, %[[ODD_BIT]], %c0 : index
// CHECK: scf.if %[[ODD]] -> (f32) {
// CHECK-COUNT-15: gpu.shuffle  xor
// CHECK-NOT: gpu.shuffle
// CHECK: } else {
// CHECK-NEXT: scf.yield %[[PAIRS]] : f32
func.func @pairs(%q: memref<1x3x1x32xf32>, %k: memref<1x3x1x32xf32>, %v: memref<1x3x1x32xf32>,
                 %g: memref<1x3x1xf32>, %beta: memref<1x3x1xf32>, %s: memref<1x1x32x32xf32>,
                 %o: memref<1x3x1x32xf32>) {
  gdn.recurrent q(%q : memref<1x3x1x32xf32>) k(%k : memref<1x3x1x32xf32>) v(%v : memref<1x3x1x32xf32>)
      g(%g : memref<1x3x1xf32>) beta(%beta : memref<1x3x1xf32>)
      initial_state(%s : memref<1x1x32x32xf32>) final_state(%s : memref<1x1x32x32xf32>)
      o(%o : memref<1x3x1x32xf32>)
      {state_layout = #gdn.layout<vk>,
       gdn.schedule = {overlap_reductions = 2 : i64, stage_tokens = 4 : i64, rows_per_warp = 1 : i64}}
  return
}
