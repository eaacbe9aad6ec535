// RUN: gdn-opt %s -split-input-file -verify-diagnostics

// One case per diagnostic of the replay windows (gdn.recurrent) and of the
// gdn.replay_commit verifier.

func.func @missing_window(%q: memref<2x3x1x8xf32>, %v: memref<2x3x1x8xf32>, %kw: memref<2x1x3x8xf32>,
                          %vw: memref<2x1x3x8xf32>, %gw: memref<2x1x3xf32>, %o: memref<2x3x1x8xf32>) {
  // expected-error @+1 {{the replay windows go together: 'k_window', 'v_window', 'g_window' and 'beta_window'; missing 'beta_window'}}
  gdn.recurrent q(%q : memref<2x3x1x8xf32>) k(%q : memref<2x3x1x8xf32>) v(%v : memref<2x3x1x8xf32>)
      k_window(%kw : memref<2x1x3x8xf32>) v_window(%vw : memref<2x1x3x8xf32>) g_window(%gw : memref<2x1x3xf32>)
      o(%o : memref<2x3x1x8xf32>)
  return
}

// -----

func.func @window_shape(%q: memref<2x3x1x8xf32>, %v: memref<2x3x1x8xf32>, %kw: memref<2x1x3x8xf32>,
                        %vw: memref<2x1x3x4xf32>, %gw: memref<2x1x3xf32>, %o: memref<2x3x1x8xf32>) {
  // expected-error @+1 {{operand 'v_window' expects shape [2, 1, 3, 8] (N, HV, L, V), got [2, 1, 3, 4]}}
  gdn.recurrent q(%q : memref<2x3x1x8xf32>) k(%q : memref<2x3x1x8xf32>) v(%v : memref<2x3x1x8xf32>)
      k_window(%kw : memref<2x1x3x8xf32>) v_window(%vw : memref<2x1x3x4xf32>) g_window(%gw : memref<2x1x3xf32>)
      beta_window(%gw : memref<2x1x3xf32>) o(%o : memref<2x3x1x8xf32>)
  return
}

// -----

func.func @window_dtype(%q: memref<2x3x1x8xbf16>, %v: memref<2x3x1x8xbf16>, %kw: memref<2x1x3x8xf32>,
                        %vw: memref<2x1x3x8xbf16>, %gw: memref<2x1x3xf32>, %o: memref<2x3x1x8xbf16>) {
  // expected-error @+1 {{operand 'k_window' expects element type bf16 (the dtype of 'q'), got 'f32'}}
  gdn.recurrent q(%q : memref<2x3x1x8xbf16>) k(%q : memref<2x3x1x8xbf16>) v(%v : memref<2x3x1x8xbf16>)
      k_window(%kw : memref<2x1x3x8xf32>) v_window(%vw : memref<2x1x3x8xbf16>) g_window(%gw : memref<2x1x3xf32>)
      beta_window(%gw : memref<2x1x3xf32>) o(%o : memref<2x3x1x8xbf16>)
  return
}

// -----

func.func @window_gate_dtype(%q: memref<2x3x1x8xf32>, %kw: memref<2x1x3x8xf32>,
                             %gw: memref<2x1x3xbf16>, %bw: memref<2x1x3xf32>, %o: memref<2x3x1x8xf32>) {
  // expected-error @+1 {{operand 'g_window' expects element type f32, got 'bf16'}}
  gdn.recurrent q(%q : memref<2x3x1x8xf32>) k(%q : memref<2x3x1x8xf32>) v(%q : memref<2x3x1x8xf32>)
      k_window(%kw : memref<2x1x3x8xf32>) v_window(%kw : memref<2x1x3x8xf32>) g_window(%gw : memref<2x1x3xbf16>)
      beta_window(%bw : memref<2x1x3xf32>) o(%o : memref<2x3x1x8xf32>)
  return
}

// -----

func.func @window_per_key(%q: memref<2x3x1x8xf32>, %g: memref<2x3x1x8xf32>, %kw: memref<2x1x3x8xf32>,
                          %gw: memref<2x1x3xf32>, %o: memref<2x3x1x8xf32>) {
  // expected-error @+1 {{the replay windows take a decay and a beta per head; a per-key decay or per-channel beta is not supported with them yet}}
  gdn.recurrent q(%q : memref<2x3x1x8xf32>) k(%q : memref<2x3x1x8xf32>) v(%q : memref<2x3x1x8xf32>)
      g(%g : memref<2x3x1x8xf32>)
      k_window(%kw : memref<2x1x3x8xf32>) v_window(%kw : memref<2x1x3x8xf32>) g_window(%gw : memref<2x1x3xf32>)
      beta_window(%gw : memref<2x1x3xf32>) o(%o : memref<2x3x1x8xf32>)
  return
}

// -----

func.func @window_tensor(%q: tensor<2x3x1x8xf32>, %kw: tensor<2x1x3x8xf32>, %gw: tensor<2x1x3xf32>,
                         %o: tensor<2x3x1x8xf32>) -> tensor<2x3x1x8xf32> {
  // expected-error @+1 {{operand 'k_window' is supported in the memref form only}}
  %r = gdn.recurrent q(%q : tensor<2x3x1x8xf32>) k(%q : tensor<2x3x1x8xf32>) v(%q : tensor<2x3x1x8xf32>)
      k_window(%kw : tensor<2x1x3x8xf32>) v_window(%kw : tensor<2x1x3x8xf32>) g_window(%gw : tensor<2x1x3xf32>)
      beta_window(%gw : tensor<2x1x3xf32>) o(%o : tensor<2x3x1x8xf32>) -> tensor<2x3x1x8xf32>
  return %r : tensor<2x3x1x8xf32>
}

// -----

func.func @commit_rank(%kw: memref<2x1x3x8xf32>, %gw: memref<1x2x1x3xf32>, %acc: memref<2xi32>,
                       %s: memref<1x2x1x8x8xf32>) {
  // expected-error @+1 {{operand 'k_window' expects rank 5 [layers, slots, H, L, K] with non-empty dimensions, got [2, 1, 3, 8]}}
  gdn.replay_commit k_window(%kw : memref<2x1x3x8xf32>) v_window(%kw : memref<2x1x3x8xf32>)
      g_window(%gw : memref<1x2x1x3xf32>) beta_window(%gw : memref<1x2x1x3xf32>)
      accepted(%acc : memref<2xi32>) state(%s : memref<1x2x1x8x8xf32>)
  return
}

// -----

func.func @commit_v_window(%kw: memref<1x2x1x3x8xf32>, %vw: memref<1x2x1x3x8xbf16>, %gw: memref<1x2x1x3xf32>,
                           %acc: memref<2xi32>, %s: memref<1x2x1x8x8xf32>) {
  // expected-error @+1 {{operand 'v_window' expects element type f32 (the dtype of 'k_window'), got 'bf16'}}
  gdn.replay_commit k_window(%kw : memref<1x2x1x3x8xf32>) v_window(%vw : memref<1x2x1x3x8xbf16>)
      g_window(%gw : memref<1x2x1x3xf32>) beta_window(%gw : memref<1x2x1x3xf32>)
      accepted(%acc : memref<2xi32>) state(%s : memref<1x2x1x8x8xf32>)
  return
}

// -----

func.func @commit_heads(%kw: memref<1x2x2x3x8xf32>, %vw: memref<1x2x3x3x8xf32>, %gw: memref<1x2x3x3xf32>,
                        %acc: memref<2xi32>, %s: memref<1x2x3x8x8xf32>) {
  // expected-error @+1 {{the number of value heads HV = 3 must be a multiple of the number of k heads H = 2}}
  gdn.replay_commit k_window(%kw : memref<1x2x2x3x8xf32>) v_window(%vw : memref<1x2x3x3x8xf32>)
      g_window(%gw : memref<1x2x3x3xf32>) beta_window(%gw : memref<1x2x3x3xf32>)
      accepted(%acc : memref<2xi32>) state(%s : memref<1x2x3x8x8xf32>)
  return
}

// -----

func.func @commit_gates(%kw: memref<1x2x1x3x8xf32>, %gw: memref<1x2x1x4xf32>, %acc: memref<2xi32>,
                        %s: memref<1x2x1x8x8xf32>) {
  // expected-error @+1 {{operand 'g_window' expects shape [1, 2, 1, 3] (layers, slots, HV, L), got [1, 2, 1, 4]}}
  gdn.replay_commit k_window(%kw : memref<1x2x1x3x8xf32>) v_window(%kw : memref<1x2x1x3x8xf32>)
      g_window(%gw : memref<1x2x1x4xf32>) beta_window(%gw : memref<1x2x1x4xf32>)
      accepted(%acc : memref<2xi32>) state(%s : memref<1x2x1x8x8xf32>)
  return
}

// -----

func.func @commit_rows(%kw: memref<1x3x1x3x8xf32>, %gw: memref<1x3x1x3xf32>, %acc: memref<2xi32>,
                       %s: memref<1x3x1x8x8xf32>) {
  // expected-error @+1 {{without 'state_indices' row n is slot n: the windows and the state need slots = N = 2, got 3}}
  gdn.replay_commit k_window(%kw : memref<1x3x1x3x8xf32>) v_window(%kw : memref<1x3x1x3x8xf32>)
      g_window(%gw : memref<1x3x1x3xf32>) beta_window(%gw : memref<1x3x1x3xf32>)
      accepted(%acc : memref<2xi32>) state(%s : memref<1x3x1x8x8xf32>)
  return
}

// -----

func.func @commit_accepted(%kw: memref<1x2x1x3x8xf32>, %gw: memref<1x2x1x3xf32>, %acc: memref<2xf32>,
                           %s: memref<1x2x1x8x8xf32>) {
  // expected-error @+1 {{operand 'accepted' expects element type i32 or i64, got 'f32'}}
  gdn.replay_commit k_window(%kw : memref<1x2x1x3x8xf32>) v_window(%kw : memref<1x2x1x3x8xf32>)
      g_window(%gw : memref<1x2x1x3xf32>) beta_window(%gw : memref<1x2x1x3xf32>)
      accepted(%acc : memref<2xf32>) state(%s : memref<1x2x1x8x8xf32>)
  return
}

// -----

func.func @commit_state(%kw: memref<1x4x1x3x8xf32>, %gw: memref<1x4x1x3xf32>, %acc: memref<2xi32>,
                        %idx: memref<2xi32>, %s: memref<1x4x1x8x4xf32>) {
  // expected-error @+1 {{operand 'state' expects shape [1, 4, 1, 8, 8] (layers, slots, HV, K, V for layout kv), got [1, 4, 1, 8, 4]}}
  gdn.replay_commit k_window(%kw : memref<1x4x1x3x8xf32>) v_window(%kw : memref<1x4x1x3x8xf32>)
      g_window(%gw : memref<1x4x1x3xf32>) beta_window(%gw : memref<1x4x1x3xf32>)
      accepted(%acc : memref<2xi32>) state_indices(%idx : memref<2xi32>) state(%s : memref<1x4x1x8x4xf32>)
  return
}

// -----

func.func @commit_mixed(%kw: memref<1x2x1x3x8xf32>, %gw: memref<1x2x1x3xf32>, %acc: tensor<2xi32>,
                        %s: memref<1x2x1x8x8xf32>) {
  // expected-error @+1 {{operands must be all tensors (tensor form) or all memrefs (memref form); 'k_window' is a memref but 'accepted' is a tensor}}
  gdn.replay_commit k_window(%kw : memref<1x2x1x3x8xf32>) v_window(%kw : memref<1x2x1x3x8xf32>)
      g_window(%gw : memref<1x2x1x3xf32>) beta_window(%gw : memref<1x2x1x3xf32>)
      accepted(%acc : tensor<2xi32>) state(%s : memref<1x2x1x8x8xf32>)
  return
}

// -----

func.func @commit_schedule(%kw: memref<1x2x1x3x8xf32>, %gw: memref<1x2x1x3xf32>, %acc: memref<2xi32>,
                           %s: memref<1x2x1x8x8xf32>) {
  // expected-error @+1 {{'gdn.schedule' must be a #gdn.schedule<...>, not 1 : i64}}
  gdn.replay_commit k_window(%kw : memref<1x2x1x3x8xf32>) v_window(%kw : memref<1x2x1x3x8xf32>)
      g_window(%gw : memref<1x2x1x3xf32>) beta_window(%gw : memref<1x2x1x3xf32>)
      accepted(%acc : memref<2xi32>) state(%s : memref<1x2x1x8x8xf32>) {gdn.schedule = 1}
  return
}

// -----

func.func @commit_tree_steps(%kw: memref<1x2x1x3x8xf32>, %gw: memref<1x2x1x3xf32>, %acc: memref<2xi32>,
                             %p: memref<2x4xi32>, %s: memref<1x2x1x8x8xf32>) {
  // expected-error @+1 {{operand 'retrieve_parent_token' expects shape [N, P] with 1 <= P <= min(L, 64) = 3, got [2, 4]}}
  gdn.replay_commit k_window(%kw : memref<1x2x1x3x8xf32>) v_window(%kw : memref<1x2x1x3x8xf32>)
      g_window(%gw : memref<1x2x1x3xf32>) beta_window(%gw : memref<1x2x1x3xf32>)
      accepted(%acc : memref<2xi32>) retrieve_parent_token(%p : memref<2x4xi32>)
      state(%s : memref<1x2x1x8x8xf32>)
  return
}

// -----

func.func @commit_tree_rows(%kw: memref<1x2x1x3x8xf32>, %gw: memref<1x2x1x3xf32>, %acc: memref<2xi32>,
                            %p: memref<3x3xi32>, %s: memref<1x2x1x8x8xf32>) {
  // expected-error @+1 {{operand 'retrieve_parent_token' expects shape [2, 3] (N, P), got [3, 3]}}
  gdn.replay_commit k_window(%kw : memref<1x2x1x3x8xf32>) v_window(%kw : memref<1x2x1x3x8xf32>)
      g_window(%gw : memref<1x2x1x3xf32>) beta_window(%gw : memref<1x2x1x3xf32>)
      accepted(%acc : memref<2xi32>) retrieve_parent_token(%p : memref<3x3xi32>)
      state(%s : memref<1x2x1x8x8xf32>)
  return
}

// -----

func.func @commit_tree_dtype(%kw: memref<1x2x1x3x8xf32>, %gw: memref<1x2x1x3xf32>, %acc: memref<2xi32>,
                             %p: memref<2x3xf32>, %s: memref<1x2x1x8x8xf32>) {
  // expected-error @+1 {{operand 'retrieve_parent_token' expects element type i32 or i64, got 'f32'}}
  gdn.replay_commit k_window(%kw : memref<1x2x1x3x8xf32>) v_window(%kw : memref<1x2x1x3x8xf32>)
      g_window(%gw : memref<1x2x1x3xf32>) beta_window(%gw : memref<1x2x1x3xf32>)
      accepted(%acc : memref<2xi32>) retrieve_parent_token(%p : memref<2x3xf32>)
      state(%s : memref<1x2x1x8x8xf32>)
  return
}

// -----

func.func @commit_segments(%kw: memref<1x2x1x3x8xf32>, %gw: memref<1x2x1x3xf32>, %acc: memref<2xi32>,
                           %s: memref<1x2x1x8x8xf32>) {
  // expected-error @+1 {{needs exactly one 'state' operand (operandSegmentSizes)}}
  "gdn.replay_commit"(%kw, %kw, %gw, %gw, %acc, %s) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 1, 0, 0>}>
      : (memref<1x2x1x3x8xf32>, memref<1x2x1x3x8xf32>, memref<1x2x1x3xf32>, memref<1x2x1x3xf32>, memref<2xi32>, memref<1x2x1x8x8xf32>) -> ()
  return
}

// -----

// Windows the verify writes may not share a buffer.
func.func @windows_alias(%q: memref<2x3x1x8xf32>, %kw: memref<2x1x3x8xf32>, %gw: memref<2x1x3xf32>,
                         %bw: memref<2x1x3xf32>, %o: memref<2x3x1x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'v_window' is written and is the same value as 'k_window'}}
  gdn.recurrent q(%q : memref<2x3x1x8xf32>) k(%q : memref<2x3x1x8xf32>) v(%q : memref<2x3x1x8xf32>)
      k_window(%kw : memref<2x1x3x8xf32>) v_window(%kw : memref<2x1x3x8xf32>) g_window(%gw : memref<2x1x3xf32>)
      beta_window(%bw : memref<2x1x3xf32>) o(%o : memref<2x3x1x8xf32>)
  return
}

// -----

// The commit writes its checkpoints: they may not be a window it reads.
func.func @state_aliases_window(%x: memref<1x2x2x8x8xf32>, %g: memref<1x2x2x8xf32>, %b: memref<1x2x2x8xf32>, %acc: memref<2xi32>) {
  // expected-error @+1 {{'gdn.replay_commit' op operand 'state' is written and is the same value as 'k_window'}}
  gdn.replay_commit k_window(%x : memref<1x2x2x8x8xf32>) v_window(%x : memref<1x2x2x8x8xf32>) g_window(%g : memref<1x2x2x8xf32>) beta_window(%b : memref<1x2x2x8xf32>) accepted(%acc : memref<2xi32>) state(%x : memref<1x2x2x8x8xf32>) {state_layout = #gdn.layout<vk>}
  return
}
