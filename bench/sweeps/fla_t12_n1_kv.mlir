// FLA-style T=12 (final state only), N=1, Qwen3-Next rank shapes, kv fp32 state.
func.func @fla(%q: memref<1x12x16x128xbf16>, %k: memref<1x12x16x128xbf16>, %v: memref<1x12x32x128xbf16>,
               %g: memref<1x12x32xf32>, %beta: memref<1x12x32xbf16>,
               %h0: memref<1x32x128x128xf32>, %ht: memref<1x32x128x128xf32>, %o: memref<1x12x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x12x16x128xbf16>) k(%k : memref<1x12x16x128xbf16>) v(%v : memref<1x12x32x128xbf16>)
      g(%g : memref<1x12x32xf32>) beta(%beta : memref<1x12x32xbf16>)
      initial_state(%h0 : memref<1x32x128x128xf32>) final_state(%ht : memref<1x32x128x128xf32>)
      o(%o : memref<1x12x32x128xbf16>) {qk_l2norm}
  return
}
