// RUN: gdn-opt %s -split-input-file -verify-diagnostics
// One case per diagnostic of a quantized state (state_scale).

func.func @no_scale(%q: memref<2x1x1x8xf32>, %s: memref<2x1x8x8xf8E4M3FN>, %o: memref<2x1x1x8xf32>) {
  // expected-error @+1 {{an f8E4M3FN state needs its scales, operand 'state_scale' [N or slots, HV, V] f32}}
  gdn.recurrent q(%q : memref<2x1x1x8xf32>) k(%q : memref<2x1x1x8xf32>) v(%q : memref<2x1x1x8xf32>)
      initial_state(%s : memref<2x1x8x8xf8E4M3FN>) o(%o : memref<2x1x1x8xf32>)
  return
}

// -----

func.func @scale_of_bf16(%q: memref<2x1x1x8xf32>, %s: memref<2x1x8x8xbf16>, %sc: memref<2x1x8xf32>,
                         %o: memref<2x1x1x8xf32>) {
  // expected-error @+1 {{operand 'initial_state' expects element type f8E4M3FN (with 'state_scale'), got 'bf16'}}
  gdn.recurrent q(%q : memref<2x1x1x8xf32>) k(%q : memref<2x1x1x8xf32>) v(%q : memref<2x1x1x8xf32>)
      initial_state(%s : memref<2x1x8x8xbf16>) state_scale(%sc : memref<2x1x8xf32>) o(%o : memref<2x1x1x8xf32>)
  return
}

// -----

func.func @scale_shape(%q: memref<2x1x1x8xf32>, %s: memref<2x1x8x8xf8E4M3FN>, %sc: memref<2x1x4xf32>,
                       %o: memref<2x1x1x8xf32>) {
  // expected-error @+1 {{operand 'state_scale' expects shape [2, 1, 8] (N, HV, V), got [2, 1, 4]}}
  gdn.recurrent q(%q : memref<2x1x1x8xf32>) k(%q : memref<2x1x1x8xf32>) v(%q : memref<2x1x1x8xf32>)
      initial_state(%s : memref<2x1x8x8xf8E4M3FN>) state_scale(%sc : memref<2x1x4xf32>) o(%o : memref<2x1x1x8xf32>)
  return
}

// -----

func.func @scale_dtype(%q: memref<2x1x1x8xf32>, %s: memref<2x1x8x8xf8E4M3FN>, %sc: memref<2x1x8xbf16>,
                       %o: memref<2x1x1x8xf32>) {
  // expected-error @+1 {{operand 'state_scale' expects element type f32, got 'bf16'}}
  gdn.recurrent q(%q : memref<2x1x1x8xf32>) k(%q : memref<2x1x1x8xf32>) v(%q : memref<2x1x1x8xf32>)
      initial_state(%s : memref<2x1x8x8xf8E4M3FN>) state_scale(%sc : memref<2x1x8xbf16>) o(%o : memref<2x1x1x8xf32>)
  return
}

// -----

func.func @two_buffers(%q: memref<2x1x1x8xf32>, %s: memref<2x1x8x8xf8E4M3FN>, %t: memref<2x1x8x8xf8E4M3FN>,
                       %sc: memref<2x1x8xf32>, %o: memref<2x1x1x8xf32>) {
  // expected-error @+1 {{an f8E4M3FN state is updated in place: 'initial_state' and 'final_state' must be the same buffer (one 'state_scale')}}
  gdn.recurrent q(%q : memref<2x1x1x8xf32>) k(%q : memref<2x1x1x8xf32>) v(%q : memref<2x1x1x8xf32>)
      initial_state(%s : memref<2x1x8x8xf8E4M3FN>) state_scale(%sc : memref<2x1x8xf32>)
      final_state(%t : memref<2x1x8x8xf8E4M3FN>) o(%o : memref<2x1x1x8xf32>)
  return
}

// -----

func.func @no_state(%q: memref<2x1x1x8xf32>, %sc: memref<2x1x8xf32>, %o: memref<2x1x1x8xf32>) {
  // expected-error @+1 {{operand 'state_scale' needs an 'initial_state' or a 'final_state' to scale}}
  gdn.recurrent q(%q : memref<2x1x1x8xf32>) k(%q : memref<2x1x1x8xf32>) v(%q : memref<2x1x1x8xf32>)
      state_scale(%sc : memref<2x1x8xf32>) o(%o : memref<2x1x1x8xf32>)
  return
}

// -----

func.func @tensor_form(%q: tensor<2x1x1x8xf32>, %s: tensor<2x1x8x8xf8E4M3FN>, %sc: tensor<2x1x8xf32>,
                       %o: tensor<2x1x1x8xf32>) -> tensor<2x1x1x8xf32> {
  // expected-error @+1 {{operand 'state_scale' is supported in the memref form only}}
  %r = gdn.recurrent q(%q : tensor<2x1x1x8xf32>) k(%q : tensor<2x1x1x8xf32>) v(%q : tensor<2x1x1x8xf32>)
      initial_state(%s : tensor<2x1x8x8xf8E4M3FN>) state_scale(%sc : tensor<2x1x8xf32>)
      o(%o : tensor<2x1x1x8xf32>) -> tensor<2x1x1x8xf32>
  return %r : tensor<2x1x1x8xf32>
}

// -----

func.func @fp8_intermediate(%q: memref<2x3x1x8xf32>, %s: memref<2x1x8x8xf8E4M3FN>, %sc: memref<2x1x8xf32>,
                            %inter: memref<2x3x1x8x8xf8E4M3FN>, %o: memref<2x3x1x8xf32>) {
  // expected-error @+1 {{f8E4M3FN 'intermediate_states' need their scales, operand 'intermediate_state_scale' [R, steps, HV, V] f32}}
  gdn.recurrent q(%q : memref<2x3x1x8xf32>) k(%q : memref<2x3x1x8xf32>) v(%q : memref<2x3x1x8xf32>)
      initial_state(%s : memref<2x1x8x8xf8E4M3FN>) intermediate_states(%inter : memref<2x3x1x8x8xf8E4M3FN>)
      state_scale(%sc : memref<2x1x8xf32>) o(%o : memref<2x3x1x8xf32>)
  return
}

// -----

func.func @commit_fp8(%buf: memref<2x3x1x8x8xbf16>, %acc: memref<2xi32>, %s: memref<2x1x8x8xf8E4M3FN>) {
  // expected-error @+1 {{an f8E4M3FN pool needs its scales, operand 'state_scale' [N, HV, V] f32}}
  gdn.commit intermediate_states(%buf : memref<2x3x1x8x8xbf16>) accepted(%acc : memref<2xi32>)
      state(%s : memref<2x1x8x8xf8E4M3FN>)
  return
}

// -----

func.func @replay_no_scale(%kw: memref<1x2x1x3x8xf32>, %gw: memref<1x2x1x3xf32>, %acc: memref<2xi32>,
                           %s: memref<1x2x1x8x8xf8E4M3FN>) {
  // expected-error @+1 {{f8E4M3FN checkpoints need their scales, operand 'state_scale' [layers, slots, HV, V] f32}}
  gdn.replay_commit k_window(%kw : memref<1x2x1x3x8xf32>) v_window(%kw : memref<1x2x1x3x8xf32>)
      g_window(%gw : memref<1x2x1x3xf32>) beta_window(%gw : memref<1x2x1x3xf32>)
      accepted(%acc : memref<2xi32>) state(%s : memref<1x2x1x8x8xf8E4M3FN>)
  return
}

// -----

func.func @replay_scale_shape(%kw: memref<1x2x1x3x8xf32>, %gw: memref<1x2x1x3xf32>, %acc: memref<2xi32>,
                              %sc: memref<2x1x8xf32>, %s: memref<1x2x1x8x8xf8E4M3FN>) {
  // expected-error @+1 {{operand 'state_scale' expects shape [1, 2, 1, 8] (layers, slots, HV, V), got [2, 1, 8]}}
  gdn.replay_commit k_window(%kw : memref<1x2x1x3x8xf32>) v_window(%kw : memref<1x2x1x3x8xf32>)
      g_window(%gw : memref<1x2x1x3xf32>) beta_window(%gw : memref<1x2x1x3xf32>)
      accepted(%acc : memref<2xi32>) state_scale(%sc : memref<2x1x8xf32>) state(%s : memref<1x2x1x8x8xf8E4M3FN>)
  return
}

// -----
// f8E4M3FN per-token states (intermediate_state_scale).

func.func @inter_scale_of_bf16(%q: memref<2x3x1x8xf32>, %inter: memref<2x3x1x8x8xbf16>,
                               %isc: memref<2x3x1x8xf32>, %o: memref<2x3x1x8xf32>) {
  // expected-error @+1 {{operand 'intermediate_states' expects element type f8E4M3FN (with 'intermediate_state_scale'), got 'bf16'}}
  gdn.recurrent q(%q : memref<2x3x1x8xf32>) k(%q : memref<2x3x1x8xf32>) v(%q : memref<2x3x1x8xf32>)
      intermediate_states(%inter : memref<2x3x1x8x8xbf16>) intermediate_state_scale(%isc : memref<2x3x1x8xf32>)
      o(%o : memref<2x3x1x8xf32>) {state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @inter_scale_shape(%q: memref<2x3x1x8xf32>, %inter: memref<2x3x1x4x8xf8E4M3FN>,
                             %isc: memref<2x3x1x8xf32>, %o: memref<2x3x1x4xf32>) {
  // expected-error @+1 {{operand 'intermediate_state_scale' expects shape [2, 3, 1, 4] (R, steps, HV, V), got [2, 3, 1, 8]}}
  gdn.recurrent q(%q : memref<2x3x1x8xf32>) k(%q : memref<2x3x1x8xf32>) v(%o : memref<2x3x1x4xf32>)
      intermediate_states(%inter : memref<2x3x1x4x8xf8E4M3FN>) intermediate_state_scale(%isc : memref<2x3x1x8xf32>)
      o(%o : memref<2x3x1x4xf32>) {state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @inter_scale_kv_shape(%q: memref<2x3x1x8xf32>, %inter: memref<2x3x1x8x4xf8E4M3FN>,
                                %isc: memref<2x3x1x8xf32>, %o: memref<2x3x1x4xf32>) {
  // expected-error @+1 {{operand 'intermediate_state_scale' expects shape [2, 3, 1, 4] (R, steps, HV, V), got [2, 3, 1, 8]}}
  gdn.recurrent q(%q : memref<2x3x1x8xf32>) k(%q : memref<2x3x1x8xf32>) v(%o : memref<2x3x1x4xf32>)
      intermediate_states(%inter : memref<2x3x1x8x4xf8E4M3FN>) intermediate_state_scale(%isc : memref<2x3x1x8xf32>)
      o(%o : memref<2x3x1x4xf32>)
  return
}

// -----

func.func @inter_scale_dtype(%q: memref<2x3x1x8xf32>, %inter: memref<2x3x1x8x8xf8E4M3FN>,
                             %isc: memref<2x3x1x8xbf16>, %o: memref<2x3x1x8xf32>) {
  // expected-error @+1 {{operand 'intermediate_state_scale' expects element type f32, got 'bf16'}}
  gdn.recurrent q(%q : memref<2x3x1x8xf32>) k(%q : memref<2x3x1x8xf32>) v(%q : memref<2x3x1x8xf32>)
      intermediate_states(%inter : memref<2x3x1x8x8xf8E4M3FN>) intermediate_state_scale(%isc : memref<2x3x1x8xbf16>)
      o(%o : memref<2x3x1x8xf32>) {state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @inter_scale_alone(%q: memref<2x3x1x8xf32>, %isc: memref<2x3x1x8xf32>, %o: memref<2x3x1x8xf32>) {
  // expected-error @+1 {{operand 'intermediate_state_scale' needs 'intermediate_states' to scale}}
  gdn.recurrent q(%q : memref<2x3x1x8xf32>) k(%q : memref<2x3x1x8xf32>) v(%q : memref<2x3x1x8xf32>)
      intermediate_state_scale(%isc : memref<2x3x1x8xf32>) o(%o : memref<2x3x1x8xf32>) {state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @inter_scale_pitched(%q: memref<2x3x1x8xf32>, %inter: memref<2x3x1x8x8xf8E4M3FN>,
                               %isc: memref<2x3x1x8xf32, strided<[48, 8, 8, 1]>>, %o: memref<2x3x1x8xf32>) {
  // expected-error @+1 {{operand 'intermediate_state_scale' has an unsupported layout}}
  gdn.recurrent q(%q : memref<2x3x1x8xf32>) k(%q : memref<2x3x1x8xf32>) v(%q : memref<2x3x1x8xf32>)
      intermediate_states(%inter : memref<2x3x1x8x8xf8E4M3FN>)
      intermediate_state_scale(%isc : memref<2x3x1x8xf32, strided<[48, 8, 8, 1]>>)
      o(%o : memref<2x3x1x8xf32>) {state_layout = #gdn.layout<vk>}
  return
}

// -----

// Stochastic rounding with nothing stored in e4m3: the fp8 state only read.
func.func @stochastic_rounding_nothing_quantized(%q: memref<2x1x1x8xf32>, %s: memref<2x1x8x8xf8E4M3FN>,
                                                 %sc: memref<2x1x8xf32>, %o: memref<2x1x1x8xf32>) {
  // expected-error @+1 {{attribute 'stochastic_rounding' needs an f8E4M3FN 'final_state' (with 'state_scale'), f8E4M3FN 'intermediate_states' or f8E4M3FN 'state_checkpoints': nothing else is rounded to e4m3}}
  gdn.recurrent q(%q : memref<2x1x1x8xf32>) k(%q : memref<2x1x1x8xf32>) v(%q : memref<2x1x1x8xf32>)
      initial_state(%s : memref<2x1x8x8xf8E4M3FN>) state_scale(%sc : memref<2x1x8xf32>)
      o(%o : memref<2x1x1x8xf32>) {stochastic_rounding}
  return
}

// -----

// Stochastic rounding of an f32 state.
func.func @stochastic_rounding_f32(%q: memref<2x1x1x8xf32>, %s: memref<2x1x8x8xf32>, %o: memref<2x1x1x8xf32>) {
  // expected-error @+1 {{attribute 'stochastic_rounding' needs an f8E4M3FN 'final_state'}}
  gdn.recurrent q(%q : memref<2x1x1x8xf32>) k(%q : memref<2x1x1x8xf32>) v(%q : memref<2x1x1x8xf32>)
      initial_state(%s : memref<2x1x8x8xf32>) final_state(%s : memref<2x1x8x8xf32>)
      o(%o : memref<2x1x1x8xf32>) {stochastic_rounding}
  return
}

// -----

// Stochastic rounding of an EAGLE tree's fp8 per-token states, which it reads back.
func.func @stochastic_rounding_tree(%q: memref<1x2x1x8xf32>, %s: memref<1x1x8x8xf32>,
                                    %inter: memref<1x2x1x8x8xf8E4M3FN>, %isc: memref<1x2x1x8xf32>,
                                    %parents: memref<1x2xi32>, %o: memref<1x2x1x8xf32>) {
  // expected-error @+1 {{attribute 'stochastic_rounding' is not supported for f8E4M3FN 'intermediate_states' with 'retrieve_parent_token' (an EAGLE tree reads its rounded parents back)}}
  gdn.recurrent q(%q : memref<1x2x1x8xf32>) k(%q : memref<1x2x1x8xf32>) v(%q : memref<1x2x1x8xf32>)
      retrieve_parent_token(%parents : memref<1x2xi32>) initial_state(%s : memref<1x1x8x8xf32>)
      intermediate_states(%inter : memref<1x2x1x8x8xf8E4M3FN>)
      intermediate_state_scale(%isc : memref<1x2x1x8xf32>) o(%o : memref<1x2x1x8xf32>) {stochastic_rounding}
  return
}
