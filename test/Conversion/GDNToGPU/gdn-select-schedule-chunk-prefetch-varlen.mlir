// RUN: gdn-opt %s -gdn-select-schedule | FileCheck %s
// RUN: gdn-opt %s -gdn-select-schedule -convert-gdn-to-gpu | FileCheck %s --check-prefix=LOWER
// A varlen prefill of 4 sequences (32 tokens each on average: under 64,
// not chunk_parallel) takes the one-launch tensor-core form, whose grid (4
// x 32 CTAs) runs one CTA an SM:
// chunk_prefetch_distance = 1 (docs/cost-model.md#chunk-prefetch).
// The one-launch form stages its log gates itself, after the wait and
// before the barrier (q, k and v: 3 copies a thread a chunk).
// CHECK-LABEL: func.func @varlen4
// LOWER-LABEL: gpu.func @varlen4_recurrent
// LOWER-COUNT-3: nvgpu.device_async_copy
// LOWER: nvgpu.device_async_create_group
// LOWER: scf.for
// LOWER-COUNT-3: nvgpu.device_async_copy
// LOWER: nvgpu.device_async_create_group
// LOWER-NEXT: nvgpu.device_async_wait %{{.*}} {numGroups = 1 : i32}
// LOWER: memref.store %{{.*}}, %{{.*}}[%thread_id_x] : memref<16xf32, #gpu.address_space<workgroup>>
// LOWER: memref.store %{{.*}}, %{{.*}}[%thread_id_x] : memref<16xf32, #gpu.address_space<workgroup>>
// LOWER-NEXT: }
// LOWER-NEXT: gpu.barrier
// LOWER: nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
// CHECK: solve = tensor_cores, {{.*}}chunk_prefetch_distance = 1,
func.func @varlen4(%q: memref<1x128x16x128xbf16>, %k: memref<1x128x16x128xbf16>, %v: memref<1x128x32x128xbf16>, %g: memref<1x128x32xf32>, %beta: memref<1x128x32xbf16>, %cu: memref<5xi32>, %s: memref<4x32x128x128xf32>, %o: memref<1x128x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x128x16x128xbf16>) k(%k : memref<1x128x16x128xbf16>) v(%v : memref<1x128x32x128xbf16>) g(%g : memref<1x128x32xf32>) beta(%beta : memref<1x128x32xbf16>) cu_seqlens(%cu : memref<5xi32>) initial_state(%s : memref<4x32x128x128xf32>) final_state(%s : memref<4x32x128x128xf32>) o(%o : memref<1x128x32x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
