// EAGLE tree verify (retrieve_parent_token) on the CPU against the fp64
// reference, which follows the same tree: a chain equals the plain verify, a
// branching tree, a second root, parents >= the step (treated as a root), rows
// without a buffer row (every third row from gdn-run) and padding rows (every
// fourth from the second), random trees, the kv layout with a bf16
// batch-scoped buffer and a committed final state, and varlen sequences
// longer than the table.
// RUN: split-file %s %t
//
// A chain (parent = step - 1) gives exactly the plain verify: same inputs
// (the table is the last argument and draws no random numbers), same errors
// against the same reference, to the last digit.
// RUN: gdn-run --target=cpu --check --json --seed=7 %t/plain.mlir > %t/plain.json
// RUN: gdn-run --target=cpu --check --json --seed=7 --parents=chain %t/pool.mlir > %t/chain.json
// RUN: cat %t/plain.json %t/chain.json | FileCheck %s --check-prefix=SAME
// SAME: "check":"ok"
// SAME-SAME: "final_state_max_abs":[[FMAX:[^,]+]],"final_state_rms_rel":[[FRMS:[^,]+]],{{.*}}"intermediate_max_abs":[[IMAX:[^,]+]],"intermediate_rms_rel":[[IRMS:[^,]+]],"o_max_abs":[[OMAX:[^,]+]],"o_rms_rel":[[ORMS:[^,]+]],
// SAME: "check":"ok"
// SAME-SAME: "final_state_max_abs":[[FMAX]],"final_state_rms_rel":[[FRMS]],{{.*}}"intermediate_max_abs":[[IMAX]],"intermediate_rms_rel":[[IRMS]],"o_max_abs":[[OMAX]],"o_rms_rel":[[ORMS]],
//
// A branching tree (token 1 and 2 children of 0, 3 of 1; SGLang's example),
// a second root at step 2, and parents at or past their step (2 -> 2, 3 -> 9:
// no tree, each treated as -1), then random trees.
// RUN: gdn-run --target=cpu --check --parents=-1,0,0,1 %t/pool.mlir | FileCheck %s
// RUN: gdn-run --target=cpu --check --parents=-1,0,-1,2 %t/pool.mlir | FileCheck %s
// RUN: gdn-run --target=cpu --check --parents=-1,0,2,9 %t/pool.mlir | FileCheck %s
// RUN: gdn-run --target=cpu --check --seed=1 %t/pool.mlir | FileCheck %s
// RUN: gdn-run --target=cpu --check --seed=2 %t/pool.mlir | FileCheck %s
// The Qwen3-Next example (bf16 pool and buffer, random trees).
// RUN: gdn-run --target=cpu --check %examples/sglang_verify_tree.mlir | FileCheck %s
// The branching tree does change the results (the reference follows it).
// RUN: gdn-run --target=cpu --check --json --seed=7 --parents=-1,0,0,1 %t/pool.mlir > %t/branch.json
// RUN: cat %t/chain.json %t/branch.json | FileCheck %s --check-prefix=DIFF
// DIFF: "intermediate_rms_rel":[[IRMS:[^,]+]],
// DIFF-NOT: "intermediate_rms_rel":[[IRMS]],
// DIFF: "check":"ok"
//
// kv layout, batch-scoped bf16 buffer (the reload reads the rounded state)
// with a separate committed final state, int64 parents, per-row tables.
// RUN: gdn-run --target=cpu --check --seed=4 %t/kv.mlir | FileCheck %s --check-prefixes=CHECK,COMMIT
// RUN: gdn-run --target=cpu --check --parents=-1,0,1,0,-1,0,0,2,-1,-1,0,1 %t/kv.mlir | FileCheck %s --check-prefixes=CHECK,COMMIT
//
// Varlen: random lengths, a table of 3 steps; later tokens run as a chain.
// RUN: gdn-run --target=cpu --check --seed=5 %t/varlen.mlir | FileCheck %s
// RUN: gdn-run --target=cpu --check --seed=6 --parents=-1,-1,0 %t/varlen.mlir | FileCheck %s
//
// Bad tables are refused before anything runs.
// RUN: not gdn-run --target=cpu --parents=-1,0 %t/pool.mlir 2>&1 | FileCheck %s --check-prefix=BAD
// f16 per-token states that the tree reloads as parents: the f32 final
// state and o carry that rounding (the check once held the final state to
// f32's 1e-5 and failed on a parent element rounded the other way).
// RUN: gdn-run --target=cpu --check --seed=193 --parents=-1,0,0 %t/f16-parents.mlir | FileCheck %s --check-prefix=F16
// F16: check final_state {{.*}} (tol 1.0e-03)  ok
// F16: check o {{.*}} (tol 2.0e-03)  ok
// BAD: --parents: expected 4 or 24 entries, got 2
//
// CHECK: check intermediate {{.*}} ok
// CHECK: check unwritten intermediate steps: 0 of {{[0-9]+}} changed  ok
// COMMIT: check final_state {{.*}} ok
// CHECK: check o {{.*}} ok
// CHECK-NOT: FAILED

//--- plain.mlir
func.func @verify(%q: memref<6x4x1x32xf32>, %k: memref<6x4x1x32xf32>, %v: memref<6x4x2x16xf32>,
                  %a: memref<6x4x2xf32>, %A_log: memref<2xf32>, %dt_bias: memref<2xf32>, %b: memref<6x4x2xf32>,
                  %idx: memref<6xi32>, %iidx: memref<6xi32>,
                  %pool: memref<8x2x16x32xf32>, %inter: memref<7x4x2x16x32xf32>, %o: memref<6x4x2x16xf32>) {
  gdn.recurrent q(%q : memref<6x4x1x32xf32>) k(%k : memref<6x4x1x32xf32>) v(%v : memref<6x4x2x16xf32>)
      a(%a : memref<6x4x2xf32>) A_log(%A_log : memref<2xf32>) dt_bias(%dt_bias : memref<2xf32>)
      b(%b : memref<6x4x2xf32>) state_indices(%idx : memref<6xi32>) intermediate_state_indices(%iidx : memref<6xi32>)
      initial_state(%pool : memref<8x2x16x32xf32>) intermediate_states(%inter : memref<7x4x2x16x32xf32>)
      final_state(%pool : memref<8x2x16x32xf32>) o(%o : memref<6x4x2x16xf32>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
//--- pool.mlir
func.func @verify(%q: memref<6x4x1x32xf32>, %k: memref<6x4x1x32xf32>, %v: memref<6x4x2x16xf32>,
                  %a: memref<6x4x2xf32>, %A_log: memref<2xf32>, %dt_bias: memref<2xf32>, %b: memref<6x4x2xf32>,
                  %idx: memref<6xi32>, %iidx: memref<6xi32>,
                  %pool: memref<8x2x16x32xf32>, %inter: memref<7x4x2x16x32xf32>, %o: memref<6x4x2x16xf32>,
                  %parents: memref<6x4xi32>) {
  gdn.recurrent q(%q : memref<6x4x1x32xf32>) k(%k : memref<6x4x1x32xf32>) v(%v : memref<6x4x2x16xf32>)
      a(%a : memref<6x4x2xf32>) A_log(%A_log : memref<2xf32>) dt_bias(%dt_bias : memref<2xf32>)
      b(%b : memref<6x4x2xf32>) state_indices(%idx : memref<6xi32>) intermediate_state_indices(%iidx : memref<6xi32>)
      retrieve_parent_token(%parents : memref<6x4xi32>)
      initial_state(%pool : memref<8x2x16x32xf32>) intermediate_states(%inter : memref<7x4x2x16x32xf32>)
      final_state(%pool : memref<8x2x16x32xf32>) o(%o : memref<6x4x2x16xf32>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
//--- kv.mlir
func.func @kv(%q: memref<3x4x1x32xbf16>, %k: memref<3x4x1x32xbf16>, %v: memref<3x4x2x16xbf16>,
              %g: memref<3x4x2xf32>, %beta: memref<3x4x2xf32>, %parents: memref<3x4xi64>,
              %h0: memref<3x2x32x16xf32>, %inter: memref<3x4x2x32x16xbf16>, %h1: memref<3x2x32x16xf32>,
              %o: memref<3x4x2x16xbf16>) {
  gdn.recurrent q(%q : memref<3x4x1x32xbf16>) k(%k : memref<3x4x1x32xbf16>) v(%v : memref<3x4x2x16xbf16>)
      g(%g : memref<3x4x2xf32>) beta(%beta : memref<3x4x2xf32>) retrieve_parent_token(%parents : memref<3x4xi64>)
      initial_state(%h0 : memref<3x2x32x16xf32>) intermediate_states(%inter : memref<3x4x2x32x16xbf16>)
      final_state(%h1 : memref<3x2x32x16xf32>) o(%o : memref<3x4x2x16xbf16>)
  return
}
//--- varlen.mlir
func.func @varlen(%q: memref<1x12x1x32xf32>, %k: memref<1x12x1x32xf32>, %v: memref<1x12x1x8xf32>,
                  %b: memref<1x12x1xf32>, %cu: memref<4xi32>, %iidx: memref<3xi32>, %parents: memref<3x3xi32>,
                  %h0: memref<3x1x8x32xf32>, %inter: memref<4x3x1x8x32xf32>, %o: memref<1x12x1x8xf32>) {
  gdn.recurrent q(%q : memref<1x12x1x32xf32>) k(%k : memref<1x12x1x32xf32>) v(%v : memref<1x12x1x8xf32>)
      b(%b : memref<1x12x1xf32>) cu_seqlens(%cu : memref<4xi32>) intermediate_state_indices(%iidx : memref<3xi32>)
      retrieve_parent_token(%parents : memref<3x3xi32>)
      initial_state(%h0 : memref<3x1x8x32xf32>) intermediate_states(%inter : memref<4x3x1x8x32xf32>)
      o(%o : memref<1x12x1x8xf32>) {state_layout = #gdn.layout<vk>}
  return
}

//--- f16-parents.mlir
func.func @f16_parents(%q: memref<1x3x1x8xf32>, %k: memref<1x3x1x8xf32>, %v: memref<1x3x1x8xf32>,
                       %p: memref<1x3xi32>, %inter: memref<1x3x1x8x8xf16>, %ht: memref<1x1x8x8xf32>,
                       %o: memref<1x3x1x8xf32>) {
  gdn.recurrent q(%q : memref<1x3x1x8xf32>) k(%k : memref<1x3x1x8xf32>) v(%v : memref<1x3x1x8xf32>)
      retrieve_parent_token(%p : memref<1x3xi32>)
      intermediate_states(%inter : memref<1x3x1x8x8xf16>)
      final_state(%ht : memref<1x1x8x8xf32>) o(%o : memref<1x3x1x8xf32>) {qk_l2norm}
  return
}
