// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<solve = chunk_parallel, chunk_prefetch_distance = 1, warps = 8>}" -convert-gdn-to-gpu | FileCheck %s
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<solve = chunk_parallel, chunk_prefetch_distance = 0, warps = 8>}" -convert-gdn-to-gpu | FileCheck %s --check-prefix=SYNC
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<solve = chunk_parallel, warps = 2>}" -convert-gdn-to-gpu | FileCheck %s --check-prefix=NARROW
// The tensor-core scan stages a bf16 v with its columns permuted by row
// (TensorCoreSolveKernel::stagedColumn, docs/cost-model.md#v-swizzle):
// column c of row j at c ^ (16 ((j / 2) mod 4)), in the cp.async copy's
// destination (the 8-column vector's first column), in the synchronous
// staging's store, and in the X step's loads, one permuted column for the
// rows 2i and 2i + 1 and the column pair. A CTA of fewer than 64 columns of
// v (2 warps: 32) keeps them in place.

// CHECK-LABEL: gpu.func @prefill_recurrent
// CHECK: %[[H:.*]] = arith.shrui %[[J:.*]], %c1 : index
// CHECK-NEXT: %[[A:.*]] = arith.andi %[[H]], %c3 : index
// CHECK-NEXT: %[[S:.*]] = arith.shli %[[A]], %c4 : index
// CHECK-NEXT: %[[X:.*]] = arith.xori %{{.*}}, %[[S]] : index
// CHECK-NEXT: arith.addi
// CHECK-NEXT: nvgpu.device_async_copy %arg2[{{.*}}], %arg11[%[[J]], %[[X]]], 8
// The loop's copies of the next chunk, into the other set of buffers:
// CHECK: arith.xori
// CHECK-NEXT: arith.addi
// CHECK-NEXT: nvgpu.device_async_copy %arg2
// CHECK: arith.shrui %[[R:.*]], %c1 : index
// CHECK-NEXT: arith.andi
// CHECK-NEXT: arith.shli
// CHECK-NEXT: %[[XC:.*]] = arith.xori
// CHECK-NEXT: vector.load %{{.*}}[%[[R]], %[[XC]]] {{.*}} : memref<16x128xbf16, #gpu.address_space<workgroup>>, vector<1xbf16>
// CHECK: %[[R1:.*]] = arith.addi %[[R]], %c1 : index
// CHECK-NEXT: vector.load %{{.*}}[%[[R1]], %[[XC]]] {{.*}} : memref<16x128xbf16, #gpu.address_space<workgroup>>, vector<1xbf16>
// SYNC-LABEL: gpu.func @prefill_recurrent
// SYNC: arith.xori
// SYNC: vector.store %{{.*}}, %arg11[%{{.*}}, %{{.*}}] {{.*}} : memref<16x128xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// NARROW-LABEL: gpu.func @prefill_recurrent
// NARROW-NOT: arith.xori
// NARROW: gpu.return
func.func @prefill(%q: memref<1x40x1x128xbf16>, %k: memref<1x40x1x128xbf16>, %v: memref<1x40x1x128xbf16>,
    %g: memref<1x40x1xf32>, %beta: memref<1x40x1xf32>, %s0: memref<1x1x128x128xf32>, %s1: memref<1x1x128x128xf32>,
    %o: memref<1x40x1x128xbf16>) {
  gdn.recurrent q(%q : memref<1x40x1x128xbf16>) k(%k : memref<1x40x1x128xbf16>) v(%v : memref<1x40x1x128xbf16>)
      g(%g : memref<1x40x1xf32>) beta(%beta : memref<1x40x1xf32>) initial_state(%s0 : memref<1x1x128x128xf32>)
      final_state(%s1 : memref<1x1x128x128xf32>) o(%o : memref<1x40x1x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
