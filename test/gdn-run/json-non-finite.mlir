// --json stays valid JSON when errors are not finite (a scale that overflows
// the outputs): NaN and inf are written as null, and the check fails.
// RUN: not gdn-run --target=cpu --check --json %s | FileCheck %s
// CHECK: "check":"failed"
// CHECK-SAME: "o_rms_rel":null
func.func @f(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>) {scale = 3.0e38 : f32}
  return
}
