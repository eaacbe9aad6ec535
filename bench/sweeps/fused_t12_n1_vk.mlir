// Fused-gating T=12 (final state only), N=1, Qwen3-Next rank shapes, vk fp32 state.
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
