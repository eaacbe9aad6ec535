// REQUIRES: ptxas
// reductions = mma (the e4m3 decode on mma.sync and packed f16 pairs,
// MmaDecode.cpp) assembles for sm_90a with no stack frame and no spills at
// 1, 2 and 4 tiles a warp (columns_per_lane 2, 4, 8; 8 the form's default).
// RUN: gdn-run --emit=ptx %s > %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %ptxas -arch=sm_90a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<reductions = mma, columns_per_lane = 2>' %s > %t.2.ptx
// RUN: %ptxas -arch=sm_90a -v %t.2.ptx -o %t.2.cubin 2>&1 | FileCheck %s
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<reductions = mma, columns_per_lane = 4>' %s > %t.4.ptx
// RUN: %ptxas -arch=sm_90a -v %t.4.ptx -o %t.4.cubin 2>&1 | FileCheck %s
// PTX: cvt.rn.f16x2.e4m3x2
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX: shfl.sync.idx.b32
// PTX: fma.rn.f16x2
// PTX: cvt.rn.satfinite.e4m3x2.f16x2
// CHECK-NOT: bytes stack frame, {{[1-9]}}
// CHECK: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

func.func @decode(%q: memref<64x1x16x128xbf16>, %k: memref<64x1x16x128xbf16>,
                  %v: memref<64x1x32x128xbf16>, %a: memref<64x1x32xbf16>,
                  %A_log: memref<32xf32>, %dt_bias: memref<32xf32>,
                  %b: memref<64x1x32xbf16>, %idx: memref<64xi32>,
                  %pool: memref<64x32x128x128xf8E4M3FN>, %scale: memref<64x32x128xf32>,
                  %o: memref<64x1x32x128xbf16>) {
  gdn.recurrent q(%q : memref<64x1x16x128xbf16>) k(%k : memref<64x1x16x128xbf16>)
      v(%v : memref<64x1x32x128xbf16>) a(%a : memref<64x1x32xbf16>)
      A_log(%A_log : memref<32xf32>) dt_bias(%dt_bias : memref<32xf32>)
      b(%b : memref<64x1x32xbf16>) state_indices(%idx : memref<64xi32>)
      initial_state(%pool : memref<64x32x128x128xf8E4M3FN>)
      state_scale(%scale : memref<64x32x128xf32>)
      final_state(%pool : memref<64x32x128x128xf8E4M3FN>)
      o(%o : memref<64x1x32x128xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<vk>,
       gdn.schedule = #gdn.schedule<reductions = mma>}
  return
}
