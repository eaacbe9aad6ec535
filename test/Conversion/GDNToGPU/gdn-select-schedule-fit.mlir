// RUN: gdn-opt %s -gdn-select-schedule | FileCheck %s
// RUN: gdn-opt %s -gdn-select-schedule -convert-gdn-to-gpu | FileCheck %s --check-prefix=GPU
// The automatic columns a lane leave whole columns a warp, a power of two
// of whole keys a lane and a state tile within 64 registers: a fault hunt
// found a staged vk K = 512 taking 4 columns x 2 lanes (128 state values a
// thread), a diagnostic instead of a kernel. (Where no power of two of keys
// fits, whole keys a lane: gdn-select-schedule.mlir; none at all, a
// diagnostic: gdn-run/errors.mlir.)

// CHECK-LABEL: func.func @vk_k512_t4
// CHECK: gdn.schedule = #gdn.schedule<columns_per_lane = 4, lanes_along_v = 1,
// GPU-LABEL: func.func @vk_k512_t4
// GPU: gpu.launch_func
func.func @vk_k512_t4(%q: memref<1x4x16x512xbf16>,
    %k: memref<1x4x16x512xbf16>,
    %v: memref<1x4x32x128xbf16>,
    %g: memref<1x4x32xf32>,
    %beta: memref<1x4x32xbf16>,
    %h0: memref<1x32x128x512xf32>,
    %ht: memref<1x32x128x512xf32>,
    %o: memref<1x4x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x4x16x512xbf16>)
      k(%k : memref<1x4x16x512xbf16>)
      v(%v : memref<1x4x32x128xbf16>)
      g(%g : memref<1x4x32xf32>)
      beta(%beta : memref<1x4x32xbf16>)
      initial_state(%h0 : memref<1x32x128x512xf32>)
      final_state(%ht : memref<1x32x128x512xf32>)
      o(%o : memref<1x4x32x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
