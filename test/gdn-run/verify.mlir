// Speculative verify: the state after every token into intermediate_states.
// SGLang style (pool-scoped rows with -1 = no row, bf16, no commit) and
// FlashInfer style (batch-scoped [N, T, ...], fp32, commit to the pool), and
// varlen with a buffer shorter than the longest sequence (later steps dropped).
// RUN: split-file %s %t
// RUN: gdn-run --target=cpu --check %examples/sglang_verify_t4.mlir | FileCheck %s
// RUN: gdn-run --target=cpu --check --seed=4 %t/batch.mlir | FileCheck %s --check-prefixes=CHECK,COMMIT
// RUN: gdn-run --target=cpu --check --seed=5 %t/varlen.mlir | FileCheck %s
// RUN: gdn-run --emit=ptx %t/batch.mlir > %t/batch.ptx
// RUN: gdn-opt %t/batch.mlir -gdn-select-schedule="schedule={#gdn.schedule<columns_per_lane = 4, staged_tokens = 0>}" -convert-gdn-to-gpu | FileCheck %s --check-prefix=GPU
// COMMIT: check final_state {{.*}} ok
// CHECK: check intermediate {{.*}} ok
// CHECK: check unwritten intermediate steps: 0 of {{[0-9]+}} changed  ok
// CHECK: check o {{.*}} ok
// CHECK-NOT: FAILED
// The kernel stores the tile after each token at [row, t - lo, hv, ...].
// GPU: scf.for %[[T:.*]] = %[[LO:.*]] to
// GPU: %[[STEP:.*]] = arith.subi %[[T]], %[[LO]] : index
// GPU: vector.store %{{.*}}, %{{.*}}[%{{.*}}, %[[STEP]], {{.*}} : memref<3x2x2x32x16xf32>, vector<4xf32>

//--- batch.mlir
func.func @batch(%q: memref<3x2x1x32xf32>, %k: memref<3x2x1x32xf32>, %v: memref<3x2x2x16xf32>,
                 %g: memref<3x2x2xf32>, %beta: memref<3x2x2xf32>, %idx: memref<3xi64>,
                 %pool: memref<5x2x32x16xf32>, %inter: memref<3x2x2x32x16xf32>, %o: memref<3x2x2x16xf32>) {
  gdn.recurrent q(%q : memref<3x2x1x32xf32>) k(%k : memref<3x2x1x32xf32>) v(%v : memref<3x2x2x16xf32>)
      g(%g : memref<3x2x2xf32>) beta(%beta : memref<3x2x2xf32>) state_indices(%idx : memref<3xi64>)
      initial_state(%pool : memref<5x2x32x16xf32>) intermediate_states(%inter : memref<3x2x2x32x16xf32>)
      final_state(%pool : memref<5x2x32x16xf32>) o(%o : memref<3x2x2x16xf32>) {qk_l2norm}
  return
}
//--- varlen.mlir
func.func @varlen(%q: memref<1x9x1x32xf32>, %k: memref<1x9x1x32xf32>, %v: memref<1x9x1x8xf32>,
                  %b: memref<1x9x1xf32>, %cu: memref<4xi32>, %iidx: memref<3xi32>,
                  %h0: memref<3x1x8x32xf32>, %inter: memref<4x2x1x8x32xf32>, %o: memref<1x9x1x8xf32>) {
  gdn.recurrent q(%q : memref<1x9x1x32xf32>) k(%k : memref<1x9x1x32xf32>) v(%v : memref<1x9x1x8xf32>)
      b(%b : memref<1x9x1xf32>) cu_seqlens(%cu : memref<4xi32>) intermediate_state_indices(%iidx : memref<3xi32>)
      initial_state(%h0 : memref<3x1x8x32xf32>) intermediate_states(%inter : memref<4x2x1x8x32xf32>)
      o(%o : memref<1x9x1x8xf32>) {state_layout = #gdn.layout<vk>}
  return
}
