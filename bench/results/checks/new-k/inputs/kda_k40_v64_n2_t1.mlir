func.func @kda_k40_v64_n2_t1(%q: memref<2x1x4x40xbf16>, %k: memref<2x1x4x40xbf16>, %v: memref<2x1x4x64xbf16>, %g: memref<2x1x4x40xf32>, %b: memref<2x1x4xbf16>, %s: memref<2x4x64x40xf32>, %o: memref<2x1x4x64xbf16>) {
  gdn.recurrent q(%q : memref<2x1x4x40xbf16>) k(%k : memref<2x1x4x40xbf16>) v(%v : memref<2x1x4x64xbf16>) g(%g : memref<2x1x4x40xf32>) b(%b : memref<2x1x4xbf16>) initial_state(%s : memref<2x4x64x40xf32>) final_state(%s : memref<2x4x64x40xf32>) o(%o : memref<2x1x4x64xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
