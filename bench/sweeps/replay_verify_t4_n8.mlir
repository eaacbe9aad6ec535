// Replayed verify (FlashInfer's ReplaySSM / SGLang's ring-write layout), MTP
// T = 4 draft tokens, N = 8 requests, Qwen3-Next rank shapes (H = 16,
// HV = 32, K = V = 128), fused gating, beta logits, qk L2 norm: the pool of
// 16 bf16 slots is read at state_indices and not written; instead of the
// state after every token, each token's raw k and v, log decay and beta go
// to the slot's window row (L = 4), which a gdn.replay_commit replays.
// Run: gdn-run --check bench/sweeps/replay_verify_t4_n8.mlir (checks the
// windows against the fp64 reference too).
func.func @replay_verify(%q: memref<8x4x16x128xbf16>, %k: memref<8x4x16x128xbf16>,
    %v: memref<8x4x32x128xbf16>, %a: memref<8x4x32xbf16>, %A_log: memref<32xf32>,
    %dt_bias: memref<32xf32>, %b: memref<8x4x32xbf16>, %state_indices: memref<8xi32>,
    %pool: memref<16x32x128x128xbf16>,
    %k_window: memref<16x16x4x128xbf16>, %v_window: memref<16x32x4x128xbf16>,
    %g_window: memref<16x32x4xf32>, %beta_window: memref<16x32x4xf32>,
    %o: memref<8x4x32x128xbf16>) {
  gdn.recurrent q(%q : memref<8x4x16x128xbf16>) k(%k : memref<8x4x16x128xbf16>)
      v(%v : memref<8x4x32x128xbf16>) a(%a : memref<8x4x32xbf16>) A_log(%A_log : memref<32xf32>)
      dt_bias(%dt_bias : memref<32xf32>) b(%b : memref<8x4x32xbf16>)
      state_indices(%state_indices : memref<8xi32>) initial_state(%pool : memref<16x32x128x128xbf16>)
      k_window(%k_window : memref<16x16x4x128xbf16>) v_window(%v_window : memref<16x32x4x128xbf16>)
      g_window(%g_window : memref<16x32x4xf32>) beta_window(%beta_window : memref<16x32x4xf32>)
      o(%o : memref<8x4x32x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
