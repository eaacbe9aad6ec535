// RUN: gdn-opt %s -gdn-select-schedule -test-gdn-kernel-pieces="piece=tile-io" | FileCheck %s

// An f8E4M3FN state in the tensor-core solve's m16n8k8 fragments
// (TileIO.h): lane (g, t) = (lane / 4, lane % 4) holds V columns
// v0 = warp's first column + 2g and v0 + 1, keys 8p + 2t and 8p + 2t + 1.
// Loaded: e4m3 pairs times the two columns' scales (one 8-byte load at
// v0). Stored: a column's max |S| over the 4 lanes of its quad (shuffles
// xor 2 and 1, no other), the quotients, then lane t = 0 stores the two
// scales and every lane its e4m3 pairs.
func.func @kv(%q: memref<3x12x2x64xbf16>, %k: memref<3x12x2x64xbf16>, %v: memref<3x12x4x64xbf16>,
              %g: memref<3x12x4xf32>, %beta: memref<3x12x4xf32>, %s: memref<3x4x64x64xf8E4M3FN>,
              %sc: memref<3x4x64xf32>, %o: memref<3x12x4x64xbf16>) {
  gdn.recurrent q(%q : memref<3x12x2x64xbf16>) k(%k : memref<3x12x2x64xbf16>) v(%v : memref<3x12x4x64xbf16>)
      g(%g : memref<3x12x4xf32>) beta(%beta : memref<3x12x4xf32>)
      initial_state(%s : memref<3x4x64x64xf8E4M3FN>) state_scale(%sc : memref<3x4x64xf32>)
      final_state(%s : memref<3x4x64x64xf8E4M3FN>)
      o(%o : memref<3x12x4x64xbf16>) {qk_l2norm, gdn.schedule = #gdn.schedule<warps = 2, solve = tensor_cores>}
  return
}

// CHECK: gpu.func @kv_recurrent(%{{.*}}: memref<3x4x64xf32>, %[[S:.*]]: memref<3x4x64x64xf8E4M3FN>, %{{.*}}: memref<3x12x4x64xbf16>)
// CHECK: %[[LANE:.*]] = arith.remui %thread_id_x, %c32
// CHECK: %[[G:.*]] = arith.divui %[[LANE]], %c4
// CHECK: %[[TWOG:.*]] = arith.muli %[[G]], %c2
// CHECK: %[[V0:.*]] = arith.addi %{{.*}}, %[[TWOG]]
// CHECK: %[[T:.*]] = arith.remui %[[LANE]], %c4
// CHECK: %[[K0:.*]] = arith.muli %[[T]], %c2
// CHECK: vector.load %[[S]][%block_id_z, %block_id_y, %[[K0]], %[[V0]]] {{.*}} vector<2xf8E4M3FN>
// CHECK-COUNT-15: vector.load %[[S]]
// CHECK: %[[SCALE:.*]] = vector.load %[[SC:.*]][%block_id_z, %block_id_y, %[[V0]]] {{.*}} : memref<3x4x64xf32>, vector<2xf32>
// CHECK: %[[S0:.*]] = vector.extract %[[SCALE]][0]
// CHECK: %[[S1:.*]] = vector.extract %[[SCALE]][1]
// CHECK: arith.mulf %{{.*}}, %[[S0]]
// CHECK: arith.mulf %{{.*}}, %[[S1]]
// CHECK-NOT: gpu.shuffle
// CHECK: gpu.shuffle xor %{{.*}}, %c2_i32
// CHECK: gpu.shuffle xor %{{.*}}, %c1_i32
// CHECK: gpu.shuffle xor %{{.*}}, %c2_i32
// CHECK: gpu.shuffle xor %{{.*}}, %c1_i32
// CHECK-NOT: gpu.shuffle
// CHECK: %[[LANE4:.*]] = arith.remui %[[LANE]], %c4
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[LANE4]], %c0
// CHECK: scf.if %[[FIRST]] {
// CHECK: vector.store %{{.*}}, %[[SC]][%block_id_z, %block_id_y, %[[V0]]] {{.*}} : memref<3x4x64xf32>, vector<2xf32>
// CHECK-NEXT: }
// CHECK: vector.store %{{.*}}, %[[S]][%block_id_z, %block_id_y, %[[K0]], %[[V0]]] {{.*}} vector<2xf8E4M3FN>
// CHECK-COUNT-15: vector.store %{{.*}}, %[[S]]
// CHECK-NEXT: gpu.return
