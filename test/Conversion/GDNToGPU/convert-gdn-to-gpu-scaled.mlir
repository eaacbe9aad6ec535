// RUN: gdn-opt %s -gdn-select-schedule -convert-gdn-to-gpu | FileCheck %s
// RUN: gdn-opt %s -gdn-lower-to-ptx | FileCheck %s --check-prefix=PTX
// A quantized state on the GPU (docs/math.md §6): e4m3 pairs widened by
// cvt (nvvm.convert f8x2 -> f16x2), the lane's R rows of scales in one
// vector load, each element times its row's; at the store, each row's max |S| over its
// lanes along K (xor shuffles), scale = amax / 448 stored by the lanes of
// key group 0, the elements times 448 / amax rounded a pair at a time
// (cvt.rn.satfinite.e4m3x2.f32).

// CHECK-LABEL: func.func @pool
// CHECK: gpu.func @pool_recurrent
// CHECK: nvvm.convert.f8x2.to.f16x2 %{{.*}} : vector<2xi8>(f8E4M3FN) -> vector<2xf16>
// CHECK: %[[SCALES:.*]] = vector.load %arg9[%{{.*}}, %{{.*}}, %{{.*}}] {{.*}} : memref<16x32x128xf32>, vector<8xf32>
// CHECK: %[[S0:.*]] = vector.extract %[[SCALES]][0]
// CHECK: arith.mulf %{{.*}}, %[[S0]]
// CHECK: arith.maximumf
// CHECK: gpu.shuffle  xor
// CHECK: arith.divf
// CHECK: arith.divf
// CHECK: %[[LANE0:.*]] = arith.cmpi eq, %{{.*}}, %c0 : index
// CHECK: scf.if %[[LANE0]]
// CHECK: vector.store %{{.*}}, %arg9[%{{.*}}, %{{.*}}, %{{.*}}] {{.*}} : memref<16x32x128xf32>, vector<8xf32>
// CHECK: nvvm.convert.f32x2.to.f8x2 %{{.*}}, %{{.*}} {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : vector<2xi8>(f8E4M3FN)
// CHECK: vector.store %{{.*}}, %arg10[{{.*}}] {{.*}} : memref<16x32x128x128xf8E4M3FN>, vector<4xf8E4M3FN>
// PTX: gpu.binary @gdn_kernels
func.func @pool(%q: memref<8x1x16x128xbf16>, %k: memref<8x1x16x128xbf16>, %v: memref<8x1x32x128xbf16>,
                %a: memref<8x1x32xbf16>, %A_log: memref<32xf32>, %dt_bias: memref<32xf32>,
                %b: memref<8x1x32xbf16>, %idx: memref<8xi32>, %s: memref<16x32x128x128xf8E4M3FN>,
                %sc: memref<16x32x128xf32>, %o: memref<8x1x32x128xbf16>) {
  gdn.recurrent q(%q : memref<8x1x16x128xbf16>) k(%k : memref<8x1x16x128xbf16>) v(%v : memref<8x1x32x128xbf16>)
      a(%a : memref<8x1x32xbf16>) A_log(%A_log : memref<32xf32>) dt_bias(%dt_bias : memref<32xf32>)
      b(%b : memref<8x1x32xbf16>) state_indices(%idx : memref<8xi32>)
      initial_state(%s : memref<16x32x128x128xf8E4M3FN>) state_scale(%sc : memref<16x32x128xf32>)
      final_state(%s : memref<16x32x128x128xf8E4M3FN>)
      o(%o : memref<8x1x32x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
