// RUN: gdn-opt %s -gdn-select-schedule -convert-gdn-to-gpu | FileCheck %s
// RUN: gdn-opt %s -gdn-lower-to-ptx | FileCheck %s --check-prefix=PTX
// RUN: gdn-opt %s -gdn-select-schedule="schedule={#gdn.schedule<columns_per_lane = 1, lanes_along_v = 2>}" -convert-gdn-to-gpu | FileCheck %s --check-prefix=ROW1
// One row a lane (decode's mapping on the tiny grid): both quotients on
// every lane, no shuffle after the division on the latency-bound chain.
// ROW1-LABEL: gpu.func @pool_recurrent
// ROW1: gpu.shuffle  xor
// ROW1: arith.divf
// ROW1-NEXT: arith.divf
// ROW1-NOT: gpu.shuffle  idx
// ROW1: gpu.return
// A quantized state on the GPU (docs/math.md §6): a pool's padding row
// zeroed a loaded 32-bit word at a time (not an element), e4m3 pairs
// widened by cvt (nvvm.convert f8x2 -> f16x2), the lane's R rows of scales
// in one vector load. The state stays in units of its row scales into the
// token loop, which carries them (then 1): the token's decay times the
// row's scale, one product a row instead of one an element. At the store,
// each row's max |S| over its lanes along K (xor shuffles), scale = amax /
// 448 stored by the lanes of key group 0, the elements times 448 / amax
// rounded a pair at a time into a 16-bit word
// (cvt.rn.satfinite.e4m3x2.f32), two words a 32-bit register. At N = 8
// the e4m3 decode takes 4 columns x 4 lanes along V: 16-byte rows a lane
// (docs/cost-model.md#decode-16-byte-slices).

// CHECK-LABEL: func.func @pool
// CHECK: gpu.func @pool_recurrent
// CHECK: %[[RAW:.*]] = vector.load %arg10{{.*}} : memref<16x32x128x128xf8E4M3FN>, vector<16xf8E4M3FN>
// CHECK: %[[WORD:.*]] = vector.bitcast %[[RAW]] : vector<16xf8E4M3FN> to vector<4xi32>
// CHECK: arith.select %{{.*}}, %[[WORD]], %{{.*}} : vector<4xi32>
// CHECK: nvvm.convert.f8x2.to.f16x2 %{{.*}} : vector<2xi8>(f8E4M3FN) -> vector<2xf16>
// CHECK-NOT: arith.select %{{.*}} : f32
// CHECK: %[[SCALES:.*]] = vector.load %arg9[%{{.*}}, %{{.*}}, %{{.*}}] {{.*}} : memref<16x32x128xf32>, vector<4xf32>
// CHECK: %[[KEPT:.*]] = arith.select %{{.*}}, %[[SCALES]], %{{.*}} : vector<4xf32>
// CHECK: %[[S0:.*]] = vector.extract %[[KEPT]][0]
// CHECK: scf.for {{.*}} iter_args({{.*}}, %[[U0:.*]] = %[[S0]], {{.*}}) -> (
// CHECK: arith.mulf %{{.*}}, %[[U0]]
// CHECK: scf.yield {{.*}}, %[[ONE:cst[_0-9]*]], %[[ONE]], %[[ONE]], %[[ONE]] : f32
// CHECK: arith.maximumf
// CHECK: gpu.shuffle  xor
// One division a lane: lane kLane = i of the 8 lanes along K that share
// the 4 rows divides for quotient i (448 / amax of row i, then amax / 448
// of row i - 4), and each lane fetches the 8 quotients by indexed shuffles.
// CHECK: arith.divf
// CHECK-NOT: arith.divf
// CHECK: gpu.shuffle  idx
// CHECK: gpu.shuffle  idx
// CHECK: gpu.shuffle  idx
// CHECK: gpu.shuffle  idx
// CHECK: gpu.shuffle  idx
// CHECK: gpu.shuffle  idx
// CHECK: gpu.shuffle  idx
// CHECK: gpu.shuffle  idx
// CHECK: %[[LANE0:.*]] = arith.cmpi eq, %{{.*}}, %c0 : index
// CHECK: scf.if %[[LANE0]]
// CHECK: vector.store %{{.*}}, %arg9[%{{.*}}, %{{.*}}, %{{.*}}] {{.*}} : memref<16x32x128xf32>, vector<4xf32>
// CHECK: %[[PAIR:.*]] = nvvm.convert.f32x2.to.f8x2 %{{.*}}, %{{.*}} {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : i16(f8E4M3FN)
// CHECK: %[[WORDS:.*]] = vector.from_elements %[[PAIR]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : vector<8xi16>
// CHECK: %[[BYTES:.*]] = vector.bitcast %[[WORDS]] : vector<8xi16> to vector<16xf8E4M3FN>
// CHECK: vector.store %[[BYTES]], %arg10[{{.*}}] {{.*}} : memref<16x32x128x128xf8E4M3FN>, vector<16xf8E4M3FN>
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
