// RUN: gdn-opt %s -split-input-file -gdn-select-schedule -convert-gdn-to-gpu | FileCheck %s

// Two staged tokens a step (reductions = token_pairs). T = 3 in one chunk of
// 4: the pair loop runs j = 0 only (to count - 1 = 2, step 2), then the odd
// last token on its own (a fixed T: no runtime test). A pair's shuffle
// trees (32 lanes along K, 5 levels each) all read the state before the
// pair: k·q of both tokens, the four state sums (Sᵀ D0 k0, Sᵀ D0 q0,
// Sᵀ D0 D1 k1, Sᵀ D0 D1 q1) and the two state-free k0·k1, k0·q1: 8 trees,
// 40 shuffles. The single token: k·q and its two state sums, 15 shuffles.
// CHECK-LABEL: gpu.func @pairs_recurrent
// CHECK: scf.for %{{.*}} = %c0 to %c2{{.*}} step %c2 iter_args
// CHECK-COUNT-40: gpu.shuffle  xor
// CHECK-NOT: gpu.shuffle
// CHECK: scf.yield
// CHECK-NOT: scf.if %{{.*}} -> (f32)
// CHECK-COUNT-15: gpu.shuffle  xor
// CHECK-NOT: gpu.shuffle
// CHECK: gpu.return
func.func @pairs(%q: memref<1x3x1x32xf32>, %k: memref<1x3x1x32xf32>, %v: memref<1x3x1x32xf32>,
                 %g: memref<1x3x1xf32>, %beta: memref<1x3x1xf32>, %s: memref<1x1x32x32xf32>,
                 %o: memref<1x3x1x32xf32>) {
  gdn.recurrent q(%q : memref<1x3x1x32xf32>) k(%k : memref<1x3x1x32xf32>) v(%v : memref<1x3x1x32xf32>)
      g(%g : memref<1x3x1xf32>) beta(%beta : memref<1x3x1xf32>)
      initial_state(%s : memref<1x1x32x32xf32>) final_state(%s : memref<1x1x32x32xf32>)
      o(%o : memref<1x3x1x32xf32>)
      {state_layout = #gdn.layout<vk>,
       gdn.schedule = #gdn.schedule<columns_per_lane = 1, staged_tokens = 4, reductions = token_pairs>}
  return
}

// -----

// T = 6 in chunks of 4: a chunk's count (4, then 2) is known only at run
// time, so the pair loop runs to count - 1 and the odd token sits under an
// scf.if on count's low bit.
// CHECK-LABEL: gpu.func @chunks_recurrent
// CHECK: scf.for %{{.*}} = %c0 to %c6 step %c4 iter_args
// CHECK: %[[END:.*]] = arith.subi %[[COUNT:.*]], %c1 : index
// CHECK: %[[PAIRS:.*]] = scf.for %{{.*}} = %c0 to %[[END]] step %c2 iter_args
// CHECK-COUNT-40: gpu.shuffle  xor
// CHECK-NOT: gpu.shuffle
// CHECK: scf.yield
// CHECK: %[[ODD_BIT:.*]] = arith.andi %[[COUNT]], %c1 : index
// CHECK: %[[ODD:.*]] = arith.cmpi ne, %[[ODD_BIT]], %c0 : index
// CHECK: scf.if %[[ODD]] -> (f32) {
// CHECK-COUNT-15: gpu.shuffle  xor
// CHECK-NOT: gpu.shuffle
// CHECK: } else {
// CHECK-NEXT: scf.yield %[[PAIRS]] : f32
func.func @chunks(%q: memref<1x6x1x32xf32>, %k: memref<1x6x1x32xf32>, %v: memref<1x6x1x32xf32>,
                  %g: memref<1x6x1xf32>, %beta: memref<1x6x1xf32>, %s: memref<1x1x32x32xf32>,
                  %o: memref<1x6x1x32xf32>) {
  gdn.recurrent q(%q : memref<1x6x1x32xf32>) k(%k : memref<1x6x1x32xf32>) v(%v : memref<1x6x1x32xf32>)
      g(%g : memref<1x6x1xf32>) beta(%beta : memref<1x6x1xf32>)
      initial_state(%s : memref<1x1x32x32xf32>) final_state(%s : memref<1x1x32x32xf32>)
      o(%o : memref<1x6x1x32xf32>)
      {state_layout = #gdn.layout<vk>,
       gdn.schedule = #gdn.schedule<columns_per_lane = 1, staged_tokens = 4, reductions = token_pairs>}
  return
}

// -----

// unroll_tokens counts tokens, two an iteration of the pair loop: T = 4 in
// one chunk with unroll_tokens = 4 unrolls both pairs fully (no token loop
// left, and no odd token); 2 would unroll by one pair, i.e. not at all.
// CHECK-LABEL: gpu.func @unrolled_pairs_recurrent
// CHECK-NOT: step %c2
// CHECK-COUNT-80: gpu.shuffle  xor
// CHECK-NOT: gpu.shuffle
// CHECK: gpu.return
func.func @unrolled_pairs(%q: memref<1x4x1x32xf32>, %k: memref<1x4x1x32xf32>, %v: memref<1x4x1x32xf32>,
                          %g: memref<1x4x1xf32>, %beta: memref<1x4x1xf32>, %s: memref<1x1x32x32xf32>,
                          %o: memref<1x4x1x32xf32>) {
  gdn.recurrent q(%q : memref<1x4x1x32xf32>) k(%k : memref<1x4x1x32xf32>) v(%v : memref<1x4x1x32xf32>)
      g(%g : memref<1x4x1xf32>) beta(%beta : memref<1x4x1xf32>)
      initial_state(%s : memref<1x1x32x32xf32>) final_state(%s : memref<1x1x32x32xf32>)
      o(%o : memref<1x4x1x32xf32>)
      {state_layout = #gdn.layout<vk>,
       gdn.schedule = #gdn.schedule<columns_per_lane = 1, staged_tokens = 4, unroll_tokens = 4,
                                    reductions = token_pairs>}
  return
}
