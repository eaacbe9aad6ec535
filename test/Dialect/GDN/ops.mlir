// RUN: gdn-opt %s -split-input-file | FileCheck %s
// RUN: gdn-opt %s -split-input-file | gdn-opt -split-input-file | FileCheck %s
// Round trip of every form of gdn.recurrent, in the memref form (no results)
// and in the tensor form (destination style: results tied to the inits).

// Minimal: no decay, beta = 1, zero initial state, kv layout (the default).
// CHECK-LABEL: func @plain
// CHECK: gdn.recurrent q(%{{.*}} : memref<2x3x1x32xf32>) k(%{{.*}} : memref<2x3x1x32xf32>) v(%{{.*}} : memref<2x3x2x16xf32>) o(%{{.*}} : memref<2x3x2x16xf32>)
// CHECK-NOT: state_layout
func.func @plain(%q: memref<2x3x1x32xf32>, %k: memref<2x3x1x32xf32>, %v: memref<2x3x2x16xf32>, %o: memref<2x3x2x16xf32>) {
  gdn.recurrent q(%q : memref<2x3x1x32xf32>) k(%k : memref<2x3x1x32xf32>) v(%v : memref<2x3x2x16xf32>) o(%o : memref<2x3x2x16xf32>)
  return
}

// -----

// Log-space g, given beta, separate states, explicit scale, bf16 inputs.
// CHECK-LABEL: func @log_space
// CHECK: gdn.recurrent q({{.*}}) k({{.*}}) v({{.*}}) g(%{{.*}} : memref<1x1x4xf32>) beta(%{{.*}} : memref<1x1x4xbf16>) initial_state(%{{.*}} : memref<1x4x64x32xf32>) final_state(%{{.*}} : memref<1x4x64x32xf32>) o(%{{.*}} : memref<1x1x4x32xbf16>) {scale = 1.250000e-01 : f32}
func.func @log_space(%q: memref<1x1x2x64xbf16>, %k: memref<1x1x2x64xbf16>, %v: memref<1x1x4x32xbf16>,
                     %g: memref<1x1x4xf32>, %beta: memref<1x1x4xbf16>,
                     %h0: memref<1x4x64x32xf32>, %ht: memref<1x4x64x32xf32>, %o: memref<1x1x4x32xbf16>) {
  gdn.recurrent q(%q : memref<1x1x2x64xbf16>) k(%k : memref<1x1x2x64xbf16>) v(%v : memref<1x1x4x32xbf16>)
      g(%g : memref<1x1x4xf32>) beta(%beta : memref<1x1x4xbf16>)
      initial_state(%h0 : memref<1x4x64x32xf32>) final_state(%ht : memref<1x4x64x32xf32>)
      o(%o : memref<1x1x4x32xbf16>) {scale = 0.125 : f32}
  return
}

// -----

// Fused gating, beta logits, L2 norm, in-place vk state, f16 inputs.
// CHECK-LABEL: func @fused
// CHECK: gdn.recurrent {{.*}} a(%{{.*}} : memref<3x2x8xf16>) A_log(%{{.*}} : memref<8xf32>) dt_bias(%{{.*}} : memref<8xf32>) b(%{{.*}} : memref<3x2x8xf16>) initial_state([[S:%.*]] : memref<3x8x32x64xf32>) final_state([[S]] : memref<3x8x32x64xf32>) o({{.*}}) {qk_l2norm, state_layout = #gdn.layout<vk>}
func.func @fused(%q: memref<3x2x4x64xf16>, %k: memref<3x2x4x64xf16>, %v: memref<3x2x8x32xf16>,
                 %a: memref<3x2x8xf16>, %A_log: memref<8xf32>, %dt_bias: memref<8xf32>, %b: memref<3x2x8xf16>,
                 %s: memref<3x8x32x64xf32>, %o: memref<3x2x8x32xf16>) {
  gdn.recurrent q(%q : memref<3x2x4x64xf16>) k(%k : memref<3x2x4x64xf16>) v(%v : memref<3x2x8x32xf16>)
      a(%a : memref<3x2x8xf16>) A_log(%A_log : memref<8xf32>) dt_bias(%dt_bias : memref<8xf32>)
      b(%b : memref<3x2x8xf16>)
      initial_state(%s : memref<3x8x32x64xf32>) final_state(%s : memref<3x8x32x64xf32>)
      o(%o : memref<3x2x8x32xf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// Only a final state (the initial state is zero); the kv layout spelled out
// is the default and is elided when printed.
// CHECK-LABEL: func @final_only
// CHECK: final_state(%{{.*}} : memref<1x1x32x8xf32>) o(%{{.*}} : memref<1x1x1x8xf32>){{$}}
func.func @final_only(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>,
                      %ht: memref<1x1x32x8xf32>, %o: memref<1x1x1x8xf32>) {
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>)
      final_state(%ht : memref<1x1x32x8xf32>) o(%o : memref<1x1x1x8xf32>) {state_layout = #gdn.layout<kv>}
  return
}

// -----

// Tensor form, only the o init: one result, tied to o.
// CHECK-LABEL: func @tensor_plain
// CHECK: %[[O:.*]] = gdn.recurrent q(%{{.*}} : tensor<2x3x1x32xf32>) k(%{{.*}} : tensor<2x3x1x32xf32>) v(%{{.*}} : tensor<2x3x2x16xf32>) o(%{{.*}} : tensor<2x3x2x16xf32>) -> tensor<2x3x2x16xf32>
// CHECK: return %[[O]]
func.func @tensor_plain(%q: tensor<2x3x1x32xf32>, %k: tensor<2x3x1x32xf32>, %v: tensor<2x3x2x16xf32>) -> tensor<2x3x2x16xf32> {
  %init = tensor.empty() : tensor<2x3x2x16xf32>
  %o = gdn.recurrent q(%q : tensor<2x3x1x32xf32>) k(%k : tensor<2x3x1x32xf32>) v(%v : tensor<2x3x2x16xf32>) o(%init : tensor<2x3x2x16xf32>) -> tensor<2x3x2x16xf32>
  return %o : tensor<2x3x2x16xf32>
}

// -----

// Tensor form of the in-place update: the same tensor is the initial state and
// the final-state init; results (final_state, o), attributes before the arrow.
// CHECK-LABEL: func @tensor_in_place
// CHECK: %[[R:.*]]:2 = gdn.recurrent {{.*}} a(%{{.*}} : tensor<3x2x8xf16>) A_log(%{{.*}} : tensor<8xf32>) dt_bias(%{{.*}} : tensor<8xf32>) b(%{{.*}} : tensor<3x2x8xf16>) initial_state([[S:%.*]] : tensor<3x8x32x64xf32>) final_state([[S]] : tensor<3x8x32x64xf32>) o(%{{.*}} : tensor<3x2x8x32xf16>) {qk_l2norm, state_layout = #gdn.layout<vk>} -> tensor<3x8x32x64xf32>, tensor<3x2x8x32xf16>
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @tensor_in_place(%q: tensor<3x2x4x64xf16>, %k: tensor<3x2x4x64xf16>, %v: tensor<3x2x8x32xf16>,
                           %a: tensor<3x2x8xf16>, %A_log: tensor<8xf32>, %dt_bias: tensor<8xf32>, %b: tensor<3x2x8xf16>,
                           %s: tensor<3x8x32x64xf32>, %init: tensor<3x2x8x32xf16>) -> (tensor<3x8x32x64xf32>, tensor<3x2x8x32xf16>) {
  %new_s, %o = gdn.recurrent q(%q : tensor<3x2x4x64xf16>) k(%k : tensor<3x2x4x64xf16>) v(%v : tensor<3x2x8x32xf16>)
      a(%a : tensor<3x2x8xf16>) A_log(%A_log : tensor<8xf32>) dt_bias(%dt_bias : tensor<8xf32>)
      b(%b : tensor<3x2x8xf16>)
      initial_state(%s : tensor<3x8x32x64xf32>) final_state(%s : tensor<3x8x32x64xf32>)
      o(%init : tensor<3x2x8x32xf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
      -> tensor<3x8x32x64xf32>, tensor<3x2x8x32xf16>
  return %new_s, %o : tensor<3x8x32x64xf32>, tensor<3x2x8x32xf16>
}

// -----

// Tensor form with a final state only (zero initial state) and log-space g.
// CHECK-LABEL: func @tensor_final_only
// CHECK: gdn.recurrent {{.*}} g(%{{.*}} : tensor<1x1x1xf32>) final_state(%{{.*}} : tensor<1x1x32x8xf32>) o(%{{.*}} : tensor<1x1x1x8xf32>) -> tensor<1x1x32x8xf32>, tensor<1x1x1x8xf32>{{$}}
func.func @tensor_final_only(%q: tensor<1x1x1x32xf32>, %k: tensor<1x1x1x32xf32>, %v: tensor<1x1x1x8xf32>, %g: tensor<1x1x1xf32>,
                             %ht: tensor<1x1x32x8xf32>, %init: tensor<1x1x1x8xf32>) -> (tensor<1x1x32x8xf32>, tensor<1x1x1x8xf32>) {
  %new_ht, %o = gdn.recurrent q(%q : tensor<1x1x1x32xf32>) k(%k : tensor<1x1x1x32xf32>) v(%v : tensor<1x1x1x8xf32>)
      g(%g : tensor<1x1x1xf32>) final_state(%ht : tensor<1x1x32x8xf32>) o(%init : tensor<1x1x1x8xf32>)
      -> tensor<1x1x32x8xf32>, tensor<1x1x1x8xf32>
  return %new_ht, %o : tensor<1x1x32x8xf32>, tensor<1x1x1x8xf32>
}

// -----

// A state pool: 6 slots for 4 sequences, addressed by state_indices (i64).
// CHECK-LABEL: func @pool
// CHECK: gdn.recurrent {{.*}} state_indices(%{{.*}} : memref<4xi64>) initial_state([[P:%.*]] : memref<6x2x16x32xf32>) final_state([[P]] : memref<6x2x16x32xf32>)
func.func @pool(%q: memref<4x1x1x32xbf16>, %k: memref<4x1x1x32xbf16>, %v: memref<4x1x2x16xbf16>,
                %idx: memref<4xi64>, %pool: memref<6x2x16x32xf32>, %o: memref<4x1x2x16xbf16>) {
  gdn.recurrent q(%q : memref<4x1x1x32xbf16>) k(%k : memref<4x1x1x32xbf16>) v(%v : memref<4x1x2x16xbf16>)
      state_indices(%idx : memref<4xi64>)
      initial_state(%pool : memref<6x2x16x32xf32>) final_state(%pool : memref<6x2x16x32xf32>)
      o(%o : memref<4x1x2x16xbf16>) {state_layout = #gdn.layout<vk>}
  return
}

// -----

// CHECK-LABEL: func @neg_eigval
// CHECK: gdn.recurrent {{.*}} b(%{{.*}} : memref<1x1x1xf32>) o({{.*}}) {allow_neg_eigval}
func.func @neg_eigval(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>,
                      %b: memref<1x1x1xf32>, %o: memref<1x1x1x8xf32>) {
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>)
      b(%b : memref<1x1x1xf32>) o(%o : memref<1x1x1x8xf32>) {allow_neg_eigval}
  return
}

// -----

// KDA: per-key fused gating (a [N, T, HV, K], dt_bias [HV * K]) and beta
// logits per value channel (b [N, T, HV, V]), in the vk layout.
// CHECK-LABEL: func @kda_fused
// CHECK: gdn.recurrent {{.*}} a(%{{.*}} : memref<2x1x4x64xbf16>) A_log(%{{.*}} : memref<4xf32>) dt_bias(%{{.*}} : memref<256xf32>) b(%{{.*}} : memref<2x1x4x32xbf16>) initial_state
func.func @kda_fused(%q: memref<2x1x4x64xbf16>, %k: memref<2x1x4x64xbf16>, %v: memref<2x1x4x32xbf16>,
                     %a: memref<2x1x4x64xbf16>, %A_log: memref<4xf32>, %dt_bias: memref<256xf32>,
                     %b: memref<2x1x4x32xbf16>, %s: memref<2x4x32x64xf32>, %o: memref<2x1x4x32xbf16>) {
  gdn.recurrent q(%q : memref<2x1x4x64xbf16>) k(%k : memref<2x1x4x64xbf16>) v(%v : memref<2x1x4x32xbf16>)
      a(%a : memref<2x1x4x64xbf16>) A_log(%A_log : memref<4xf32>) dt_bias(%dt_bias : memref<256xf32>)
      b(%b : memref<2x1x4x32xbf16>)
      initial_state(%s : memref<2x4x32x64xf32>) final_state(%s : memref<2x4x32x64xf32>)
      o(%o : memref<2x1x4x32xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// KDA in tensor form: log-space g per key channel, given beta per value
// channel.
// CHECK-LABEL: func @kda_tensor
// CHECK: %{{.*}} = gdn.recurrent {{.*}} g(%{{.*}} : tensor<1x3x2x32xf32>) beta(%{{.*}} : tensor<1x3x2x16xf32>) o(%{{.*}} : tensor<1x3x2x16xf32>) -> tensor<1x3x2x16xf32>
func.func @kda_tensor(%q: tensor<1x3x1x32xf32>, %k: tensor<1x3x1x32xf32>, %v: tensor<1x3x2x16xf32>,
                      %g: tensor<1x3x2x32xf32>, %beta: tensor<1x3x2x16xf32>) -> tensor<1x3x2x16xf32> {
  %init = tensor.empty() : tensor<1x3x2x16xf32>
  %o = gdn.recurrent q(%q : tensor<1x3x1x32xf32>) k(%k : tensor<1x3x1x32xf32>) v(%v : tensor<1x3x2x16xf32>)
      g(%g : tensor<1x3x2x32xf32>) beta(%beta : tensor<1x3x2x16xf32>)
      o(%init : tensor<1x3x2x16xf32>) -> tensor<1x3x2x16xf32>
  return %o : tensor<1x3x2x16xf32>
}

// -----

// Varlen with no sequence (N = 0): a batch-scoped verify buffer has N = 0
// rows, which no sequence writes (found by scripts/fuzz-inputs.py).
// CHECK-LABEL: func @varlen_no_sequence_verify
// CHECK: intermediate_states(%{{.*}} : memref<0x4x1x32x8xf32>)
func.func @varlen_no_sequence_verify(%q: memref<1x4x1x32xf32>, %k: memref<1x4x1x32xf32>, %v: memref<1x4x1x8xf32>, %cu: memref<1xi32>, %inter: memref<0x4x1x32x8xf32>, %o: memref<1x4x1x8xf32>) {
  gdn.recurrent q(%q : memref<1x4x1x32xf32>) k(%k : memref<1x4x1x32xf32>) v(%v : memref<1x4x1x8xf32>) cu_seqlens(%cu : memref<1xi32>) intermediate_states(%inter : memref<0x4x1x32x8xf32>) o(%o : memref<1x4x1x8xf32>)
  return
}
