// SGLang extend on an fp8 pool: the chunked prefill of
// examples/sglang_varlen_extend.mlir (N=4 requests packed along T, Qwen3-Next
// rank shapes H=16, HV=32, K=V=128, fused gating, beta logits, L2 norm) with
// the pool of 8 slots in float8_e4m3fn and its row scales [slots, HV, V]
// (docs/math.md §6): each state is read as e4m3 x its row's scale and
// stored rounded once, with new scales. On the GPU the cost model takes the
// tensor-core solve, as for the fp32 pool; the state then lives in the mma
// fragments and a row's scale is the max over the 4 lanes that hold it.
// Run: gdn-run --check examples/sglang_varlen_extend_fp8.mlir
func.func @extend(%q: memref<1x64x16x128xbf16>,
    %k: memref<1x64x16x128xbf16>,
    %v: memref<1x64x32x128xbf16>,
    %a: memref<1x64x32xbf16>,
    %A_log: memref<32xf32>,
    %dt_bias: memref<32xf32>,
    %b: memref<1x64x32xbf16>,
    %cu_seqlens: memref<5xi32>,
    %state_indices: memref<4xi32>,
    %pool: memref<8x32x128x128xf8E4M3FN>, %scale: memref<8x32x128xf32>,
    %o: memref<1x64x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x64x16x128xbf16>)
      k(%k : memref<1x64x16x128xbf16>)
      v(%v : memref<1x64x32x128xbf16>)
      a(%a : memref<1x64x32xbf16>)
      A_log(%A_log : memref<32xf32>)
      dt_bias(%dt_bias : memref<32xf32>)
      b(%b : memref<1x64x32xbf16>)
      state_indices(%state_indices : memref<4xi32>)
      cu_seqlens(%cu_seqlens : memref<5xi32>)
      initial_state(%pool : memref<8x32x128x128xf8E4M3FN>)
      state_scale(%scale : memref<8x32x128xf32>)
      final_state(%pool : memref<8x32x128x128xf8E4M3FN>)
      o(%o : memref<1x64x32x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
