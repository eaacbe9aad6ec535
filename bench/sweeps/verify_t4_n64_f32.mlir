// FlashInfer's gated_delta_rule_mtp regime (SGLang's FlashInfer verify on
// Hopper): verify T = 4, N = 64, an fp32 pool of 68 slots read at state_indices
// and fp32 per-token states (the only buffer dtype gated_delta_rule_mtp takes),
// Qwen3-Next rank shapes (H = 16, HV = 32, K = V = 128), bf16 q/k/v.
// Run: gdn-run --target=cuda --check --bench bench/sweeps/verify_t4_n64_f32.mlir
func.func @verify(%q: memref<64x4x16x128xbf16>,
    %k: memref<64x4x16x128xbf16>,
    %v: memref<64x4x32x128xbf16>,
    %a: memref<64x4x32xbf16>,
    %A_log: memref<32xf32>,
    %dt_bias: memref<32xf32>,
    %b: memref<64x4x32xbf16>,
    %state_indices: memref<64xi32>,
    %intermediate_state_indices: memref<64xi32>,
    %pool: memref<68x32x128x128xf32>,
    %intermediate: memref<68x4x32x128x128xf32>,
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
      initial_state(%pool : memref<68x32x128x128xf32>)
      intermediate_states(%intermediate : memref<68x4x32x128x128xf32>)
      o(%o : memref<64x4x32x128xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
