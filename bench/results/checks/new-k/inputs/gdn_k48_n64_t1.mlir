func.func @gdn_k48_n64_t1(%q: memref<64x1x4x48xbf16>, %k: memref<64x1x4x48xbf16>, %v: memref<64x1x4x128xbf16>, %g: memref<64x1x4xf32>, %b: memref<64x1x4xbf16>, %s: memref<64x4x128x48xf32>, %o: memref<64x1x4x128xbf16>) {
  gdn.recurrent q(%q : memref<64x1x4x48xbf16>) k(%k : memref<64x1x4x48xbf16>) v(%v : memref<64x1x4x128xbf16>) g(%g : memref<64x1x4xf32>) b(%b : memref<64x1x4xbf16>) initial_state(%s : memref<64x4x128x48xf32>) final_state(%s : memref<64x4x128x48xf32>) o(%o : memref<64x1x4x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
