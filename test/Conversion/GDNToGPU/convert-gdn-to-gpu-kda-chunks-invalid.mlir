// RUN: gdn-opt %s -gdn-select-schedule="schedule={#gdn.schedule<solve = chunk_parallel, warps = 3>}" -convert-gdn-to-gpu -verify-diagnostics
// KDA in chunk_parallel (pinned: the cost model takes it only at K = 128):
// the first launch's min(warps, 4) warps must be a power of two (each
// holds whole Gram columns on a power of two of lanes, KeyDecayChunks.cpp):
// 3 warps (V = 96) is a diagnostic.
func.func @kda_three_warps(%q: memref<1x40x1x16xbf16>, %k: memref<1x40x1x16xbf16>, %v: memref<1x40x1x96xbf16>,
    %g: memref<1x40x1x16xf32>, %beta: memref<1x40x1xbf16>, %s0: memref<1x1x96x16xf32>, %s1: memref<1x1x96x16xf32>,
    %o: memref<1x40x1x96xbf16>) {
  // expected-error @+1 {{cannot be lowered to the GPU: solve = chunk_parallel needs with a per-key decay (KDA) warps = 1, 2, 4 or more (the first launch's min(warps, 4) a power of two), not 3}}
  gdn.recurrent q(%q : memref<1x40x1x16xbf16>) k(%k : memref<1x40x1x16xbf16>) v(%v : memref<1x40x1x96xbf16>)
      g(%g : memref<1x40x1x16xf32>) beta(%beta : memref<1x40x1xbf16>)
      initial_state(%s0 : memref<1x1x96x16xf32>) final_state(%s1 : memref<1x1x96x16xf32>)
      o(%o : memref<1x40x1x96xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
