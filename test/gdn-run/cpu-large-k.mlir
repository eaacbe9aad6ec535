// The CPU lowering keeps its K x V scratch on the heap: K = V = 2048 (16 MiB
// of state, twice the default stack) runs and checks.
// RUN: gdn-run --target=cpu --check %s | FileCheck %s
// CHECK: check o {{.*}} ok
func.func @f(%q: memref<1x1x1x2048xf32>, %k: memref<1x1x1x2048xf32>, %v: memref<1x1x1x2048xf32>, %o: memref<1x1x1x2048xf32>) {
  gdn.recurrent q(%q : memref<1x1x1x2048xf32>) k(%k : memref<1x1x1x2048xf32>) v(%v : memref<1x1x1x2048xf32>) o(%o : memref<1x1x1x2048xf32>) {qk_l2norm}
  return
}
