// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="chip=sm_90a sm-count=132" | FileCheck %s
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="chip=sm_90a sm-count=132" -convert-gdn-to-gpu | FileCheck %s --check-prefix=LOWER
// A per-key decay (KDA) over several chunks takes chunk_parallel
// (KeyDecayChunks.cpp): the first launch's Gram with each key's decay in
// its sums on CUDA cores, the scan's q and k decayed per key before its
// products, the update's keys into a [chunk, K] buffer of their own.

// CHECK-LABEL: func.func @kda_prefill
// CHECK: solve = chunk_parallel, precision = bf16
// LOWER-LABEL: gpu.func @kda_prefill_chunk_solves
// LOWER: scf.for
// LOWER: gpu.shuffle xor
// LOWER-LABEL: gpu.func @kda_prefill_recurrent
func.func @kda_prefill(%q: memref<2x200x16x128xbf16>, %k: memref<2x200x16x128xbf16>, %v: memref<2x200x32x128xbf16>,
    %a: memref<2x200x32x128xbf16>, %A_log: memref<32xf32>, %dt_bias: memref<4096xf32>, %b: memref<2x200x32xbf16>,
    %s0: memref<2x32x128x128xf32>, %s1: memref<2x32x128x128xf32>, %o: memref<2x200x32x128xbf16>) {
  gdn.recurrent q(%q : memref<2x200x16x128xbf16>) k(%k : memref<2x200x16x128xbf16>) v(%v : memref<2x200x32x128xbf16>)
      a(%a : memref<2x200x32x128xbf16>) A_log(%A_log : memref<32xf32>) dt_bias(%dt_bias : memref<4096xf32>)
      b(%b : memref<2x200x32xbf16>) initial_state(%s0 : memref<2x32x128x128xf32>) final_state(%s1 : memref<2x32x128x128xf32>)
      o(%o : memref<2x200x32x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// One chunk (T <= 16) keeps the token loop: KDA takes no one-launch form.
// CHECK-LABEL: func.func @kda_verify
// CHECK: solve = token_by_token
func.func @kda_verify(%q: memref<2x12x16x128xbf16>, %k: memref<2x12x16x128xbf16>, %v: memref<2x12x32x128xbf16>,
    %g: memref<2x12x32x128xf32>, %beta: memref<2x12x32xbf16>,
    %s0: memref<2x32x128x128xf32>, %s1: memref<2x32x128x128xf32>, %o: memref<2x12x32x128xbf16>) {
  gdn.recurrent q(%q : memref<2x12x16x128xbf16>) k(%k : memref<2x12x16x128xbf16>) v(%v : memref<2x12x32x128xbf16>)
      g(%g : memref<2x12x32x128xf32>) beta(%beta : memref<2x12x32xbf16>)
      initial_state(%s0 : memref<2x32x128x128xf32>) final_state(%s1 : memref<2x32x128x128xf32>)
      o(%o : memref<2x12x32x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// On the tiny grid (N = 1, HV = 32) two chunks but not two whole ones keep
// the token loop (faster there: docs/cost-model.md#kda-chunks); 32 tokens
// take chunk_parallel.
// CHECK-LABEL: func.func @kda_tiny_17
// CHECK: solve = token_by_token
// CHECK-LABEL: func.func @kda_tiny_32
// CHECK: solve = chunk_parallel
func.func @kda_tiny_17(%q: memref<1x17x16x128xbf16>, %k: memref<1x17x16x128xbf16>, %v: memref<1x17x32x128xbf16>,
    %g: memref<1x17x32x128xf32>, %beta: memref<1x17x32xbf16>,
    %s0: memref<1x32x128x128xf32>, %s1: memref<1x32x128x128xf32>, %o: memref<1x17x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x17x16x128xbf16>) k(%k : memref<1x17x16x128xbf16>) v(%v : memref<1x17x32x128xbf16>)
      g(%g : memref<1x17x32x128xf32>) beta(%beta : memref<1x17x32xbf16>)
      initial_state(%s0 : memref<1x32x128x128xf32>) final_state(%s1 : memref<1x32x128x128xf32>)
      o(%o : memref<1x17x32x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

func.func @kda_tiny_32(%q: memref<1x32x16x128xbf16>, %k: memref<1x32x16x128xbf16>, %v: memref<1x32x32x128xbf16>,
    %g: memref<1x32x32x128xf32>, %beta: memref<1x32x32xbf16>,
    %s0: memref<1x32x128x128xf32>, %s1: memref<1x32x128x128xf32>, %o: memref<1x32x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x32x16x128xbf16>) k(%k : memref<1x32x16x128xbf16>) v(%v : memref<1x32x32x128xbf16>)
      g(%g : memref<1x32x32x128xf32>) beta(%beta : memref<1x32x32xbf16>)
      initial_state(%s0 : memref<1x32x128x128xf32>) final_state(%s1 : memref<1x32x128x128xf32>)
      o(%o : memref<1x32x32x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// K = 64: not yet checked on a GPU, so the cost model keeps the token loop.
// CHECK-LABEL: func.func @kda_k64
// CHECK: solve = token_by_token
func.func @kda_k64(%q: memref<2x200x16x64xbf16>, %k: memref<2x200x16x64xbf16>, %v: memref<2x200x32x128xbf16>,
    %g: memref<2x200x32x64xf32>, %beta: memref<2x200x32xbf16>,
    %s0: memref<2x32x128x64xf32>, %s1: memref<2x32x128x64xf32>, %o: memref<2x200x32x128xbf16>) {
  gdn.recurrent q(%q : memref<2x200x16x64xbf16>) k(%k : memref<2x200x16x64xbf16>) v(%v : memref<2x200x32x128xbf16>)
      g(%g : memref<2x200x32x64xf32>) beta(%beta : memref<2x200x32xbf16>)
      initial_state(%s0 : memref<2x32x128x64xf32>) final_state(%s1 : memref<2x32x128x64xf32>)
      o(%o : memref<2x200x32x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
