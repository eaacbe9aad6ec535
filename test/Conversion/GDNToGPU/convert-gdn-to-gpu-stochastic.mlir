// RUN: gdn-opt %s -gdn-select-schedule -convert-gdn-to-gpu | FileCheck %s
// RUN: gdn-opt %s -gdn-lower-to-ptx | FileCheck %s --check-prefix=PTX
// Stochastic rounding of a quantized pool on the GPU (docs/math.md §6):
// under the store's branch, after the row scales are stored, each element
// times its row's inverse scale gets its position in the pool
// [16, 32, 128, 128] (((slot * 32 + hv) * 128 + v) * 128 + k, as i32), the
// random bits hash32(bits(y) ^ hash32(position)) and is moved onto the e4m3
// grid; the pairs then convert exactly with cvt.rn.satfinite.e4m3x2.f32.

// CHECK-LABEL: gpu.func @pool_recurrent
// CHECK: vector.store %{{.*}}, %arg9[%{{.*}}, %{{.*}}, %{{.*}}] {{.*}} : memref<16x32x128xf32>, vector<4xf32>
// CHECK: %[[P0:.*]] = arith.muli %{{.*}}, %c32 : index
// CHECK: %[[P1:.*]] = arith.addi %[[P0]], %block_id_y : index
// CHECK: %[[P2:.*]] = arith.muli %[[P1]], %c128 : index
// CHECK: %[[P3:.*]] = arith.addi %[[P2]], %{{.*}} : index
// CHECK: %[[P4:.*]] = arith.muli %[[P3]], %c128 : index
// CHECK: %[[P5:.*]] = arith.addi %[[P4]], %{{.*}} : index
// CHECK: %[[POS:.*]] = arith.index_cast %[[P5]] : index to i32
// CHECK: arith.shrui %[[POS]]
// CHECK: arith.muli %{{.*}}, %c2146121005_i32{{.*}} : i32
// CHECK: arith.muli %{{.*}}, %c-2073254261_i32{{.*}} : i32
// CHECK: arith.andi %{{.*}}, %c-1048576_i32{{.*}} : i32
// CHECK: nvvm.convert.f32x2.to.f8x2 %{{.*}}, %{{.*}} {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : i16(f8E4M3FN)
// CHECK: vector.store %{{.*}}, %arg10[{{.*}}] {{.*}} : memref<16x32x128x128xf8E4M3FN>, vector<16xf8E4M3FN>
// PTX: gpu.binary @gdn_kernels
// PTX-SAME: mul.lo.s32 {{.*}}2146121005;
// PTX-SAME: cvt.rn.satfinite.e4m3x2.f32
func.func @pool(%q: memref<8x1x16x128xbf16>, %k: memref<8x1x16x128xbf16>, %v: memref<8x1x32x128xbf16>,
                %a: memref<8x1x32xbf16>, %A_log: memref<32xf32>, %dt_bias: memref<32xf32>,
                %b: memref<8x1x32xbf16>, %idx: memref<8xi32>, %s: memref<16x32x128x128xf8E4M3FN>,
                %sc: memref<16x32x128xf32>, %o: memref<8x1x32x128xbf16>) {
  gdn.recurrent q(%q : memref<8x1x16x128xbf16>) k(%k : memref<8x1x16x128xbf16>) v(%v : memref<8x1x32x128xbf16>)
      a(%a : memref<8x1x32xbf16>) A_log(%A_log : memref<32xf32>) dt_bias(%dt_bias : memref<32xf32>)
      b(%b : memref<8x1x32xbf16>) state_indices(%idx : memref<8xi32>)
      initial_state(%s : memref<16x32x128x128xf8E4M3FN>) state_scale(%sc : memref<16x32x128xf32>)
      final_state(%s : memref<16x32x128x128xf8E4M3FN>)
      o(%o : memref<8x1x32x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>, stochastic_rounding}
  return
}
