// RUN: gdn-opt %s -gdn-select-schedule="schedule={#gdn.schedule<lanes_along_v = 4>}" | FileCheck %s --check-prefix=L4
// RUN: gdn-opt %s -gdn-select-schedule="schedule={#gdn.schedule<lanes_along_v = 8>}" | FileCheck %s --check-prefix=L8
// RUN: not gdn-opt %s -gdn-select-schedule="schedule={#gdn.schedule<lanes_along_v = 32>}" 2>&1 | FileCheck %s --check-prefix=L32

// A pinned lanes_along_v leaves 32 / lanes_along_v lanes along K, so a lane
// holds more keys of each column: the automatic columns a lane are the most
// whose state tile still fits 64 registers (columns_per_lane * K /
// (32 / lanes_along_v)). Verify at N = 64 (a grid that takes 8 columns a
// lane unpinned) once pinned lanes_along_v = 4 asked for 8 x 128 / 8 = 128
// values and failed.
// L4: gdn.schedule = #gdn.schedule<columns_per_lane = 4, lanes_along_v = 4,
// L8: gdn.schedule = #gdn.schedule<columns_per_lane = 2, lanes_along_v = 8,
// lanes_along_v = 32 leaves one lane along K: no column count fits.
// L32: error: 'gdn.recurrent' op cannot be lowered to the GPU: a thread would hold columns_per_lane * K / (32 / lanes_along_v) = 128 state values, more than 64
func.func @verify(%q: memref<64x4x16x128xbf16>,
    %k: memref<64x4x16x128xbf16>,
    %v: memref<64x4x32x128xbf16>,
    %a: memref<64x4x32xbf16>,
    %A_log: memref<32xf32>,
    %dt_bias: memref<32xf32>,
    %b: memref<64x4x32xbf16>,
    %state_indices: memref<64xi32>,
    %intermediate_state_indices: memref<64xi32>,
    %pool: memref<80x32x128x128xbf16>,
    %intermediate: memref<80x4x32x128x128xbf16>,
    %o: memref<64x4x32x128xbf16>) {
  gdn.recurrent q(%q : memref<64x4x16x128xbf16>)
      k(%k : memref<64x4x16x128xbf16>)
      v(%v : memref<64x4x32x128xbf16>)
      a(%a : memref<64x4x32xbf16>)
      A_log(%A_log : memref<32xf32>)
      dt_bias(%dt_bias : memref<32xf32>)
      b(%b : memref<64x4x32xbf16>)
      state_indices(%state_indices : memref<64xi32>)
      intermediate_state_indices(%intermediate_state_indices : memref<64xi32>)
      initial_state(%pool : memref<80x32x128x128xbf16>)
      intermediate_states(%intermediate : memref<80x4x32x128x128xbf16>)
      o(%o : memref<64x4x32x128xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
