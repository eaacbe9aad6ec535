// RUN: gdn-opt %s -convert-gdn-to-cpu | FileCheck %s
// RUN: gdn-opt %s -gdn-lower-to-cpu | FileCheck %s --check-prefix=LLVM
// A quantized state on the CPU (docs/math.md §6): each element loaded is
// e4m3 decoded in integer arithmetic times its row's scale; after the
// tokens, each row's max |S| gives its scale (amax / 448, stored) and its
// inverse (448 / amax, 0 for amax = 0), and every element times the inverse
// is rounded to e4m3 (nearest even, saturating) in integer arithmetic.

// CHECK-LABEL: func.func @pool
// Load: e4m3 bits widened, times state_scale[slot, hv, v].
// CHECK: %[[BITS:.*]] = arith.bitcast %{{.*}} : f8E4M3FN to i8
// CHECK: arith.extui %[[BITS]] : i8 to i32
// CHECK: %[[SCALE:.*]] = memref.load %arg5[%{{.*}}, %{{.*}}, %{{.*}}] : memref<6x4x16xf32>
// CHECK: arith.mulf %{{.*}}, %[[SCALE]] : f32
// Store: the row's max |S| over K ...
// CHECK: scf.for {{.*}} iter_args
// CHECK: arith.negf
// CHECK: arith.maximumf
// CHECK: arith.maximumf
// ... its scale and inverse ...
// CHECK: %[[MAX:.*]] = arith.constant 4.480000e+02 : f32
// CHECK: %[[ROWSCALE:.*]] = arith.divf %{{.*}}, %[[MAX]] : f32
// CHECK: arith.divf %{{.*}}, %{{.*}} : f32
// CHECK: arith.select
// CHECK: memref.store %[[ROWSCALE]], %arg5[%{{.*}}, %{{.*}}, %{{.*}}] : memref<6x4x16xf32>
// ... and each element rounded to e4m3 and stored.
// CHECK: arith.trunci %{{.*}} : i32 to i8
// CHECK: %[[E4M3:.*]] = arith.bitcast %{{.*}} : i8 to f8E4M3FN
// CHECK: memref.store %[[E4M3]], %arg4[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<6x4x16x32xf8E4M3FN>
// LLVM-LABEL: llvm.func @pool
func.func @pool(%q: memref<3x1x2x32xbf16>, %v: memref<3x1x4x16xbf16>, %g: memref<3x1x4xf32>,
                %idx: memref<3xi32>, %s: memref<6x4x16x32xf8E4M3FN>, %sc: memref<6x4x16xf32>,
                %o: memref<3x1x4x16xbf16>) {
  gdn.recurrent q(%q : memref<3x1x2x32xbf16>) k(%q : memref<3x1x2x32xbf16>) v(%v : memref<3x1x4x16xbf16>)
      g(%g : memref<3x1x4xf32>) state_indices(%idx : memref<3xi32>)
      initial_state(%s : memref<6x4x16x32xf8E4M3FN>) state_scale(%sc : memref<6x4x16xf32>)
      final_state(%s : memref<6x4x16x32xf8E4M3FN>)
      o(%o : memref<3x1x4x16xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
