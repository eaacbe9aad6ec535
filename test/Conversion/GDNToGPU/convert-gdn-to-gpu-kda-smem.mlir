// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<columns_per_lane = 4, warps = 2, staged_tokens = 32>}" -convert-gdn-to-gpu | FileCheck %s
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="chip=sm_86 schedule={#gdn.schedule<columns_per_lane = 4, warps = 2, staged_tokens = 64>}" -verify-diagnostics
// The per-key decay buffer [chunk, K] f32 counts in the shared-memory budget:
// 32 staged tokens of f32 q and k (K = 128) and 8 V columns take 32 * (1024 +
// 32 + 8) = 34048 bytes with a per-head g, static shared memory, and 32 *
// (1024 + 32 + 4 * 128 + 4) = 50304 bytes, past the 48 KiB a kernel may
// declare statically, with a per-key gk: views of dynamic shared memory at
// 16-byte aligned offsets (q, k, v, the decays, beta), which the launch
// requests. 64 tokens with a per-key gk (100608 bytes) exceed the 99 KiB
// (less 1 KiB kept for the kernel) of a CTA on sm_86.

// CHECK-LABEL: func.func @per_head_fits
// CHECK-NOT: dynamic_shared_memory_size
// CHECK: gpu.launch_func @gdn_kernels::@per_head_fits_recurrent
// CHECK-SAME: threads in (%c64{{.*}}) args(
func.func @per_head_fits(%q: memref<1x32x1x128xf32>, %k: memref<1x32x1x128xf32>, %v: memref<1x32x1x64xf32>,
                         %g: memref<1x32x1xf32>, %o: memref<1x32x1x64xf32>) {
  gdn.recurrent q(%q : memref<1x32x1x128xf32>) k(%k : memref<1x32x1x128xf32>) v(%v : memref<1x32x1x64xf32>)
      g(%g : memref<1x32x1xf32>) o(%o : memref<1x32x1x64xf32>) {state_layout = #gdn.layout<vk>}
  return
}

// -----

// CHECK-LABEL: func.func @per_key_dynamic
// CHECK: %[[BYTES:.*]] = arith.constant 50304 : i32
// CHECK: gpu.launch_func @gdn_kernels::@per_key_dynamic_recurrent {{.*}} dynamic_shared_memory_size %[[BYTES]] args(
// CHECK-LABEL: gpu.func @per_key_dynamic_recurrent
// CHECK-NOT: workgroup(
// CHECK: %[[BASE:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK: memref.view %[[BASE]][%c0{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<32x128xf32, #gpu.address_space<workgroup>>
// CHECK: memref.view %[[BASE]][%c16384{{.*}}][] : {{.*}} to memref<32x128xf32, #gpu.address_space<workgroup>>
// CHECK: memref.view %[[BASE]][%c32768{{.*}}][] : {{.*}} to memref<32x8xf32, #gpu.address_space<workgroup>>
// CHECK: memref.view %[[BASE]][%c33792{{.*}}][] : {{.*}} to memref<32x128xf32, #gpu.address_space<workgroup>>
// CHECK: memref.view %[[BASE]][%c50176{{.*}}][] : {{.*}} to memref<32xf32, #gpu.address_space<workgroup>>
func.func @per_key_dynamic(%q: memref<1x32x1x128xf32>, %k: memref<1x32x1x128xf32>, %v: memref<1x32x1x64xf32>,
                           %g: memref<1x32x1x128xf32>, %o: memref<1x32x1x64xf32>) {
  // expected-error @+1 {{cannot be lowered to the GPU: staged_tokens = 64 needs 100608 bytes of shared memory, more than the 100352 a CTA has on sm_86}}
  gdn.recurrent q(%q : memref<1x32x1x128xf32>) k(%k : memref<1x32x1x128xf32>) v(%v : memref<1x32x1x64xf32>)
      g(%g : memref<1x32x1x128xf32>) o(%o : memref<1x32x1x64xf32>) {state_layout = #gdn.layout<vk>}
  return
}
