// REQUIRES: ptxas
// KDA kernels (decay per key channel, beta per value channel) assemble for
// sm_90a with no stack frame and no spills: staged T > 1 (the per-key decay
// [chunk, K] and per-channel beta [chunk, BV] in shared memory), the same
// straight from global memory, varlen, and other schedules.
// RUN: split-file %s %t
// RUN: gdn-run --emit=ptx %t/staged.mlir > %t.staged.ptx
// RUN: FileCheck %s --check-prefix=STAGED < %t.staged.ptx
// RUN: %ptxas -arch=sm_90a -v %t.staged.ptx -o %t.staged.cubin 2>&1 | FileCheck %s
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<staged_tokens = 0>' %t/staged.mlir > %t.global.ptx
// RUN: FileCheck %s --check-prefix=GLOBAL --implicit-check-not=bar.sync --implicit-check-not=.shared < %t.global.ptx
// RUN: %ptxas -arch=sm_90a -v %t.global.ptx -o %t.global.cubin 2>&1 | FileCheck %s
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<columns_per_lane = 2, lanes_along_v = 8, warps = 2>' %t/staged.mlir > %t.lanes.ptx
// RUN: %ptxas -arch=sm_90a -v %t.lanes.ptx -o %t.lanes.cubin 2>&1 | FileCheck %s
// RUN: gdn-run --emit=ptx %t/varlen.mlir > %t.varlen.ptx
// RUN: FileCheck %s --check-prefix=STAGED < %t.varlen.ptx
// RUN: %ptxas -arch=sm_90a -v %t.varlen.ptx -o %t.varlen.cubin 2>&1 | FileCheck %s
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<columns_per_lane = 8, warps = 1, staged_tokens = 3>' %t/varlen.mlir > %t.varlen8.ptx
// RUN: %ptxas -arch=sm_90a -v %t.varlen8.ptx -o %t.varlen8.cubin 2>&1 | FileCheck %s

// CHECK: Compiling entry function '{{.*}}_recurrent' for 'sm_90a'
// CHECK: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// Staged: the gates go to shared memory as 16-byte f32 vectors, one barrier
// a chunk.
// STAGED: .shared .align 16 .b8
// STAGED: st.shared.v4.b32
// STAGED: bar.sync 0;
// STAGED: ld.shared.v4.b32
// Straight from global memory: no shared memory and no barrier.
// GLOBAL: ex2.approx.ftz.f32
// GLOBAL: lg2.approx.ftz.f32

//--- staged.mlir
// T = 4, kv: per-key fused gating and per-channel beta logits, bf16.
func.func @kda_staged(%q: memref<2x4x2x128xbf16>, %k: memref<2x4x2x128xbf16>, %v: memref<2x4x4x128xbf16>,
                      %a: memref<2x4x4x128xbf16>, %A_log: memref<4xf32>, %dt_bias: memref<512xf32>,
                      %b: memref<2x4x4x128xbf16>, %s: memref<2x4x128x128xf32>, %o: memref<2x4x4x128xbf16>) {
  gdn.recurrent q(%q : memref<2x4x2x128xbf16>) k(%k : memref<2x4x2x128xbf16>) v(%v : memref<2x4x4x128xbf16>)
      a(%a : memref<2x4x4x128xbf16>) A_log(%A_log : memref<4xf32>) dt_bias(%dt_bias : memref<512xf32>)
      b(%b : memref<2x4x4x128xbf16>)
      initial_state(%s : memref<2x4x128x128xf32>) final_state(%s : memref<2x4x128x128xf32>)
      o(%o : memref<2x4x4x128xbf16>) {qk_l2norm}
  return
}

//--- varlen.mlir
// Varlen, vk: log-space gk per key and given beta per value channel, f32.
func.func @gk_varlen(%q: memref<1x12x1x128xf32>, %k: memref<1x12x1x128xf32>, %v: memref<1x12x2x128xf32>,
                     %g: memref<1x12x2x128xf32>, %beta: memref<1x12x2x128xf32>, %cu: memref<4xi64>,
                     %s: memref<3x2x128x128xf32>, %o: memref<1x12x2x128xf32>) {
  gdn.recurrent q(%q : memref<1x12x1x128xf32>) k(%k : memref<1x12x1x128xf32>) v(%v : memref<1x12x2x128xf32>)
      g(%g : memref<1x12x2x128xf32>) beta(%beta : memref<1x12x2x128xf32>) cu_seqlens(%cu : memref<4xi64>)
      initial_state(%s : memref<3x2x128x128xf32>) final_state(%s : memref<3x2x128x128xf32>)
      o(%o : memref<1x12x2x128xf32>) {state_layout = #gdn.layout<vk>}
  return
}
