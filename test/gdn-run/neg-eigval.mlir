// allow_neg_eigval: beta = 2 sigmoid(b) (FLA), checked against the fp64
// reference on the CPU; the GPU kernel doubles sigmoid(b) the same way.
// RUN: gdn-run --target=cpu --check %s | FileCheck %s
// RUN: gdn-opt %s -gdn-select-schedule -convert-gdn-to-gpu | FileCheck %s --check-prefix=GPU
// CHECK: check final_state {{.*}} ok
// CHECK: check o {{.*}} ok
// GPU: %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// GPU: arith.mulf %[[TWO]], %{{.*}} : f32
func.func @neg(%q: memref<2x3x1x64xf32>, %k: memref<2x3x1x64xf32>, %v: memref<2x3x2x32xf32>, %b: memref<2x3x2xf32>, %ht: memref<2x2x64x32xf32>, %o: memref<2x3x2x32xf32>) {
  gdn.recurrent q(%q : memref<2x3x1x64xf32>) k(%k : memref<2x3x1x64xf32>) v(%v : memref<2x3x2x32xf32>) b(%b : memref<2x3x2xf32>) final_state(%ht : memref<2x2x64x32xf32>) o(%o : memref<2x3x2x32xf32>) {qk_l2norm, allow_neg_eigval}
  return
}
