// Kimi-Linear-48B KDA speculative verify: as kimi_linear_kda_decode.mlir with
// T=4 draft tokens a request (the token loop staged through shared memory on
// the GPU, the per-key decay [chunk, K] computed once a CTA): a bf16 pool of
// 12 slots read at state_indices and not written (no final_state: SGLang's
// disable_state_update), the state after every token into a pool-scoped bf16
// buffer [9, 4, HV, V, K] at intermediate_state_indices (target verify).
// Run: gdn-run --check examples/kimi_linear_kda_verify_t4.mlir
func.func @kda_verify(%q: memref<8x4x32x128xbf16>,
    %k: memref<8x4x32x128xbf16>,
    %v: memref<8x4x32x128xbf16>,
    %a: memref<8x4x32x128xbf16>,
    %A_log: memref<32xf32>,
    %dt_bias: memref<4096xf32>,
    %b: memref<8x4x32xbf16>,
    %state_indices: memref<8xi32>,
    %inter_indices: memref<8xi32>,
    %pool: memref<12x32x128x128xbf16>,
    %inter: memref<9x4x32x128x128xbf16>,
    %o: memref<8x4x32x128xbf16>) {
  gdn.recurrent q(%q : memref<8x4x32x128xbf16>)
      k(%k : memref<8x4x32x128xbf16>)
      v(%v : memref<8x4x32x128xbf16>)
      a(%a : memref<8x4x32x128xbf16>)
      A_log(%A_log : memref<32xf32>)
      dt_bias(%dt_bias : memref<4096xf32>)
      b(%b : memref<8x4x32xbf16>)
      state_indices(%state_indices : memref<8xi32>)
      intermediate_state_indices(%inter_indices : memref<8xi32>)
      initial_state(%pool : memref<12x32x128x128xbf16>)
      intermediate_states(%inter : memref<9x4x32x128x128xbf16>)
      o(%o : memref<8x4x32x128xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
