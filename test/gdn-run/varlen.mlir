// Varlen (cu_seqlens): packed tokens, random sequence lengths (some empty),
// the last token owned by no sequence and left untouched; with a pool and
// padding rows, and in the kv layout with separate states; N = 0 runs nothing.
// RUN: split-file %s %t
// RUN: gdn-run --target=cpu --check %t/pool.mlir | FileCheck %s
// RUN: gdn-run --target=cpu --check --seed=1 %t/pool.mlir | FileCheck %s
// RUN: gdn-run --target=cpu --check --seed=2 %t/pool.mlir | FileCheck %s
// RUN: gdn-run --target=cpu --check --seed=3 %t/kv.mlir | FileCheck %s --check-prefix=KV
// RUN: gdn-run --target=cpu --check %t/empty.mlir | FileCheck %s --check-prefix=EMPTY
// RUN: gdn-run --target=cpu --check %t/empty-tree.mlir | FileCheck %s --check-prefix=EMPTY
// RUN: gdn-run --emit=ptx %t/pool.mlir | FileCheck %s --check-prefix=PTX
// CHECK: check final_state {{.*}} ok
// CHECK: check untouched slots: 0 of {{[0-9]+}} changed  ok
// CHECK: check o {{.*}} ok
// CHECK-NOT: FAILED
// KV: check final_state {{.*}} ok
// KV: check o {{.*}} ok
// KV-NOT: FAILED
// EMPTY: N=0
// EMPTY: check o {{.*}} ok
// EMPTY-NOT: FAILED
// PTX: .entry pool_varlen_recurrent

//--- pool.mlir
func.func @pool_varlen(%q: memref<1x10x2x64xbf16>, %k: memref<1x10x2x64xbf16>, %v: memref<1x10x4x32xbf16>,
                       %a: memref<1x10x4xbf16>, %A_log: memref<4xf32>, %dt_bias: memref<4xf32>, %b: memref<1x10x4xbf16>,
                       %cu: memref<5xi32>, %idx: memref<4xi64>, %pool: memref<6x4x32x64xf32>, %o: memref<1x10x4x32xbf16>) {
  gdn.recurrent q(%q : memref<1x10x2x64xbf16>) k(%k : memref<1x10x2x64xbf16>) v(%v : memref<1x10x4x32xbf16>)
      a(%a : memref<1x10x4xbf16>) A_log(%A_log : memref<4xf32>) dt_bias(%dt_bias : memref<4xf32>) b(%b : memref<1x10x4xbf16>)
      state_indices(%idx : memref<4xi64>) cu_seqlens(%cu : memref<5xi32>)
      initial_state(%pool : memref<6x4x32x64xf32>) final_state(%pool : memref<6x4x32x64xf32>)
      o(%o : memref<1x10x4x32xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
//--- kv.mlir
func.func @kv_varlen(%q: memref<1x7x1x32xf32>, %k: memref<1x7x1x32xf32>, %v: memref<1x7x2x16xf32>,
                     %g: memref<1x7x2xf32>, %beta: memref<1x7x2xf32>, %cu: memref<4xi64>,
                     %h0: memref<3x2x32x16xf32>, %ht: memref<3x2x32x16xf32>, %o: memref<1x7x2x16xf32>) {
  gdn.recurrent q(%q : memref<1x7x1x32xf32>) k(%k : memref<1x7x1x32xf32>) v(%v : memref<1x7x2x16xf32>)
      g(%g : memref<1x7x2xf32>) beta(%beta : memref<1x7x2xf32>) cu_seqlens(%cu : memref<4xi64>)
      initial_state(%h0 : memref<3x2x32x16xf32>) final_state(%ht : memref<3x2x32x16xf32>)
      o(%o : memref<1x7x2x16xf32>)
  return
}
//--- empty.mlir
func.func @empty(%q: memref<1x3x1x32xf32>, %k: memref<1x3x1x32xf32>, %v: memref<1x3x1x8xf32>,
                 %cu: memref<1xi32>, %o: memref<1x3x1x8xf32>) {
  gdn.recurrent q(%q : memref<1x3x1x32xf32>) k(%k : memref<1x3x1x32xf32>) v(%v : memref<1x3x1x8xf32>)
      cu_seqlens(%cu : memref<1xi32>) o(%o : memref<1x3x1x8xf32>)
  return
}

//--- empty-tree.mlir
// N = 0 with an EAGLE tree: no intermediate rows (the reference once
// refused it).
func.func @empty_tree(%q: memref<1x4x1x32xf32>, %k: memref<1x4x1x32xf32>, %v: memref<1x4x2x8xf32>,
                      %cu: memref<1xi32>, %i: memref<0x3x2x32x8xf32>, %p: memref<0x3xi32>,
                      %o: memref<1x4x2x8xf32>) {
  gdn.recurrent q(%q : memref<1x4x1x32xf32>) k(%k : memref<1x4x1x32xf32>) v(%v : memref<1x4x2x8xf32>)
      cu_seqlens(%cu : memref<1xi32>) retrieve_parent_token(%p : memref<0x3xi32>)
      intermediate_states(%i : memref<0x3x2x32x8xf32>) o(%o : memref<1x4x2x8xf32>)
  return
}
