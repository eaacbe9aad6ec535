func.func @f(%q: memref<2x3x1x48xf32>, %k: memref<2x3x1x48xf32>, %v: memref<2x3x1x8xf32>, %o: memref<2x3x1x8xf32>) {
  gdn.recurrent q(%q : memref<2x3x1x48xf32>) k(%k : memref<2x3x1x48xf32>) v(%v : memref<2x3x1x8xf32>) o(%o : memref<2x3x1x8xf32>) {state_layout = #gdn.layout<vk>}
  return
}
