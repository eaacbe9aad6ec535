// K != V in FLA's kv layout [N, HV, K, V]: K=128, V=64, H=4, HV=8, N=4, T=2,
// log-space decay g and given beta (fp32), separate initial and final states,
// explicit scale, no L2 norm.
func.func @kv_k128_v64(%q: memref<4x2x4x128xbf16>,
    %k: memref<4x2x4x128xbf16>,
    %v: memref<4x2x8x64xbf16>,
    %g: memref<4x2x8xf32>,
    %beta: memref<4x2x8xf32>,
    %h0: memref<4x8x128x64xf32>,
    %ht: memref<4x8x128x64xf32>,
    %o: memref<4x2x8x64xbf16>) {
  gdn.recurrent q(%q : memref<4x2x4x128xbf16>)
      k(%k : memref<4x2x4x128xbf16>)
      v(%v : memref<4x2x8x64xbf16>)
      g(%g : memref<4x2x8xf32>)
      beta(%beta : memref<4x2x8xf32>)
      initial_state(%h0 : memref<4x8x128x64xf32>)
      final_state(%ht : memref<4x8x128x64xf32>)
      o(%o : memref<4x2x8x64xbf16>)
      {scale = 0.125 : f32, state_layout = #gdn.layout<kv>}
  return
}
