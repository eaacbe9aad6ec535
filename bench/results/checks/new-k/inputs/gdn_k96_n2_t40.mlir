func.func @gdn_k96_n2_t40(%q: memref<2x40x4x96xbf16>, %k: memref<2x40x4x96xbf16>, %v: memref<2x40x4x128xbf16>, %g: memref<2x40x4xf32>, %b: memref<2x40x4xbf16>, %s: memref<2x4x128x96xf32>, %o: memref<2x40x4x128xbf16>) {
  gdn.recurrent q(%q : memref<2x40x4x96xbf16>) k(%k : memref<2x40x4x96xbf16>) v(%v : memref<2x40x4x128xbf16>) g(%g : memref<2x40x4xf32>) b(%b : memref<2x40x4xbf16>) initial_state(%s : memref<2x4x128x96xf32>) final_state(%s : memref<2x4x128x96xf32>) o(%o : memref<2x40x4x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
