// State pools on the CPU: used slots match the fp64 reference, slots no
// sequence uses come back bit-identical, padding rows (index < 0) output 0.
// RUN: gdn-run --target=cpu --check %examples/sglang_pool_decode.mlir | FileCheck %s
// RUN: gdn-run --target=cpu --check --seed=5 %s | FileCheck %s
// A bf16 pool: computed in fp32, rounded once on store (tolerance 4e-3).
// RUN: gdn-run --target=cpu --check %examples/sglang_pool_decode_bf16.mlir | FileCheck %s
// RUN: not gdn-run --target=cpu --check --tol-state=1e-4 %examples/sglang_pool_decode_bf16.mlir | FileCheck %s --check-prefix=ROUNDED
// ROUNDED: check final_state {{.*}} FAILED
// CHECK: check final_state {{.*}} ok
// CHECK: check untouched slots: 0 of {{[1-9][0-9]*}} changed  ok
// CHECK: check o {{.*}} ok
// CHECK-NOT: FAILED

// kv layout, i64 indices, separate initial and final pools: the final pool's
// unused slots keep their NaN poison bits.
func.func @kv_pool(%q: memref<6x2x2x64xf32>, %k: memref<6x2x2x64xf32>, %v: memref<6x2x4x32xf32>,
                   %g: memref<6x2x4xf32>, %beta: memref<6x2x4xf32>, %idx: memref<6xi64>,
                   %h0: memref<9x4x64x32xf32>, %ht: memref<9x4x64x32xf32>, %o: memref<6x2x4x32xf32>) {
  gdn.recurrent q(%q : memref<6x2x2x64xf32>) k(%k : memref<6x2x2x64xf32>) v(%v : memref<6x2x4x32xf32>)
      g(%g : memref<6x2x4xf32>) beta(%beta : memref<6x2x4xf32>) state_indices(%idx : memref<6xi64>)
      initial_state(%h0 : memref<9x4x64x32xf32>) final_state(%ht : memref<9x4x64x32xf32>)
      o(%o : memref<6x2x4x32xf32>) {qk_l2norm}
  return
}
