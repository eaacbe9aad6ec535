// RUN: gdn-opt %s -split-input-file -gdn-select-schedule -convert-gdn-to-gpu | FileCheck %s
// RUN: gdn-opt %s -split-input-file -gdn-lower-to-ptx | FileCheck %s --check-prefix=PTX
// RUN: env CUDA_ROOT=/nonexistent gdn-opt %s -split-input-file -gdn-lower-to-ptx | FileCheck %s --check-prefix=PTX
// f8E4M3FN per-token states (intermediate_state_scale, docs/math.md §6):
// every step's state is quantized a row at a time as a quantized final
// state is (each row's max |S| over its lanes along K by xor shuffles,
// scale = amax / 448), its R scales into intermediate_state_scale[row,
// step, hv, v0] and its elements rounded a pair at a time to e4m3.

// SGLang's verify over an fp8 pool (read only) into fp8 per-token states.
// The scales of a step are stored by the lanes of key group 0. At N = 8
// the cost model maps 4 columns x 4 lanes along V (16 keys a lane:
// docs/cost-model.md#e4m3-step-states), so each row's e4m3 store is 16
// bytes.
// CHECK-LABEL: func.func @chain
// CHECK: gpu.func @chain_recurrent
// CHECK: scf.for
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
// CHECK-NEXT: scf.if %[[LANE0]]
// CHECK-NEXT: %[[SCALES:.*]] = vector.from_elements %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK-NEXT: vector.store %[[SCALES]], %arg11[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] {{.*}} : memref<9x4x32x128xf32>, vector<4xf32>
// CHECK: nvvm.convert.f32x2.to.f8x2 %{{.*}}, %{{.*}} {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : i16(f8E4M3FN)
// CHECK: vector.store %{{.*}}, %arg10[{{.*}}] {{.*}} : memref<9x4x32x128x128xf8E4M3FN>, vector<16xf8E4M3FN>
// The pool is only read: no store into it or its scales.
// CHECK-NOT: vector.store %{{.*}}, %arg9[
// CHECK-NOT: vector.store %{{.*}}, %arg12[
// CHECK: gpu.return
// PTX: gpu.binary @gdn_kernels
// PTX-NOT: __nv_
func.func @chain(%q: memref<8x4x16x128xbf16>, %k: memref<8x4x16x128xbf16>, %v: memref<8x4x32x128xbf16>,
                 %a: memref<8x4x32xbf16>, %A_log: memref<32xf32>, %dt_bias: memref<32xf32>,
                 %b: memref<8x4x32xbf16>, %idx: memref<8xi32>, %iidx: memref<8xi32>,
                 %s: memref<16x32x128x128xf8E4M3FN>, %inter: memref<9x4x32x128x128xf8E4M3FN>,
                 %isc: memref<9x4x32x128xf32>, %sc: memref<16x32x128xf32>, %o: memref<8x4x32x128xbf16>) {
  gdn.recurrent q(%q : memref<8x4x16x128xbf16>) k(%k : memref<8x4x16x128xbf16>) v(%v : memref<8x4x32x128xbf16>)
      a(%a : memref<8x4x32xbf16>) A_log(%A_log : memref<32xf32>) dt_bias(%dt_bias : memref<32xf32>)
      b(%b : memref<8x4x32xbf16>) state_indices(%idx : memref<8xi32>)
      intermediate_state_indices(%iidx : memref<8xi32>)
      initial_state(%s : memref<16x32x128x128xf8E4M3FN>)
      intermediate_states(%inter : memref<9x4x32x128x128xf8E4M3FN>)
      intermediate_state_scale(%isc : memref<9x4x32x128xf32>)
      state_scale(%sc : memref<16x32x128xf32>)
      o(%o : memref<8x4x32x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// An EAGLE tree reloads a parent's state as e4m3 x its stored scales, with
// no barrier: every lane stores the scales of its rows (no lane-0 branch),
// so each reads back its own stores.
// CHECK-LABEL: func.func @tree
// CHECK: gpu.func @tree_recurrent
// Parent reload: the e4m3 elements, then the lane's R scales of step p.
// CHECK: vector.load %arg7[%{{.*}}, %[[P:.*]], %{{.*}}, %{{.*}}, %{{.*}}] {{.*}} : memref<2x4x2x16x32xf8E4M3FN>, vector<1xf8E4M3FN>
// CHECK: vector.load %arg8[%{{.*}}, %[[P]], %{{.*}}, %{{.*}}] {{.*}} : memref<2x4x2x16xf32>, vector<4xf32>
// Store: under the row's condition only.
// CHECK: gpu.shuffle  xor
// CHECK: scf.if %{{.*}} {
// CHECK-NOT: arith.cmpi eq, %{{.*}}, %c0 : index
// CHECK: vector.store %{{.*}}, %arg8[{{.*}}] {{.*}} : memref<2x4x2x16xf32>, vector<4xf32>
// The e4m3 saturation of single elements is min.f32 in the kernel, not a
// libdevice call (__nv_fminf): no CUDA toolkit is needed to compile it (the
// third RUN names none).
// PTX: gpu.binary @gdn_kernels
// PTX-SAME: min.f32
// PTX-NOT: __nv_
func.func @tree(%q: memref<2x4x1x32xbf16>, %v: memref<2x4x2x16xbf16>, %g: memref<2x4x2xf32>,
                %idx: memref<2xi32>, %par: memref<2x4xi32>, %s: memref<3x2x16x32xf8E4M3FN>,
                %inter: memref<2x4x2x16x32xf8E4M3FN>, %isc: memref<2x4x2x16xf32>,
                %sc: memref<3x2x16xf32>, %o: memref<2x4x2x16xbf16>) {
  gdn.recurrent q(%q : memref<2x4x1x32xbf16>) k(%q : memref<2x4x1x32xbf16>) v(%v : memref<2x4x2x16xbf16>)
      g(%g : memref<2x4x2xf32>) state_indices(%idx : memref<2xi32>)
      retrieve_parent_token(%par : memref<2x4xi32>)
      initial_state(%s : memref<3x2x16x32xf8E4M3FN>)
      intermediate_states(%inter : memref<2x4x2x16x32xf8E4M3FN>)
      intermediate_state_scale(%isc : memref<2x4x2x16xf32>)
      state_scale(%sc : memref<3x2x16xf32>)
      o(%o : memref<2x4x2x16xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
