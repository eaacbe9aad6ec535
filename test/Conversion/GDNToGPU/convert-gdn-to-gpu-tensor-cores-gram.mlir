// RUN: gdn-opt %s -gdn-select-schedule="chunked-solve=2 warps-per-block=8" -convert-gdn-to-gpu | FileCheck %s
// RUN: gdn-opt %s -gdn-select-schedule="chunked-solve=2 warps-per-block=2" -convert-gdn-to-gpu | FileCheck %s --check-prefix=TWO
// The tensor-core solve's Gram products, one job a tile of 8 tokens (C = 16:
// 2 tiles) and product (K Kᵀ, Q Kᵀ, and with qk_l2norm Q Qᵀ for q's norms),
// dealt round-robin over the warps after the staging barrier: 8 warps take
// one job each (warps 0-5), 2 warps three each. A job is K / 8 = 2 mma (bf16
// q and k are exact in tf32).
// CHECK-LABEL: gpu.func @eight_warps_recurrent
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK: gpu.barrier
// CHECK: %[[WARP:.*]] = arith.divui %thread_id_x, %c32{{.*}}
// CHECK: arith.cmpi eq, %[[WARP]], %c0{{(_[0-9]+)?}} :
// CHECK-NEXT: scf.if
// CHECK-COUNT-2: nvvm.mma.sync
// CHECK: arith.cmpi eq, %[[WARP]], %c1{{(_[0-9]+)?}} :
// CHECK-NEXT: scf.if
// CHECK-COUNT-2: nvvm.mma.sync
// CHECK: arith.cmpi eq, %[[WARP]], %c2{{(_[0-9]+)?}} :
// CHECK: arith.cmpi eq, %[[WARP]], %c3{{(_[0-9]+)?}} :
// CHECK: arith.cmpi eq, %[[WARP]], %c4{{(_[0-9]+)?}} :
// CHECK: arith.cmpi eq, %[[WARP]], %c5{{(_[0-9]+)?}} :
// CHECK-NEXT: scf.if
// CHECK-COUNT-2: nvvm.mma.sync
// CHECK-NOT: arith.cmpi eq, %[[WARP]], %c6{{(_[0-9]+)?}} :
// CHECK: gpu.barrier
// TWO-LABEL: gpu.func @eight_warps_recurrent
// TWO-SAME: known_block_size = array<i32: 64, 1, 1>
// TWO: gpu.barrier
// TWO: %[[WARP:.*]] = arith.divui %thread_id_x, %c32{{.*}}
// TWO-COUNT-3: arith.cmpi eq, %[[WARP]], %c0{{(_[0-9]+)?}} :
// TWO-NOT: arith.cmpi eq, %[[WARP]], %c0{{(_[0-9]+)?}} :
// TWO: gpu.barrier
func.func @eight_warps(%q: memref<1x12x1x16xbf16>, %k: memref<1x12x1x16xbf16>,
    %v: memref<1x12x1x128xbf16>, %g: memref<1x12x1xf32>, %beta: memref<1x12x1xf32>,
    %state: memref<1x1x128x16xf32>, %o: memref<1x12x1x128xbf16>) {
  gdn.recurrent q(%q : memref<1x12x1x16xbf16>) k(%k : memref<1x12x1x16xbf16>)
      v(%v : memref<1x12x1x128xbf16>) g(%g : memref<1x12x1xf32>)
      beta(%beta : memref<1x12x1xf32>)
      initial_state(%state : memref<1x1x128x16xf32>)
      final_state(%state : memref<1x1x128x16xf32>) o(%o : memref<1x12x1x128xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
