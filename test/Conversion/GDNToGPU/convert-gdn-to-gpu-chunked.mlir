// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<columns_per_lane = 1, warps = 1, solve = cuda_cores>}" -convert-gdn-to-gpu | FileCheck %s
// The chunked (WY) solve of a staged chunk: q, k, v and the log gates staged
// (rows past the chunk's tokens zero-filled), the chunk's Gram matrices once a
// CTA ([2, C, C], one K loop per (i, j) pair) and the per-token decays and
// norms ([3, C]), one barrier, then every token's Sᵀk and Sᵀq as independent
// shuffle trees (no token loop carrying the state), and one rank-C update.

// CHECK-LABEL: gpu.func @chunk2_recurrent
// CHECK-SAME: workgroup({{.*}}memref<2x2x2xf32, #gpu.address_space<workgroup>>{{.*}}memref<3x2xf32, #gpu.address_space<workgroup>>
// Staged log gate: g itself, no exp.
// CHECK: %[[G:.*]] = memref.load %{{.*}} : memref<1x2x1xf32>
// CHECK: scf.yield %[[G]]
// CHECK: gpu.barrier
// The Gram pass: pairs (i, j) over the CTA's threads, a K loop of three dots.
// CHECK: scf.for
// CHECK: scf.for {{.*}} iter_args
// CHECK: memref.store {{.*}} : memref<2x2x2xf32, #gpu.address_space<workgroup>>
// CHECK: memref.store {{.*}} : memref<2x2x2xf32, #gpu.address_space<workgroup>>
// CHECK: memref.store {{.*}} : memref<3x2xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK-NOT: scf.for
// CHECK-NOT: gpu.barrier
// Sᵀk of both tokens (2 x 5 shuffles), then the substitution, then Sᵀq.
// CHECK-COUNT-10: gpu.shuffle  xor
// CHECK-NOT: gpu.shuffle
// The substitution: beta, then gram0 (token 1 reads w_0).
// CHECK: memref.load {{.*}} : memref<2xf32, #gpu.address_space<workgroup>>
// CHECK: memref.load {{.*}} : memref<2x2x2xf32, #gpu.address_space<workgroup>>
// CHECK-COUNT-10: gpu.shuffle  xor
// CHECK-NOT: gpu.shuffle
// CHECK-NOT: scf.for
// CHECK-NOT: gpu.barrier
// CHECK: vector.store {{.*}} : memref<1x2x1x32xf32>, vector<1xf32>
// CHECK: vector.store {{.*}} : memref<1x2x1x32xf32>, vector<1xf32>
// CHECK: vector.store {{.*}} : memref<1x1x32x64xf32>, vector<2xf32>
// CHECK-NEXT: gpu.return
func.func @chunk2(%q: memref<1x2x1x64xf32>, %k: memref<1x2x1x64xf32>,
    %v: memref<1x2x1x32xf32>, %g: memref<1x2x1xf32>, %beta: memref<1x2x1xf32>,
    %state: memref<1x1x32x64xf32>, %o: memref<1x2x1x32xf32>) {
  gdn.recurrent q(%q : memref<1x2x1x64xf32>) k(%k : memref<1x2x1x64xf32>)
      v(%v : memref<1x2x1x32xf32>) g(%g : memref<1x2x1xf32>)
      beta(%beta : memref<1x2x1xf32>)
      initial_state(%state : memref<1x1x32x64xf32>)
      final_state(%state : memref<1x1x32x64xf32>) o(%o : memref<1x2x1x32xf32>)
      {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// Varlen (partial chunks): staged rows past the chunk's tokens are zeros, the
// gates there g = beta = 0, outputs stored only for real tokens, and a barrier
// before the next chunk refills the buffers.
// CHECK-LABEL: gpu.func @varlen_recurrent
// CHECK: scf.for {{.*}} iter_args
// CHECK: scf.if
// CHECK: vector.load {{.*}} : memref<1x6x1x32xbf16>, vector<8xbf16>
// CHECK: } else {
// CHECK: vector.store %{{.*}}, %{{.*}} : memref<4x32xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK: gpu.barrier
// CHECK: gpu.barrier
// CHECK: arith.cmpi ult, %{{.*}}, %{{.*}} : index
// CHECK: scf.if
// CHECK: vector.store {{.*}} : memref<1x6x2x16xbf16>
// CHECK: gpu.barrier
// CHECK: scf.yield
func.func @varlen(%q: memref<1x6x1x32xbf16>, %k: memref<1x6x1x32xbf16>,
    %v: memref<1x6x2x16xbf16>, %cu: memref<3xi32>,
    %state: memref<2x2x16x32xf32>, %o: memref<1x6x2x16xbf16>) {
  gdn.recurrent q(%q : memref<1x6x1x32xbf16>) k(%k : memref<1x6x1x32xbf16>)
      v(%v : memref<1x6x2x16xbf16>) cu_seqlens(%cu : memref<3xi32>)
      initial_state(%state : memref<2x2x16x32xf32>)
      final_state(%state : memref<2x2x16x32xf32>) o(%o : memref<1x6x2x16xbf16>)
      {gdn.schedule = #gdn.schedule<staged_tokens = 4>, state_layout = #gdn.layout<vk>}
  return
}
