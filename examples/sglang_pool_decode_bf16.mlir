// As sglang_pool_decode.mlir with a bf16 state pool (SGLang --mamba-ssm-dtype
// bfloat16, FlashInfer bf16 state): computed in fp32, rounded once on store.
// SGLang / vLLM decode: N=8 requests, T=1, Qwen3-Next rank shapes (H=16,
// HV=32, K=V=128), bf16 q/k/v, fused gating, beta logits, q/k L2 norm, and a
// pool of 12 bf16 state slots [slots, HV, V, K] updated in place at
// state_indices (i32; < 0 marks a padding row: no state touched, o rows 0).
// Run: gdn-run --check examples/sglang_pool_decode_bf16.mlir
func.func @pool_decode_bf16(%q: memref<8x1x16x128xbf16>,
    %k: memref<8x1x16x128xbf16>,
    %v: memref<8x1x32x128xbf16>,
    %a: memref<8x1x32xbf16>,
    %A_log: memref<32xf32>,
    %dt_bias: memref<32xf32>,
    %b: memref<8x1x32xbf16>,
    %state_indices: memref<8xi32>,
    %pool: memref<12x32x128x128xbf16>,
    %o: memref<8x1x32x128xbf16>) {
  gdn.recurrent q(%q : memref<8x1x16x128xbf16>)
      k(%k : memref<8x1x16x128xbf16>)
      v(%v : memref<8x1x32x128xbf16>)
      a(%a : memref<8x1x32xbf16>)
      A_log(%A_log : memref<32xf32>)
      dt_bias(%dt_bias : memref<32xf32>)
      b(%b : memref<8x1x32xbf16>)
      state_indices(%state_indices : memref<8xi32>)
      initial_state(%pool : memref<12x32x128x128xbf16>)
      final_state(%pool : memref<12x32x128x128xbf16>)
      o(%o : memref<8x1x32x128xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
