// RUN: gdn-opt %s -gdn-select-schedule -test-gdn-kernel-pieces="piece=tile-io" | FileCheck %s --check-prefix=TILE
// RUN: gdn-opt %s -gdn-select-schedule -test-gdn-kernel-pieces="piece=staging" | FileCheck %s --check-prefix=STAGE
// RUN: gdn-opt %s -gdn-select-schedule -test-gdn-kernel-pieces="piece=token" | FileCheck %s --check-prefix=TOKEN
// RUN: not gdn-opt %s -test-gdn-kernel-pieces="piece=none" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not gdn-opt %s -gdn-select-schedule="schedule={#gdn.schedule<solve = tensor_cores, chunk_prefetch_distance = 1>}" -test-gdn-kernel-pieces="piece=staging" 2>&1 | FileCheck %s --check-prefix=CHUNKED
// RUN: not gdn-opt %s -gdn-select-schedule="schedule={#gdn.schedule<solve = tensor_cores, chunk_prefetch_distance = 0>}" -test-gdn-kernel-pieces="piece=staging" 2>&1 | FileCheck %s --check-prefix=CHUNKED

// The pieces of a GPU kernel (lib/Conversion/GDNToGPU/KernelContext.h),
// each built alone by the test pass. A staged bf16 verify in vk, K = V = 64:
// the cost model gives 2 columns x 4 lanes along V, so 8 lanes along K of
// 8 keys each (16-byte rows); 4 warps of 8 columns cover a CTA's 32.

// The state tile: a lane's 2 rows, one 16-byte load each at
// (n, hv, v0 + r, k0), v0 = 32 block + 8 warp + 2 vLane, k0 = 8 kLane;
// stored back to the same elements.
// TILE: gpu.module @gdn_test_pieces
// TILE: gpu.func @verify_recurrent
// TILE-SAME: known_block_size = array<i32: 128, 1, 1>
// TILE: %[[LANE:.*]] = arith.remui %thread_id_x, %c32
// TILE: %[[WARP:.*]] = arith.divui %thread_id_x, %c32
// TILE: %[[KLANE:.*]] = arith.divui %[[LANE]], %c4
// TILE: %[[VLANE:.*]] = arith.remui %[[LANE]], %c4
// TILE: %[[B:.*]] = arith.muli %block_id_x, %c32
// TILE: %[[W:.*]] = arith.muli %[[WARP]], %c8
// TILE: %[[BW:.*]] = arith.addi %[[B]], %[[W]]
// TILE: %[[L:.*]] = arith.muli %[[VLANE]], %c2
// TILE: %[[V0:.*]] = arith.addi %[[BW]], %[[L]]
// TILE: %[[K0:.*]] = arith.muli %[[KLANE]], %c8
// TILE: vector.load %{{.*}}[%block_id_z, %block_id_y, %[[V0]], %[[K0]]] {alignment = 16 : i64} : memref<2x2x64x64xbf16>, vector<8xbf16>
// TILE: %[[V1:.*]] = arith.addi %[[V0]], %c1
// TILE: vector.load %{{.*}}[%block_id_z, %block_id_y, %[[V1]], %[[K0]]] {alignment = 16 : i64} : memref<2x2x64x64xbf16>, vector<8xbf16>
// TILE-NOT: gpu.shuffle
// TILE: vector.store %{{.*}}[%block_id_z, %block_id_y, %[[V0]], %[[K0]]] {alignment = 16 : i64} : memref<2x2x64x64xbf16>, vector<8xbf16>
// TILE: vector.store %{{.*}}[%block_id_z, %block_id_y, %{{.*}}, %[[K0]]] {alignment = 16 : i64} : memref<2x2x64x64xbf16>, vector<8xbf16>
// TILE-NEXT: gpu.return

// Staging: q, k [4, 64] and the CTA's 32 columns of v [4, 32] in shared
// memory, 16-byte vectors over the CTA's 128 threads; a thread a token
// stores its gates; the state loads once the copies are issued, then the
// barrier. No token step.
// STAGE: gpu.func @verify_recurrent
// STAGE-SAME: workgroup(%[[Q:.*]] : memref<4x64xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[K:.*]] : memref<4x64xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[V:.*]] : memref<4x32xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[G:.*]] : memref<4xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[BETA:.*]] : memref<4xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// STAGE: scf.for %{{.*}} = %thread_id_x to %c32 step %c128
// STAGE: vector.store %{{.*}}, %[[Q]]
// STAGE: scf.for %{{.*}} = %thread_id_x to %c32 step %c128
// STAGE: vector.store %{{.*}}, %[[K]]
// STAGE: scf.for %{{.*}} = %thread_id_x to %c16 step %c128
// STAGE: vector.store %{{.*}}, %[[V]]
// STAGE: memref.store %{{.*}}, %[[G]][%thread_id_x]
// STAGE: memref.store %{{.*}}, %[[BETA]][%thread_id_x]
// STAGE-COUNT-2: vector.load %{{.*}} : memref<2x2x64x64xbf16>, vector<8xbf16>
// STAGE: gpu.barrier
// STAGE-NOT: gpu.shuffle
// STAGE: gpu.return

// One token from global memory, reductions side by side: k.q and, per
// column, S^T k and S^T q over the 8 lanes along K: (1 + 2 x 2) x 3
// shuffles; o as 2 bf16 columns by key lane 0; the state stored.
// TOKEN: gpu.func @verify_recurrent
// TOKEN-COUNT-15: gpu.shuffle xor
// TOKEN-NOT: gpu.shuffle
// TOKEN: vector.store %{{.*}} : memref<2x4x2x64xbf16>, vector<2xbf16>
// TOKEN-COUNT-2: vector.store %{{.*}} : memref<2x2x64x64xbf16>, vector<8xbf16>

// BAD: error: test-gdn-kernel-pieces: unknown piece 'none' (tile-io, staging, token)

// The staging piece is the token loop's: a chunked solve (which once
// crashed the pass at chunk_prefetch_distance = 1) is refused.
// CHUNKED: error: 'gdn.recurrent' op test-gdn-kernel-pieces: piece=staging needs a staged token loop (staged_tokens > 0, solve = token_by_token)

func.func @verify(%q: memref<2x4x1x64xbf16>, %k: memref<2x4x1x64xbf16>, %v: memref<2x4x2x64xbf16>,
                  %g: memref<2x4x2xf32>, %beta: memref<2x4x2xf32>, %s: memref<2x2x64x64xbf16>,
                  %o: memref<2x4x2x64xbf16>) {
  gdn.recurrent q(%q : memref<2x4x1x64xbf16>) k(%k : memref<2x4x1x64xbf16>) v(%v : memref<2x4x2x64xbf16>)
      g(%g : memref<2x4x2xf32>) beta(%beta : memref<2x4x2xf32>) initial_state(%s : memref<2x2x64x64xbf16>)
      final_state(%s : memref<2x2x64x64xbf16>) o(%o : memref<2x4x2x64xbf16>) {state_layout = #gdn.layout<vk>}
  return
}
