// KDA on the CPU against the fp64 reference: the decay per key channel
// (log-space gk, and fused gating from a [.., HV, K] with dt_bias [HV * K]),
// beta per value channel (given, and logits with allow_neg_eigval), in both
// layouts with K != V, GQA, pools, varlen and per-token states.
// RUN: split-file %s %t
// RUN: gdn-run --target=cpu --check %t/gk_kv.mlir | FileCheck %s
// RUN: gdn-run --target=cpu --check --seed=5 %t/gk_kv.mlir | FileCheck %s
// RUN: gdn-run --target=cpu --check %t/fused_vk_pool.mlir | FileCheck %s --check-prefix=POOL
// RUN: gdn-run --target=cpu --check %t/beta_channel.mlir | FileCheck %s
// RUN: gdn-run --target=cpu --check %t/beta_channel_logits.mlir | FileCheck %s
// RUN: gdn-run --target=cpu --check %t/varlen_verify.mlir | FileCheck %s --check-prefix=VERIFY
// RUN: gdn-run --target=cpu --check %examples/kimi_linear_kda_decode.mlir | FileCheck %s --check-prefix=POOL
// RUN: gdn-run --target=cpu --check %examples/kimi_linear_kda_verify_t4.mlir | FileCheck %s --check-prefix=VERIFY
// The GPU kernels of the same ops compile (ptxas: test/Target/PTX/ptxas-kda.mlir).
// RUN: gdn-run --emit=ptx %t/varlen_verify.mlir | FileCheck %s --check-prefix=PTX
// CHECK: check final_state {{.*}} ok
// CHECK: check o {{.*}} ok
// CHECK-NOT: FAILED
// POOL: check final_state {{.*}} ok
// POOL: check untouched slots: 0 of {{[0-9]+}} changed  ok
// POOL: check o {{.*}} ok
// POOL-NOT: FAILED
// VERIFY: check intermediate {{.*}} ok
// VERIFY: check unwritten intermediate steps: 0 of {{[0-9]+}} changed  ok
// VERIFY: check o {{.*}} ok
// VERIFY-NOT: FAILED
// PTX: .entry kda_varlen_verify_recurrent

//--- gk_kv.mlir
// Log-space gk [N, T, HV, K], given beta per head, kv layout, K=64 != V=32,
// GQA 1:2, separate initial and final states.
func.func @gk_kv(%q: memref<2x3x1x64xf32>, %k: memref<2x3x1x64xf32>, %v: memref<2x3x2x32xf32>,
                 %g: memref<2x3x2x64xf32>, %beta: memref<2x3x2xf32>,
                 %h0: memref<2x2x64x32xf32>, %ht: memref<2x2x64x32xf32>, %o: memref<2x3x2x32xf32>) {
  gdn.recurrent q(%q : memref<2x3x1x64xf32>) k(%k : memref<2x3x1x64xf32>) v(%v : memref<2x3x2x32xf32>)
      g(%g : memref<2x3x2x64xf32>) beta(%beta : memref<2x3x2xf32>)
      initial_state(%h0 : memref<2x2x64x32xf32>) final_state(%ht : memref<2x2x64x32xf32>)
      o(%o : memref<2x3x2x32xf32>) {qk_l2norm}
  return
}

//--- fused_vk_pool.mlir
// Per-key fused gating, bf16, a bf16 pool in the vk layout with padding rows.
func.func @fused_vk_pool(%q: memref<4x2x2x32xbf16>, %k: memref<4x2x2x32xbf16>, %v: memref<4x2x4x64xbf16>,
                         %a: memref<4x2x4x32xbf16>, %A_log: memref<4xf32>, %dt_bias: memref<128xf32>,
                         %b: memref<4x2x4xbf16>, %idx: memref<4xi64>,
                         %pool: memref<6x4x64x32xbf16>, %o: memref<4x2x4x64xbf16>) {
  gdn.recurrent q(%q : memref<4x2x2x32xbf16>) k(%k : memref<4x2x2x32xbf16>) v(%v : memref<4x2x4x64xbf16>)
      a(%a : memref<4x2x4x32xbf16>) A_log(%A_log : memref<4xf32>) dt_bias(%dt_bias : memref<128xf32>)
      b(%b : memref<4x2x4xbf16>) state_indices(%idx : memref<4xi64>)
      initial_state(%pool : memref<6x4x64x32xbf16>) final_state(%pool : memref<6x4x64x32xbf16>)
      o(%o : memref<4x2x4x64xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

//--- beta_channel.mlir
// Given beta per value channel [N, T, HV, V] with a per-key g, vk layout.
func.func @beta_channel(%q: memref<2x2x1x32xf32>, %k: memref<2x2x1x32xf32>, %v: memref<2x2x2x16xf32>,
                        %g: memref<2x2x2x32xf32>, %beta: memref<2x2x2x16xf32>,
                        %s: memref<2x2x16x32xf32>, %o: memref<2x2x2x16xf32>) {
  gdn.recurrent q(%q : memref<2x2x1x32xf32>) k(%k : memref<2x2x1x32xf32>) v(%v : memref<2x2x2x16xf32>)
      g(%g : memref<2x2x2x32xf32>) beta(%beta : memref<2x2x2x16xf32>)
      initial_state(%s : memref<2x2x16x32xf32>) final_state(%s : memref<2x2x16x32xf32>)
      o(%o : memref<2x2x2x16xf32>) {state_layout = #gdn.layout<vk>}
  return
}

//--- beta_channel_logits.mlir
// Beta logits per value channel with allow_neg_eigval (beta = 2 sigmoid(b))
// and per-head fused gating, kv layout.
func.func @beta_channel_logits(%q: memref<1x3x2x32xbf16>, %k: memref<1x3x2x32xbf16>, %v: memref<1x3x2x64xbf16>,
                               %a: memref<1x3x2xbf16>, %A_log: memref<2xf32>, %dt_bias: memref<2xf32>,
                               %b: memref<1x3x2x64xbf16>, %ht: memref<1x2x32x64xf32>, %o: memref<1x3x2x64xbf16>) {
  gdn.recurrent q(%q : memref<1x3x2x32xbf16>) k(%k : memref<1x3x2x32xbf16>) v(%v : memref<1x3x2x64xbf16>)
      a(%a : memref<1x3x2xbf16>) A_log(%A_log : memref<2xf32>) dt_bias(%dt_bias : memref<2xf32>)
      b(%b : memref<1x3x2x64xbf16>) final_state(%ht : memref<1x2x32x64xf32>)
      o(%o : memref<1x3x2x64xbf16>) {qk_l2norm, allow_neg_eigval}
  return
}

//--- varlen_verify.mlir
// Varlen packed tokens with per-key fused gating and per-channel beta logits,
// the state after every token into a batch-scoped buffer, no commit.
func.func @kda_varlen_verify(%q: memref<1x9x1x32xbf16>, %k: memref<1x9x1x32xbf16>, %v: memref<1x9x2x32xbf16>,
                             %a: memref<1x9x2x32xbf16>, %A_log: memref<2xf32>, %dt_bias: memref<64xf32>,
                             %b: memref<1x9x2x32xbf16>, %cu: memref<4xi32>, %h0: memref<3x2x32x32xf32>,
                             %inter: memref<3x9x2x32x32xf32>, %o: memref<1x9x2x32xbf16>) {
  gdn.recurrent q(%q : memref<1x9x1x32xbf16>) k(%k : memref<1x9x1x32xbf16>) v(%v : memref<1x9x2x32xbf16>)
      a(%a : memref<1x9x2x32xbf16>) A_log(%A_log : memref<2xf32>) dt_bias(%dt_bias : memref<64xf32>)
      b(%b : memref<1x9x2x32xbf16>) cu_seqlens(%cu : memref<4xi32>)
      initial_state(%h0 : memref<3x2x32x32xf32>) intermediate_states(%inter : memref<3x9x2x32x32xf32>)
      o(%o : memref<1x9x2x32xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
