// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="chip=sm_90a" -verify-diagnostics
// The ops reductions = mma (the e4m3 decode on mma.sync, MmaDecode.cpp)
// cannot take, each named in its diagnostic.

// A bf16 state: the form reads e4m3 values.
func.func @bf16_state(%q: memref<2x1x2x128xbf16>, %v: memref<2x1x4x64xbf16>, %g: memref<2x1x4xf32>,
                      %s: memref<2x4x64x128xbf16>, %o: memref<2x1x4x64xbf16>) {
  // expected-error @+1 {{reductions = mma (the e4m3 decode on mma.sync) needs an f8E4M3FN final_state (and initial_state, if any)}}
  gdn.recurrent q(%q : memref<2x1x2x128xbf16>) k(%q : memref<2x1x2x128xbf16>) v(%v : memref<2x1x4x64xbf16>)
      g(%g : memref<2x1x4xf32>) initial_state(%s : memref<2x4x64x128xbf16>)
      final_state(%s : memref<2x4x64x128xbf16>) o(%o : memref<2x1x4x64xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<vk>, gdn.schedule = #gdn.schedule<reductions = mma>}
  return
}

// -----

// Two tokens: the form decodes one.
func.func @two_tokens(%q: memref<2x2x2x128xbf16>, %v: memref<2x2x4x64xbf16>, %g: memref<2x2x4xf32>,
                      %s: memref<2x4x64x128xf8E4M3FN>, %sc: memref<2x4x64xf32>, %o: memref<2x2x4x64xbf16>) {
  // expected-error @+1 {{decodes one token a sequence (T = 1, no cu_seqlens), not T = 2}}
  gdn.recurrent q(%q : memref<2x2x2x128xbf16>) k(%q : memref<2x2x2x128xbf16>) v(%v : memref<2x2x4x64xbf16>)
      g(%g : memref<2x2x4xf32>) initial_state(%s : memref<2x4x64x128xf8E4M3FN>) state_scale(%sc : memref<2x4x64xf32>)
      final_state(%s : memref<2x4x64x128xf8E4M3FN>) o(%o : memref<2x2x4x64xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<vk>, gdn.schedule = #gdn.schedule<reductions = mma>}
  return
}

// -----

// Without qk_l2norm |k| bounds nothing and the f16 pairs could overflow.
func.func @no_l2norm(%q: memref<2x1x2x128xbf16>, %v: memref<2x1x4x64xbf16>, %g: memref<2x1x4xf32>,
                     %s: memref<2x4x64x128xf8E4M3FN>, %sc: memref<2x4x64xf32>, %o: memref<2x1x4x64xbf16>) {
  // expected-error @+1 {{needs qk_l2norm (its f16 operands are the normalized q and k)}}
  gdn.recurrent q(%q : memref<2x1x2x128xbf16>) k(%q : memref<2x1x2x128xbf16>) v(%v : memref<2x1x4x64xbf16>)
      g(%g : memref<2x1x4xf32>) initial_state(%s : memref<2x4x64x128xf8E4M3FN>) state_scale(%sc : memref<2x4x64xf32>)
      final_state(%s : memref<2x4x64x128xf8E4M3FN>) o(%o : memref<2x1x4x64xbf16>)
      {state_layout = #gdn.layout<vk>, gdn.schedule = #gdn.schedule<reductions = mma>}
  return
}

// -----

// A K-major state: the form's rows are V rows of K contiguous keys.
func.func @kv(%q: memref<2x1x2x128xbf16>, %v: memref<2x1x4x64xbf16>, %g: memref<2x1x4xf32>,
              %s: memref<2x4x128x64xf8E4M3FN>, %sc: memref<2x4x64xf32>, %o: memref<2x1x4x64xbf16>) {
  // expected-error @+1 {{needs the vk state layout}}
  gdn.recurrent q(%q : memref<2x1x2x128xbf16>) k(%q : memref<2x1x2x128xbf16>) v(%v : memref<2x1x4x64xbf16>)
      g(%g : memref<2x1x4xf32>) initial_state(%s : memref<2x4x128x64xf8E4M3FN>) state_scale(%sc : memref<2x4x64xf32>)
      final_state(%s : memref<2x4x128x64xf8E4M3FN>) o(%o : memref<2x1x4x64xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<kv>, gdn.schedule = #gdn.schedule<reductions = mma>}
  return
}

// -----

// K = 32: 8 keys a lane, not whole k16 tiles.
func.func @narrow_keys(%q: memref<2x1x2x32xbf16>, %v: memref<2x1x4x64xbf16>, %g: memref<2x1x4xf32>,
                       %s: memref<2x4x64x32xf8E4M3FN>, %sc: memref<2x4x64xf32>, %o: memref<2x1x4x64xbf16>) {
  // expected-error @+1 {{needs K = 64 or 128 (whole m16n8k16 tiles, 16 or 32 keys a lane), not 32}}
  gdn.recurrent q(%q : memref<2x1x2x32xbf16>) k(%q : memref<2x1x2x32xbf16>) v(%v : memref<2x1x4x64xbf16>)
      g(%g : memref<2x1x4xf32>) initial_state(%s : memref<2x4x64x32xf8E4M3FN>) state_scale(%sc : memref<2x4x64xf32>)
      final_state(%s : memref<2x4x64x32xf8E4M3FN>) o(%o : memref<2x1x4x64xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<vk>, gdn.schedule = #gdn.schedule<reductions = mma>}
  return
}

// -----

// A lane holds whole tiles: 2, 4, 8 or 16 columns over 8 lanes along V.
func.func @part_tile(%q: memref<2x1x2x128xbf16>, %v: memref<2x1x4x64xbf16>, %g: memref<2x1x4xf32>,
                     %s: memref<2x4x64x128xf8E4M3FN>, %sc: memref<2x4x64xf32>, %o: memref<2x1x4x64xbf16>) {
  // expected-error @+1 {{maps whole 16-row tiles to a warp: lanes_along_v must be 8 and columns_per_lane 2, 4, 8 or 16 (1 to 8 tiles; or both left to the cost model), not 1 and 8}}
  gdn.recurrent q(%q : memref<2x1x2x128xbf16>) k(%q : memref<2x1x2x128xbf16>) v(%v : memref<2x1x4x64xbf16>)
      g(%g : memref<2x1x4xf32>) initial_state(%s : memref<2x4x64x128xf8E4M3FN>) state_scale(%sc : memref<2x4x64xf32>)
      final_state(%s : memref<2x4x64x128xf8E4M3FN>) o(%o : memref<2x1x4x64xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<vk>, gdn.schedule = #gdn.schedule<reductions = mma, columns_per_lane = 1>}
  return
}

// -----

// Stochastic rounding: the form rounds to nearest.
func.func @stochastic(%q: memref<2x1x2x128xbf16>, %v: memref<2x1x4x64xbf16>, %g: memref<2x1x4xf32>,
                      %s: memref<2x4x64x128xf8E4M3FN>, %sc: memref<2x4x64xf32>, %o: memref<2x1x4x64xbf16>) {
  // expected-error @+1 {{rounds to nearest (no stochastic_rounding)}}
  gdn.recurrent q(%q : memref<2x1x2x128xbf16>) k(%q : memref<2x1x2x128xbf16>) v(%v : memref<2x1x4x64xbf16>)
      g(%g : memref<2x1x4xf32>) initial_state(%s : memref<2x4x64x128xf8E4M3FN>) state_scale(%sc : memref<2x4x64xf32>)
      final_state(%s : memref<2x4x64x128xf8E4M3FN>) o(%o : memref<2x1x4x64xbf16>)
      {qk_l2norm, stochastic_rounding, state_layout = #gdn.layout<vk>, gdn.schedule = #gdn.schedule<reductions = mma>}
  return
}

// -----

// 16 rows of 32 keys a lane (8 tiles a warp at K = 128) spill.
func.func @too_many_tiles(%q: memref<2x1x2x128xbf16>, %v: memref<2x1x4x128xbf16>, %g: memref<2x1x4xf32>,
                          %s: memref<2x4x128x128xf8E4M3FN>, %sc: memref<2x4x128xf32>, %o: memref<2x1x4x128xbf16>) {
  // expected-error @+1 {{holds at most 256 state values a lane (columns_per_lane * K / 4), not 512 (columns_per_lane = 16, K = 128)}}
  gdn.recurrent q(%q : memref<2x1x2x128xbf16>) k(%q : memref<2x1x2x128xbf16>) v(%v : memref<2x1x4x128xbf16>)
      g(%g : memref<2x1x4xf32>) initial_state(%s : memref<2x4x128x128xf8E4M3FN>) state_scale(%sc : memref<2x4x128xf32>)
      final_state(%s : memref<2x4x128x128xf8E4M3FN>) o(%o : memref<2x1x4x128xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<vk>, gdn.schedule = #gdn.schedule<reductions = mma, columns_per_lane = 16>}
  return
}
