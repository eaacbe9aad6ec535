// Qwen3-Next-80B-A3B linear-attention decode step, one tensor-parallel rank:
// N=8 sequences, T=1, H=16 q/k heads, HV=32 value heads, K=V=128, bf16 q/k/v,
// fused gating (a, A_log, dt_bias), beta logits b, q/k L2 norm, fp32 state
// updated in place in the vk layout [N, HV, V, K] (SGLang/vLLM pools).
// Run: gdn-run --check examples/qwen3_next_decode.mlir
func.func @decode(%q: memref<8x1x16x128xbf16>,
    %k: memref<8x1x16x128xbf16>,
    %v: memref<8x1x32x128xbf16>,
    %a: memref<8x1x32xbf16>,
    %A_log: memref<32xf32>,
    %dt_bias: memref<32xf32>,
    %b: memref<8x1x32xbf16>,
    %state: memref<8x32x128x128xf32>,
    %o: memref<8x1x32x128xbf16>) {
  gdn.recurrent q(%q : memref<8x1x16x128xbf16>)
      k(%k : memref<8x1x16x128xbf16>)
      v(%v : memref<8x1x32x128xbf16>)
      a(%a : memref<8x1x32xbf16>)
      A_log(%A_log : memref<32xf32>)
      dt_bias(%dt_bias : memref<32xf32>)
      b(%b : memref<8x1x32xbf16>)
      initial_state(%state : memref<8x32x128x128xf32>)
      final_state(%state : memref<8x32x128x128xf32>)
      o(%o : memref<8x1x32x128xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
