// RUN: gdn-opt %s -split-input-file -gdn-select-schedule | FileCheck %s
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule -convert-gdn-to-gpu | FileCheck %s --check-prefix=GPU
// Default schedules the kernel builder takes for every shape the verifier
// accepts: the automatic columns a lane leave whole columns a warp, whole
// keys a lane and a state tile within 64 registers (a fault hunt found kv
// K = 48, V = 6 picking 2 columns on one lane, whose K / 32 keys a lane are
// not whole, and a staged vk K = 512 taking 4 columns x 2 lanes, 128 state
// values a thread; both were diagnostics instead of kernels).

// CHECK-LABEL: func.func @kv_k48_v6
// CHECK: rows_per_warp = 1 : i64, {{.*}}v_lanes = 2 : i64
// GPU-LABEL: func.func @kv_k48_v6
// GPU: gpu.launch_func
func.func @kv_k48_v6(%q: memref<64x1x4x48xbf16>, %k: memref<64x1x4x48xbf16>,
    %v: memref<64x1x4x6xbf16>, %g: memref<64x1x4xf32>, %beta: memref<64x1x4xbf16>,
    %h0: memref<64x4x48x6xf32>, %ht: memref<64x4x48x6xf32>, %o: memref<64x1x4x6xbf16>) {
  gdn.recurrent q(%q : memref<64x1x4x48xbf16>) k(%k : memref<64x1x4x48xbf16>)
      v(%v : memref<64x1x4x6xbf16>) g(%g : memref<64x1x4xf32>)
      beta(%beta : memref<64x1x4xbf16>)
      initial_state(%h0 : memref<64x4x48x6xf32>) final_state(%ht : memref<64x4x48x6xf32>)
      o(%o : memref<64x1x4x6xbf16>) {qk_l2norm}
  return
}

// -----

// CHECK-LABEL: func.func @vk_k512_t4
// CHECK: rows_per_warp = 4 : i64, {{.*}}v_lanes = 1 : i64
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
