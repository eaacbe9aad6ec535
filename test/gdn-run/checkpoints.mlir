// Prefix-cache checkpoints (state_checkpoints, checkpoint_offsets,
// checkpoint_interval): the state after every interval tokens of each
// sequence in its rows, against the fp64 reference; rows no sequence writes
// stay untouched. Varlen with a pool (padding rows write none), a buffer too
// small for every checkpoint (the rows past it are never written), and a
// fixed batch in the kv layout with bf16 checkpoints. The GPU forms compile:
// the token loop, staged chunks and the tensor-core solve.
// RUN: split-file %s %t
// RUN: gdn-run --target=cpu --check %t/varlen.mlir | FileCheck %s
// RUN: gdn-run --target=cpu --check --seed=5 %t/varlen.mlir | FileCheck %s
// RUN: gdn-run --target=cpu --check --seed=2 %t/small.mlir | FileCheck %s
// RUN: gdn-run --target=cpu --check %t/fixed.mlir | FileCheck %s
// RUN: gdn-run --emit=ptx %t/varlen.mlir | FileCheck %s --check-prefix=PTX
// RUN: gdn-run --emit=ptx %t/fixed.mlir | FileCheck %s --check-prefix=PTX
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<staged_tokens = 0>' %t/fixed.mlir | FileCheck %s --check-prefix=PTX
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<solve = tensor_cores>' %t/fixed.mlir | FileCheck %s --check-prefix=MMA
// RUN: not gdn-run --emit=ptx --schedule='#gdn.schedule<staged_tokens = 8>' %t/odd.mlir 2>&1 | FileCheck %s --check-prefix=ODD
// f8E4M3FN checkpoints with their row scales (checkpoint_scale): rows
// quantized as a final state is, checked as e4m3 x scale at e4m3's
// tolerance. An fp8 pool in varlen (vk) and an f32 state in kv, on the CPU
// and (token loop, tensor cores) through ptxas.
// RUN: gdn-run --target=cpu --check %t/fp8.mlir | FileCheck %s --check-prefix=E4M3
// RUN: gdn-run --target=cpu --check --seed=3 %t/fp8-kv.mlir | FileCheck %s --check-prefix=E4M3
// RUN: gdn-run --emit=ptx %t/fp8.mlir | FileCheck %s --check-prefix=E4M3-PTX
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<solve = tensor_cores>' %t/fp8-kv.mlir | FileCheck %s --check-prefixes=MMA,E4M3-PTX
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<staged_tokens = 0>' %t/fp8-kv.mlir | FileCheck %s --check-prefix=E4M3-PTX
// E4M3-NOT: FAILED
// E4M3: check checkpoints {{.*}} (tol 4.0e-02)  ok
// E4M3-NEXT: check unwritten checkpoint rows: 0 of {{[0-9]+}} changed  ok
// E4M3-NOT: FAILED
// E4M3: check o {{.*}} ok
// E4M3-PTX: cvt.rn.satfinite.e4m3x2.f32
// CHECK-DAG: check checkpoints {{.*}} ok
// CHECK-DAG: check unwritten checkpoint rows: 0 of {{[0-9]+}} changed  ok
// CHECK-DAG: check o {{.*}} ok
// CHECK-NOT: FAILED
// PTX: .entry
// MMA: mma.sync.aligned.m16n8k8
// ODD: checkpoint_interval = 12 needs staged_tokens dividing it

//--- varlen.mlir
func.func @varlen(%q: memref<1x100x2x32xbf16>, %k: memref<1x100x2x32xbf16>, %v: memref<1x100x4x32xbf16>,
                  %g: memref<1x100x4xf32>, %beta: memref<1x100x4xbf16>, %cu: memref<6xi32>,
                  %idx: memref<5xi32>, %offsets: memref<6xi64>, %pool: memref<7x4x32x32xf32>,
                  %ck: memref<16x4x32x32xf32>, %o: memref<1x100x4x32xbf16>) {
  gdn.recurrent q(%q : memref<1x100x2x32xbf16>) k(%k : memref<1x100x2x32xbf16>) v(%v : memref<1x100x4x32xbf16>)
      g(%g : memref<1x100x4xf32>) beta(%beta : memref<1x100x4xbf16>)
      state_indices(%idx : memref<5xi32>) cu_seqlens(%cu : memref<6xi32>)
      checkpoint_offsets(%offsets : memref<6xi64>)
      initial_state(%pool : memref<7x4x32x32xf32>)
      state_checkpoints(%ck : memref<16x4x32x32xf32>)
      final_state(%pool : memref<7x4x32x32xf32>)
      o(%o : memref<1x100x4x32xbf16>) {qk_l2norm, checkpoint_interval = 8 : i64, state_layout = #gdn.layout<vk>}
  return
}
//--- small.mlir
func.func @small(%q: memref<1x100x2x32xbf16>, %k: memref<1x100x2x32xbf16>, %v: memref<1x100x4x32xbf16>,
                 %g: memref<1x100x4xf32>, %beta: memref<1x100x4xbf16>, %cu: memref<4xi32>,
                 %offsets: memref<4xi32>, %h0: memref<3x4x32x32xf32>,
                 %ck: memref<3x4x32x32xf32>, %o: memref<1x100x4x32xbf16>) {
  gdn.recurrent q(%q : memref<1x100x2x32xbf16>) k(%k : memref<1x100x2x32xbf16>) v(%v : memref<1x100x4x32xbf16>)
      g(%g : memref<1x100x4xf32>) beta(%beta : memref<1x100x4xbf16>) cu_seqlens(%cu : memref<4xi32>)
      checkpoint_offsets(%offsets : memref<4xi32>) initial_state(%h0 : memref<3x4x32x32xf32>)
      state_checkpoints(%ck : memref<3x4x32x32xf32>)
      o(%o : memref<1x100x4x32xbf16>) {checkpoint_interval = 16 : i64, state_layout = #gdn.layout<vk>}
  return
}
//--- fixed.mlir
func.func @fixed(%q: memref<2x48x2x32xbf16>, %k: memref<2x48x2x32xbf16>, %v: memref<2x48x4x32xbf16>,
                 %g: memref<2x48x4xf32>, %beta: memref<2x48x4xbf16>, %offsets: memref<3xi32>,
                 %h0: memref<2x4x32x32xf32>, %ck: memref<6x4x32x32xbf16>, %ht: memref<2x4x32x32xf32>,
                 %o: memref<2x48x4x32xbf16>) {
  gdn.recurrent q(%q : memref<2x48x2x32xbf16>) k(%k : memref<2x48x2x32xbf16>) v(%v : memref<2x48x4x32xbf16>)
      g(%g : memref<2x48x4xf32>) beta(%beta : memref<2x48x4xbf16>)
      checkpoint_offsets(%offsets : memref<3xi32>) initial_state(%h0 : memref<2x4x32x32xf32>)
      state_checkpoints(%ck : memref<6x4x32x32xbf16>) final_state(%ht : memref<2x4x32x32xf32>)
      o(%o : memref<2x48x4x32xbf16>) {qk_l2norm, checkpoint_interval = 16 : i64}
  return
}
//--- odd.mlir
func.func @odd(%q: memref<1x48x2x32xbf16>, %k: memref<1x48x2x32xbf16>, %v: memref<1x48x4x32xbf16>,
               %offsets: memref<2xi32>, %ck: memref<4x4x32x32xf32>, %o: memref<1x48x4x32xbf16>) {
  gdn.recurrent q(%q : memref<1x48x2x32xbf16>) k(%k : memref<1x48x2x32xbf16>) v(%v : memref<1x48x4x32xbf16>)
      checkpoint_offsets(%offsets : memref<2xi32>) state_checkpoints(%ck : memref<4x4x32x32xf32>)
      o(%o : memref<1x48x4x32xbf16>) {checkpoint_interval = 12 : i64}
  return
}
//--- fp8.mlir
func.func @fp8(%q: memref<1x100x2x32xbf16>, %k: memref<1x100x2x32xbf16>, %v: memref<1x100x4x32xbf16>,
               %g: memref<1x100x4xf32>, %beta: memref<1x100x4xbf16>, %cu: memref<6xi32>,
               %idx: memref<5xi32>, %offsets: memref<6xi64>, %pool: memref<7x4x32x32xf8E4M3FN>,
               %ck: memref<16x4x32x32xf8E4M3FN>, %cks: memref<16x4x32xf32>, %sc: memref<7x4x32xf32>,
               %o: memref<1x100x4x32xbf16>) {
  gdn.recurrent q(%q : memref<1x100x2x32xbf16>) k(%k : memref<1x100x2x32xbf16>) v(%v : memref<1x100x4x32xbf16>)
      g(%g : memref<1x100x4xf32>) beta(%beta : memref<1x100x4xbf16>)
      state_indices(%idx : memref<5xi32>) cu_seqlens(%cu : memref<6xi32>)
      checkpoint_offsets(%offsets : memref<6xi64>)
      initial_state(%pool : memref<7x4x32x32xf8E4M3FN>)
      state_checkpoints(%ck : memref<16x4x32x32xf8E4M3FN>) checkpoint_scale(%cks : memref<16x4x32xf32>)
      state_scale(%sc : memref<7x4x32xf32>)
      final_state(%pool : memref<7x4x32x32xf8E4M3FN>)
      o(%o : memref<1x100x4x32xbf16>) {qk_l2norm, checkpoint_interval = 16 : i64, state_layout = #gdn.layout<vk>}
  return
}
//--- fp8-kv.mlir
func.func @fp8kv(%q: memref<2x48x2x32xbf16>, %k: memref<2x48x2x32xbf16>, %v: memref<2x48x4x32xbf16>,
                 %g: memref<2x48x4xf32>, %beta: memref<2x48x4xbf16>, %offsets: memref<3xi32>,
                 %h0: memref<2x4x32x32xf32>, %ck: memref<6x4x32x32xf8E4M3FN>, %cks: memref<6x4x32xf32>,
                 %ht: memref<2x4x32x32xf32>, %o: memref<2x48x4x32xbf16>) {
  gdn.recurrent q(%q : memref<2x48x2x32xbf16>) k(%k : memref<2x48x2x32xbf16>) v(%v : memref<2x48x4x32xbf16>)
      g(%g : memref<2x48x4xf32>) beta(%beta : memref<2x48x4xbf16>)
      checkpoint_offsets(%offsets : memref<3xi32>) initial_state(%h0 : memref<2x4x32x32xf32>)
      state_checkpoints(%ck : memref<6x4x32x32xf8E4M3FN>) checkpoint_scale(%cks : memref<6x4x32xf32>)
      final_state(%ht : memref<2x4x32x32xf32>)
      o(%o : memref<2x48x4x32xbf16>) {qk_l2norm, checkpoint_interval = 16 : i64}
  return
}
