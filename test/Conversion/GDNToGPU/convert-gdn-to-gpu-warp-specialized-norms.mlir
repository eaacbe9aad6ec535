// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<columns_per_lane = 2, lanes_along_v = 4, warps = 4, staged_tokens = 12, producer_stages = 2>}" -convert-gdn-to-gpu | FileCheck %s
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<columns_per_lane = 2, lanes_along_v = 4, warps = 4, staged_tokens = 12, reductions = in_turn, producer_stages = 2>}" -convert-gdn-to-gpu | FileCheck %s --check-prefix=INTURN

// The producer warp computes each staged token's norm factors once a CTA
// (FLA-style T = 12 kv, the default schedule of bench/sweeps/fla_t12_n1_kv
// on a smaller grid): a [2 x 12, 4] f32 ring buffer of ik, iq, k̂·q̂ and a pad.
// CHECK-LABEL: func.func @fla
// CHECK: gpu.func @fla_recurrent({{.*}}) workgroup({{.*}}, %[[BS:.*]] : memref<24xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[NS:.*]] : memref<24x4xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[FULL:.*]] : memref<2xi64, #gpu.address_space<workgroup>> {llvm.align = 8 : i64}, %{{.*}} : memref<2xi64, #gpu.address_space<workgroup>> {llvm.align = 8 : i64})
// CHECK: %[[LANE:.*]] = arith.remui %thread_id_x, %c32 : index
// The consumers read a token's three factors with one 16-byte load from the
// slot and reduce only Sᵀk and Sᵀq: no norm, no rsqrt in their loop.
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: scf.for
// CHECK-NOT: rsqrt
// CHECK: vector.load %[[NS]][%{{.*}}, %c0] {alignment = 16 : i64} : memref<24x4xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-NOT: rsqrt
// CHECK: nvvm.mbarrier.arrive
// CHECK: } else {
// The producer: 2 lanes a token of the chunk (16 tokens, the 4 past the 12
// read token 11), each 64 keys of k and q from global memory in 16-byte
// loads, all issued before the wait for the slot, the bulk copies and the
// gates, ...
// CHECK: %[[FIRST:.*]] = arith.divui %[[LANE]], %c2 : index
// CHECK: %[[T:.*]] = arith.minui %[[FIRST]], %{{.*}} : index
// CHECK: %[[ROW:.*]] = arith.addi %{{.*}}, %[[T]] : index
// CHECK-COUNT-8: vector.load %arg1[%{{.*}}, %[[ROW]], %{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<1x12x2x128xbf16>, vector<8xbf16>
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.expect_tx
// CHECK: nvvm.cp.async.bulk.shared.cluster.global
// CHECK: memref.store %{{.*}}, %[[BS]]
// ... then the sums, one shuffle level (the token's other lane), the two
// rsqrt and, from the token's first lane, its row of the buffer, before the
// arrival on `full` that releases it to the consumers.
// CHECK-NOT: gpu.shuffle xor %{{.*}}, %c2
// CHECK: gpu.shuffle xor %{{.*}}, %c1_i32
// CHECK: rsqrt.approx.ftz.f32
// CHECK: gpu.shuffle xor %{{.*}}, %c1_i32
// CHECK: rsqrt.approx.ftz.f32
// CHECK: gpu.shuffle xor %{{.*}}, %c1_i32
// CHECK: vector.store %{{.*}}, %[[NS]][%{{.*}}, %c0] {alignment = 16 : i64} : memref<24x4xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
// CHECK: gpu.return

// Tokens in turn (reductions = in_turn) normalize q and k in the token.
// INTURN-LABEL: func.func @fla
// INTURN-NOT: x4xf32, #gpu.address_space<workgroup>
// INTURN: rsqrt.approx
func.func @fla(%q: memref<1x12x2x128xbf16>, %k: memref<1x12x2x128xbf16>, %v: memref<1x12x4x64xbf16>,
               %g: memref<1x12x4xf32>, %beta: memref<1x12x4xbf16>,
               %h0: memref<1x4x128x64xf32>, %ht: memref<1x4x128x64xf32>, %o: memref<1x12x4x64xbf16>) {
  gdn.recurrent q(%q : memref<1x12x2x128xbf16>) k(%k : memref<1x12x2x128xbf16>) v(%v : memref<1x12x4x64xbf16>)
      g(%g : memref<1x12x4xf32>) beta(%beta : memref<1x12x4xbf16>)
      initial_state(%h0 : memref<1x4x128x64xf32>) final_state(%ht : memref<1x4x128x64xf32>)
      o(%o : memref<1x12x4x64xbf16>) {qk_l2norm}
  return
}

// -----

// Without qk_l2norm the producer stages k·q scale (and ik = 1, iq = scale):
// one sum, no rsqrt anywhere.
// CHECK-LABEL: func.func @plain
// CHECK: gpu.func @plain_recurrent({{.*}}) workgroup({{.*}}, %[[NS:.*]] : memref<24x4xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<2xi64, {{.*}}
// CHECK-NOT: rsqrt
// CHECK: vector.load %[[NS]]
// CHECK: } else {
// CHECK: gpu.shuffle xor %{{.*}}, %c1_i32
// CHECK-NOT: gpu.shuffle
// CHECK: vector.store %{{.*}}, %[[NS]]
// CHECK-NOT: rsqrt
// CHECK: gpu.return
func.func @plain(%q: memref<1x12x2x128xbf16>, %k: memref<1x12x2x128xbf16>, %v: memref<1x12x4x64xbf16>,
                 %g: memref<1x12x4xf32>, %beta: memref<1x12x4xbf16>,
                 %h0: memref<1x4x128x64xf32>, %ht: memref<1x4x128x64xf32>, %o: memref<1x12x4x64xbf16>) {
  gdn.recurrent q(%q : memref<1x12x2x128xbf16>) k(%k : memref<1x12x2x128xbf16>) v(%v : memref<1x12x4x64xbf16>)
      g(%g : memref<1x12x4xf32>) beta(%beta : memref<1x12x4xbf16>)
      initial_state(%h0 : memref<1x4x128x64xf32>) final_state(%ht : memref<1x4x128x64xf32>)
      o(%o : memref<1x12x4x64xbf16>)
  return
}

// -----

// A per-key decay (KDA) scales k and q before the sums: the consumers keep
// computing the norms, the producer stages none.
// CHECK-LABEL: func.func @kda
// CHECK: gpu.func @kda_recurrent
// CHECK-NOT: x4xf32, #gpu.address_space<workgroup>
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: rsqrt.approx
// CHECK: } else {
// CHECK-NOT: rsqrt
// CHECK: gpu.return
func.func @kda(%q: memref<1x12x2x128xbf16>, %k: memref<1x12x2x128xbf16>, %v: memref<1x12x4x64xbf16>,
               %g: memref<1x12x4x128xf32>, %beta: memref<1x12x4xbf16>,
               %h0: memref<1x4x128x64xf32>, %ht: memref<1x4x128x64xf32>, %o: memref<1x12x4x64xbf16>) {
  gdn.recurrent q(%q : memref<1x12x2x128xbf16>) k(%k : memref<1x12x2x128xbf16>) v(%v : memref<1x12x4x64xbf16>)
      g(%g : memref<1x12x4x128xf32>) beta(%beta : memref<1x12x4xbf16>)
      initial_state(%h0 : memref<1x4x128x64xf32>) final_state(%ht : memref<1x4x128x64xf32>)
      o(%o : memref<1x12x4x64xbf16>) {qk_l2norm}
  return
}
