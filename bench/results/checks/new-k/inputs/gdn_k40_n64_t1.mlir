func.func @gdn_k40_n64_t1(%q: memref<64x1x4x40xbf16>, %k: memref<64x1x4x40xbf16>, %v: memref<64x1x4x128xbf16>, %g: memref<64x1x4xf32>, %b: memref<64x1x4xbf16>, %s: memref<64x4x128x40xf32>, %o: memref<64x1x4x128xbf16>) {
  gdn.recurrent q(%q : memref<64x1x4x40xbf16>) k(%k : memref<64x1x4x40xbf16>) v(%v : memref<64x1x4x128xbf16>) g(%g : memref<64x1x4xf32>) b(%b : memref<64x1x4xbf16>) initial_state(%s : memref<64x4x128x40xf32>) final_state(%s : memref<64x4x128x40xf32>) o(%o : memref<64x1x4x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
