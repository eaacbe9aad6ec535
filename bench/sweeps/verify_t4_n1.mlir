// SGLang speculative verify (MTP, T=4 draft tokens): N=1 request, Qwen3-Next
// rank shapes (H=16, HV=32, K=V=128), fused gating, beta logits, L2 norm.
// The pool of 12 bf16 slots is read at state_indices and NOT written (no
// final_state: SGLang's disable_state_update); the state after every draft
// token goes to the pool-scoped buffer [slots, T, HV, V, K] at
// intermediate_state_indices, from which the caller commits the accepted step.
// Run: gdn-run --check bench/sweeps/verify_t4_n1.mlir (or bench/sweep_flags.sh)
func.func @verify(%q: memref<1x4x16x128xbf16>,
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
