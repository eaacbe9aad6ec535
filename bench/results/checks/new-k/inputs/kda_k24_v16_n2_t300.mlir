func.func @kda_k24_v16_n2_t300(%q: memref<2x300x4x24xbf16>, %k: memref<2x300x4x24xbf16>, %v: memref<2x300x4x16xbf16>, %g: memref<2x300x4x24xf32>, %b: memref<2x300x4xbf16>, %s: memref<2x4x16x24xf32>, %o: memref<2x300x4x16xbf16>) {
  gdn.recurrent q(%q : memref<2x300x4x24xbf16>) k(%k : memref<2x300x4x24xbf16>) v(%v : memref<2x300x4x16xbf16>) g(%g : memref<2x300x4x24xf32>) b(%b : memref<2x300x4xbf16>) initial_state(%s : memref<2x4x16x24xf32>) final_state(%s : memref<2x4x16x24xf32>) o(%o : memref<2x300x4x16xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
