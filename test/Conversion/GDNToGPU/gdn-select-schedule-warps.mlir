// RUN: gdn-opt %s -gdn-select-schedule | FileCheck %s
// RUN: gdn-opt %s -gdn-select-schedule="schedule={#gdn.schedule<warps = 16>}" -convert-gdn-to-gpu | FileCheck %s --check-prefix=W16
// vk decode at N = 1 takes 2 lanes along V (one column a lane does not fill
// the device), unless a pinned warp count leaves V = 16 no room for them:
// 16 warps of one column on one lane (a fault hunt found the 2 lanes taken
// anyway and V = 16 refused as not a multiple of 32).
// CHECK: gdn.schedule = #gdn.schedule<columns_per_lane = 1, lanes_along_v = 2,
// W16: gpu.launch_func @gdn_kernels::@decode_v16_recurrent blocks in (%c1, %c32{{.*}}, %c1{{.*}}) threads in (%c512,
func.func @decode_v16(%q: memref<1x1x16x128xbf16>,
    %k: memref<1x1x16x128xbf16>,
    %v: memref<1x1x32x16xbf16>,
    %g: memref<1x1x32xf32>,
    %beta: memref<1x1x32xbf16>,
    %h0: memref<1x32x16x128xf32>,
    %ht: memref<1x32x16x128xf32>,
    %o: memref<1x1x32x16xbf16>) {
  gdn.recurrent q(%q : memref<1x1x16x128xbf16>)
      k(%k : memref<1x1x16x128xbf16>)
      v(%v : memref<1x1x32x16xbf16>)
      g(%g : memref<1x1x32xf32>)
      beta(%beta : memref<1x1x32xbf16>)
      initial_state(%h0 : memref<1x32x16x128xf32>)
      final_state(%ht : memref<1x32x16x128xf32>)
      o(%o : memref<1x1x32x16xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
