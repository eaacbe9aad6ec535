func.func @f(%q: memref<1x1x1x40xf32>, %k: memref<1x1x1x40xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  gdn.recurrent q(%q : memref<1x1x1x40xf32>) k(%k : memref<1x1x1x40xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>) {state_layout = #gdn.layout<vk>}
  return
}
