// RUN: gdn-opt %s -split-input-file -verify-diagnostics

// One case per diagnostic of #gdn.schedule (its parser and verifier) and of
// the gdn.schedule attribute on an op (the dialect's attribute verifier).
// What a given kernel can take is checked by the passes:
// Conversion/GDNToGPU/gdn-select-schedule-invalid.mlir.

func.func @unknown_parameter(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  // expected-error @+1 {{duplicate or unknown struct parameter name: rows_per_warp}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>) {gdn.schedule = #gdn.schedule<rows_per_warp = 4>}
  return
}

// -----

func.func @duplicate_parameter(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  // expected-error @+1 {{duplicate or unknown struct parameter name: warps}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>) {gdn.schedule = #gdn.schedule<warps = 2, warps = 4>}
  return
}

// -----

func.func @unknown_reductions(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  // expected-error @+3 {{expected ::mlir::gdn::Reductions to be one of: in_turn, side_by_side, token_pairs}}
  // expected-error @+2 {{failed to parse GDN_ReductionsAttr parameter 'value'}}
  // expected-error @+1 {{failed to parse GDN_ScheduleAttr parameter 'reductions'}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>) {gdn.schedule = #gdn.schedule<reductions = sideways>}
  return
}

// -----

func.func @unknown_solve(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  // expected-error @+3 {{expected ::mlir::gdn::ChunkSolve to be one of: token_by_token, cuda_cores, tensor_cores}}
  // expected-error @+2 {{failed to parse GDN_ChunkSolveAttr parameter 'value'}}
  // expected-error @+1 {{failed to parse GDN_ScheduleAttr parameter 'solve'}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>) {gdn.schedule = #gdn.schedule<solve = wy>}
  return
}

// -----

// The old numbers of the switches (chunked_solve = 2) are no enum cases.
func.func @numbered_solve(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  // expected-error @+3 {{expected valid keyword or string}}
  // expected-error @+2 {{failed to parse GDN_ChunkSolveAttr parameter 'value'}}
  // expected-error @+1 {{failed to parse GDN_ScheduleAttr parameter 'solve'}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>) {gdn.schedule = #gdn.schedule<solve = 2>}
  return
}

// -----

// Not an integer: the old dictionary's `programmatic_launch = true` (an i1,
// which read as -1) has no spelling here either.
func.func @unknown_launch(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  // expected-error @+3 {{expected ::mlir::gdn::LaunchMode to be one of: ordinary, programmatic, programmatic_at_start, programmatic_after_recurrence}}
  // expected-error @+2 {{failed to parse GDN_LaunchModeAttr parameter 'value'}}
  // expected-error @+1 {{failed to parse GDN_ScheduleAttr parameter 'launch'}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>) {gdn.schedule = #gdn.schedule<launch = true>}
  return
}

// -----

// Sizes: at least 1 where 0 would mean nothing (columns_per_lane,
// lanes_along_v, warps, unroll_tokens), at least 0 where 0 means none
// (staged_tokens, producer_stages, consumer_registers and the prefetch
// distances), at most 2^20 (the old options' negative sizes and
// rows-per-warp = 2^63 - 1 included).
func.func @columns_zero(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  // expected-error @+1 {{#gdn.schedule columns_per_lane = 0 must be in [1, 1048576]}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>) {gdn.schedule = #gdn.schedule<columns_per_lane = 0>}
  return
}

// -----

func.func @warps_negative(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  // expected-error @+1 {{#gdn.schedule warps = -2 must be in [1, 1048576]}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>) {gdn.schedule = #gdn.schedule<warps = -2>}
  return
}

// -----

func.func @lanes_zero(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  // expected-error @+1 {{#gdn.schedule lanes_along_v = 0 must be in [1, 1048576]}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>) {gdn.schedule = #gdn.schedule<lanes_along_v = 0>}
  return
}

// -----

func.func @unroll_zero(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  // expected-error @+1 {{#gdn.schedule unroll_tokens = 0 must be in [1, 1048576]}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>) {gdn.schedule = #gdn.schedule<unroll_tokens = 0>}
  return
}

// -----

func.func @segments_zero(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  // expected-error @+1 {{#gdn.schedule segments = 0 must be in [1, 1048576]}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>) {gdn.schedule = #gdn.schedule<segments = 0>}
  return
}

// -----

func.func @staged_negative(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  // expected-error @+1 {{#gdn.schedule staged_tokens = -1 must be in [0, 1048576]}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>) {gdn.schedule = #gdn.schedule<staged_tokens = -1>}
  return
}

// -----

func.func @stages_negative(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  // expected-error @+1 {{#gdn.schedule producer_stages = -1 must be in [0, 1048576]}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>) {gdn.schedule = #gdn.schedule<producer_stages = -1>}
  return
}

// -----

func.func @registers_negative(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  // expected-error @+1 {{#gdn.schedule consumer_registers = -8 must be in [0, 1048576]}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>) {gdn.schedule = #gdn.schedule<consumer_registers = -8>}
  return
}

// -----

func.func @state_prefetch_negative(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  // expected-error @+1 {{#gdn.schedule state_prefetch_distance = -1 must be in [0, 1048576]}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>) {gdn.schedule = #gdn.schedule<state_prefetch_distance = -1>}
  return
}

// -----

func.func @input_prefetch_too_far(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  // expected-error @+1 {{#gdn.schedule input_prefetch_distance = 1048577 must be in [0, 1048576]}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>) {gdn.schedule = #gdn.schedule<input_prefetch_distance = 1048577>}
  return
}

// -----

func.func @columns_max(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  // expected-error @+1 {{#gdn.schedule columns_per_lane = 9223372036854775807 must be in [1, 1048576]}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>) {gdn.schedule = #gdn.schedule<columns_per_lane = 9223372036854775807>}
  return
}

// -----

func.func @integer_too_large(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  // expected-error @+2 {{integer value too large}}
  // expected-error @+1 {{failed to parse GDN_ScheduleAttr parameter 'warps'}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>) {gdn.schedule = #gdn.schedule<warps = 9223372036854775808>}
  return
}

// -----

// The old dictionary form (and anything else that is not a #gdn.schedule).
func.func @old_dictionary(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  // expected-error @+1 {{'gdn.schedule' must be a #gdn.schedule<...>, not {rows_per_warp = 2 : i64, warps_per_block = 1 : i64}}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>) {gdn.schedule = {rows_per_warp = 2 : i64, warps_per_block = 1 : i64}}
  return
}

// -----

func.func @not_a_schedule(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  // expected-error @+1 {{'gdn.schedule' must be a #gdn.schedule<...>, not 4 : i64}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>) {gdn.schedule = 4 : i64}
  return
}

// -----

// Only gdn.recurrent takes a schedule: on a function ...
// expected-error @+1 {{'gdn.schedule' is only meaningful on gdn.recurrent and gdn.replay_commit}}
func.func @on_a_function() attributes {gdn.schedule = #gdn.schedule<warps = 1>} {
  return
}

// -----

// ... or on gdn.commit.
func.func @on_commit(%buf: memref<2x3x4x32x16xf32>, %acc: memref<2xi32>, %s: memref<2x4x32x16xf32>) {
  // expected-error @+1 {{'gdn.schedule' is only meaningful on gdn.recurrent and gdn.replay_commit}}
  gdn.commit intermediate_states(%buf : memref<2x3x4x32x16xf32>) accepted(%acc : memref<2xi32>)
      state(%s : memref<2x4x32x16xf32>) {gdn.schedule = #gdn.schedule<warps = 1>}
  return
}

// -----

// A size is an integer literal: `false` / `true` (which the generic integer
// parser reads as 0 / -1) are refused.
func.func @boolean_size(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  // expected-error @+2 {{expected an integer size, not 'false'}}
  // expected-error @+1 {{failed to parse GDN_ScheduleAttr parameter 'staged_tokens'}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>) {gdn.schedule = #gdn.schedule<staged_tokens = false>}
  return
}
