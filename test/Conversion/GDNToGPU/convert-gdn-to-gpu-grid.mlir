// RUN: gdn-opt %s -gdn-select-schedule -convert-gdn-to-gpu -verify-diagnostics
// The grid's x dimension (blocks along V) is limited to 2^31 - 1.
func.func @grid(%q: memref<1x1x1x32xbf16>, %k: memref<1x1x1x32xbf16>, %v: memref<1x1x1x1099511627776xbf16>, %o: memref<1x1x1x1099511627776xbf16>) {
  // expected-error @+1 {{cannot be lowered to the GPU: V / (columns_per_lane * lanes_along_v * warps) = 17179869184 blocks exceed the grid limit 2^31 - 1}}
  gdn.recurrent q(%q : memref<1x1x1x32xbf16>) k(%k : memref<1x1x1x32xbf16>) v(%v : memref<1x1x1x1099511627776xbf16>) o(%o : memref<1x1x1x1099511627776xbf16>)
  return
}
