// REQUIRES: ptxas
// Chunked (WY) solve kernels assemble for sm_90a with no stack frame and no
// spills: the MTP example (T = 4, one chunk), T = 12 in one chunk and in
// chunks of 8 (a partial last chunk), 1, 2 and 4 columns a lane, kv, varlen.
// RUN: split-file %s %t
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<solve = cuda_cores>' %examples/qwen3_next_mtp.mlir > %t.mtp.ptx
// RUN: FileCheck %s --check-prefix=SOLVE < %t.mtp.ptx
// RUN: %ptxas -arch=sm_90a -v %t.mtp.ptx -o %t.mtp.cubin 2>&1 | FileCheck %s
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<columns_per_lane = 1, solve = cuda_cores>' %t/t12.mlir > %t.r1.ptx
// RUN: %ptxas -arch=sm_90a -v %t.r1.ptx -o %t.r1.cubin 2>&1 | FileCheck %s
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<columns_per_lane = 2, solve = cuda_cores>' %t/t12.mlir > %t.r2.ptx
// RUN: %ptxas -arch=sm_90a -v %t.r2.ptx -o %t.r2.cubin 2>&1 | FileCheck %s
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<columns_per_lane = 4, solve = cuda_cores>' %t/t12.mlir > %t.r4.ptx
// RUN: %ptxas -arch=sm_90a -v %t.r4.ptx -o %t.r4.cubin 2>&1 | FileCheck %s
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<columns_per_lane = 4, staged_tokens = 8, solve = cuda_cores>' %t/t12.mlir > %t.c8.ptx
// RUN: %ptxas -arch=sm_90a -v %t.c8.ptx -o %t.c8.cubin 2>&1 | FileCheck %s
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<solve = cuda_cores>' %examples/kv_k128_v64.mlir > %t.kv.ptx
// RUN: %ptxas -arch=sm_90a -v %t.kv.ptx -o %t.kv.cubin 2>&1 | FileCheck %s
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<solve = cuda_cores>' %examples/sglang_varlen_extend.mlir > %t.varlen.ptx
// RUN: %ptxas -arch=sm_90a -v %t.varlen.ptx -o %t.varlen.cubin 2>&1 | FileCheck %s

// CHECK: Compiling entry function '{{.*}}_recurrent' for 'sm_90a'
// CHECK: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// The log gates and the Gram matrices in shared memory, two barriers (staged,
// Gram), the shuffle trees after them.
// SOLVE: .shared .align 16 .b8
// SOLVE: bar.sync 0;
// SOLVE: bar.sync 0;
// SOLVE: shfl.sync.bfly.b32
// SOLVE-NOT: bar.sync

//--- t12.mlir
func.func @t12(%q: memref<1x12x16x128xbf16>, %k: memref<1x12x16x128xbf16>,
    %v: memref<1x12x32x128xbf16>, %a: memref<1x12x32xbf16>,
    %A_log: memref<32xf32>, %dt_bias: memref<32xf32>, %b: memref<1x12x32xbf16>,
    %state: memref<1x32x128x128xf32>, %o: memref<1x12x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x12x16x128xbf16>) k(%k : memref<1x12x16x128xbf16>)
      v(%v : memref<1x12x32x128xbf16>) a(%a : memref<1x12x32xbf16>)
      A_log(%A_log : memref<32xf32>) dt_bias(%dt_bias : memref<32xf32>)
      b(%b : memref<1x12x32xbf16>)
      initial_state(%state : memref<1x32x128x128xf32>)
      final_state(%state : memref<1x32x128x128xf32>)
      o(%o : memref<1x12x32x128xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
