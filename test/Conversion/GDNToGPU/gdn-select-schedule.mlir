// RUN: gdn-opt %s -split-input-file -gdn-select-schedule | FileCheck %s
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="sm-count=16" | FileCheck %s --check-prefix=SMALL
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<columns_per_lane = 4>}" | FileCheck %s --check-prefix=PIN
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule -one-shot-bufferize="bufferize-function-boundaries" -convert-gdn-to-gpu | FileCheck %s --check-prefix=GPU

// The cost model's choice becomes the op's gdn.schedule: N = 1 decode keeps
// many short warps (1 column a lane, 2 lanes along V, CTAs of 4 warps); on a 16-SM part the
// same problem already fills the device with 8 columns a lane, in one-warp
// CTAs, and being bandwidth-bound takes its reductions in turn (fewer
// registers) rather than side by side.
// CHECK-LABEL: func.func @decode_n1
// CHECK: gdn.recurrent {{.*}} {gdn.schedule = #gdn.schedule<columns_per_lane = 1, lanes_along_v = 2, warps = 4, staged_tokens = 0, unroll_tokens = 1, reductions = side_by_side, solve = token_by_token, precision = tf32x3, producer_stages = 0, consumer_registers = 0, state_prefetch_distance = 0, input_prefetch_distance = 0, chunk_prefetch_distance = 0, max_registers = 0, launch = ordinary, segments = 1, concurrent_solves = 0>, state_layout = #gdn.layout<vk>}
// SMALL-LABEL: func.func @decode_n1
// SMALL: gdn.schedule = #gdn.schedule<columns_per_lane = 8, lanes_along_v = 1, warps = 1, staged_tokens = 0, unroll_tokens = 1, reductions = in_turn, solve = token_by_token, precision = tf32x3, producer_stages = 0, consumer_registers = 0, state_prefetch_distance = 0, input_prefetch_distance = 0, chunk_prefetch_distance = 0, max_registers = 0, launch = ordinary, segments = 1, concurrent_solves = 0>
// PIN-LABEL: func.func @decode_n1
// PIN: gdn.schedule = #gdn.schedule<columns_per_lane = 4, {{.*}}reductions = side_by_side, solve = token_by_token, precision = tf32x3, producer_stages = 0, consumer_registers = 0, state_prefetch_distance = 0, input_prefetch_distance = 0, chunk_prefetch_distance = 0, max_registers = 0, launch = ordinary, segments = 1, concurrent_solves = 0>
// GPU-LABEL: func.func @decode_n1
// GPU: gpu.launch_func @gdn_kernels::@decode_n1_recurrent blocks in (%c16, %c32{{.*}}, %c1{{.*}}) threads in (%c128
func.func @decode_n1(%q: memref<1x1x16x128xbf16>, %k: memref<1x1x16x128xbf16>, %v: memref<1x1x32x128xbf16>,
                     %s: memref<1x32x128x128xf32>, %o: memref<1x1x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x1x16x128xbf16>) k(%k : memref<1x1x16x128xbf16>) v(%v : memref<1x1x32x128xbf16>)
      initial_state(%s : memref<1x32x128x128xf32>) final_state(%s : memref<1x32x128x128xf32>)
      o(%o : memref<1x1x32x128xbf16>) {state_layout = #gdn.layout<vk>}
  return
}

// -----

// Parameters already on the op are pinned (here 2 columns a lane, one warp,
// no staging), the rest chosen; a parameter of the pass's schedule option
// overrides a pinned one; and convert-gdn-to-gpu builds exactly the pinned
// kernel (V / 2 = 64 CTAs of one warp per head). The tensor form gets a
// schedule as well.
// CHECK-LABEL: func.func @pinned
// CHECK: gdn.schedule = #gdn.schedule<columns_per_lane = 2, lanes_along_v = 1, warps = 1, staged_tokens = 0, unroll_tokens = 1, reductions = side_by_side, solve = token_by_token, precision = tf32x3, producer_stages = 0, consumer_registers = 0, state_prefetch_distance = 0, input_prefetch_distance = 0, chunk_prefetch_distance = 0, max_registers = 0, launch = ordinary, segments = 1, concurrent_solves = 0>
// PIN-LABEL: func.func @pinned
// PIN: gdn.schedule = #gdn.schedule<columns_per_lane = 4, lanes_along_v = 1, warps = 1, staged_tokens = 0, unroll_tokens = 1, reductions = side_by_side, solve = token_by_token, precision = tf32x3, producer_stages = 0, consumer_registers = 0, state_prefetch_distance = 0, input_prefetch_distance = 0, chunk_prefetch_distance = 0, max_registers = 0, launch = ordinary, segments = 1, concurrent_solves = 0>
// GPU-LABEL: func.func @pinned
// GPU: gpu.launch_func @gdn_kernels::@pinned_recurrent blocks in (%c64, %c32{{.*}}, %c1{{.*}}) threads in (%c32
func.func @pinned(%q: memref<1x4x16x128xbf16>, %k: memref<1x4x16x128xbf16>, %v: memref<1x4x32x128xbf16>,
                  %s: memref<1x32x128x128xf32>, %o: memref<1x4x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x4x16x128xbf16>) k(%k : memref<1x4x16x128xbf16>) v(%v : memref<1x4x32x128xbf16>)
      initial_state(%s : memref<1x32x128x128xf32>) final_state(%s : memref<1x32x128x128xf32>)
      o(%o : memref<1x4x32x128xbf16>)
      {gdn.schedule = #gdn.schedule<columns_per_lane = 2, warps = 1, staged_tokens = 0>,
       state_layout = #gdn.layout<vk>}
  return
}

// -----

// The tensor form keeps its schedule through one-shot bufferization: kv, 4
// columns x 4 lanes, 2 warps = the 32 V columns in one CTA per (hv, n); a
// tiny grid, so two staged tokens a step.
// GPU-LABEL: func.func @tensor_form
// GPU: gpu.launch_func @gdn_kernels::@tensor_form_recurrent blocks in (%c1{{.*}}, %c2{{.*}}, %c2{{.*}}) threads in (%c64
// CHECK-LABEL: func.func @tensor_form
// CHECK: gdn.recurrent {{.*}}gdn.schedule = #gdn.schedule<columns_per_lane = 4, lanes_along_v = 4, warps = 2, staged_tokens = 4, unroll_tokens = 1, reductions = token_pairs, solve = token_by_token, precision = tf32x3, producer_stages = 0, consumer_registers = 0, state_prefetch_distance = 0, input_prefetch_distance = 0, chunk_prefetch_distance = 0, max_registers = 0, launch = ordinary, segments = 1, concurrent_solves = 0>
func.func @tensor_form(%q: tensor<2x4x2x32xf32>, %k: tensor<2x4x2x32xf32>, %v: tensor<2x4x2x32xf32>,
                       %o: tensor<2x4x2x32xf32>) -> tensor<2x4x2x32xf32> {
  %r = gdn.recurrent q(%q : tensor<2x4x2x32xf32>) k(%k : tensor<2x4x2x32xf32>) v(%v : tensor<2x4x2x32xf32>)
      o(%o : tensor<2x4x2x32xf32>) -> tensor<2x4x2x32xf32>
  return %r : tensor<2x4x2x32xf32>
}

// -----

// Bandwidth-bound decode (N = 64: 8 columns a lane fill the device) takes its
// reductions in turn (fewer registers) — except with a per-key decay (KDA),
// which is built side by side only.
// CHECK-LABEL: func.func @bandwidth_bound
// CHECK: gdn.schedule = #gdn.schedule<columns_per_lane = 8, lanes_along_v = 1, warps = 1, staged_tokens = 0, unroll_tokens = 1, reductions = in_turn, solve = token_by_token, precision = tf32x3, producer_stages = 0, consumer_registers = 0, state_prefetch_distance = 0, input_prefetch_distance = 0, chunk_prefetch_distance = 0, max_registers = 0, launch = ordinary, segments = 1, concurrent_solves = 0>
// CHECK: gdn.schedule = #gdn.schedule<columns_per_lane = 8, lanes_along_v = 1, warps = 1, staged_tokens = 0, unroll_tokens = 1, reductions = side_by_side, solve = token_by_token, precision = tf32x3, producer_stages = 0, consumer_registers = 0, state_prefetch_distance = 0, input_prefetch_distance = 0, chunk_prefetch_distance = 0, max_registers = 0, launch = ordinary, segments = 1, concurrent_solves = 0>
func.func @bandwidth_bound(%q: memref<64x1x16x128xbf16>, %k: memref<64x1x16x128xbf16>, %v: memref<64x1x32x128xbf16>,
                           %g: memref<64x1x32xf32>, %gk: memref<64x1x32x128xf32>,
                           %s: memref<64x32x128x128xf32>, %o: memref<64x1x32x128xbf16>) {
  gdn.recurrent q(%q : memref<64x1x16x128xbf16>) k(%k : memref<64x1x16x128xbf16>) v(%v : memref<64x1x32x128xbf16>)
      g(%g : memref<64x1x32xf32>)
      initial_state(%s : memref<64x32x128x128xf32>) final_state(%s : memref<64x32x128x128xf32>)
      o(%o : memref<64x1x32x128xbf16>) {state_layout = #gdn.layout<vk>}
  gdn.recurrent q(%q : memref<64x1x16x128xbf16>) k(%k : memref<64x1x16x128xbf16>) v(%v : memref<64x1x32x128xbf16>)
      g(%gk : memref<64x1x32x128xf32>)
      initial_state(%s : memref<64x32x128x128xf32>) final_state(%s : memref<64x32x128x128xf32>)
      o(%o : memref<64x1x32x128xbf16>) {state_layout = #gdn.layout<vk>}
  return
}

// -----

// A bandwidth-bound bf16 state on a grid of 8x the target warps (N = 64)
// moves 16-byte column slices: 2 lanes along V, 4 columns a lane (8 keys a
// lane), side by side in CTAs of 4 warps, with an L2 prefetch of the state
// tile one wave of CTAs later (132 SMs x 7 CTAs: gdn-select-schedule-
// prefetch.mlir); at N = 8 (1x) it keeps 8 columns on one lane in one-warp
// CTAs, as an f32 state does (above).
// CHECK-LABEL: func.func @bandwidth_bound_bf16
// CHECK: gdn.schedule = #gdn.schedule<columns_per_lane = 4, lanes_along_v = 2, warps = 4, staged_tokens = 0, unroll_tokens = 1, reductions = side_by_side, solve = token_by_token, precision = tf32x3, producer_stages = 0, consumer_registers = 0, state_prefetch_distance = 924, input_prefetch_distance = 0, chunk_prefetch_distance = 0, max_registers = 0, launch = ordinary, segments = 1, concurrent_solves = 0>
// CHECK-LABEL: func.func @bandwidth_bound_bf16_n8
// CHECK: gdn.schedule = #gdn.schedule<columns_per_lane = 8, lanes_along_v = 1, warps = 1, staged_tokens = 0, unroll_tokens = 1, reductions = in_turn, solve = token_by_token, precision = tf32x3, producer_stages = 0, consumer_registers = 0, state_prefetch_distance = 0, input_prefetch_distance = 0, chunk_prefetch_distance = 0, max_registers = 0, launch = ordinary, segments = 1, concurrent_solves = 0>
// K = 64 (4 keys a lane over 16 lanes: no whole 16-byte slice) keeps 8
// columns on one lane too.
// CHECK-LABEL: func.func @bandwidth_bound_bf16_k64
// CHECK: gdn.schedule = #gdn.schedule<columns_per_lane = 8, lanes_along_v = 1, warps = 1, staged_tokens = 0, unroll_tokens = 1, reductions = in_turn, solve = token_by_token, precision = tf32x3, producer_stages = 0, consumer_registers = 0, state_prefetch_distance = 0, input_prefetch_distance = 0, chunk_prefetch_distance = 0, max_registers = 0, launch = ordinary, segments = 1, concurrent_solves = 0>
// KDA (a decay per key) keeps 8 columns on one lane, side by side, at N = 64.
// CHECK-LABEL: func.func @bandwidth_bound_bf16_kda
// CHECK: gdn.schedule = #gdn.schedule<columns_per_lane = 8, lanes_along_v = 1, warps = 1, staged_tokens = 0, unroll_tokens = 1, reductions = side_by_side, solve = token_by_token, precision = tf32x3, producer_stages = 0, consumer_registers = 0, state_prefetch_distance = 0, input_prefetch_distance = 0, chunk_prefetch_distance = 0, max_registers = 0, launch = ordinary, segments = 1, concurrent_solves = 0>
func.func @bandwidth_bound_bf16(%q: memref<64x1x16x128xbf16>, %k: memref<64x1x16x128xbf16>, %v: memref<64x1x32x128xbf16>,
                                %g: memref<64x1x32xf32>, %s: memref<64x32x128x128xbf16>,
                                %o: memref<64x1x32x128xbf16>) {
  gdn.recurrent q(%q : memref<64x1x16x128xbf16>) k(%k : memref<64x1x16x128xbf16>) v(%v : memref<64x1x32x128xbf16>)
      g(%g : memref<64x1x32xf32>)
      initial_state(%s : memref<64x32x128x128xbf16>) final_state(%s : memref<64x32x128x128xbf16>)
      o(%o : memref<64x1x32x128xbf16>) {state_layout = #gdn.layout<vk>}
  return
}

func.func @bandwidth_bound_bf16_n8(%q: memref<8x1x16x128xbf16>, %k: memref<8x1x16x128xbf16>, %v: memref<8x1x32x128xbf16>,
                                %g: memref<8x1x32xf32>, %s: memref<8x32x128x128xbf16>,
                                %o: memref<8x1x32x128xbf16>) {
  gdn.recurrent q(%q : memref<8x1x16x128xbf16>) k(%k : memref<8x1x16x128xbf16>) v(%v : memref<8x1x32x128xbf16>)
      g(%g : memref<8x1x32xf32>)
      initial_state(%s : memref<8x32x128x128xbf16>) final_state(%s : memref<8x32x128x128xbf16>)
      o(%o : memref<8x1x32x128xbf16>) {state_layout = #gdn.layout<vk>}
  return
}

func.func @bandwidth_bound_bf16_k64(%q: memref<64x1x16x64xbf16>, %k: memref<64x1x16x64xbf16>, %v: memref<64x1x32x128xbf16>,
                                %g: memref<64x1x32xf32>, %s: memref<64x32x128x64xbf16>,
                                %o: memref<64x1x32x128xbf16>) {
  gdn.recurrent q(%q : memref<64x1x16x64xbf16>) k(%k : memref<64x1x16x64xbf16>) v(%v : memref<64x1x32x128xbf16>)
      g(%g : memref<64x1x32xf32>)
      initial_state(%s : memref<64x32x128x64xbf16>) final_state(%s : memref<64x32x128x64xbf16>)
      o(%o : memref<64x1x32x128xbf16>) {state_layout = #gdn.layout<vk>}
  return
}

func.func @bandwidth_bound_bf16_kda(%q: memref<64x1x16x128xbf16>, %k: memref<64x1x16x128xbf16>, %v: memref<64x1x32x128xbf16>,
                                %g: memref<64x1x32x128xf32>, %s: memref<64x32x128x128xbf16>,
                                %o: memref<64x1x32x128xbf16>) {
  gdn.recurrent q(%q : memref<64x1x16x128xbf16>) k(%k : memref<64x1x16x128xbf16>) v(%v : memref<64x1x32x128xbf16>)
      g(%g : memref<64x1x32x128xf32>)
      initial_state(%s : memref<64x32x128x128xbf16>) final_state(%s : memref<64x32x128x128xbf16>)
      o(%o : memref<64x1x32x128xbf16>) {state_layout = #gdn.layout<vk>}
  return
}

// -----

// An e4m3 state (1 byte) at N = 64 moves the same 16-byte slices: 4 lanes
// along V, 4 columns a lane (16 keys a lane).
// CHECK-LABEL: func.func @bandwidth_bound_fp8
// CHECK: gdn.schedule = #gdn.schedule<columns_per_lane = 4, lanes_along_v = 4, warps = 4, staged_tokens = 0, unroll_tokens = 1, reductions = side_by_side, solve = token_by_token, precision = tf32x3, producer_stages = 0, consumer_registers = 0, state_prefetch_distance = 528, input_prefetch_distance = 0, chunk_prefetch_distance = 0, max_registers = 0, launch = ordinary, segments = 1, concurrent_solves = 0>
func.func @bandwidth_bound_fp8(%q: memref<64x1x16x128xbf16>, %k: memref<64x1x16x128xbf16>, %v: memref<64x1x32x128xbf16>,
                               %g: memref<64x1x32xf32>, %s: memref<64x32x128x128xf8E4M3FN>,
                               %sc: memref<64x32x128xf32>, %o: memref<64x1x32x128xbf16>) {
  gdn.recurrent q(%q : memref<64x1x16x128xbf16>) k(%k : memref<64x1x16x128xbf16>) v(%v : memref<64x1x32x128xbf16>)
      g(%g : memref<64x1x32xf32>)
      initial_state(%s : memref<64x32x128x128xf8E4M3FN>) state_scale(%sc : memref<64x32x128xf32>)
      final_state(%s : memref<64x32x128x128xf8E4M3FN>)
      o(%o : memref<64x1x32x128xbf16>) {state_layout = #gdn.layout<vk>}
  return
}

// -----

// Below that grid (N = 8), an e4m3 state takes the same 4 x 4 (16-byte
// rows a lane) from a grid 8 times smaller, without the L2 prefetch.
// CHECK-LABEL: func.func @decode_fp8_n8
// CHECK: gdn.schedule = #gdn.schedule<columns_per_lane = 4, lanes_along_v = 4, warps = 4, staged_tokens = 0, unroll_tokens = 1, reductions = side_by_side, {{.*}}state_prefetch_distance = 0,
func.func @decode_fp8_n8(%q: memref<8x1x16x128xbf16>, %k: memref<8x1x16x128xbf16>, %v: memref<8x1x32x128xbf16>,
                         %g: memref<8x1x32xf32>, %s: memref<8x32x128x128xf8E4M3FN>,
                         %sc: memref<8x32x128xf32>, %o: memref<8x1x32x128xbf16>) {
  gdn.recurrent q(%q : memref<8x1x16x128xbf16>) k(%k : memref<8x1x16x128xbf16>) v(%v : memref<8x1x32x128xbf16>)
      g(%g : memref<8x1x32xf32>)
      initial_state(%s : memref<8x32x128x128xf8E4M3FN>) state_scale(%sc : memref<8x32x128xf32>)
      final_state(%s : memref<8x32x128x128xf8E4M3FN>)
      o(%o : memref<8x1x32x128xbf16>) {state_layout = #gdn.layout<vk>}
  return
}

// -----

// Not past the register budget: 4 columns on 4 lanes would hold K / 2 state
// values a thread, so from K = 192 an e4m3 decode takes another rule's
// mapping (the cost model chose 96 values, which its own check refused).
// CHECK-LABEL: func.func @decode_fp8_k192
// CHECK: gdn.schedule = #gdn.schedule<columns_per_lane = 4, lanes_along_v = 2,
func.func @decode_fp8_k192(%q: memref<256x1x1x192xbf16>, %k: memref<256x1x1x192xbf16>, %v: memref<256x1x1x128xbf16>, %g: memref<256x1x1xf32>, %beta: memref<256x1x1xf32>, %s: memref<256x1x128x192xf8E4M3FN>, %sscale: memref<256x1x128xf32>, %o: memref<256x1x1x128xbf16>) {
  gdn.recurrent q(%q : memref<256x1x1x192xbf16>) k(%k : memref<256x1x1x192xbf16>) v(%v : memref<256x1x1x128xbf16>) g(%g : memref<256x1x1xf32>) beta(%beta : memref<256x1x1xf32>) initial_state(%s : memref<256x1x128x192xf8E4M3FN>) state_scale(%sscale : memref<256x1x128xf32>) final_state(%s : memref<256x1x128x192xf8E4M3FN>) o(%o : memref<256x1x1x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// Staged (a verify, T = 4), the e4m3 pool keeps one lane's default when
// counting warps: 4 columns x 2 lanes at N = 8, as a bf16 pool.
// CHECK-LABEL: func.func @verify_fp8_n8
// CHECK: gdn.schedule = #gdn.schedule<columns_per_lane = 4, lanes_along_v = 2, warps = 4, staged_tokens = 4,
func.func @verify_fp8_n8(%q: memref<8x4x16x128xbf16>, %k: memref<8x4x16x128xbf16>, %v: memref<8x4x32x128xbf16>,
                         %g: memref<8x4x32xf32>, %s: memref<8x32x128x128xf8E4M3FN>, %sc: memref<8x32x128xf32>,
                         %inter: memref<8x4x32x128x128xbf16>, %o: memref<8x4x32x128xbf16>) {
  gdn.recurrent q(%q : memref<8x4x16x128xbf16>) k(%k : memref<8x4x16x128xbf16>) v(%v : memref<8x4x32x128xbf16>)
      g(%g : memref<8x4x32xf32>)
      initial_state(%s : memref<8x32x128x128xf8E4M3FN>) intermediate_states(%inter : memref<8x4x32x128x128xbf16>)
      state_scale(%sc : memref<8x32x128xf32>)
      o(%o : memref<8x4x32x128xbf16>) {state_layout = #gdn.layout<vk>}
  return
}

// -----

// Verify (per-token states, vk bf16 pool, T = 4), Qwen3-Next rank shapes:
// 8 V columns a warp split 4 x 2 lanes once the grid fills the machine
// (N = 8: 4096 warps), 2 x 4 below (N = 1); a producer warp feeds the
// tiny grid (N = 1) only.
// CHECK-LABEL: func.func @verify_n1
// CHECK: gdn.schedule = #gdn.schedule<columns_per_lane = 2, lanes_along_v = 4, warps = 4, staged_tokens = 4, unroll_tokens = 1, reductions = side_by_side, solve = token_by_token, precision = tf32x3, producer_stages = 2, consumer_registers = 0, state_prefetch_distance = 0, input_prefetch_distance = 0, chunk_prefetch_distance = 0, max_registers = 0, launch = ordinary, segments = 1, concurrent_solves = 0>
// CHECK-LABEL: func.func @verify_n8
// CHECK: gdn.schedule = #gdn.schedule<columns_per_lane = 4, lanes_along_v = 2, warps = 4, staged_tokens = 4, unroll_tokens = 1, reductions = in_turn, solve = token_by_token, precision = tf32x3, producer_stages = 0, consumer_registers = 0, state_prefetch_distance = 0, input_prefetch_distance = 0, chunk_prefetch_distance = 0, max_registers = 0, launch = ordinary, segments = 1, concurrent_solves = 0>
// CHECK-LABEL: func.func @verify_n64
// CHECK: gdn.schedule = #gdn.schedule<columns_per_lane = 4, lanes_along_v = 2, warps = 4, staged_tokens = 4, unroll_tokens = 1, reductions = in_turn, solve = token_by_token, precision = tf32x3, producer_stages = 0, consumer_registers = 0, state_prefetch_distance = 0, input_prefetch_distance = 0, chunk_prefetch_distance = 0, max_registers = 0, launch = ordinary, segments = 1, concurrent_solves = 0>
func.func @verify_n1(%q: memref<1x4x16x128xbf16>,
    %k: memref<1x4x16x128xbf16>,
    %v: memref<1x4x32x128xbf16>,
    %a: memref<1x4x32xbf16>,
    %A_log: memref<32xf32>,
    %dt_bias: memref<32xf32>,
    %b: memref<1x4x32xbf16>,
    %state_indices: memref<1xi32>,
    %intermediate_state_indices: memref<1xi32>,
    %pool: memref<12x32x128x128xbf16>,
    %intermediate: memref<12x4x32x128x128xbf16>,
    %o: memref<1x4x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x4x16x128xbf16>)
      k(%k : memref<1x4x16x128xbf16>)
      v(%v : memref<1x4x32x128xbf16>)
      a(%a : memref<1x4x32xbf16>)
      A_log(%A_log : memref<32xf32>)
      dt_bias(%dt_bias : memref<32xf32>)
      b(%b : memref<1x4x32xbf16>)
      state_indices(%state_indices : memref<1xi32>)
      intermediate_state_indices(%intermediate_state_indices : memref<1xi32>)
      initial_state(%pool : memref<12x32x128x128xbf16>)
      intermediate_states(%intermediate : memref<12x4x32x128x128xbf16>)
      o(%o : memref<1x4x32x128xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

func.func @verify_n8(%q: memref<8x4x16x128xbf16>,
    %k: memref<8x4x16x128xbf16>,
    %v: memref<8x4x32x128xbf16>,
    %a: memref<8x4x32xbf16>,
    %A_log: memref<32xf32>,
    %dt_bias: memref<32xf32>,
    %b: memref<8x4x32xbf16>,
    %state_indices: memref<8xi32>,
    %intermediate_state_indices: memref<8xi32>,
    %pool: memref<12x32x128x128xbf16>,
    %intermediate: memref<12x4x32x128x128xbf16>,
    %o: memref<8x4x32x128xbf16>) {
  gdn.recurrent q(%q : memref<8x4x16x128xbf16>)
      k(%k : memref<8x4x16x128xbf16>)
      v(%v : memref<8x4x32x128xbf16>)
      a(%a : memref<8x4x32xbf16>)
      A_log(%A_log : memref<32xf32>)
      dt_bias(%dt_bias : memref<32xf32>)
      b(%b : memref<8x4x32xbf16>)
      state_indices(%state_indices : memref<8xi32>)
      intermediate_state_indices(%intermediate_state_indices : memref<8xi32>)
      initial_state(%pool : memref<12x32x128x128xbf16>)
      intermediate_states(%intermediate : memref<12x4x32x128x128xbf16>)
      o(%o : memref<8x4x32x128xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

func.func @verify_n64(%q: memref<64x4x16x128xbf16>,
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

// -----

// Verify with T = 12 at N = 64: no producer (the grid is past the machine's
// target warps and T > 4).
// CHECK-LABEL: func.func @verify_t12_n64
// CHECK: gdn.schedule = #gdn.schedule<columns_per_lane = 4, lanes_along_v = 2, {{.*}}staged_tokens = 12, unroll_tokens = 1, {{.*}}producer_stages = 0, {{.*}}launch = ordinary, segments = 1, concurrent_solves = 0>
func.func @verify_t12_n64(%q: memref<64x12x16x128xbf16>,
    %k: memref<64x12x16x128xbf16>,
    %v: memref<64x12x32x128xbf16>,
    %a: memref<64x12x32xbf16>,
    %A_log: memref<32xf32>,
    %dt_bias: memref<32xf32>,
    %b: memref<64x12x32xbf16>,
    %state_indices: memref<64xi32>,
    %intermediate_state_indices: memref<64xi32>,
    %pool: memref<80x32x128x128xbf16>,
    %intermediate: memref<80x12x32x128x128xbf16>,
    %o: memref<64x12x32x128xbf16>) {
  gdn.recurrent q(%q : memref<64x12x16x128xbf16>)
      k(%k : memref<64x12x16x128xbf16>)
      v(%v : memref<64x12x32x128xbf16>)
      a(%a : memref<64x12x32xbf16>)
      A_log(%A_log : memref<32xf32>)
      dt_bias(%dt_bias : memref<32xf32>)
      b(%b : memref<64x12x32xbf16>)
      state_indices(%state_indices : memref<64xi32>)
      intermediate_state_indices(%intermediate_state_indices : memref<64xi32>)
      initial_state(%pool : memref<80x32x128x128xbf16>)
      intermediate_states(%intermediate : memref<80x12x32x128x128xbf16>)
      o(%o : memref<64x12x32x128xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// Final state only, kv, T = 12 (FLA's layout): on a tiny grid (N = 1, HV =
// 32) the token loop fed by a producer warp through a 2-slot ring, 2 columns
// x 4 lanes a warp, all 12 tokens one chunk, two tokens a step
// (reductions = token_pairs: a tiny grid, no intermediate states); from N = 8
// the chunked solve on
// tensor cores (T > 8), 16 columns a warp, a chunk of 16 rows, 8 warps a CTA
// (one chunk: the most warps, though 256 CTAs are less than two an SM).
// CHECK-LABEL: func.func @fla_t12_n1
// CHECK: gdn.schedule = #gdn.schedule<columns_per_lane = 2, lanes_along_v = 4, warps = 4, staged_tokens = 12, unroll_tokens = 1, reductions = token_pairs, solve = token_by_token, precision = tf32x3, producer_stages = 2, consumer_registers = 0, state_prefetch_distance = 0, input_prefetch_distance = 0, chunk_prefetch_distance = 0, max_registers = 0, launch = ordinary, segments = 1, concurrent_solves = 0>
// CHECK-LABEL: func.func @fla_t12_n8
// CHECK: gdn.schedule = #gdn.schedule<{{.*}}warps = 8, {{.*}}solve = tensor_cores, precision = tf32x3, producer_stages = 0,
func.func @fla_t12_n1(%q: memref<1x12x16x128xbf16>, %k: memref<1x12x16x128xbf16>, %v: memref<1x12x32x128xbf16>,
               %g: memref<1x12x32xf32>, %beta: memref<1x12x32xbf16>,
               %h0: memref<1x32x128x128xf32>, %ht: memref<1x32x128x128xf32>, %o: memref<1x12x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x12x16x128xbf16>) k(%k : memref<1x12x16x128xbf16>) v(%v : memref<1x12x32x128xbf16>)
      g(%g : memref<1x12x32xf32>) beta(%beta : memref<1x12x32xbf16>)
      initial_state(%h0 : memref<1x32x128x128xf32>) final_state(%ht : memref<1x32x128x128xf32>)
      o(%o : memref<1x12x32x128xbf16>) {qk_l2norm}
  return
}

func.func @fla_t12_n8(%q: memref<8x12x16x128xbf16>, %k: memref<8x12x16x128xbf16>, %v: memref<8x12x32x128xbf16>,
               %g: memref<8x12x32xf32>, %beta: memref<8x12x32xbf16>,
               %h0: memref<8x32x128x128xf32>, %ht: memref<8x32x128x128xf32>, %o: memref<8x12x32x128xbf16>) {
  gdn.recurrent q(%q : memref<8x12x16x128xbf16>) k(%k : memref<8x12x16x128xbf16>) v(%v : memref<8x12x32x128xbf16>)
      g(%g : memref<8x12x32xf32>) beta(%beta : memref<8x12x32xbf16>)
      initial_state(%h0 : memref<8x32x128x128xf32>) final_state(%ht : memref<8x32x128x128xf32>)
      o(%o : memref<8x12x32x128xbf16>) {qk_l2norm}
  return
}

// -----

// K < 32 in vk: the fewest lanes along V that leave whole keys a lane (K =
// 16: 2 lanes x 16 along K), not the vk default of one (K = 16 is not a
// multiple of 32 lanes).
// CHECK-LABEL: func.func @vk_k16
// CHECK: lanes_along_v = 2,
func.func @vk_k16(%q: memref<1x3x1x16xbf16>, %k: memref<1x3x1x16xbf16>, %v: memref<1x3x1x64xbf16>,
                  %s: memref<1x1x64x16xf32>, %o: memref<1x3x1x64xbf16>) {
  gdn.recurrent q(%q : memref<1x3x1x16xbf16>) k(%k : memref<1x3x1x16xbf16>) v(%v : memref<1x3x1x64xbf16>)
      initial_state(%s : memref<1x1x64x16xf32>) final_state(%s : memref<1x1x64x16xf32>)
      o(%o : memref<1x3x1x64xbf16>) {state_layout = #gdn.layout<vk>}
  return
}

// -----

// A pinned warp count that cannot split V = 32 into 16-column warps keeps
// the token loop at T = 12 (the tensor cores are chosen only where the pins
// allow them).
// CHECK-LABEL: func.func @t12_pinned_warps
// CHECK: gdn.schedule = #gdn.schedule<{{.*}}warps = 4, {{.*}}solve = token_by_token,
func.func @t12_pinned_warps(%q: memref<1x12x1x128xbf16>, %k: memref<1x12x1x128xbf16>, %v: memref<1x12x1x32xbf16>,
                            %s: memref<1x1x32x128xf32>, %o: memref<1x12x1x32xbf16>) {
  gdn.recurrent q(%q : memref<1x12x1x128xbf16>) k(%k : memref<1x12x1x128xbf16>) v(%v : memref<1x12x1x32xbf16>)
      initial_state(%s : memref<1x1x32x128xf32>) final_state(%s : memref<1x1x32x128xf32>)
      o(%o : memref<1x12x1x32xbf16>) {gdn.schedule = #gdn.schedule<warps = 4>, state_layout = #gdn.layout<vk>}
  return
}

// -----

// K = 72 has no power of two of keys a lane (the counts the cost model has
// timed), so it takes the most columns the checks accept: 4 columns x 4
// lanes along V, 9 keys a lane (a fault hunt found 8 columns chosen and then
// refused as 72 state values a thread).
// CHECK-LABEL: func.func @vk_k72
// CHECK: gdn.schedule = #gdn.schedule<columns_per_lane = 4, lanes_along_v = 4,
func.func @vk_k72(%q: memref<2x1x4x72xbf16>, %k: memref<2x1x4x72xbf16>, %v: memref<2x1x4x64xbf16>,
                  %s: memref<2x4x64x72xf32>, %o: memref<2x1x4x64xbf16>) {
  gdn.recurrent q(%q : memref<2x1x4x72xbf16>) k(%k : memref<2x1x4x72xbf16>) v(%v : memref<2x1x4x64xbf16>)
      initial_state(%s : memref<2x4x64x72xf32>) final_state(%s : memref<2x4x64x72xf32>)
      o(%o : memref<2x1x4x64xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// KDA at K = 24, V = 16, T = 200 (staged tokens): 3 keys a lane over 8
// lanes along K, 4 columns x 4 lanes along V, one warp (was: 8 columns,
// refused as K = 24 not a multiple of 32 lanes along K).
// CHECK-LABEL: func.func @kda_k24_v16
// CHECK: gdn.schedule = #gdn.schedule<columns_per_lane = 4, lanes_along_v = 4, warps = 1, staged_tokens = 16,
func.func @kda_k24_v16(%q: memref<2x200x4x24xbf16>, %k: memref<2x200x4x24xbf16>, %v: memref<2x200x4x16xbf16>,
                       %g: memref<2x200x4x24xf32>, %s: memref<2x4x16x24xf32>, %o: memref<2x200x4x16xbf16>) {
  gdn.recurrent q(%q : memref<2x200x4x24xbf16>) k(%k : memref<2x200x4x24xbf16>) v(%v : memref<2x200x4x16xbf16>)
      g(%g : memref<2x200x4x24xf32>) initial_state(%s : memref<2x4x16x24xf32>) final_state(%s : memref<2x4x16x24xf32>)
      o(%o : memref<2x200x4x16xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
