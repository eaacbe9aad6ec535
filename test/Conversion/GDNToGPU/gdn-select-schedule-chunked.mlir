// RUN: gdn-opt %s -split-input-file -gdn-select-schedule | FileCheck %s --check-prefix=DEFAULT
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="chunked-solve=1" | FileCheck %s --check-prefix=ON
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="chunked-solve=-1" | FileCheck %s --check-prefix=OFF
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="stage-tokens=12" | FileCheck %s --check-prefix=S12
// RUN: gdn-opt %s -split-input-file -pass-pipeline="builtin.module(gdn-lower-to-ptx{chunked-solve=1})" | FileCheck %s --check-prefix=PTX

// The cost model takes the chunked solve on tensor cores (chunked_solve = 2,
// a chunk of whole 8-token tiles) for the final state of T > 8, and the
// token loop below (the T = 4 case in gdn-select-schedule-producer.mlir and
// @t4 here); chunked-solve=1 asks for the CUDA-core form, and an option
// overrides the attribute already on the op. (N = 8: at N = 1 the token loop
// with a producer warp is taken, gdn-select-schedule.mlir.)

// DEFAULT-LABEL: func.func @t12
// DEFAULT: gdn.schedule = {chunked_solve = 2 : i64, {{.*}}stage_tokens = 16 : i64
// A chunk the tensor cores cannot take (not 8 or 16 tokens) keeps the token
// loop rather than failing.
// S12-LABEL: func.func @t12
// S12: gdn.schedule = {chunked_solve = -1 : i64, {{.*}}stage_tokens = 12 : i64
// ON-LABEL: func.func @t12
// ON: gdn.schedule = {chunked_solve = 1 : i64, {{.*}}stage_tokens = 12 : i64
// OFF-LABEL: func.func @t12
// OFF: gdn.schedule = {chunked_solve = -1 : i64,
// PTX-LABEL: func.func @t12
// PTX: gpu.launch_func @gdn_kernels::@t12_recurrent
func.func @t12(%q: memref<8x12x16x128xbf16>, %k: memref<8x12x16x128xbf16>, %v: memref<8x12x32x128xbf16>,
               %g: memref<8x12x32xf32>, %beta: memref<8x12x32xf32>,
               %s: memref<8x32x128x128xf32>, %o: memref<8x12x32x128xbf16>) {
  gdn.recurrent q(%q : memref<8x12x16x128xbf16>) k(%k : memref<8x12x16x128xbf16>) v(%v : memref<8x12x32x128xbf16>)
      g(%g : memref<8x12x32xf32>) beta(%beta : memref<8x12x32xf32>)
      initial_state(%s : memref<8x32x128x128xf32>) final_state(%s : memref<8x32x128x128xf32>)
      o(%o : memref<8x12x32x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// DEFAULT-LABEL: func.func @pinned
// DEFAULT: gdn.schedule = {chunked_solve = 1 : i64,
// ON-LABEL: func.func @pinned
// ON: gdn.schedule = {chunked_solve = 1 : i64,
// OFF-LABEL: func.func @pinned
// OFF: gdn.schedule = {chunked_solve = -1 : i64,
func.func @pinned(%q: memref<1x4x16x128xbf16>, %k: memref<1x4x16x128xbf16>, %v: memref<1x4x32x128xbf16>,
                  %s: memref<1x32x128x128xf32>, %o: memref<1x4x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x4x16x128xbf16>) k(%k : memref<1x4x16x128xbf16>) v(%v : memref<1x4x32x128xbf16>)
      initial_state(%s : memref<1x32x128x128xf32>) final_state(%s : memref<1x32x128x128xf32>)
      o(%o : memref<1x4x32x128xbf16>)
      {gdn.schedule = {chunked_solve = 1 : i64}, state_layout = #gdn.layout<vk>}
  return
}

// -----

// DEFAULT-LABEL: func.func @t4
// DEFAULT: gdn.schedule = {chunked_solve = -1 : i64,
// ON-LABEL: func.func @t4
// ON: gdn.schedule = {chunked_solve = 1 : i64,
func.func @t4(%q: memref<1x4x16x128xbf16>, %k: memref<1x4x16x128xbf16>, %v: memref<1x4x32x128xbf16>,
              %s: memref<1x32x128x128xf32>, %o: memref<1x4x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x4x16x128xbf16>) k(%k : memref<1x4x16x128xbf16>) v(%v : memref<1x4x32x128xbf16>)
      initial_state(%s : memref<1x32x128x128xf32>) final_state(%s : memref<1x32x128x128xf32>)
      o(%o : memref<1x4x32x128xbf16>) {state_layout = #gdn.layout<vk>}
  return
}
