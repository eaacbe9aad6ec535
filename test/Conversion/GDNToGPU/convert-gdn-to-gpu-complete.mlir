// RUN: gdn-opt %s -split-input-file -convert-gdn-to-gpu -verify-diagnostics | FileCheck %s
// convert-gdn-to-gpu runs no cost model: it takes the complete
// #gdn.schedule gdn-select-schedule attaches (every parameter, launch
// resolved) and only checks that the kernel can take it, with the same
// checks and diagnostics as gdn-select-schedule.

// No schedule at all.
func.func @none(%q: memref<1x1x1x32xbf16>, %k: memref<1x1x1x32xbf16>, %v: memref<1x1x1x128xbf16>, %o: memref<1x1x1x128xbf16>) {
  // expected-error @+1 {{'gdn.recurrent' op cannot be lowered to the GPU: it has no gdn.schedule; run gdn-select-schedule first (it chooses every parameter)}}
  gdn.recurrent q(%q : memref<1x1x1x32xbf16>) k(%k : memref<1x1x1x32xbf16>) v(%v : memref<1x1x1x128xbf16>) o(%o : memref<1x1x1x128xbf16>)
  return
}

// -----

// A pin of some parameters: the rest are the cost model's, which this pass
// does not run.
func.func @partial(%q: memref<1x1x1x32xbf16>, %k: memref<1x1x1x32xbf16>, %v: memref<1x1x1x128xbf16>, %o: memref<1x1x1x128xbf16>) {
  // expected-error @+1 {{cannot be lowered to the GPU: gdn.schedule = #gdn.schedule<warps = 4> is not complete (every parameter, launch not programmatic); run gdn-select-schedule first}}
  gdn.recurrent q(%q : memref<1x1x1x32xbf16>) k(%k : memref<1x1x1x32xbf16>) v(%v : memref<1x1x1x128xbf16>) o(%o : memref<1x1x1x128xbf16>)
      {gdn.schedule = #gdn.schedule<warps = 4>}
  return
}

// -----

// Every parameter, but `launch = programmatic` is a pin only: the cost
// model picks the point where the next kernel may launch.
func.func @programmatic(%q: memref<1x1x1x32xbf16>, %k: memref<1x1x1x32xbf16>, %v: memref<1x1x1x128xbf16>, %o: memref<1x1x1x128xbf16>) {
  // expected-error @+1 {{is not complete (every parameter, launch not programmatic); run gdn-select-schedule first}}
  gdn.recurrent q(%q : memref<1x1x1x32xbf16>) k(%k : memref<1x1x1x32xbf16>) v(%v : memref<1x1x1x128xbf16>) o(%o : memref<1x1x1x128xbf16>)
      {gdn.schedule = #gdn.schedule<columns_per_lane = 4, lanes_along_v = 1,
        warps = 1, staged_tokens = 0, unroll_tokens = 1, reductions = in_turn,
        solve = token_by_token, precision = tf32x3, producer_stages = 0, consumer_registers = 0,
        state_prefetch_distance = 0, input_prefetch_distance = 0,
        chunk_prefetch_distance = 0, max_registers = 0,
        launch = programmatic, segments = 1, concurrent_solves = 0>}
  return
}

// -----

// Complete but illegal: 3 columns a lane do not divide V = 128. Refused
// here as gdn-select-schedule refuses the same pin.
func.func @illegal(%q: memref<1x1x1x32xbf16>, %k: memref<1x1x1x32xbf16>, %v: memref<1x1x1x128xbf16>, %o: memref<1x1x1x128xbf16>) {
  // expected-error @+1 {{'gdn.recurrent' op cannot be lowered to the GPU: V = 128 is not a multiple of columns_per_lane * lanes_along_v * warps = 3}}
  gdn.recurrent q(%q : memref<1x1x1x32xbf16>) k(%k : memref<1x1x1x32xbf16>) v(%v : memref<1x1x1x128xbf16>) o(%o : memref<1x1x1x128xbf16>)
      {gdn.schedule = #gdn.schedule<columns_per_lane = 3, lanes_along_v = 1,
        warps = 1, staged_tokens = 0, unroll_tokens = 1, reductions = in_turn,
        solve = token_by_token, precision = tf32x3, producer_stages = 0, consumer_registers = 0,
        state_prefetch_distance = 0, input_prefetch_distance = 0,
        chunk_prefetch_distance = 0, max_registers = 0,
        launch = ordinary, segments = 1, concurrent_solves = 0>}
  return
}

// -----

// Complete and legal: lowered as written (4 columns a lane, 1 lane along V,
// 1 warp: 32 CTAs of 32 threads over V = 128).
// CHECK-LABEL: func.func @legal
// CHECK: gpu.launch_func @gdn_kernels::@legal_recurrent blocks in (%c32{{.*}}, %c1{{.*}}, %c1{{.*}}) threads in (%c32{{.*}},
func.func @legal(%q: memref<1x1x1x32xbf16>, %k: memref<1x1x1x32xbf16>, %v: memref<1x1x1x128xbf16>, %o: memref<1x1x1x128xbf16>) {
  gdn.recurrent q(%q : memref<1x1x1x32xbf16>) k(%k : memref<1x1x1x32xbf16>) v(%v : memref<1x1x1x128xbf16>) o(%o : memref<1x1x1x128xbf16>)
      {gdn.schedule = #gdn.schedule<columns_per_lane = 4, lanes_along_v = 1,
        warps = 1, staged_tokens = 0, unroll_tokens = 1, reductions = in_turn,
        solve = token_by_token, precision = tf32x3, producer_stages = 0, consumer_registers = 0,
        state_prefetch_distance = 0, input_prefetch_distance = 0,
        chunk_prefetch_distance = 0, max_registers = 0,
        launch = ordinary, segments = 1, concurrent_solves = 0>}
  return
}
