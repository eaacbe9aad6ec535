// RUN: gdn-opt %s -split-input-file -verify-diagnostics

// One case per diagnostic of the gdn.commit verifier.

// The generic form with a required operand's segment emptied (no crash).
func.func @segment_state(%buf: memref<2x3x1x8x4xf32>, %acc: memref<2xi32>, %s: memref<2x1x8x4xf32>) {
  // expected-error @+1 {{'gdn.commit' op needs exactly one 'state' operand (operandSegmentSizes)}}
  "gdn.commit"(%buf, %acc, %s) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>}> : (memref<2x3x1x8x4xf32>, memref<2xi32>, memref<2x1x8x4xf32>) -> ()
  return
}

// -----

func.func @segment_accepted(%buf: memref<2x3x1x8x4xf32>, %acc: memref<2xi32>, %s: memref<2x1x8x4xf32>) {
  // expected-error @+1 {{'gdn.commit' op needs exactly one 'accepted' operand (operandSegmentSizes)}}
  "gdn.commit"(%buf, %acc, %s) <{operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 2>}> : (memref<2x3x1x8x4xf32>, memref<2xi32>, memref<2x1x8x4xf32>) -> ()
  return
}

// -----

func.func @mixed_form(%buf: memref<2x3x1x8x4xf32>, %acc: memref<2xi32>, %s: tensor<2x1x8x4xf32>) {
  // expected-error @+1 {{'gdn.commit' op operands must be all tensors (tensor form) or all memrefs (memref form); 'intermediate_states' is a memref but 'state' is a tensor}}
  gdn.commit intermediate_states(%buf : memref<2x3x1x8x4xf32>) accepted(%acc : memref<2xi32>) state(%s : tensor<2x1x8x4xf32>)
  return
}

// -----

func.func @buffer_dynamic(%buf: memref<?x3x1x8x4xf32>, %acc: memref<2xi32>, %s: memref<2x1x8x4xf32>) {
  // expected-error @+1 {{'gdn.commit' op operand 'intermediate_states' must have a static shape, got [?, 3, 1, 8, 4]}}
  gdn.commit intermediate_states(%buf : memref<?x3x1x8x4xf32>) accepted(%acc : memref<2xi32>) state(%s : memref<2x1x8x4xf32>)
  return
}

// -----

func.func @buffer_rank(%buf: memref<2x3x8x4xf32>, %acc: memref<2xi32>, %s: memref<2x1x8x4xf32>) {
  // expected-error @+1 {{'gdn.commit' op operand 'intermediate_states' expects rank 5 [R, T, HV, V, K] for layout vk, got rank 4}}
  gdn.commit intermediate_states(%buf : memref<2x3x8x4xf32>) accepted(%acc : memref<2xi32>) state(%s : memref<2x1x8x4xf32>) {state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @buffer_empty(%buf: memref<2x0x1x8x4xf32>, %acc: memref<2xi32>, %s: memref<2x1x8x4xf32>) {
  // expected-error @+1 {{'gdn.commit' op operand 'intermediate_states' expects non-empty dimensions, got [2, 0, 1, 8, 4]}}
  gdn.commit intermediate_states(%buf : memref<2x0x1x8x4xf32>) accepted(%acc : memref<2xi32>) state(%s : memref<2x1x8x4xf32>)
  return
}

// -----

func.func @accepted_dynamic(%buf: memref<2x3x1x8x4xf32>, %acc: memref<?xi32>, %s: memref<2x1x8x4xf32>) {
  // expected-error @+1 {{'gdn.commit' op operand 'accepted' must have a static shape, got [?]}}
  gdn.commit intermediate_states(%buf : memref<2x3x1x8x4xf32>) accepted(%acc : memref<?xi32>) state(%s : memref<2x1x8x4xf32>)
  return
}

// -----

func.func @accepted_rank(%buf: memref<2x3x1x8x4xf32>, %acc: memref<2x1xi32>, %s: memref<2x1x8x4xf32>) {
  // expected-error @+1 {{'gdn.commit' op operand 'accepted' expects shape [N] with N >= 1, got [2, 1]}}
  gdn.commit intermediate_states(%buf : memref<2x3x1x8x4xf32>) accepted(%acc : memref<2x1xi32>) state(%s : memref<2x1x8x4xf32>)
  return
}

// -----

func.func @accepted_empty(%buf: memref<2x3x1x8x4xf32>, %acc: memref<0xi32>, %s: memref<2x1x8x4xf32>) {
  // expected-error @+1 {{'gdn.commit' op operand 'accepted' expects shape [N] with N >= 1, got [0]}}
  gdn.commit intermediate_states(%buf : memref<2x3x1x8x4xf32>) accepted(%acc : memref<0xi32>) state(%s : memref<2x1x8x4xf32>)
  return
}

// -----

func.func @accepted_dtype(%buf: memref<2x3x1x8x4xf32>, %acc: memref<2xf32>, %s: memref<2x1x8x4xf32>) {
  // expected-error @+1 {{'gdn.commit' op operand 'accepted' expects element type i32 or i64, got 'f32'}}
  gdn.commit intermediate_states(%buf : memref<2x3x1x8x4xf32>) accepted(%acc : memref<2xf32>) state(%s : memref<2x1x8x4xf32>)
  return
}

// -----

func.func @accepted_strided(%buf: memref<2x3x1x8x4xf32>, %acc: memref<2xi32, strided<[2]>>, %s: memref<2x1x8x4xf32>) {
  // expected-error @+1 {{'gdn.commit' op operand 'accepted' has an unsupported layout strided<[2]>: stride 2 of dimension 0 must be 1 (this operand must be dense)}}
  gdn.commit intermediate_states(%buf : memref<2x3x1x8x4xf32>) accepted(%acc : memref<2xi32, strided<[2]>>) state(%s : memref<2x1x8x4xf32>)
  return
}

// -----

func.func @state_indices_shape(%buf: memref<2x3x1x8x4xf32>, %acc: memref<2xi32>, %idx: memref<3xi32>, %s: memref<4x1x8x4xf32>) {
  // expected-error @+1 {{'gdn.commit' op operand 'state_indices' expects shape [2] (N), got [3]}}
  gdn.commit intermediate_states(%buf : memref<2x3x1x8x4xf32>) accepted(%acc : memref<2xi32>) state_indices(%idx : memref<3xi32>) state(%s : memref<4x1x8x4xf32>)
  return
}

// -----

func.func @state_indices_dtype(%buf: memref<2x3x1x8x4xf32>, %acc: memref<2xi32>, %idx: memref<2xi16>, %s: memref<4x1x8x4xf32>) {
  // expected-error @+1 {{'gdn.commit' op operand 'state_indices' expects element type i32 or i64, got 'i16'}}
  gdn.commit intermediate_states(%buf : memref<2x3x1x8x4xf32>) accepted(%acc : memref<2xi32>) state_indices(%idx : memref<2xi16>) state(%s : memref<4x1x8x4xf32>)
  return
}

// -----

func.func @intermediate_state_indices_shape(%buf: memref<5x3x1x8x4xf32>, %acc: memref<2xi32>, %rows: memref<1xi64>, %s: memref<2x1x8x4xf32>) {
  // expected-error @+1 {{'gdn.commit' op operand 'intermediate_state_indices' expects shape [2] (N), got [1]}}
  gdn.commit intermediate_states(%buf : memref<5x3x1x8x4xf32>) accepted(%acc : memref<2xi32>) intermediate_state_indices(%rows : memref<1xi64>) state(%s : memref<2x1x8x4xf32>)
  return
}

// -----

// Without intermediate_state_indices the buffer has one row per row of accepted.
func.func @batch_rows(%buf: memref<3x3x1x8x4xf32>, %acc: memref<2xi32>, %s: memref<2x1x8x4xf32>) {
  // expected-error @+1 {{'gdn.commit' op operand 'intermediate_states' expects shape [2, 3, 1, 8, 4] (N, T, HV, K, V for layout kv), got [3, 3, 1, 8, 4]}}
  gdn.commit intermediate_states(%buf : memref<3x3x1x8x4xf32>) accepted(%acc : memref<2xi32>) state(%s : memref<2x1x8x4xf32>)
  return
}

// -----

func.func @buffer_dtype(%buf: memref<2x3x1x8x4xf64>, %acc: memref<2xi32>, %s: memref<2x1x8x4xf32>) {
  // expected-error @+1 {{'gdn.commit' op operand 'intermediate_states' expects element type f32, bf16 or f16, got 'f64'}}
  gdn.commit intermediate_states(%buf : memref<2x3x1x8x4xf64>) accepted(%acc : memref<2xi32>) state(%s : memref<2x1x8x4xf32>)
  return
}

// -----

func.func @buffer_memory_space(%buf: memref<2x3x1x8x4xf32, 3>, %acc: memref<2xi32>, %s: memref<2x1x8x4xf32>) {
  // expected-error @+1 {{'gdn.commit' op operand 'intermediate_states' must be in the default memory space, got 3}}
  gdn.commit intermediate_states(%buf : memref<2x3x1x8x4xf32, 3>) accepted(%acc : memref<2xi32>) state(%s : memref<2x1x8x4xf32>)
  return
}

// -----

func.func @pool_rank(%buf: memref<2x3x1x8x4xf32>, %acc: memref<2xi32>, %idx: memref<2xi32>, %s: memref<8x4xf32>) {
  // expected-error @+1 {{'gdn.commit' op operand 'state' expects a pool [slots, HV, V, K] with slots >= 1, got [8, 4]}}
  gdn.commit intermediate_states(%buf : memref<2x3x1x8x4xf32>) accepted(%acc : memref<2xi32>) state_indices(%idx : memref<2xi32>) state(%s : memref<8x4xf32>) {state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @pool_heads(%buf: memref<2x3x1x8x4xf32>, %acc: memref<2xi32>, %idx: memref<2xi32>, %s: memref<6x2x8x4xf32>) {
  // expected-error @+1 {{'gdn.commit' op operand 'state' expects shape [6, 1, 8, 4] (slots, HV, K, V for layout kv), got [6, 2, 8, 4]}}
  gdn.commit intermediate_states(%buf : memref<2x3x1x8x4xf32>) accepted(%acc : memref<2xi32>) state_indices(%idx : memref<2xi32>) state(%s : memref<6x2x8x4xf32>)
  return
}

// -----

// Without state_indices the state has one row per row of accepted.
func.func @state_rows(%buf: memref<2x3x1x8x4xf32>, %acc: memref<2xi32>, %s: memref<3x1x8x4xf32>) {
  // expected-error @+1 {{'gdn.commit' op operand 'state' expects shape [2, 1, 8, 4] (N, HV, K, V for layout kv), got [3, 1, 8, 4]}}
  gdn.commit intermediate_states(%buf : memref<2x3x1x8x4xf32>) accepted(%acc : memref<2xi32>) state(%s : memref<3x1x8x4xf32>)
  return
}

// -----

// The pool and the buffer share one layout.
func.func @state_transposed(%buf: memref<2x3x1x8x4xf32>, %acc: memref<2xi32>, %s: memref<2x1x4x8xf32>) {
  // expected-error @+1 {{'gdn.commit' op operand 'state' expects shape [2, 1, 8, 4] (N, HV, K, V for layout kv), got [2, 1, 4, 8]}}
  gdn.commit intermediate_states(%buf : memref<2x3x1x8x4xf32>) accepted(%acc : memref<2xi32>) state(%s : memref<2x1x4x8xf32>)
  return
}

// -----

func.func @state_dtype(%buf: memref<2x3x1x8x4xf32>, %acc: memref<2xi32>, %s: memref<2x1x8x4xi32>) {
  // expected-error @+1 {{'gdn.commit' op operand 'state' expects element type f32, bf16 or f16, got 'i32'}}
  gdn.commit intermediate_states(%buf : memref<2x3x1x8x4xf32>) accepted(%acc : memref<2xi32>) state(%s : memref<2x1x8x4xi32>)
  return
}

// -----

func.func @state_dynamic(%buf: memref<2x3x1x8x4xf32>, %acc: memref<2xi32>, %s: memref<?x1x8x4xf32>) {
  // expected-error @+1 {{'gdn.commit' op operand 'state' must have a static shape, got [?, 1, 8, 4]}}
  gdn.commit intermediate_states(%buf : memref<2x3x1x8x4xf32>) accepted(%acc : memref<2xi32>) state(%s : memref<?x1x8x4xf32>)
  return
}

// -----

func.func @memref_result(%buf: memref<2x3x1x8x4xf32>, %acc: memref<2xi32>, %s: memref<2x1x8x4xf32>) {
  // expected-error @+1 {{'gdn.commit' op has no results in memref form, got 1}}
  %r = "gdn.commit"(%buf, %acc, %s) <{operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 1>}> : (memref<2x3x1x8x4xf32>, memref<2xi32>, memref<2x1x8x4xf32>) -> tensor<2x1x8x4xf32>
  return
}

// -----

func.func @tensor_no_result(%buf: tensor<2x3x1x8x4xf32>, %acc: tensor<2xi32>, %s: tensor<2x1x8x4xf32>) {
  // expected-error @+1 {{'gdn.commit' op expects 1 result in tensor form (the new 'state'), got 0}}
  gdn.commit intermediate_states(%buf : tensor<2x3x1x8x4xf32>) accepted(%acc : tensor<2xi32>) state(%s : tensor<2x1x8x4xf32>)
  return
}

// -----

func.func @tensor_result_type(%buf: tensor<2x3x1x8x4xf32>, %acc: tensor<2xi32>, %s: tensor<2x1x8x4xf32>) {
  // expected-error @+1 {{'gdn.commit' op result #0 expects type 'tensor<2x1x8x4xf32>' (the type of 'state'), got 'tensor<2x1x8x4xbf16>'}}
  %r = gdn.commit intermediate_states(%buf : tensor<2x3x1x8x4xf32>) accepted(%acc : tensor<2xi32>) state(%s : tensor<2x1x8x4xf32>) -> tensor<2x1x8x4xbf16>
  return
}

// -----

func.func @tensor_encoding(%buf: tensor<2x3x1x8x4xf32>, %acc: tensor<2xi32>, %s: tensor<2x1x8x4xf32, "enc">) {
  // expected-error @+1 {{'gdn.commit' op operand 'state' must be a tensor without encoding, got "enc"}}
  %r = gdn.commit intermediate_states(%buf : tensor<2x3x1x8x4xf32>) accepted(%acc : tensor<2xi32>) state(%s : tensor<2x1x8x4xf32, "enc">) -> tensor<2x1x8x4xf32, "enc">
  return
}

// -----

func.func @fp8_without_scales(%buf: memref<2x3x1x8x4xf32>, %acc: memref<2xi32>, %s: memref<2x1x8x4xf8E4M3FN>) {
  // expected-error @+1 {{'gdn.commit' op an f8E4M3FN pool needs its scales, operand 'state_scale' [N, HV, V] f32}}
  gdn.commit intermediate_states(%buf : memref<2x3x1x8x4xf32>) accepted(%acc : memref<2xi32>) state(%s : memref<2x1x8x4xf8E4M3FN>) {state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @scales_of_a_bf16_pool(%buf: memref<2x3x1x8x4xf32>, %acc: memref<2xi32>, %sc: memref<2x1x8xf32>, %s: memref<2x1x8x4xbf16>) {
  // expected-error @+1 {{'gdn.commit' op operand 'state' expects element type f8E4M3FN (with 'state_scale'), got 'bf16'}}
  gdn.commit intermediate_states(%buf : memref<2x3x1x8x4xf32>) accepted(%acc : memref<2xi32>) state_scale(%sc : memref<2x1x8xf32>) state(%s : memref<2x1x8x4xbf16>) {state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @scales_shape(%buf: memref<2x3x1x8x4xf32>, %acc: memref<2xi32>, %sc: memref<2x1x4xf32>, %s: memref<2x1x8x4xf8E4M3FN>) {
  // expected-error @+1 {{'gdn.commit' op operand 'state_scale' expects shape [2, 1, 8] (N, HV, V), got [2, 1, 4]}}
  gdn.commit intermediate_states(%buf : memref<2x3x1x8x4xf32>) accepted(%acc : memref<2xi32>) state_scale(%sc : memref<2x1x4xf32>) state(%s : memref<2x1x8x4xf8E4M3FN>) {state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @fp8_buffer(%buf: memref<2x3x1x8x4xf8E4M3FN>, %acc: memref<2xi32>, %sc: memref<2x1x8xf32>, %s: memref<2x1x8x4xf8E4M3FN>) {
  // expected-error @+1 {{'gdn.commit' op f8E4M3FN 'intermediate_states' need their scales, operand 'intermediate_state_scale' [R, steps, HV, V] f32}}
  gdn.commit intermediate_states(%buf : memref<2x3x1x8x4xf8E4M3FN>) accepted(%acc : memref<2xi32>) state_scale(%sc : memref<2x1x8xf32>) state(%s : memref<2x1x8x4xf8E4M3FN>) {state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @tensor_scales(%buf: tensor<2x3x1x8x4xf32>, %acc: tensor<2xi32>, %sc: tensor<2x1x8xf32>, %s: tensor<2x1x8x4xf8E4M3FN>) {
  // expected-error @+1 {{'gdn.commit' op operand 'state_scale' is supported in the memref form only}}
  %r = gdn.commit intermediate_states(%buf : tensor<2x3x1x8x4xf32>) accepted(%acc : tensor<2xi32>) state_scale(%sc : tensor<2x1x8xf32>) state(%s : tensor<2x1x8x4xf8E4M3FN>) {state_layout = #gdn.layout<vk>} -> tensor<2x1x8x4xf8E4M3FN>
  return
}

// -----

func.func @buffer_scale_shape(%buf: memref<2x3x1x8x4xf8E4M3FN>, %acc: memref<2xi32>, %isc: memref<2x3x1x4xf32>, %s: memref<2x1x8x4xf32>) {
  // expected-error @+1 {{'gdn.commit' op operand 'intermediate_state_scale' expects shape [2, 3, 1, 8] (R, steps, HV, V), got [2, 3, 1, 4]}}
  gdn.commit intermediate_states(%buf : memref<2x3x1x8x4xf8E4M3FN>) accepted(%acc : memref<2xi32>) intermediate_state_scale(%isc : memref<2x3x1x4xf32>) state(%s : memref<2x1x8x4xf32>) {state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @buffer_scale_of_f32(%buf: memref<2x3x1x8x4xf32>, %acc: memref<2xi32>, %isc: memref<2x3x1x8xf32>, %s: memref<2x1x8x4xf32>) {
  // expected-error @+1 {{'gdn.commit' op operand 'intermediate_states' expects element type f8E4M3FN (with 'intermediate_state_scale'), got 'f32'}}
  gdn.commit intermediate_states(%buf : memref<2x3x1x8x4xf32>) accepted(%acc : memref<2xi32>) intermediate_state_scale(%isc : memref<2x3x1x8xf32>) state(%s : memref<2x1x8x4xf32>) {state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @buffer_scale_tensor(%buf: tensor<2x3x1x8x4xf8E4M3FN>, %acc: tensor<2xi32>, %isc: tensor<2x3x1x8xf32>, %s: tensor<2x1x8x4xf32>) {
  // expected-error @+1 {{'gdn.commit' op operand 'intermediate_state_scale' is supported in the memref form only}}
  %r = gdn.commit intermediate_states(%buf : tensor<2x3x1x8x4xf8E4M3FN>) accepted(%acc : tensor<2xi32>) intermediate_state_scale(%isc : tensor<2x3x1x8xf32>) state(%s : tensor<2x1x8x4xf32>) {state_layout = #gdn.layout<vk>} -> tensor<2x1x8x4xf32>
  return
}

// -----

// An index element type with a strided layout (the layout check once
// asked for its bit width and crashed).
func.func @accepted_strided_index(%i: memref<1x1x1x8x8xf32>, %acc: memref<1xindex, strided<[1], offset: 4>>, %s: memref<1x1x8x8xf32>) {
  // expected-error @+1 {{'gdn.commit' op operand 'accepted' expects element type i32 or i64, got 'index'}}
  gdn.commit intermediate_states(%i : memref<1x1x1x8x8xf32>) accepted(%acc : memref<1xindex, strided<[1], offset: 4>>) state(%s : memref<1x1x8x8xf32>)
  return
}
