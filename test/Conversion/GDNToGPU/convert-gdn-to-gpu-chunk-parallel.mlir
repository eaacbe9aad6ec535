// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<solve = chunk_parallel>}" | FileCheck %s --check-prefix=SCHED
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule | FileCheck %s --check-prefix=SCHED
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<solve = chunk_parallel, staged_tokens = 8>}" | FileCheck %s --check-prefix=C8
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<launch = programmatic>}" | FileCheck %s --check-prefix=PDL
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<solve = chunk_parallel>}" -convert-gdn-to-gpu | FileCheck %s
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<solve = chunk_parallel, chunk_prefetch_distance = 0>}" -convert-gdn-to-gpu | FileCheck %s --check-prefix=SCAN
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<solve = chunk_parallel, precision = tf32>}" -convert-gdn-to-gpu | FileCheck %s --check-prefix=TF32
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<solve = chunk_parallel, precision = tf32x3>}" -convert-gdn-to-gpu | FileCheck %s --check-prefix=PRECISE
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<solve = chunk_parallel, staged_tokens = 32, precision = tf32>}" -convert-gdn-to-gpu | FileCheck %s --check-prefix=C32
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<solve = chunk_parallel, chunk_prefetch_distance = 1>}" -convert-gdn-to-gpu | FileCheck %s --check-prefix=PF
// solve = chunk_parallel: two launches over one workspace. A gpu.alloc of
// N * HV * ceil(T / C) records of 2 C (C + 4) + 3 C + 4 floats (2 * 2 * 3 *
// 692 = 8304 here), the chunk solves over (chunks, H, N) in CTAs of at
// most 4 warps (HV = 2 H: a CTA solves both value heads of its key head,
// docs/cost-model.md#shared-gram), the scan over (V blocks, HV, N), the
// workspace freed after both. The first launch forms the Gram products (K
// Kᵀ, Q Qᵀ for the norms, Q Kᵀ: 3 x 2 bf16 m16n8k16 nvvm.mma.sync, 16 keys
// an mma, once for both value heads), solves and
// writes each record in 16-byte vectors; the scan has no Gram pass and no
// decay masks (no exp): it stages the record into the solve's buffers with
// q, k and v and runs only the state's products: under the cost model's
// precision = bf16 (bf16 q and k, K = 16, 16-token chunks) the products
// with q and k on bf16 m16n8k16 nvvm.mma.sync, 16 keys or 16 tokens an mma
// (P and R 1 x 2 x 2, the update 2 x 1), Uᵀ and Oᵀ on tf32 (2 x 2 each);
// pinned tf32, one m16n8k8 mma each (P and R 2 x 2 x 2, Uᵀ 2 x 2, Oᵀ 2 x 2,
// the update 2 x 2 = 20 mma, f32 operands rounded to the nearest tf32: an
// add of 0x1000 before the mask); pinned tf32x3, split in three (P and R 2
// x 2 x 2 x 2, Uᵀ 2 x 2 x 3, Oᵀ 2 x 2 x 3, the update 2 x 2 x 2 = 48). The
// scan's grid (4 CTAs) runs one CTA an SM, so the cost model takes
// chunk_prefetch_distance = 1 (PF below); pinned 0, each chunk's copies are
// loads issued before the barrier, every one before its first store (SCAN).

// The cost model takes it for several chunks of a fixed batch (T = 40 >
// 16), but not under a pinned programmatic launch, which the second launch
// could not honour: the one-launch tensor-core solve then.
// PDL: solve = tensor_cores,
// SCHED: gdn.schedule = #gdn.schedule<columns_per_lane = 2, lanes_along_v = 8, warps = 2, staged_tokens = 16, {{.*}}solve = chunk_parallel, precision = bf16, {{.*}}chunk_prefetch_distance = 1,
// CHECK-LABEL: func.func @prefill
// CHECK: %[[W:.*]] = gpu.alloc () : memref<8304xf32>
// CHECK: gpu.launch_func @gdn_kernels::@prefill_chunk_solves blocks in (%c3, %c1, %c2{{.*}}) threads in (%c64, {{.*}} args({{.*}}, %[[W]] : memref<8304xf32>)
// CHECK: gpu.launch_func @gdn_kernels::@prefill_recurrent blocks in (%c1{{.*}}, %c2{{.*}}, %c2{{.*}}) threads in (%c64{{.*}} args({{.*}}, %[[W]] : memref<8304xf32>)
// CHECK-NEXT: gpu.dealloc %[[W]] : memref<8304xf32>
// CHECK-LABEL: gpu.func @prefill_chunk_solves
// CHECK-SAME: %[[REC:arg8]]: memref<8304xf32>
// q and k staged as cp.async copies, all issued before the one wait, the
// log gates staged while they fly (docs/cost-model.md#chunk-solves-copies):
// CHECK: %[[QC:.*]] = nvgpu.device_async_copy %arg0
// CHECK: %[[KC:.*]] = nvgpu.device_async_copy %arg1
// CHECK-NEXT: %[[G:.*]] = nvgpu.device_async_create_group %[[QC]], %[[KC]]
// CHECK: memref.load %arg3
// CHECK: memref.store %{{.*}}, %arg12[%thread_id_x]
// CHECK: nvgpu.device_async_wait %[[G]] {numGroups = 0 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-6: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>
// CHECK-NOT: nvvm.mma.sync
// CHECK: vector.store %{{.*}}, %[[REC]][%{{.*}}] {alignment = 16 : i64} : memref<8304xf32>, vector<4xf32>
// CHECK: gpu.return
// CHECK-LABEL: gpu.func @prefill_recurrent
// CHECK-NOT: ex2.approx
// CHECK: arith.constant 4096 : i32
// CHECK-COUNT-4: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>
// CHECK-NOT: nvvm.mma.sync
// CHECK-COUNT-8: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<tf32>, multiplicandBPtxType = #nvvm.mma_type<tf32>, shape = #nvvm.shape<m = 16, n = 8, k = 8>
// CHECK-NOT: nvvm.mma.sync
// CHECK-COUNT-2: nvvm.mma.sync {{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 16>
// CHECK-NOT: nvvm.mma.sync
// CHECK-NOT: ex2.approx
// CHECK: gpu.return
// TF32-LABEL: gpu.func @prefill_recurrent
// TF32: arith.constant 4096 : i32
// TF32-COUNT-20: nvvm.mma.sync {{.*}}mma_type<tf32>
// TF32-NOT: nvvm.mma.sync
// TF32: gpu.return
// PRECISE-LABEL: gpu.func @prefill_recurrent
// PRECISE-NOT: arith.constant 4096 : i32
// PRECISE-COUNT-48: nvvm.mma.sync {{.*}}mma_type<tf32>
// PRECISE-NOT: nvvm.mma.sync
// PRECISE: gpu.return
// C32: gpu.alloc () : memref<19232xf32>
// C32-LABEL: gpu.func @prefill_chunk_solves
// C32-COUNT-16: nvvm.mma.sync
// C32-NOT: nvvm.mma.sync
// C32-LABEL: gpu.func @prefill_recurrent
// C32-COUNT-56: nvvm.mma.sync {{.*}}mma_type<tf32>
// C32-NOT: nvvm.mma.sync
// C32: gpu.return
// chunk_prefetch_distance = 1: the scan's chunks in two sets of staging
// buffers, each chunk's q, k, v rows and record (8 copies a thread: q, k, v
// one each, Tm and M three, the factors one, gamma_C one) in cp.async
// copies issued a chunk ahead, the first chunk's before the loop; in the
// loop the next chunk's copies go to the other set, the wait leaves them in
// flight (numGroups = 1), the chunk is solved from its set, and the last
// copies are waited for after the loop. No synchronous record load.
// PF-LABEL: gpu.func @prefill_recurrent
// PF-COUNT-8: nvgpu.device_async_copy
// PF: nvgpu.device_async_create_group
// PF: scf.for
// PF-COUNT-6: arith.select {{.*}} : memref<{{.*}}, #gpu.address_space<workgroup>>
// PF-COUNT-8: nvgpu.device_async_copy
// PF: nvgpu.device_async_create_group
// PF-NEXT: nvgpu.device_async_wait %{{.*}} {numGroups = 1 : i32}
// PF-COUNT-6: arith.select {{.*}} : memref<{{.*}}, #gpu.address_space<workgroup>>
// PF-NEXT: gpu.barrier
// PF-NOT: %arg8
// PF: gpu.barrier
// PF-NOT: %arg8
// PF: nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
// PF: gpu.return
// SCAN-LABEL: gpu.func @prefill_recurrent
// SCAN-COUNT-3: vector.load %arg8[%{{.*}}] {alignment = 16 : i64} : memref<8304xf32>, vector<4xf32>
// SCAN: memref.load %arg8
// SCAN: vector.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<2x16x20xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// SCAN: gpu.barrier
func.func @prefill(%q: memref<2x40x1x16xbf16>, %k: memref<2x40x1x16xbf16>, %v: memref<2x40x2x32xbf16>, %g: memref<2x40x2xf32>, %beta: memref<2x40x2xf32>, %s: memref<2x2x32x16xf32>, %o: memref<2x40x2x32xbf16>) {
  gdn.recurrent q(%q : memref<2x40x1x16xbf16>) k(%k : memref<2x40x1x16xbf16>) v(%v : memref<2x40x2x32xbf16>) g(%g : memref<2x40x2xf32>) beta(%beta : memref<2x40x2xf32>) initial_state(%s : memref<2x2x32x16xf32>) final_state(%s : memref<2x2x32x16xf32>) o(%o : memref<2x40x2x32xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// f16 q and k, K = 8 or a pinned chunk of 8 tokens keep one tf32 product:
// precision = bf16 takes bf16 q and k in whole 16 x 16 tiles.
// SCHED-LABEL: func.func @prefill_f16
// SCHED: staged_tokens = 16, {{.*}}solve = chunk_parallel, precision = tf32,
// SCHED-LABEL: func.func @prefill_k8
// SCHED: staged_tokens = 16, {{.*}}solve = chunk_parallel, precision = tf32,
// C8-LABEL: func.func @prefill(
// C8: staged_tokens = 8, {{.*}}solve = chunk_parallel, precision = tf32,
func.func @prefill_f16(%q: memref<2x40x1x16xf16>, %k: memref<2x40x1x16xf16>, %v: memref<2x40x2x32xf16>, %g: memref<2x40x2xf32>, %beta: memref<2x40x2xf32>, %o: memref<2x40x2x32xf16>) {
  gdn.recurrent q(%q : memref<2x40x1x16xf16>) k(%k : memref<2x40x1x16xf16>) v(%v : memref<2x40x2x32xf16>) g(%g : memref<2x40x2xf32>) beta(%beta : memref<2x40x2xf32>) o(%o : memref<2x40x2x32xf16>) {state_layout = #gdn.layout<vk>}
  return
}
func.func @prefill_k8(%q: memref<2x40x1x8xbf16>, %k: memref<2x40x1x8xbf16>, %v: memref<2x40x2x32xbf16>, %g: memref<2x40x2xf32>, %beta: memref<2x40x2xf32>, %o: memref<2x40x2x32xbf16>) {
  gdn.recurrent q(%q : memref<2x40x1x8xbf16>) k(%k : memref<2x40x1x8xbf16>) v(%v : memref<2x40x2x32xbf16>) g(%g : memref<2x40x2xf32>) beta(%beta : memref<2x40x2xf32>) o(%o : memref<2x40x2x32xbf16>) {state_layout = #gdn.layout<vk>}
  return
}
