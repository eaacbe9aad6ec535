// REQUIRES: ptxas
// The warp-specialized WY solve (solve = tensor_cores, producer_stages = 2;
// WarpSpecializedSolve.cpp) assembles for sm_90a with no stack frame and no
// spills at Qwen3-Next's prefill shapes (HV = 32, K = V = 128, bf16 q, k, v,
// f32 state): 8 consumer warps at N = 4 (the scan's warps rule), 2 at N = 1,
// and a varlen pool with checkpoints; each kernel waits at two hardware
// barriers (0, the CTA's once before the roles split; 1, the producer
// warpgroup's), and its registers leave one CTA of 12 warps (384 threads)
// an SM room: at most 168 a thread (65536 / 384 = 170, in units of 8).
// RUN: split-file %s %t
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<solve = tensor_cores, producer_stages = 2>' %t/n4.mlir > %t.n4.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.n4.ptx
// RUN: %ptxas -arch=sm_90a -v %t.n4.ptx -o %t.n4.cubin 2>&1 | FileCheck %s
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<solve = tensor_cores, producer_stages = 2>' %t/n1.mlir > %t.n1.ptx
// RUN: %ptxas -arch=sm_90a -v %t.n1.ptx -o %t.n1.cubin 2>&1 | FileCheck %s
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<solve = tensor_cores, producer_stages = 2>' %t/varlen.mlir > %t.varlen.ptx
// RUN: %ptxas -arch=sm_90a -v %t.varlen.ptx -o %t.varlen.cubin 2>&1 | FileCheck %s
// PTX: .maxntid 384, 1, 1
// PTX-DAG: mbarrier.init
// PTX-DAG: mbarrier.try_wait.parity
// PTX-DAG: cp.async.cg.shared.global
// PTX-DAG: bar.sync 1, 128;
// PTX-DAG: mbarrier.arrive
// CHECK: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK: Used {{([0-9]|[1-9][0-9]|1[0-5][0-9]|16[0-8])}} registers, used 2 barriers
//--- n4.mlir
func.func @prefill(%q: memref<4x64x16x128xbf16>, %k: memref<4x64x16x128xbf16>, %v: memref<4x64x32x128xbf16>, %g: memref<4x64x32xf32>, %beta: memref<4x64x32xbf16>, %initial_state: memref<4x32x128x128xf32>, %final_state: memref<4x32x128x128xf32>, %o: memref<4x64x32x128xbf16>) {
  gdn.recurrent q(%q : memref<4x64x16x128xbf16>) k(%k : memref<4x64x16x128xbf16>) v(%v : memref<4x64x32x128xbf16>) g(%g : memref<4x64x32xf32>) beta(%beta : memref<4x64x32xbf16>) initial_state(%initial_state : memref<4x32x128x128xf32>) final_state(%final_state : memref<4x32x128x128xf32>) o(%o : memref<4x64x32x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
//--- n1.mlir
func.func @prefill(%q: memref<1x64x16x128xbf16>, %k: memref<1x64x16x128xbf16>, %v: memref<1x64x32x128xbf16>, %g: memref<1x64x32xf32>, %beta: memref<1x64x32xbf16>, %initial_state: memref<1x32x128x128xf32>, %final_state: memref<1x32x128x128xf32>, %o: memref<1x64x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x64x16x128xbf16>) k(%k : memref<1x64x16x128xbf16>) v(%v : memref<1x64x32x128xbf16>) g(%g : memref<1x64x32xf32>) beta(%beta : memref<1x64x32xbf16>) initial_state(%initial_state : memref<1x32x128x128xf32>) final_state(%final_state : memref<1x32x128x128xf32>) o(%o : memref<1x64x32x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
//--- varlen.mlir
func.func @prefill(%q: memref<1x200x16x128xbf16>, %k: memref<1x200x16x128xbf16>, %v: memref<1x200x32x128xbf16>, %g: memref<1x200x32xf32>, %beta: memref<1x200x32xbf16>, %state_indices: memref<3xi32>, %cu_seqlens: memref<4xi32>, %checkpoint_offsets: memref<4xi32>, %initial_state: memref<4x32x128x128xf32>, %state_checkpoints: memref<8x32x128x128xf32>, %o: memref<1x200x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x200x16x128xbf16>) k(%k : memref<1x200x16x128xbf16>) v(%v : memref<1x200x32x128xbf16>) g(%g : memref<1x200x32xf32>) beta(%beta : memref<1x200x32xbf16>) state_indices(%state_indices : memref<3xi32>) cu_seqlens(%cu_seqlens : memref<4xi32>) checkpoint_offsets(%checkpoint_offsets : memref<4xi32>) initial_state(%initial_state : memref<4x32x128x128xf32>) state_checkpoints(%state_checkpoints : memref<8x32x128x128xf32>) final_state(%initial_state : memref<4x32x128x128xf32>) o(%o : memref<1x200x32x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>, checkpoint_interval = 64 : i64}
  return
}
