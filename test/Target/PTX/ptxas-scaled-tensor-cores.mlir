// REQUIRES: ptxas
// An f8E4M3FN state (row scales, docs/math.md §6) in the tensor-core forms
// assembles for sm_90a with no stack frame and no spills: the fp8 pool
// extend example under the cost model (which takes solve = tensor_cores,
// as for an fp32 pool), under both precisions, a kv state of 12 tokens on 2
// warps, and a long prefill (T = 4096, kv) whose default is chunk_parallel
// (two launches: every chunk's solve, then the scan that holds the state).
// RUN: gdn-opt -gdn-select-schedule=chip=sm_90a %examples/sglang_varlen_extend_fp8.mlir | FileCheck %s --check-prefix=DEFAULT
// DEFAULT: solve = tensor_cores
// RUN: gdn-run --emit=ptx %examples/sglang_varlen_extend_fp8.mlir > %t.extend.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.extend.ptx
// RUN: %ptxas -arch=sm_90a -v %t.extend.ptx -o %t.extend.cubin 2>&1 | FileCheck %s
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<precision = tf32x3>' %examples/sglang_varlen_extend_fp8.mlir > %t.x3.ptx
// RUN: %ptxas -arch=sm_90a -v %t.x3.ptx -o %t.x3.cubin 2>&1 | FileCheck %s
// RUN: split-file %s %t
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<warps = 2, solve = tensor_cores>' %t/kv.mlir > %t.kv.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.kv.ptx
// RUN: %ptxas -arch=sm_90a -v %t.kv.ptx -o %t.kv.cubin 2>&1 | FileCheck %s
// RUN: gdn-opt -gdn-select-schedule=chip=sm_90a %t/long.mlir | FileCheck %s --check-prefix=LONG
// LONG: solve = chunk_parallel, {{.*}}segments = 2, concurrent_solves = 0>
// One PTX module a launch (gdn-split-kernel-modules): each assembles alone,
// the segments' maps with the scaled e4m3 state too (2 segments: no join).
// RUN: gdn-run --emit=ptx %t/long.mlir | FileCheck %s --check-prefix=LONGPTX
// RUN: gdn-run --emit=ptx --launch=0 %t/long.mlir > %t.long0.ptx
// RUN: %ptxas -arch=sm_90a -v %t.long0.ptx -o %t.long0.cubin 2>&1 | FileCheck %s
// RUN: gdn-run --emit=ptx --launch=1 %t/long.mlir > %t.long1.ptx
// RUN: %ptxas -arch=sm_90a -v %t.long1.ptx -o %t.long1.cubin 2>&1 | FileCheck %s
// RUN: gdn-run --emit=ptx --launch=2 %t/long.mlir > %t.long2.ptx
// RUN: %ptxas -arch=sm_90a -v %t.long2.ptx -o %t.long2.cubin 2>&1 | FileCheck %s
// RUN: not gdn-run --emit=ptx --launch=3 %t/long.mlir 2>&1 | FileCheck %s --check-prefix=NOLAUNCH
// In 4 segments the join (launch 2) too.
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<segments = 4, concurrent_solves = 0>' --launch=2 %t/long.mlir > %t.join.ptx
// RUN: FileCheck %s --check-prefix=JOIN < %t.join.ptx
// RUN: %ptxas -arch=sm_90a -v %t.join.ptx -o %t.join.cubin 2>&1 | FileCheck %s
// The unsplit scan: two launches.
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<segments = 1, concurrent_solves = 0>' --launch=1 %t/long.mlir > %t.unsplit1.ptx
// RUN: %ptxas -arch=sm_90a -v %t.unsplit1.ptx -o %t.unsplit1.cubin 2>&1 | FileCheck %s
// RUN: not gdn-run --emit=ptx --schedule='#gdn.schedule<segments = 1, concurrent_solves = 0>' --launch=2 %t/long.mlir 2>&1 | FileCheck %s --check-prefix=UNSPLIT
// LONGPTX: .version
// LONGPTX: .entry prefill_chunk_solves(
// LONGPTX: .version
// LONGPTX: .entry prefill_segment_maps(
// LONGPTX: .version
// LONGPTX: .entry prefill_recurrent(
// JOIN: .entry prefill_segment_join(
// NOLAUNCH: error: --launch=3: @prefill has 3 launches
// UNSPLIT: error: --launch=2: @prefill has 2 launches
// The e4m3 pairs in and out, the fragments' products, a quad's max.
// PTX: cvt.rn.f16x2.e4m3x2
// PTX: mma.sync.aligned.m16n8k
// PTX: shfl.sync.bfly.b32 {{.*}}, 2, 31,
// PTX: shfl.sync.bfly.b32 {{.*}}, 1, 31,
// PTX: cvt.rn.satfinite.e4m3x2.f32
// CHECK-NOT: bytes stack frame, {{[1-9]}}
// CHECK: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK-NOT: spill stores, {{[1-9]}}

//--- kv.mlir
func.func @kv(%q: memref<3x12x2x64xbf16>, %k: memref<3x12x2x64xbf16>, %v: memref<3x12x4x64xbf16>,
              %g: memref<3x12x4xf32>, %beta: memref<3x12x4xf32>, %s: memref<3x4x64x64xf8E4M3FN>,
              %sc: memref<3x4x64xf32>, %o: memref<3x12x4x64xbf16>) {
  gdn.recurrent q(%q : memref<3x12x2x64xbf16>) k(%k : memref<3x12x2x64xbf16>) v(%v : memref<3x12x4x64xbf16>)
      g(%g : memref<3x12x4xf32>) beta(%beta : memref<3x12x4xf32>)
      initial_state(%s : memref<3x4x64x64xf8E4M3FN>) state_scale(%sc : memref<3x4x64xf32>)
      final_state(%s : memref<3x4x64x64xf8E4M3FN>)
      o(%o : memref<3x12x4x64xbf16>) {qk_l2norm}
  return
}

//--- long.mlir
func.func @prefill(%q: memref<1x4096x16x128xbf16>, %k: memref<1x4096x16x128xbf16>, %v: memref<1x4096x32x128xbf16>,
    %g: memref<1x4096x32xf32>, %beta: memref<1x4096x32xf32>,
    %s: memref<1x32x128x128xf8E4M3FN>, %scale: memref<1x32x128xf32>, %o: memref<1x4096x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x4096x16x128xbf16>) k(%k : memref<1x4096x16x128xbf16>) v(%v : memref<1x4096x32x128xbf16>)
      g(%g : memref<1x4096x32xf32>) beta(%beta : memref<1x4096x32xf32>)
      initial_state(%s : memref<1x32x128x128xf8E4M3FN>) state_scale(%scale : memref<1x32x128xf32>)
      final_state(%s : memref<1x32x128x128xf8E4M3FN>)
      o(%o : memref<1x4096x32x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<kv>}
  return
}
