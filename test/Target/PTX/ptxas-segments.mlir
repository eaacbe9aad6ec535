// REQUIRES: ptxas
// Context-parallel segments (segments = 4, docs/math.md §7) at Qwen3-Next's
// head sizes, one sequence of 4096 tokens: the records, the segment maps,
// the join and the segments' scan each assemble for sm_90a with no stack
// frame and no spills.
// RUN: gdn-run --emit=ptx --launch=0 --schedule='#gdn.schedule<solve = chunk_parallel, segments = 4>' %s > %t.0.ptx
// RUN: gdn-run --emit=ptx --launch=1 --schedule='#gdn.schedule<solve = chunk_parallel, segments = 4>' %s > %t.1.ptx
// RUN: gdn-run --emit=ptx --launch=2 --schedule='#gdn.schedule<solve = chunk_parallel, segments = 4>' %s > %t.2.ptx
// RUN: gdn-run --emit=ptx --launch=3 --schedule='#gdn.schedule<solve = chunk_parallel, segments = 4>' %s > %t.3.ptx
// RUN: FileCheck %s --check-prefix=MAPS < %t.1.ptx
// RUN: FileCheck %s --check-prefix=JOIN < %t.2.ptx
// RUN: %ptxas -arch=sm_90a -v %t.0.ptx -o %t.0.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_90a -v %t.1.ptx -o %t.1.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_90a -v %t.2.ptx -o %t.2.cubin 2>&1 | FileCheck %s
// RUN: %ptxas -arch=sm_90a -v %t.3.ptx -o %t.3.cubin 2>&1 | FileCheck %s
// MAPS: .entry prefill_segment_maps(
// JOIN: .entry prefill_segment_join(
// JOIN: .maxntid 128, 1, 1
// CHECK: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
func.func @prefill(%q: memref<1x4096x16x128xbf16>, %k: memref<1x4096x16x128xbf16>, %v: memref<1x4096x32x128xbf16>, %g: memref<1x4096x32xf32>, %beta: memref<1x4096x32xbf16>, %initial_state: memref<1x32x128x128xf32>, %final_state: memref<1x32x128x128xf32>, %o: memref<1x4096x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x4096x16x128xbf16>) k(%k : memref<1x4096x16x128xbf16>) v(%v : memref<1x4096x32x128xbf16>) g(%g : memref<1x4096x32xf32>) beta(%beta : memref<1x4096x32xbf16>) initial_state(%initial_state : memref<1x32x128x128xf32>) final_state(%final_state : memref<1x32x128x128xf32>) o(%o : memref<1x4096x32x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
