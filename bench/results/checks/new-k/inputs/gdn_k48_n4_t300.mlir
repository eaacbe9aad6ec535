func.func @gdn_k48_n4_t300(%q: memref<4x300x4x48xbf16>, %k: memref<4x300x4x48xbf16>, %v: memref<4x300x4x128xbf16>, %g: memref<4x300x4xf32>, %b: memref<4x300x4xbf16>, %s: memref<4x4x128x48xf32>, %o: memref<4x300x4x128xbf16>) {
  gdn.recurrent q(%q : memref<4x300x4x48xbf16>) k(%k : memref<4x300x4x48xbf16>) v(%v : memref<4x300x4x128xbf16>) g(%g : memref<4x300x4xf32>) b(%b : memref<4x300x4xbf16>) initial_state(%s : memref<4x4x128x48xf32>) final_state(%s : memref<4x4x128x48xf32>) o(%o : memref<4x300x4x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
