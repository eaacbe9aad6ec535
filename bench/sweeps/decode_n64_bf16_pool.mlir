// SGLang bf16 pool decode at N=64 (Qwen3-Next rank shapes, a pool of 68 bf16
// slots updated in place at state_indices): bandwidth-bound, where the cost
// model moves 16-byte column slices (2 lanes along V, 4 columns a lane).
// Run: gdn-run --check --bench bench/sweeps/decode_n64_bf16_pool.mlir
func.func @pool_decode_bf16(%q: memref<64x1x16x128xbf16>,
    %k: memref<64x1x16x128xbf16>,
    %v: memref<64x1x32x128xbf16>,
    %a: memref<64x1x32xbf16>,
    %A_log: memref<32xf32>,
    %dt_bias: memref<32xf32>,
    %b: memref<64x1x32xbf16>,
    %state_indices: memref<64xi32>,
    %pool: memref<68x32x128x128xbf16>,
    %o: memref<64x1x32x128xbf16>) {
  gdn.recurrent q(%q : memref<64x1x16x128xbf16>)
      k(%k : memref<64x1x16x128xbf16>)
      v(%v : memref<64x1x32x128xbf16>)
      a(%a : memref<64x1x32xbf16>)
      A_log(%A_log : memref<32xf32>)
      dt_bias(%dt_bias : memref<32xf32>)
      b(%b : memref<64x1x32xbf16>)
      state_indices(%state_indices : memref<64xi32>)
      initial_state(%pool : memref<68x32x128x128xbf16>)
      final_state(%pool : memref<68x32x128x128xbf16>)
      o(%o : memref<64x1x32x128xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
