// Qwen3-Next MTP verify shape: as qwen3_next_decode.mlir with T=4 tokens
// per sequence (final state only).
func.func @mtp(%q: memref<8x4x16x128xbf16>,
    %k: memref<8x4x16x128xbf16>,
    %v: memref<8x4x32x128xbf16>,
    %a: memref<8x4x32xbf16>,
    %A_log: memref<32xf32>,
    %dt_bias: memref<32xf32>,
    %b: memref<8x4x32xbf16>,
    %state: memref<8x32x128x128xf32>,
    %o: memref<8x4x32x128xbf16>) {
  gdn.recurrent q(%q : memref<8x4x16x128xbf16>)
      k(%k : memref<8x4x16x128xbf16>)
      v(%v : memref<8x4x32x128xbf16>)
      a(%a : memref<8x4x32xbf16>)
      A_log(%A_log : memref<32xf32>)
      dt_bias(%dt_bias : memref<32xf32>)
      b(%b : memref<8x4x32xbf16>)
      initial_state(%state : memref<8x32x128x128xf32>)
      final_state(%state : memref<8x32x128x128xf32>)
      o(%o : memref<8x4x32x128xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
