// SGLang's pool decode at N = 1 with an fp32 pool of 5 slots updated in
// place at state_indices (Qwen3-Next rank shapes): the pool twin of
// decode_n1_f32.mlir (the same state bytes, read at a slot index).
// Run: gdn-run --target=cuda --check --bench bench/sweeps/decode_n1_f32_pool.mlir
func.func @pool_decode_f32(%q: memref<1x1x16x128xbf16>,
    %k: memref<1x1x16x128xbf16>,
    %v: memref<1x1x32x128xbf16>,
    %a: memref<1x1x32xbf16>,
    %A_log: memref<32xf32>,
    %dt_bias: memref<32xf32>,
    %b: memref<1x1x32xbf16>,
    %state_indices: memref<1xi32>,
    %pool: memref<5x32x128x128xf32>,
    %o: memref<1x1x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x1x16x128xbf16>)
      k(%k : memref<1x1x16x128xbf16>)
      v(%v : memref<1x1x32x128xbf16>)
      a(%a : memref<1x1x32xbf16>)
      A_log(%A_log : memref<32xf32>)
      dt_bias(%dt_bias : memref<32xf32>)
      b(%b : memref<1x1x32xbf16>)
      state_indices(%state_indices : memref<1xi32>)
      initial_state(%pool : memref<5x32x128x128xf32>)
      final_state(%pool : memref<5x32x128x128xf32>)
      o(%o : memref<1x1x32x128xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
