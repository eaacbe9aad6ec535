// RUN: gdn-opt %s -gdn-select-schedule -convert-gdn-to-gpu | FileCheck %s
// RUN: gdn-opt %s -gdn-lower-to-ptx | FileCheck %s --check-prefix=PTX
// Layout kv (FlashInfer's K-major state [B, HV, K, V], in place): a lane
// loads its R columns of a key row (vector<4xf8E4M3FN>, pairs by cvt); a
// row's scale is still one V column's max over K, over the lanes along K,
// and the lanes of key group 0 store the R scales at v0.
// CHECK: gpu.func @kmajor_recurrent
// CHECK: vector.load %arg9[{{.*}} : memref<8x32x128x128xf8E4M3FN>, vector<4xf8E4M3FN>
// CHECK: nvvm.convert.f8x2.to.f16x2
// CHECK: vector.load %arg8[{{.*}} : memref<8x32x128xf32>, vector<4xf32>
// CHECK: gpu.shuffle  xor
// CHECK: scf.if
// CHECK: vector.store %{{.*}}, %arg8[{{.*}} : memref<8x32x128xf32>, vector<4xf32>
// CHECK: nvvm.convert.f32x2.to.f8x2
// CHECK: vector.store %{{.*}}, %arg9[{{.*}} : memref<8x32x128x128xf8E4M3FN>, vector<4xf8E4M3FN>
// PTX: gpu.binary @gdn_kernels
func.func @kmajor(%q: memref<8x1x16x128xbf16>, %k: memref<8x1x16x128xbf16>, %v: memref<8x1x32x128xbf16>,
                  %a: memref<8x1x32xbf16>, %A_log: memref<32xf32>, %dt_bias: memref<32xf32>,
                  %b: memref<8x1x32xbf16>, %sc: memref<8x32x128xf32>,
                  %s: memref<8x32x128x128xf8E4M3FN>, %o: memref<8x1x32x128xbf16>) {
  gdn.recurrent q(%q : memref<8x1x16x128xbf16>) k(%k : memref<8x1x16x128xbf16>) v(%v : memref<8x1x32x128xbf16>)
      a(%a : memref<8x1x32xbf16>) A_log(%A_log : memref<32xf32>) dt_bias(%dt_bias : memref<32xf32>)
      b(%b : memref<8x1x32xbf16>)
      initial_state(%s : memref<8x32x128x128xf8E4M3FN>) state_scale(%sc : memref<8x32x128xf32>)
      final_state(%s : memref<8x32x128x128xf8E4M3FN>)
      o(%o : memref<8x1x32x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<kv>}
  return
}
