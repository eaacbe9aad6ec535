// REQUIRES: ptxas
// The cost model's split scans (segments) of the forms that need more than
// 128 registers a thread, each one sequence of 32768 tokens at HV = 8 (16
// segments of 4 warps, 256 CTAs): KDA (a decay per key) and a scan storing
// f8E4M3FN checkpoints. Two 4-warp CTAs an SM fit its registers whatever
// their count, so the cost model caps none (max_registers = 0; under 128
// KDA's maps and scan spilled 40 and 28 bytes, the e4m3 checkpoints' scan
// 180), and each launch assembles with no stack frame and no spills.
// RUN: split-file %s %t
// RUN: gdn-opt -gdn-select-schedule %t/kda.mlir | FileCheck %s --check-prefix=SPLIT
// RUN: gdn-run --emit=ptx --launch=1 %t/kda.mlir > %t.kda1.ptx
// RUN: gdn-run --emit=ptx --launch=3 %t/kda.mlir > %t.kda3.ptx
// RUN: %ptxas -arch=sm_90a -v %t.kda1.ptx -o %t.kda1.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_90a -v %t.kda3.ptx -o %t.kda3.cubin 2>&1 | FileCheck %s
// RUN: gdn-opt -gdn-select-schedule %t/fp8ck.mlir | FileCheck %s --check-prefix=SPLIT
// RUN: gdn-run --emit=ptx --launch=3 %t/fp8ck.mlir > %t.ck3.ptx
// RUN: %ptxas -arch=sm_90a -v %t.ck3.ptx -o %t.ck3.cubin 2>&1 | FileCheck %s
// SPLIT: warps = 4, {{.*}}solve = chunk_parallel, {{.*}}max_registers = 0, {{.*}}segments = 16>
// CHECK: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

//--- kda.mlir
func.func @kda(%q: memref<1x32768x4x128xbf16>, %k: memref<1x32768x4x128xbf16>, %v: memref<1x32768x8x128xbf16>, %g: memref<1x32768x8x128xf32>, %beta: memref<1x32768x8xf32>, %s: memref<1x8x128x128xf32>, %o: memref<1x32768x8x128xbf16>) {
  gdn.recurrent q(%q : memref<1x32768x4x128xbf16>) k(%k : memref<1x32768x4x128xbf16>) v(%v : memref<1x32768x8x128xbf16>) g(%g : memref<1x32768x8x128xf32>) beta(%beta : memref<1x32768x8xf32>) initial_state(%s : memref<1x8x128x128xf32>) final_state(%s : memref<1x8x128x128xf32>) o(%o : memref<1x32768x8x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

//--- fp8ck.mlir
func.func @fp8ck(%q: memref<1x32768x4x128xbf16>, %k: memref<1x32768x4x128xbf16>, %v: memref<1x32768x8x128xbf16>, %g: memref<1x32768x8xf32>, %beta: memref<1x32768x8xf32>, %co: memref<2xi32>, %s: memref<1x8x128x128xf32>, %ck: memref<600x8x128x128xf8E4M3FN>, %cks: memref<600x8x128xf32>, %o: memref<1x32768x8x128xbf16>) {
  gdn.recurrent q(%q : memref<1x32768x4x128xbf16>) k(%k : memref<1x32768x4x128xbf16>) v(%v : memref<1x32768x8x128xbf16>) g(%g : memref<1x32768x8xf32>) beta(%beta : memref<1x32768x8xf32>) checkpoint_offsets(%co : memref<2xi32>) initial_state(%s : memref<1x8x128x128xf32>) state_checkpoints(%ck : memref<600x8x128x128xf8E4M3FN>) checkpoint_scale(%cks : memref<600x8x128xf32>) final_state(%s : memref<1x8x128x128xf32>) o(%o : memref<1x32768x8x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>, checkpoint_interval = 64 : i64}
  return
}
