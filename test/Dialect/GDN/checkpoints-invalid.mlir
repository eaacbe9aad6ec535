// RUN: gdn-opt %s -split-input-file -verify-diagnostics

// One case per diagnostic of the checkpoint operands of gdn.recurrent
// (state_checkpoints, checkpoint_offsets, checkpoint_interval).

func.func @missing_interval(%q: memref<1x4x1x32xf32>, %k: memref<1x4x1x32xf32>, %v: memref<1x4x2x8xf32>,
                            %off: memref<2xi32>, %ck: memref<2x2x32x8xf32>, %o: memref<1x4x2x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op checkpoints go together: operands 'state_checkpoints', 'checkpoint_offsets' and attribute 'checkpoint_interval'}}
  gdn.recurrent q(%q : memref<1x4x1x32xf32>) k(%k : memref<1x4x1x32xf32>) v(%v : memref<1x4x2x8xf32>)
      checkpoint_offsets(%off : memref<2xi32>) state_checkpoints(%ck : memref<2x2x32x8xf32>) o(%o : memref<1x4x2x8xf32>)
  return
}

// -----

func.func @missing_offsets(%q: memref<1x4x1x32xf32>, %k: memref<1x4x1x32xf32>, %v: memref<1x4x2x8xf32>,
                           %ck: memref<2x2x32x8xf32>, %o: memref<1x4x2x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op checkpoints go together}}
  gdn.recurrent q(%q : memref<1x4x1x32xf32>) k(%k : memref<1x4x1x32xf32>) v(%v : memref<1x4x2x8xf32>)
      state_checkpoints(%ck : memref<2x2x32x8xf32>) o(%o : memref<1x4x2x8xf32>) {checkpoint_interval = 2 : i64}
  return
}

// -----

func.func @zero_interval(%q: memref<1x4x1x32xf32>, %k: memref<1x4x1x32xf32>, %v: memref<1x4x2x8xf32>,
                         %off: memref<2xi32>, %ck: memref<2x2x32x8xf32>, %o: memref<1x4x2x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op attribute 'checkpoint_interval' must be at least 1 token, got 0}}
  gdn.recurrent q(%q : memref<1x4x1x32xf32>) k(%k : memref<1x4x1x32xf32>) v(%v : memref<1x4x2x8xf32>)
      checkpoint_offsets(%off : memref<2xi32>) state_checkpoints(%ck : memref<2x2x32x8xf32>) o(%o : memref<1x4x2x8xf32>)
      {checkpoint_interval = 0 : i64}
  return
}

// -----

func.func @offsets_shape(%q: memref<2x4x1x32xf32>, %k: memref<2x4x1x32xf32>, %v: memref<2x4x2x8xf32>,
                         %off: memref<2xi32>, %ck: memref<2x2x32x8xf32>, %o: memref<2x4x2x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'checkpoint_offsets' expects shape [3] (N + 1), got [2]}}
  gdn.recurrent q(%q : memref<2x4x1x32xf32>) k(%k : memref<2x4x1x32xf32>) v(%v : memref<2x4x2x8xf32>)
      checkpoint_offsets(%off : memref<2xi32>) state_checkpoints(%ck : memref<2x2x32x8xf32>) o(%o : memref<2x4x2x8xf32>)
      {checkpoint_interval = 2 : i64}
  return
}

// -----

func.func @offsets_dtype(%q: memref<1x4x1x32xf32>, %k: memref<1x4x1x32xf32>, %v: memref<1x4x2x8xf32>,
                         %off: memref<2xf32>, %ck: memref<2x2x32x8xf32>, %o: memref<1x4x2x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'checkpoint_offsets' expects element type i32 or i64, got 'f32'}}
  gdn.recurrent q(%q : memref<1x4x1x32xf32>) k(%k : memref<1x4x1x32xf32>) v(%v : memref<1x4x2x8xf32>)
      checkpoint_offsets(%off : memref<2xf32>) state_checkpoints(%ck : memref<2x2x32x8xf32>) o(%o : memref<1x4x2x8xf32>)
      {checkpoint_interval = 2 : i64}
  return
}

// -----

func.func @buffer_layout(%q: memref<1x4x1x32xf32>, %k: memref<1x4x1x32xf32>, %v: memref<1x4x2x8xf32>,
                         %off: memref<2xi32>, %ck: memref<2x2x8x32xf32>, %o: memref<1x4x2x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'state_checkpoints' expects shape [2, 2, 32, 8] (C, HV, K, V for layout kv), got [2, 2, 8, 32]}}
  gdn.recurrent q(%q : memref<1x4x1x32xf32>) k(%k : memref<1x4x1x32xf32>) v(%v : memref<1x4x2x8xf32>)
      checkpoint_offsets(%off : memref<2xi32>) state_checkpoints(%ck : memref<2x2x8x32xf32>) o(%o : memref<1x4x2x8xf32>)
      {checkpoint_interval = 2 : i64}
  return
}

// -----

func.func @buffer_rank(%q: memref<1x4x1x32xf32>, %k: memref<1x4x1x32xf32>, %v: memref<1x4x2x8xf32>,
                       %off: memref<2xi32>, %ck: memref<2x32x8xf32>, %o: memref<1x4x2x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'state_checkpoints' expects [C, HV, K, V for layout kv] with C >= 1, got [2, 32, 8]}}
  gdn.recurrent q(%q : memref<1x4x1x32xf32>) k(%k : memref<1x4x1x32xf32>) v(%v : memref<1x4x2x8xf32>)
      checkpoint_offsets(%off : memref<2xi32>) state_checkpoints(%ck : memref<2x32x8xf32>) o(%o : memref<1x4x2x8xf32>)
      {checkpoint_interval = 2 : i64}
  return
}

// -----

func.func @buffer_dtype(%q: memref<1x4x1x32xf32>, %k: memref<1x4x1x32xf32>, %v: memref<1x4x2x8xf32>,
                        %off: memref<2xi32>, %ck: memref<2x2x32x8xi8>, %o: memref<1x4x2x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'state_checkpoints' expects element type f32, bf16 or f16, got 'i8'}}
  gdn.recurrent q(%q : memref<1x4x1x32xf32>) k(%k : memref<1x4x1x32xf32>) v(%v : memref<1x4x2x8xf32>)
      checkpoint_offsets(%off : memref<2xi32>) state_checkpoints(%ck : memref<2x2x32x8xi8>) o(%o : memref<1x4x2x8xf32>)
      {checkpoint_interval = 2 : i64}
  return
}

// -----

func.func @tensor_form(%q: tensor<1x4x1x32xf32>, %k: tensor<1x4x1x32xf32>, %v: tensor<1x4x2x8xf32>,
                       %off: tensor<2xi32>, %ck: tensor<2x2x32x8xf32>, %o: tensor<1x4x2x8xf32>) -> tensor<1x4x2x8xf32> {
  // expected-error @+1 {{'gdn.recurrent' op operand 'state_checkpoints' is supported in the memref form only}}
  %r = gdn.recurrent q(%q : tensor<1x4x1x32xf32>) k(%k : tensor<1x4x1x32xf32>) v(%v : tensor<1x4x2x8xf32>)
      checkpoint_offsets(%off : tensor<2xi32>) state_checkpoints(%ck : tensor<2x2x32x8xf32>) o(%o : tensor<1x4x2x8xf32>)
      {checkpoint_interval = 2 : i64} -> tensor<1x4x2x8xf32>
  return %r : tensor<1x4x2x8xf32>
}

// -----

// f8E4M3FN checkpoints come with their row scales.
func.func @e4m3_without_scales(%q: memref<1x4x1x32xf32>, %k: memref<1x4x1x32xf32>, %v: memref<1x4x2x8xf32>,
                               %off: memref<2xi32>, %ck: memref<2x2x32x8xf8E4M3FN>, %o: memref<1x4x2x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op f8E4M3FN 'state_checkpoints' need their scales, operand 'checkpoint_scale' [C, HV, V] f32}}
  gdn.recurrent q(%q : memref<1x4x1x32xf32>) k(%k : memref<1x4x1x32xf32>) v(%v : memref<1x4x2x8xf32>)
      checkpoint_offsets(%off : memref<2xi32>) state_checkpoints(%ck : memref<2x2x32x8xf8E4M3FN>) o(%o : memref<1x4x2x8xf32>)
      {checkpoint_interval = 2 : i64}
  return
}

// -----

func.func @scales_of_a_float_buffer(%q: memref<1x4x1x32xf32>, %k: memref<1x4x1x32xf32>, %v: memref<1x4x2x8xf32>,
                                    %off: memref<2xi32>, %ck: memref<2x2x32x8xf32>, %cks: memref<2x2x8xf32>,
                                    %o: memref<1x4x2x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'state_checkpoints' expects element type f8E4M3FN (with 'checkpoint_scale'), got 'f32'}}
  gdn.recurrent q(%q : memref<1x4x1x32xf32>) k(%k : memref<1x4x1x32xf32>) v(%v : memref<1x4x2x8xf32>)
      checkpoint_offsets(%off : memref<2xi32>) state_checkpoints(%ck : memref<2x2x32x8xf32>)
      checkpoint_scale(%cks : memref<2x2x8xf32>) o(%o : memref<1x4x2x8xf32>)
      {checkpoint_interval = 2 : i64}
  return
}

// -----

func.func @scales_shape(%q: memref<1x4x1x32xf32>, %k: memref<1x4x1x32xf32>, %v: memref<1x4x2x8xf32>,
                        %off: memref<2xi32>, %ck: memref<2x2x32x8xf8E4M3FN>, %cks: memref<2x2x32xf32>,
                        %o: memref<1x4x2x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'checkpoint_scale' expects shape [2, 2, 8] (C, HV, V), got [2, 2, 32]}}
  gdn.recurrent q(%q : memref<1x4x1x32xf32>) k(%k : memref<1x4x1x32xf32>) v(%v : memref<1x4x2x8xf32>)
      checkpoint_offsets(%off : memref<2xi32>) state_checkpoints(%ck : memref<2x2x32x8xf8E4M3FN>)
      checkpoint_scale(%cks : memref<2x2x32xf32>) o(%o : memref<1x4x2x8xf32>)
      {checkpoint_interval = 2 : i64}
  return
}

// -----

func.func @scales_without_checkpoints(%q: memref<1x4x1x32xf32>, %k: memref<1x4x1x32xf32>, %v: memref<1x4x2x8xf32>,
                                      %cks: memref<2x2x8xf32>, %o: memref<1x4x2x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'checkpoint_scale' needs 'state_checkpoints' to scale}}
  gdn.recurrent q(%q : memref<1x4x1x32xf32>) k(%k : memref<1x4x1x32xf32>) v(%v : memref<1x4x2x8xf32>)
      checkpoint_scale(%cks : memref<2x2x8xf32>) o(%o : memref<1x4x2x8xf32>)
  return
}
