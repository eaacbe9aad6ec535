// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<solve = tensor_cores>}" | FileCheck %s --check-prefix=SCHED
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<solve = tensor_cores>}" -convert-gdn-to-gpu | FileCheck %s
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<solve = tensor_cores>}" -convert-gdn-to-gpu | FileCheck %s --check-prefix=CONST
// The chunked solve on tensor cores (solve = tensor_cores): 16 V columns a
// warp (2 a lane x 8 lanes along V), chunks of whole 8-token mma tiles (T =
// 3 takes 8 rows, 5 of them zeros), q and k rows padded by 16 bytes in
// shared memory, the solve's matrices [2, C, C + 4] and token factors
// [5, C]. Every product is an m16n8k8 tf32 nvvm.mma.sync: the Gram products K Kᵀ,
// Q Qᵀ, Q Kᵀ (on warp 0 / 1, next to the decay masks of all threads), a
// barrier, the masks applied and the factors, a barrier, the substitution,
// a barrier, then the state's fragments. f32 q and k are split like the
// state (3 mma a product): Gram 3 x 2 key tiles x 3, P and R 2 x 2 x 3, Uᵀ 3,
// Oᵀ 3, the update 2 x 3 = 42; bf16 q and k are exact in tf32 (2 mma where
// one operand is q or k) and their Gram products take bf16 m16n8k16
// nvvm.mma.sync, 16 keys an mma; without qk_l2norm Q Qᵀ (only its diagonal,
// q's norms, is used) is not formed: Gram 2 bf16, then 8 + 3 + 3 + 4 = 18.

// SCHED-LABEL: func.func @f32qk
// SCHED: gdn.schedule = #gdn.schedule<columns_per_lane = 2, lanes_along_v = 8, warps = 1, staged_tokens = 8, {{.*}}solve = tensor_cores,
// CHECK-LABEL: gpu.func @f32qk_recurrent
// CHECK-SAME: workgroup(%{{.*}} : memref<8x20xf32, #gpu.address_space<workgroup>>{{.*}}memref<2x8x8xf32, #gpu.address_space<workgroup>>{{.*}}memref<3x8xf32, #gpu.address_space<workgroup>>{{.*}}memref<2x8x12xf32, #gpu.address_space<workgroup>>{{.*}}memref<5x8xf32, #gpu.address_space<workgroup>>
// CHECK-SAME: known_block_size = array<i32: 32, 1, 1>
// CHECK: gpu.barrier
// CHECK-COUNT-18: nvvm.mma.sync {{.*}}mma_type<tf32>
// CHECK-COUNT-3: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK-COUNT-24: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<tf32>, multiplicandBPtxType = #nvvm.mma_type<tf32>, shape = #nvvm.shape<m = 16, n = 8, k = 8>
// CHECK-NOT: nvvm.mma.sync
// The state back in its layout: vk, two adjacent keys a store.
// CHECK: vector.store {{.*}} : memref<1x1x16x16xf32>, vector<2xf32>
// CHECK: gpu.return
// Each constant is built once, at the top of the kernel: the tf32 mask of
// every split operand is one op.
// CONST-LABEL: gpu.func @f32qk_recurrent
// CONST: arith.constant -8192 : i32
// CONST-NOT: arith.constant -8192 : i32
// CONST: gpu.return
func.func @f32qk(%q: memref<1x3x1x16xf32>, %k: memref<1x3x1x16xf32>,
    %v: memref<1x3x1x16xf32>, %g: memref<1x3x1xf32>, %beta: memref<1x3x1xf32>,
    %state: memref<1x1x16x16xf32>, %o: memref<1x3x1x16xf32>) {
  gdn.recurrent q(%q : memref<1x3x1x16xf32>) k(%k : memref<1x3x1x16xf32>)
      v(%v : memref<1x3x1x16xf32>) g(%g : memref<1x3x1xf32>)
      beta(%beta : memref<1x3x1xf32>)
      initial_state(%state : memref<1x1x16x16xf32>)
      final_state(%state : memref<1x1x16x16xf32>) o(%o : memref<1x3x1x16xf32>)
      {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// SCHED-LABEL: func.func @bf16qk
// SCHED: solve = tensor_cores,
// CHECK-LABEL: gpu.func @bf16qk_recurrent
// CHECK-SAME: workgroup(%{{.*}} : memref<8x24xbf16, #gpu.address_space<workgroup>>
// CHECK-COUNT-2: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>
// CHECK-NOT: nvvm.mma.sync
// CHECK-COUNT-18: nvvm.mma.sync {{.*}}mma_type<tf32>
// CHECK-NOT: nvvm.mma.sync
// kv: a lane's two V columns (tile rows g, g + 8) side by side, 8 bytes a
// store.
// CHECK: vector.store {{.*}} : memref<1x1x16x16xf32>, vector<2xf32>
// CHECK-NOT: vector.store {{.*}} : memref<1x1x16x16xf32>, vector<1xf32>
func.func @bf16qk(%q: memref<1x3x1x16xbf16>, %k: memref<1x3x1x16xbf16>,
    %v: memref<1x3x1x16xbf16>, %g: memref<1x3x1xf32>, %beta: memref<1x3x1xf32>,
    %state: memref<1x1x16x16xf32>, %o: memref<1x3x1x16xbf16>) {
  gdn.recurrent q(%q : memref<1x3x1x16xbf16>) k(%k : memref<1x3x1x16xbf16>)
      v(%v : memref<1x3x1x16xbf16>) g(%g : memref<1x3x1xf32>)
      beta(%beta : memref<1x3x1xf32>)
      initial_state(%state : memref<1x1x16x16xf32>)
      final_state(%state : memref<1x1x16x16xf32>) o(%o : memref<1x3x1x16xbf16>)
      {state_layout = #gdn.layout<kv>}
  return
}

// -----

// Four warps with qk_l2norm: the Gram pass is one product deep, K Kᵀ on
// warp 0, Q Kᵀ on warp 1, Q Qᵀ (the q norms) on warp 2; the forward
// substitution runs over the T = 3 real rows of the 8-row chunk only (one
// diagonal test a row), the rows past them stored as zeros.
// CHECK-LABEL: gpu.func @qnorms_recurrent
// CHECK: %[[W0:.*]] = arith.cmpi eq, %[[WARP:.*]], %c0 : index
// CHECK-NEXT: scf.if %[[W0]] {
// CHECK: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
// CHECK: %[[W1:.*]] = arith.cmpi eq, %[[WARP]], %c1 : index
// CHECK-NEXT: scf.if %[[W1]] {
// CHECK: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
// CHECK: %[[W2:.*]] = arith.cmpi eq, %[[WARP]], %c2 : index
// CHECK-NEXT: scf.if %[[W2]] {
// CHECK: nvvm.mma.sync
// CHECK: gpu.barrier
// CHECK: gpu.barrier
// CHECK: memref.store %{{.*}}, %{{.*}}[%c0, %c7, %thread_id_x]
// CHECK: arith.cmpi eq, %thread_id_x, %c0 : index
// CHECK: arith.cmpi eq, %thread_id_x, %c1 : index
// CHECK: arith.cmpi eq, %thread_id_x, %c2 : index
// CHECK-NOT: arith.cmpi eq, %thread_id_x
// CHECK: gpu.barrier
func.func @qnorms(%q: memref<1x3x1x16xbf16>, %k: memref<1x3x1x16xbf16>,
    %v: memref<1x3x1x64xbf16>, %g: memref<1x3x1xf32>, %beta: memref<1x3x1xf32>,
    %state: memref<1x1x16x64xf32>, %o: memref<1x3x1x64xbf16>) {
  gdn.recurrent q(%q : memref<1x3x1x16xbf16>) k(%k : memref<1x3x1x16xbf16>)
      v(%v : memref<1x3x1x64xbf16>) g(%g : memref<1x3x1xf32>)
      beta(%beta : memref<1x3x1xf32>)
      initial_state(%state : memref<1x1x16x64xf32>)
      final_state(%state : memref<1x1x16x64xf32>) o(%o : memref<1x3x1x64xbf16>)
      {state_layout = #gdn.layout<kv>, qk_l2norm, gdn.schedule = #gdn.schedule<warps = 4>}
  return
}
