// SGLang extend (chunked prefill through the recurrent kernel): N=4 requests
// whose 64 tokens are packed along T (cu_seqlens [N + 1], random lengths from
// gdn-run's seed), Qwen3-Next rank shapes (H=16, HV=32, K=V=128), fused
// gating, beta logits, L2 norm; the fp32 pool of 8 slots is updated in place
// at state_indices. On the GPU the cost model takes the tensor-core solve
// (16 tokens a sequence on average: a batch of prefills,
// docs/cost-model.md#varlen-prefill), 16 tokens staged at a time.
// Run: gdn-run --check examples/sglang_varlen_extend.mlir
func.func @extend(%q: memref<1x64x16x128xbf16>,
    %k: memref<1x64x16x128xbf16>,
    %v: memref<1x64x32x128xbf16>,
    %a: memref<1x64x32xbf16>,
    %A_log: memref<32xf32>,
    %dt_bias: memref<32xf32>,
    %b: memref<1x64x32xbf16>,
    %cu_seqlens: memref<5xi32>,
    %state_indices: memref<4xi32>,
    %pool: memref<8x32x128x128xf32>,
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
      initial_state(%pool : memref<8x32x128x128xf32>)
      final_state(%pool : memref<8x32x128x128xf32>)
      o(%o : memref<1x64x32x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
