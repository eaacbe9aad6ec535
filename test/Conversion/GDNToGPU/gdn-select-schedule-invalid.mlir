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
  // expected-error @+1 {{'gdn.schedule' entry 'rows' is not an i64 rows_per_warp, warps_per_block, v_lanes, stage_tokens, unroll_tokens, overlap_reductions, chunked_solve, pipeline_stages, consumer_registers, l2_prefetch_distance or programmatic_launch}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>) {gdn.schedule = {rows = 4 : i64}}
  return
}

// -----

// Only i64 entries: `true` (an i1) would read as -1, 255 : i8 too.
func.func @not_i64(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  // expected-error @+1 {{'gdn.schedule' entry 'programmatic_launch' is not an i64 rows_per_warp}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>) {gdn.schedule = {programmatic_launch = true}}
  return
}

// -----

func.func @negative(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  // expected-error @+1 {{'gdn.schedule' holds a negative size (or overlap_reductions outside -1, 0, 1, 2, chunked_solve outside -1, 0, 1, 2 or programmatic_launch outside -1, 0, 1, 2, 3)}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>) {gdn.schedule = {warps_per_block = -2 : i64}}
  return
}

// -----

func.func @does_not_divide(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  // expected-error @+1 {{V = 8 is not a multiple of rows-per-warp * v-lanes * warps-per-block = 3}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>) {gdn.schedule = {rows_per_warp = 3 : i64, warps_per_block = 1 : i64}, state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @producer_without_staging(%q: memref<1x4x1x32xf32>, %k: memref<1x4x1x32xf32>, %v: memref<1x4x1x8xf32>, %o: memref<1x4x1x8xf32>) {
  // expected-error @+1 {{pipeline-stages = 2 needs staged tokens (stage-tokens > 0)}}
  gdn.recurrent q(%q : memref<1x4x1x32xf32>) k(%k : memref<1x4x1x32xf32>) v(%v : memref<1x4x1x8xf32>) o(%o : memref<1x4x1x8xf32>) {gdn.schedule = {pipeline_stages = 2 : i64, stage_tokens = -1 : i64}, state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @producer_too_deep(%q: memref<1x4x1x32xf32>, %k: memref<1x4x1x32xf32>, %v: memref<1x4x1x8xf32>, %o: memref<1x4x1x8xf32>) {
  // expected-error @+1 {{pipeline-stages = 9 must be at most 8}}
  gdn.recurrent q(%q : memref<1x4x1x32xf32>) k(%k : memref<1x4x1x32xf32>) v(%v : memref<1x4x1x8xf32>) o(%o : memref<1x4x1x8xf32>) {gdn.schedule = {pipeline_stages = 9 : i64}, state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @producer_chunk_over_a_warp(%q: memref<1x64x1x32xf32>, %k: memref<1x64x1x32xf32>, %v: memref<1x64x1x8xf32>, %o: memref<1x64x1x8xf32>) {
  // expected-error @+1 {{pipeline-stages = 2 needs stage-tokens <= 32 (one producer lane a token), not 64}}
  gdn.recurrent q(%q : memref<1x64x1x32xf32>) k(%k : memref<1x64x1x32xf32>) v(%v : memref<1x64x1x8xf32>) o(%o : memref<1x64x1x8xf32>) {gdn.schedule = {pipeline_stages = 2 : i64, stage_tokens = 64 : i64, rows_per_warp = 1 : i64, warps_per_block = 8 : i64}, state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @producer_copy_not_16_bytes(%q: memref<1x4x1x32xf32>, %k: memref<1x4x1x32xf32>, %v: memref<1x4x1x8xf32>, %o: memref<1x4x1x8xf32>) {
  // expected-error @+1 {{pipeline-stages = 2 copies rows of q and k (128 bytes), v (32) and the CTA's columns of v (8) with cp.async.bulk, which needs multiples of 16 bytes}}
  gdn.recurrent q(%q : memref<1x4x1x32xf32>) k(%k : memref<1x4x1x32xf32>) v(%v : memref<1x4x1x8xf32>) o(%o : memref<1x4x1x8xf32>) {gdn.schedule = {pipeline_stages = 2 : i64, programmatic_launch = -1 : i64, rows_per_warp = 1 : i64, warps_per_block = 2 : i64}, state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @producer_with_chunked_solve(%q: memref<1x4x1x32xf32>, %k: memref<1x4x1x32xf32>, %v: memref<1x4x1x8xf32>, %o: memref<1x4x1x8xf32>) {
  // expected-error @+1 {{pipeline-stages = 2 (a producer warp) and chunked-solve cannot be combined}}
  gdn.recurrent q(%q : memref<1x4x1x32xf32>) k(%k : memref<1x4x1x32xf32>) v(%v : memref<1x4x1x8xf32>) o(%o : memref<1x4x1x8xf32>) {gdn.schedule = {pipeline_stages = 2 : i64, chunked_solve = 1 : i64, rows_per_warp = 4 : i64, warps_per_block = 2 : i64}, state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @registers_without_producer(%q: memref<1x4x1x32xf32>, %k: memref<1x4x1x32xf32>, %v: memref<1x4x1x8xf32>, %o: memref<1x4x1x8xf32>) {
  // expected-error @+1 {{consumer-registers needs a producer warp (pipeline-stages > 0)}}
  gdn.recurrent q(%q : memref<1x4x1x32xf32>) k(%k : memref<1x4x1x32xf32>) v(%v : memref<1x4x1x8xf32>) o(%o : memref<1x4x1x8xf32>) {gdn.schedule = {consumer_registers = 128 : i64}, state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @registers_not_warpgroups(%q: memref<1x4x1x32xf32>, %k: memref<1x4x1x32xf32>, %v: memref<1x4x1x8xf32>, %o: memref<1x4x1x8xf32>) {
  // expected-error @+1 {{consumer-registers needs whole consumer warpgroups (setmaxnreg acts on warpgroups), but warps-per-block = 2 is not a multiple of 4}}
  gdn.recurrent q(%q : memref<1x4x1x32xf32>) k(%k : memref<1x4x1x32xf32>) v(%v : memref<1x4x1x8xf32>) o(%o : memref<1x4x1x8xf32>) {gdn.schedule = {pipeline_stages = 2 : i64, consumer_registers = 128 : i64, rows_per_warp = 4 : i64, warps_per_block = 2 : i64}, state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @registers_out_of_range(%q: memref<1x4x1x32xf32>, %k: memref<1x4x1x32xf32>, %v: memref<1x4x1x8xf32>, %o: memref<1x4x1x8xf32>) {
  // expected-error @+1 {{consumer-registers = 260 must be a multiple of 8 in [24, 256] with the CTA's registers (69632) at most 65536}}
  gdn.recurrent q(%q : memref<1x4x1x32xf32>) k(%k : memref<1x4x1x32xf32>) v(%v : memref<1x4x1x8xf32>) o(%o : memref<1x4x1x8xf32>) {gdn.schedule = {pipeline_stages = 2 : i64, consumer_registers = 260 : i64, rows_per_warp = 1 : i64, warps_per_block = 8 : i64}, state_layout = #gdn.layout<vk>}
  return
}

// -----

// The chunked solve on tensor cores maps 16 V columns to a warp (2 a lane, 8
// lanes along V), takes tiles of 8 tokens and 8 keys, and holds K / 2 state
// values a thread.
func.func @tensor_cores_mapping(%q: memref<1x4x1x32xf32>, %k: memref<1x4x1x32xf32>, %v: memref<1x4x1x16xf32>, %o: memref<1x4x1x16xf32>) {
  // expected-error @+1 {{chunked-solve = 2 (tensor cores) maps 16 V columns to a warp: rows-per-warp must be 2 and v-lanes 8 (or both left 0), not 4 and 0}}
  gdn.recurrent q(%q : memref<1x4x1x32xf32>) k(%k : memref<1x4x1x32xf32>) v(%v : memref<1x4x1x16xf32>) o(%o : memref<1x4x1x16xf32>) {gdn.schedule = {chunked_solve = 2 : i64, rows_per_warp = 4 : i64}, state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @tensor_cores_tokens(%q: memref<1x12x1x32xf32>, %k: memref<1x12x1x32xf32>, %v: memref<1x12x1x16xf32>, %o: memref<1x12x1x16xf32>) {
  // expected-error @+1 {{chunked-solve needs stage-tokens = 8 or 16 on tensor cores (mma tiles of 8 tokens), not 12}}
  gdn.recurrent q(%q : memref<1x12x1x32xf32>) k(%k : memref<1x12x1x32xf32>) v(%v : memref<1x12x1x16xf32>) o(%o : memref<1x12x1x16xf32>) {gdn.schedule = {chunked_solve = 2 : i64, stage_tokens = 12 : i64}, state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @tensor_cores_keys(%q: memref<1x4x1x12xf32>, %k: memref<1x4x1x12xf32>, %v: memref<1x4x1x16xf32>, %o: memref<1x4x1x16xf32>) {
  // expected-error @+1 {{chunked-solve needs K a multiple of 8 on tensor cores (mma tiles of 8 keys)}}
  gdn.recurrent q(%q : memref<1x4x1x12xf32>) k(%k : memref<1x4x1x12xf32>) v(%v : memref<1x4x1x16xf32>) o(%o : memref<1x4x1x16xf32>) {gdn.schedule = {chunked_solve = 2 : i64}, state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @tensor_cores_k256(%q: memref<1x4x1x256xbf16>, %k: memref<1x4x1x256xbf16>, %v: memref<1x4x1x16xbf16>, %o: memref<1x4x1x16xbf16>) {
  // expected-error @+1 {{a thread would hold rows-per-warp * K / (32 / v-lanes) = 128 state values, more than 64 (K = 256 must be at most 128 for this schedule)}}
  gdn.recurrent q(%q : memref<1x4x1x256xbf16>) k(%k : memref<1x4x1x256xbf16>) v(%v : memref<1x4x1x16xbf16>) o(%o : memref<1x4x1x16xbf16>) {gdn.schedule = {chunked_solve = 2 : i64}, state_layout = #gdn.layout<vk>}
  return
}
