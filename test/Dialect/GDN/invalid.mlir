// RUN: gdn-opt %s -split-input-file -verify-diagnostics

// One case per diagnostic of the gdn.recurrent verifier.

func.func @q_rank(%q: memref<1x1x32xf32>, %k: memref<1x1x32xf32>, %v: memref<1x1x2x8xf32>, %o: memref<1x1x2x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'q' expects rank 4 [N, T, H, K], got rank 3}}
  gdn.recurrent q(%q : memref<1x1x32xf32>) k(%k : memref<1x1x32xf32>) v(%v : memref<1x1x2x8xf32>) o(%o : memref<1x1x2x8xf32>) 
  return
}

// -----

func.func @v_rank(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x2x8xf32>, %o: memref<1x1x2x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'v' expects rank 4 [N, T, HV, V], got rank 3}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x2x8xf32>) o(%o : memref<1x1x2x8xf32>) 
  return
}

// -----

func.func @dynamic(%q: memref<?x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x2x8xf32>, %o: memref<1x1x2x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'q' must have a static shape, got [?, 1, 1, 32]}}
  gdn.recurrent q(%q : memref<?x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x2x8xf32>) o(%o : memref<1x1x2x8xf32>) 
  return
}

// -----

func.func @q_dtype(%q: memref<1x1x1x32xi32>, %k: memref<1x1x1x32xi32>, %v: memref<1x1x2x8xi32>, %o: memref<1x1x2x8xi32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'q' expects element type bf16, f16 or f32, got 'i32'}}
  gdn.recurrent q(%q : memref<1x1x1x32xi32>) k(%k : memref<1x1x1x32xi32>) v(%v : memref<1x1x2x8xi32>) o(%o : memref<1x1x2x8xi32>) 
  return
}

// -----

func.func @q_empty(%q: memref<1x0x1x32xf32>, %k: memref<1x0x1x32xf32>, %v: memref<1x0x2x8xf32>, %o: memref<1x0x2x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'q' expects non-empty dimensions, got [1, 0, 1, 32]}}
  gdn.recurrent q(%q : memref<1x0x1x32xf32>) k(%k : memref<1x0x1x32xf32>) v(%v : memref<1x0x2x8xf32>) o(%o : memref<1x0x2x8xf32>) 
  return
}

// -----

func.func @k_shape(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x64xf32>, %v: memref<1x1x2x8xf32>, %o: memref<1x1x2x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'k' expects shape [1, 1, 1, 32] (N, T, H, K), got [1, 1, 1, 64]}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x64xf32>) v(%v : memref<1x1x2x8xf32>) o(%o : memref<1x1x2x8xf32>) 
  return
}

// -----

func.func @k_dtype(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xbf16>, %v: memref<1x1x2x8xf32>, %o: memref<1x1x2x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'k' expects element type f32 (the dtype of 'q'), got 'bf16'}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xbf16>) v(%v : memref<1x1x2x8xf32>) o(%o : memref<1x1x2x8xf32>) 
  return
}

// -----

func.func @v_tokens(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x2x2x8xf32>, %o: memref<1x1x2x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'v' expects shape [1, 1, 2, 8] (N, T, HV, V), got [1, 2, 2, 8]}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x2x2x8xf32>) o(%o : memref<1x1x2x8xf32>) 
  return
}

// -----

func.func @v_empty(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x2x0xf32>, %o: memref<1x1x2x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'v' expects non-empty dimensions, got [1, 1, 2, 0]}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x2x0xf32>) o(%o : memref<1x1x2x8xf32>) 
  return
}

// -----

func.func @gqa(%q: memref<1x1x2x32xf32>, %k: memref<1x1x2x32xf32>, %v: memref<1x1x3x8xf32>, %o: memref<1x1x3x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op the number of value heads HV = 3 must be a multiple of the number of q/k heads H = 2}}
  gdn.recurrent q(%q : memref<1x1x2x32xf32>) k(%k : memref<1x1x2x32xf32>) v(%v : memref<1x1x3x8xf32>) o(%o : memref<1x1x3x8xf32>) 
  return
}

// -----

func.func @o_shape(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x2x8xf32>, %o: memref<1x1x2x4xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'o' expects shape [1, 1, 2, 8] (N, T, HV, V), got [1, 1, 2, 4]}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x2x8xf32>) o(%o : memref<1x1x2x4xf32>) 
  return
}

// -----

func.func @o_dtype(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x2x8xf32>, %o: memref<1x1x2x8xbf16>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'o' expects element type the dtype of 'v', got 'bf16'}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x2x8xf32>) o(%o : memref<1x1x2x8xbf16>) 
  return
}

// -----

func.func @g_and_a(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x2x8xf32>, %o: memref<1x1x2x8xf32>, %g: memref<1x1x2xf32>, %a: memref<1x1x2xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'g' (log-space decay) excludes the fused gating operands 'a', 'A_log' and 'dt_bias'}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x2x8xf32>) g(%g : memref<1x1x2xf32>) a(%a : memref<1x1x2xf32>) o(%o : memref<1x1x2x8xf32>) 
  return
}

// -----

func.func @g_shape(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x2x8xf32>, %o: memref<1x1x2x8xf32>, %g: memref<1x1x1xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'g' expects shape [1, 1, 2] (N, T, HV), got [1, 1, 1]}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x2x8xf32>) g(%g : memref<1x1x1xf32>) o(%o : memref<1x1x2x8xf32>) 
  return
}

// -----

func.func @gating_missing(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x2x8xf32>, %o: memref<1x1x2x8xf32>, %a: memref<1x1x2xf32>, %dt: memref<2xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op fused gating needs all of 'a' [N, T, HV] (or [N, T, HV, K]), 'A_log' [HV] and 'dt_bias' [HV] (or [HV * K]); missing 'A_log'}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x2x8xf32>) a(%a : memref<1x1x2xf32>) dt_bias(%dt : memref<2xf32>) o(%o : memref<1x1x2x8xf32>) 
  return
}

// -----

func.func @a_shape(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x2x8xf32>, %o: memref<1x1x2x8xf32>, %a: memref<1x1x3xf32>, %al: memref<2xf32>, %dt: memref<2xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'a' expects shape [1, 1, 2] (N, T, HV), got [1, 1, 3]}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x2x8xf32>) a(%a : memref<1x1x3xf32>) A_log(%al : memref<2xf32>) dt_bias(%dt : memref<2xf32>) o(%o : memref<1x1x2x8xf32>) 
  return
}

// -----

func.func @alog_dtype(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x2x8xf32>, %o: memref<1x1x2x8xf32>, %a: memref<1x1x2xf32>, %al: memref<2xbf16>, %dt: memref<2xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'A_log' expects element type f32, got 'bf16'}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x2x8xf32>) a(%a : memref<1x1x2xf32>) A_log(%al : memref<2xbf16>) dt_bias(%dt : memref<2xf32>) o(%o : memref<1x1x2x8xf32>) 
  return
}

// -----

func.func @dtbias_shape(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x2x8xf32>, %o: memref<1x1x2x8xf32>, %a: memref<1x1x2xf32>, %al: memref<2xf32>, %dt: memref<4xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'dt_bias' expects shape [2] (HV), got [4]}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x2x8xf32>) a(%a : memref<1x1x2xf32>) A_log(%al : memref<2xf32>) dt_bias(%dt : memref<4xf32>) o(%o : memref<1x1x2x8xf32>) 
  return
}

// -----

func.func @beta_and_b(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x2x8xf32>, %o: memref<1x1x2x8xf32>, %beta: memref<1x1x2xf32>, %b: memref<1x1x2xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operands 'beta' and 'b' (beta logits) are mutually exclusive}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x2x8xf32>) beta(%beta : memref<1x1x2xf32>) b(%b : memref<1x1x2xf32>) o(%o : memref<1x1x2x8xf32>) 
  return
}

// -----

func.func @beta_shape(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x2x8xf32>, %o: memref<1x1x2x8xf32>, %beta: memref<1x2x2xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'beta' expects shape [1, 1, 2] (N, T, HV), got [1, 2, 2]}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x2x8xf32>) beta(%beta : memref<1x2x2xf32>) o(%o : memref<1x1x2x8xf32>) 
  return
}

// -----

func.func @b_dtype(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x2x8xf32>, %o: memref<1x1x2x8xf32>, %b: memref<1x1x2xi8>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'b' expects element type bf16, f16 or f32, got 'i8'}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x2x8xf32>) b(%b : memref<1x1x2xi8>) o(%o : memref<1x1x2x8xf32>) 
  return
}

// -----

func.func @state_vk_shape(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x2x8xf32>, %o: memref<1x1x2x8xf32>, %s: memref<1x2x32x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'initial_state' expects shape [1, 2, 8, 32] (N, HV, V, K for layout vk), got [1, 2, 32, 8]}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x2x8xf32>) initial_state(%s : memref<1x2x32x8xf32>) o(%o : memref<1x1x2x8xf32>) {state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @state_kv_shape(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x2x8xf32>, %o: memref<1x1x2x8xf32>, %s: memref<1x2x8x32xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'final_state' expects shape [1, 2, 32, 8] (N, HV, K, V for layout kv), got [1, 2, 8, 32]}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x2x8xf32>) final_state(%s : memref<1x2x8x32xf32>) o(%o : memref<1x1x2x8xf32>) 
  return
}

// -----

func.func @state_dtype(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x2x8xf32>, %o: memref<1x1x2x8xf32>, %s: memref<1x2x32x8xi32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'final_state' expects element type f32, bf16 or f16, got 'i32'}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x2x8xf32>) final_state(%s : memref<1x2x32x8xi32>) o(%o : memref<1x1x2x8xf32>) 
  return
}

// -----

func.func @scale_inf(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x2x8xf32>, %o: memref<1x1x2x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op attribute 'scale' must be finite, got inf}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x2x8xf32>) o(%o : memref<1x1x2x8xf32>) {scale = 0x7F800000 : f32}
  return
}

// -----

func.func @scale_subnormal(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x2x8xf32>, %o: memref<1x1x2x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op attribute 'scale' must be 0 or a normal f32 (|scale| >= 2^-126), got 1.401298e-45}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x2x8xf32>) o(%o : memref<1x1x2x8xf32>) {scale = 0x00000001 : f32}
  return
}

// -----

func.func @dt_bias_overflow(%q: memref<1x1x1x4294967296xbf16>, %k: memref<1x1x1x4294967296xbf16>, %v: memref<1x1x4294967296x1xbf16>, %a: memref<1x1x4294967296x4294967296xbf16>, %A_log: memref<4294967296xf32>, %dt_bias: memref<0xf32>, %o: memref<1x1x4294967296x1xbf16>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'dt_bias' would need HV * K = 4294967296 * 4294967296 entries, past int64}}
  gdn.recurrent q(%q : memref<1x1x1x4294967296xbf16>) k(%k : memref<1x1x1x4294967296xbf16>) v(%v : memref<1x1x4294967296x1xbf16>) a(%a : memref<1x1x4294967296x4294967296xbf16>) A_log(%A_log : memref<4294967296xf32>) dt_bias(%dt_bias : memref<0xf32>) o(%o : memref<1x1x4294967296x1xbf16>)
  return
}

// -----

func.func @scale_nan(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x2x8xf32>, %o: memref<1x1x2x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op attribute 'scale' must be finite, got NaN}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x2x8xf32>) o(%o : memref<1x1x2x8xf32>) {scale = 0x7FC00000 : f32}
  return
}

// -----

func.func @layout_attr(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x2x8xf32>, %o: memref<1x1x2x8xf32>) {
  // expected-error @+2 {{expected ::mlir::gdn::StateLayout to be one of: kv, vk}}
  // expected-error @+1 {{failed to parse GDN_StateLayoutAttr parameter 'value'}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x2x8xf32>) o(%o : memref<1x1x2x8xf32>) {state_layout = #gdn.layout<kk>}
  return
}

// -----

func.func @mixed_form(%q: tensor<1x1x1x32xf32>, %k: tensor<1x1x1x32xf32>, %v: tensor<1x1x2x8xf32>, %o: memref<1x1x2x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operands must be all tensors (tensor form) or all memrefs (memref form); 'q' is a tensor but 'o' is a memref}}
  gdn.recurrent q(%q : tensor<1x1x1x32xf32>) k(%k : tensor<1x1x1x32xf32>) v(%v : tensor<1x1x2x8xf32>) o(%o : memref<1x1x2x8xf32>)
  return
}

// -----

func.func @tensor_dynamic(%q: tensor<1x1x1x32xf32>, %k: tensor<1x1x1x32xf32>, %v: tensor<1x1x?x8xf32>, %o: tensor<1x1x2x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'v' must have a static shape, got [1, 1, ?, 8]}}
  %r = gdn.recurrent q(%q : tensor<1x1x1x32xf32>) k(%k : tensor<1x1x1x32xf32>) v(%v : tensor<1x1x?x8xf32>) o(%o : tensor<1x1x2x8xf32>) -> tensor<1x1x2x8xf32>
  return
}

// -----

func.func @tensor_encoding(%q: tensor<1x1x1x32xf32, "enc">, %k: tensor<1x1x1x32xf32>, %v: tensor<1x1x2x8xf32>, %o: tensor<1x1x2x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'q' must be a tensor without encoding, got "enc"}}
  %r = gdn.recurrent q(%q : tensor<1x1x1x32xf32, "enc">) k(%k : tensor<1x1x1x32xf32>) v(%v : tensor<1x1x2x8xf32>) o(%o : tensor<1x1x2x8xf32>) -> tensor<1x1x2x8xf32>
  return
}

// -----

func.func @memref_results(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x2x8xf32>, %o: memref<1x1x2x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op has no results in memref form, got 1}}
  %r = gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x2x8xf32>) o(%o : memref<1x1x2x8xf32>) -> tensor<1x1x2x8xf32>
  return
}

// -----

func.func @tensor_result_count(%q: tensor<1x1x1x32xf32>, %k: tensor<1x1x1x32xf32>, %v: tensor<1x1x2x8xf32>, %s: tensor<1x2x32x8xf32>, %o: tensor<1x1x2x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op expects 2 results in tensor form (the new 'final_state' and 'o'), got 1}}
  %r = gdn.recurrent q(%q : tensor<1x1x1x32xf32>) k(%k : tensor<1x1x1x32xf32>) v(%v : tensor<1x1x2x8xf32>) initial_state(%s : tensor<1x2x32x8xf32>) final_state(%s : tensor<1x2x32x8xf32>) o(%o : tensor<1x1x2x8xf32>) -> tensor<1x1x2x8xf32>
  return
}

// -----

func.func @tensor_result_type(%q: tensor<1x1x1x32xf32>, %k: tensor<1x1x1x32xf32>, %v: tensor<1x1x2x8xf32>, %o: tensor<1x1x2x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op result #0 expects type 'tensor<1x1x2x8xf32>' (the type of 'o'), got 'tensor<1x1x2x8xbf16>'}}
  %r = gdn.recurrent q(%q : tensor<1x1x1x32xf32>) k(%k : tensor<1x1x1x32xf32>) v(%v : tensor<1x1x2x8xf32>) o(%o : tensor<1x1x2x8xf32>) -> tensor<1x1x2x8xbf16>
  return
}

// -----

// The generic form with a required operand's segment emptied (no crash).
func.func @segment_o(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x4xf32>, %o: memref<1x1x1x4xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op needs exactly one 'o' operand (operandSegmentSizes)}}
  "gdn.recurrent"(%q, %k, %v, %o) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0>}> : (memref<1x1x1x32xf32>, memref<1x1x1x32xf32>, memref<1x1x1x4xf32>, memref<1x1x1x4xf32>) -> ()
  return
}

// -----

func.func @segment_q(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x4xf32>, %o: memref<1x1x1x4xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op needs exactly one 'q' operand (operandSegmentSizes)}}
  "gdn.recurrent"(%q, %k, %v, %o) <{operandSegmentSizes = array<i32: 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1>}> : (memref<1x1x1x32xf32>, memref<1x1x1x32xf32>, memref<1x1x1x4xf32>, memref<1x1x1x4xf32>) -> ()
  return
}

// -----

// GPU shared memory (address space 3) would be read through global pointers.
func.func @memory_space(%q: memref<1x1x1x32xf32, 3>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x4xf32>, %o: memref<1x1x1x4xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'q' must be in the default memory space, got 3}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32, 3>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x4xf32>) o(%o : memref<1x1x1x4xf32>)
  return
}

// -----

func.func @pool_without_state(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x4xf32>, %o: memref<1x1x1x4xf32>, %idx: memref<1xi32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'state_indices' needs an 'initial_state' or a 'final_state' pool}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x4xf32>) state_indices(%idx : memref<1xi32>) o(%o : memref<1x1x1x4xf32>)
  return
}

// -----

func.func @pool_index_dtype(%q: memref<2x1x1x32xf32>, %k: memref<2x1x1x32xf32>, %v: memref<2x1x1x4xf32>, %o: memref<2x1x1x4xf32>, %idx: memref<2xf32>, %s: memref<5x1x32x4xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'state_indices' expects element type i32 or i64, got 'f32'}}
  gdn.recurrent q(%q : memref<2x1x1x32xf32>) k(%k : memref<2x1x1x32xf32>) v(%v : memref<2x1x1x4xf32>) state_indices(%idx : memref<2xf32>) initial_state(%s : memref<5x1x32x4xf32>) o(%o : memref<2x1x1x4xf32>)
  return
}

// -----

func.func @pool_index_shape(%q: memref<2x1x1x32xf32>, %k: memref<2x1x1x32xf32>, %v: memref<2x1x1x4xf32>, %o: memref<2x1x1x4xf32>, %idx: memref<3xi64>, %s: memref<5x1x32x4xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'state_indices' expects shape [2] (N), got [3]}}
  gdn.recurrent q(%q : memref<2x1x1x32xf32>) k(%k : memref<2x1x1x32xf32>) v(%v : memref<2x1x1x4xf32>) state_indices(%idx : memref<3xi64>) initial_state(%s : memref<5x1x32x4xf32>) o(%o : memref<2x1x1x4xf32>)
  return
}

// -----

// Both states of a pool have the same number of slots.
func.func @pool_slots_differ(%q: memref<2x1x1x32xf32>, %k: memref<2x1x1x32xf32>, %v: memref<2x1x1x4xf32>, %o: memref<2x1x1x4xf32>, %idx: memref<2xi32>, %s: memref<5x1x32x4xf32>, %t: memref<6x1x32x4xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'final_state' expects shape [5, 1, 32, 4] (slots, HV, K, V for layout kv), got [6, 1, 32, 4]}}
  gdn.recurrent q(%q : memref<2x1x1x32xf32>) k(%k : memref<2x1x1x32xf32>) v(%v : memref<2x1x1x4xf32>) state_indices(%idx : memref<2xi32>) initial_state(%s : memref<5x1x32x4xf32>) final_state(%t : memref<6x1x32x4xf32>) o(%o : memref<2x1x1x4xf32>)
  return
}

// -----

func.func @state_dtypes_differ(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x2x8xf32>, %o: memref<1x1x2x8xf32>, %h0: memref<1x2x32x8xf32>, %ht: memref<1x2x32x8xbf16>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'final_state' expects element type 'f32' (the dtype of 'initial_state'), got 'bf16'}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x2x8xf32>) initial_state(%h0 : memref<1x2x32x8xf32>) final_state(%ht : memref<1x2x32x8xbf16>) o(%o : memref<1x1x2x8xf32>)
  return
}

// -----

func.func @neg_eigval_without_logits(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x2x8xf32>, %o: memref<1x1x2x8xf32>, %beta: memref<1x1x2xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op attribute 'allow_neg_eigval' (beta = 2 sigmoid(b)) needs the beta logits operand 'b'}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x2x8xf32>) beta(%beta : memref<1x1x2xf32>) o(%o : memref<1x1x2x8xf32>) {allow_neg_eigval}
  return
}

// -----

func.func @varlen_batch(%q: memref<2x3x1x32xf32>, %k: memref<2x3x1x32xf32>, %v: memref<2x3x1x8xf32>, %o: memref<2x3x1x8xf32>, %cu: memref<3xi32>) {
  // expected-error @+1 {{'gdn.recurrent' op with 'cu_seqlens' the token operands are packed [1, total, ...]; 'q' has batch 2}}
  gdn.recurrent q(%q : memref<2x3x1x32xf32>) k(%k : memref<2x3x1x32xf32>) v(%v : memref<2x3x1x8xf32>) cu_seqlens(%cu : memref<3xi32>) o(%o : memref<2x3x1x8xf32>)
  return
}

// -----

func.func @varlen_dtype(%q: memref<1x3x1x32xf32>, %k: memref<1x3x1x32xf32>, %v: memref<1x3x1x8xf32>, %o: memref<1x3x1x8xf32>, %cu: memref<3xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'cu_seqlens' expects element type i32 or i64, got 'f32'}}
  gdn.recurrent q(%q : memref<1x3x1x32xf32>) k(%k : memref<1x3x1x32xf32>) v(%v : memref<1x3x1x8xf32>) cu_seqlens(%cu : memref<3xf32>) o(%o : memref<1x3x1x8xf32>)
  return
}

// -----

// The states of a varlen op have one row per sequence (N = 2 here).
func.func @varlen_state(%q: memref<1x3x1x32xf32>, %k: memref<1x3x1x32xf32>, %v: memref<1x3x1x8xf32>, %o: memref<1x3x1x8xf32>, %cu: memref<3xi32>, %s: memref<1x1x32x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'initial_state' expects shape [2, 1, 32, 8] (N, HV, K, V for layout kv), got [1, 1, 32, 8]}}
  gdn.recurrent q(%q : memref<1x3x1x32xf32>) k(%k : memref<1x3x1x32xf32>) v(%v : memref<1x3x1x8xf32>) cu_seqlens(%cu : memref<3xi32>) initial_state(%s : memref<1x1x32x8xf32>) o(%o : memref<1x3x1x8xf32>)
  return
}

// -----

func.func @intermediate_shape(%q: memref<2x3x1x32xf32>, %k: memref<2x3x1x32xf32>, %v: memref<2x3x1x8xf32>, %o: memref<2x3x1x8xf32>, %inter: memref<2x2x1x32x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'intermediate_states' expects shape [2, 3, 1, 32, 8] (rows, steps, HV, K, V for layout kv), got [2, 2, 1, 32, 8]}}
  gdn.recurrent q(%q : memref<2x3x1x32xf32>) k(%k : memref<2x3x1x32xf32>) v(%v : memref<2x3x1x8xf32>) intermediate_states(%inter : memref<2x2x1x32x8xf32>) o(%o : memref<2x3x1x8xf32>)
  return
}

// -----

func.func @intermediate_rank(%q: memref<2x3x1x32xf32>, %k: memref<2x3x1x32xf32>, %v: memref<2x3x1x8xf32>, %o: memref<2x3x1x8xf32>, %inter: memref<2x3x32x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'intermediate_states' expects rank 5 [rows, steps, HV, K, V for layout kv], got rank 4}}
  gdn.recurrent q(%q : memref<2x3x1x32xf32>) k(%k : memref<2x3x1x32xf32>) v(%v : memref<2x3x1x8xf32>) intermediate_states(%inter : memref<2x3x32x8xf32>) o(%o : memref<2x3x1x8xf32>)
  return
}

// -----

func.func @intermediate_no_rows(%q: memref<2x3x1x32xf32>, %k: memref<2x3x1x32xf32>, %v: memref<2x3x1x8xf32>, %o: memref<2x3x1x8xf32>, %idx: memref<2xi32>, %inter: memref<0x3x1x32x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'intermediate_states' expects at least one row and one step [rows, steps, HV, K, V for layout kv], got [0, 3, 1, 32, 8]}}
  gdn.recurrent q(%q : memref<2x3x1x32xf32>) k(%k : memref<2x3x1x32xf32>) v(%v : memref<2x3x1x8xf32>) intermediate_state_indices(%idx : memref<2xi32>) intermediate_states(%inter : memref<0x3x1x32x8xf32>) o(%o : memref<2x3x1x8xf32>)
  return
}

// -----

func.func @intermediate_no_steps_varlen(%q: memref<1x5x1x32xf32>, %k: memref<1x5x1x32xf32>, %v: memref<1x5x1x8xf32>, %o: memref<1x5x1x8xf32>, %cu: memref<3xi32>, %inter: memref<2x0x1x32x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'intermediate_states' expects at least one row and one step [rows, steps, HV, K, V for layout kv], got [2, 0, 1, 32, 8]}}
  gdn.recurrent q(%q : memref<1x5x1x32xf32>) k(%k : memref<1x5x1x32xf32>) v(%v : memref<1x5x1x8xf32>) cu_seqlens(%cu : memref<3xi32>) intermediate_states(%inter : memref<2x0x1x32x8xf32>) o(%o : memref<1x5x1x8xf32>)
  return
}

// -----

func.func @intermediate_indices_alone(%q: memref<2x3x1x32xf32>, %k: memref<2x3x1x32xf32>, %v: memref<2x3x1x8xf32>, %o: memref<2x3x1x8xf32>, %idx: memref<2xi32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'intermediate_state_indices' needs 'intermediate_states'}}
  gdn.recurrent q(%q : memref<2x3x1x32xf32>) k(%k : memref<2x3x1x32xf32>) v(%v : memref<2x3x1x8xf32>) intermediate_state_indices(%idx : memref<2xi32>) o(%o : memref<2x3x1x8xf32>)
  return
}

// -----

// KDA and per-channel beta: the gates are per head (rank 3) or per channel
// (rank 4); other ranks, a channel count other than K (decay) or V (beta),
// and a per-head dt_bias with a per-key 'a' are refused.

func.func @g_rank(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x2x8xf32>, %o: memref<1x1x2x8xf32>, %g: memref<1x2xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'g' expects rank 3 [N, T, HV] (per head) or rank 4 [N, T, HV, K] (per key channel), got rank 2}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x2x8xf32>) g(%g : memref<1x2xf32>) o(%o : memref<1x1x2x8xf32>)
  return
}

// -----

func.func @g_per_key_shape(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x2x8xf32>, %o: memref<1x1x2x8xf32>, %g: memref<1x1x2x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'g' expects shape [1, 1, 2, 32] (N, T, HV, K: per key channel), got [1, 1, 2, 8]}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x2x8xf32>) g(%g : memref<1x1x2x8xf32>) o(%o : memref<1x1x2x8xf32>)
  return
}

// -----

func.func @a_rank(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x2x8xf32>, %o: memref<1x1x2x8xf32>, %a: memref<1x1x2x32x1xf32>, %al: memref<2xf32>, %dt: memref<64xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'a' expects rank 3 [N, T, HV] (per head) or rank 4 [N, T, HV, K] (per key channel), got rank 5}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x2x8xf32>) a(%a : memref<1x1x2x32x1xf32>) A_log(%al : memref<2xf32>) dt_bias(%dt : memref<64xf32>) o(%o : memref<1x1x2x8xf32>)
  return
}

// -----

func.func @a_per_key_shape(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x2x8xf32>, %o: memref<1x1x2x8xf32>, %a: memref<1x1x1x32xf32>, %al: memref<2xf32>, %dt: memref<64xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'a' expects shape [1, 1, 2, 32] (N, T, HV, K: per key channel), got [1, 1, 1, 32]}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x2x8xf32>) a(%a : memref<1x1x1x32xf32>) A_log(%al : memref<2xf32>) dt_bias(%dt : memref<64xf32>) o(%o : memref<1x1x2x8xf32>)
  return
}

// -----

func.func @dtbias_per_key_shape(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x2x8xf32>, %o: memref<1x1x2x8xf32>, %a: memref<1x1x2x32xf32>, %al: memref<2xf32>, %dt: memref<2xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'dt_bias' expects shape [64] (HV * K, per key channel with a per-key 'a', flattened from [HV, K]), got [2]}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x2x8xf32>) a(%a : memref<1x1x2x32xf32>) A_log(%al : memref<2xf32>) dt_bias(%dt : memref<2xf32>) o(%o : memref<1x1x2x8xf32>)
  return
}

// -----

func.func @beta_rank(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x2x8xf32>, %o: memref<1x1x2x8xf32>, %beta: memref<2xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'beta' expects rank 3 [N, T, HV] (per head) or rank 4 [N, T, HV, V] (per value channel), got rank 1}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x2x8xf32>) beta(%beta : memref<2xf32>) o(%o : memref<1x1x2x8xf32>)
  return
}

// -----

func.func @beta_per_channel_shape(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x2x8xf32>, %o: memref<1x1x2x8xf32>, %beta: memref<1x1x2x32xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'beta' expects shape [1, 1, 2, 8] (N, T, HV, V: per value channel), got [1, 1, 2, 32]}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x2x8xf32>) beta(%beta : memref<1x1x2x32xf32>) o(%o : memref<1x1x2x8xf32>)
  return
}

// -----

func.func @b_per_channel_dtype(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x2x8xf32>, %o: memref<1x1x2x8xf32>, %b: memref<1x1x2x8xi8>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'b' expects element type bf16, f16 or f32, got 'i8'}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x2x8xf32>) b(%b : memref<1x1x2x8xi8>) o(%o : memref<1x1x2x8xf32>)
  return
}

// -----

func.func @parents_without_buffer(%q: memref<2x3x1x32xf32>, %k: memref<2x3x1x32xf32>, %v: memref<2x3x1x8xf32>, %o: memref<2x3x1x8xf32>, %p: memref<2x3xi32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'retrieve_parent_token' needs 'intermediate_states' (parent states are reloaded from it)}}
  gdn.recurrent q(%q : memref<2x3x1x32xf32>) k(%k : memref<2x3x1x32xf32>) v(%v : memref<2x3x1x8xf32>) retrieve_parent_token(%p : memref<2x3xi32>) o(%o : memref<2x3x1x8xf32>)
  return
}

// -----

// The table has one entry per stored step: [N, steps] (steps = T here).
func.func @parents_shape(%q: memref<2x3x1x32xf32>, %k: memref<2x3x1x32xf32>, %v: memref<2x3x1x8xf32>, %o: memref<2x3x1x8xf32>, %p: memref<2x4xi32>, %inter: memref<2x3x1x32x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'retrieve_parent_token' expects shape [2, 3] (N, steps), got [2, 4]}}
  gdn.recurrent q(%q : memref<2x3x1x32xf32>) k(%k : memref<2x3x1x32xf32>) v(%v : memref<2x3x1x8xf32>) retrieve_parent_token(%p : memref<2x4xi32>) intermediate_states(%inter : memref<2x3x1x32x8xf32>) o(%o : memref<2x3x1x8xf32>)
  return
}

// -----

// Varlen: [N, steps] with N from cu_seqlens and steps from the buffer.
func.func @parents_varlen_shape(%q: memref<1x5x1x32xf32>, %k: memref<1x5x1x32xf32>, %v: memref<1x5x1x8xf32>, %o: memref<1x5x1x8xf32>, %cu: memref<3xi32>, %p: memref<2x5xi32>, %inter: memref<2x3x1x32x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'retrieve_parent_token' expects shape [2, 3] (N, steps), got [2, 5]}}
  gdn.recurrent q(%q : memref<1x5x1x32xf32>) k(%k : memref<1x5x1x32xf32>) v(%v : memref<1x5x1x8xf32>) cu_seqlens(%cu : memref<3xi32>) retrieve_parent_token(%p : memref<2x5xi32>) intermediate_states(%inter : memref<2x3x1x32x8xf32>) o(%o : memref<1x5x1x8xf32>)
  return
}

// -----

func.func @parents_dtype(%q: memref<2x3x1x32xf32>, %k: memref<2x3x1x32xf32>, %v: memref<2x3x1x8xf32>, %o: memref<2x3x1x8xf32>, %p: memref<2x3xi16>, %inter: memref<2x3x1x32x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'retrieve_parent_token' expects element type i32 or i64, got 'i16'}}
  gdn.recurrent q(%q : memref<2x3x1x32xf32>) k(%k : memref<2x3x1x32xf32>) v(%v : memref<2x3x1x8xf32>) retrieve_parent_token(%p : memref<2x3xi16>) intermediate_states(%inter : memref<2x3x1x32x8xf32>) o(%o : memref<2x3x1x8xf32>)
  return
}

// -----

// A written operand that is the same value as another operand: the kernels
// read and write them through separate pointers.
func.func @o_aliases_q(%q: memref<2x2x2x8xf32>, %k: memref<2x2x2x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'o' is written and is the same value as 'q'; give it its own buffer (only initial_state and final_state may share one: a state updated in place)}}
  gdn.recurrent q(%q : memref<2x2x2x8xf32>) k(%k : memref<2x2x2x8xf32>) v(%k : memref<2x2x2x8xf32>) o(%q : memref<2x2x2x8xf32>)
  return
}

