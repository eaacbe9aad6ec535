// RUN: gdn-opt %s -gdn-select-schedule -convert-gdn-to-gpu | FileCheck %s

// The bandwidth-bound bf16 pool decode (state_prefetch_distance = 924): after
// its own state loads, thread 0 finds the CTA 924 later in launch order
// (x = V block fastest, then hv, then n), reads that sequence's pool slot
// and, unless it is padding (< 0), prefetches its 32 rows x 128 keys x 2
// bytes = 8192 bytes of state into L2.
// CHECK-LABEL: gpu.func @pool_decode_bf16_recurrent
// CHECK: vector.load %{{.*}} : memref<68x32x128x128xbf16>, vector<8xbf16>
// CHECK: %[[LATER:.*]] = arith.addi %{{.*}}, %c924 : index
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[LATER]], %c8192 : index
// CHECK: scf.if
// CHECK: %[[REST:.*]] = arith.divui %[[LATER]], %c4 : index
// CHECK: %[[N:.*]] = arith.divui %[[REST]], %c32 : index
// CHECK: memref.load %{{.*}}[%[[N]]] : memref<64xi32>
// CHECK: scf.if
// CHECK: nvvm.cp.async.bulk.prefetch %{{.*}}, %c8192_i32
// CHECK: vector.store
func.func @pool_decode_bf16(%q: memref<64x1x16x128xbf16>, %k: memref<64x1x16x128xbf16>,
                            %v: memref<64x1x32x128xbf16>, %g: memref<64x1x32xf32>,
                            %idx: memref<64xi32>, %pool: memref<68x32x128x128xbf16>,
                            %o: memref<64x1x32x128xbf16>) {
  gdn.recurrent q(%q : memref<64x1x16x128xbf16>) k(%k : memref<64x1x16x128xbf16>)
      v(%v : memref<64x1x32x128xbf16>) g(%g : memref<64x1x32xf32>)
      state_indices(%idx : memref<64xi32>)
      initial_state(%pool : memref<68x32x128x128xbf16>) final_state(%pool : memref<68x32x128x128xbf16>)
      o(%o : memref<64x1x32x128xbf16>) {state_layout = #gdn.layout<vk>}
  return
}

// The tensor-core solve of a single chunk (FLA-style T = 12 N = 64,
// input_prefetch_distance = 132): before its own staging loads, thread t < 12
// of a CTA with a CTA 132 later in launch order (of 2048) prefetches into L2
// token t's rows of that CTA's sequence and heads: q and k (256 bytes, two
// lines each), its V block of v (two lines), g and beta (one each).
// CHECK-LABEL: gpu.func @fla_recurrent
// CHECK: %[[LATER2:.*]] = arith.addi %{{.*}}, %c132 : index
// CHECK: %[[MINE:.*]] = arith.cmpi ult, %thread_id_x, %c12 : index
// CHECK: %[[IN2:.*]] = arith.cmpi ult, %[[LATER2]], %c2048 : index
// CHECK: %[[BOTH:.*]] = arith.andi %[[MINE]], %[[IN2]] : i1
// CHECK: scf.if %[[BOTH]] {
// CHECK-COUNT-2: extract_strided_metadata %arg0 : memref<64x12x16x128xbf16>
// CHECK-COUNT-2: extract_strided_metadata %arg1 : memref<64x12x16x128xbf16>
// CHECK-COUNT-2: extract_strided_metadata %arg2 : memref<64x12x32x128xbf16>
// CHECK: extract_strided_metadata %arg3 : memref<64x12x32xf32>
// CHECK: extract_strided_metadata %arg4 : memref<64x12x32xbf16>
// CHECK: nvvm.prefetch level =  L2
// CHECK-NEXT: }
// CHECK: vector.load %arg0
// CHECK-NOT: nvvm.prefetch
// CHECK: gpu.return
func.func @fla(%q: memref<64x12x16x128xbf16>, %k: memref<64x12x16x128xbf16>,
               %v: memref<64x12x32x128xbf16>, %g: memref<64x12x32xf32>,
               %beta: memref<64x12x32xbf16>, %h0: memref<64x32x128x128xf32>,
               %ht: memref<64x32x128x128xf32>, %o: memref<64x12x32x128xbf16>) {
  gdn.recurrent q(%q : memref<64x12x16x128xbf16>) k(%k : memref<64x12x16x128xbf16>)
      v(%v : memref<64x12x32x128xbf16>) g(%g : memref<64x12x32xf32>)
      beta(%beta : memref<64x12x32xbf16>)
      initial_state(%h0 : memref<64x32x128x128xf32>) final_state(%ht : memref<64x32x128x128xf32>)
      o(%o : memref<64x12x32x128xbf16>) {qk_l2norm}
  return
}
