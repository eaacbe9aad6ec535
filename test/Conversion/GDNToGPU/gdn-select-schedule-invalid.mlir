// RUN: gdn-opt %s -split-input-file -gdn-select-schedule -verify-diagnostics
// RUN: gdn-opt %s -split-input-file -convert-gdn-to-gpu -verify-diagnostics
// A malformed gdn.schedule is a diagnostic on the op, for the pass that sets
// it and for the lowering that reads it.

func.func @not_a_dictionary(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  // expected-error @+1 {{'gdn.schedule' must be a dictionary of i64 schedule options}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>) {gdn.schedule = 4 : i64}
  return
}

// -----

func.func @unknown_entry(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  // expected-error @+1 {{'gdn.schedule' entry 'rows' is not an integer rows_per_warp, warps_per_block, v_lanes, stage_tokens, unroll_tokens, overlap_reductions, chunked_solve, pipeline_stages or consumer_registers}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>) {gdn.schedule = {rows = 4 : i64}}
  return
}

// -----

func.func @negative(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  // expected-error @+1 {{'gdn.schedule' holds a negative size (or overlap_reductions or chunked_solve outside -1, 0, 1)}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>) {gdn.schedule = {warps_per_block = -2 : i64}}
  return
}

// -----

func.func @does_not_divide(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  // expected-error @+1 {{V = 8 is not a multiple of rows-per-warp * v-lanes * warps-per-block = 3}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>) {gdn.schedule = {rows_per_warp = 3 : i64, warps_per_block = 1 : i64}, state_layout = #gdn.layout<vk>}
  return
}
