// Kimi-Linear-48B KDA (Kimi Delta Attention) decode step as SGLang runs it
// (fused_sigmoid_gating_delta_rule_update with is_kda=True): N=8 requests,
// T=1, H=HV=32 heads, K=V=128, bf16 q/k/v, the decay per key channel from
// fused gating g[k] = -exp(A_log[hv]) softplus(a[k] + dt_bias[hv * K + k])
// (a [N, T, HV, K], dt_bias flattened [HV * K]), beta logits b per head,
// q/k L2 norm, and a pool of 12 fp32 state slots [slots, HV, V, K] updated in
// place at state_indices (i32; < 0: padding row, no slot touched, o rows 0).
// Run: gdn-run --check examples/kimi_linear_kda_decode.mlir
func.func @kda_decode(%q: memref<8x1x32x128xbf16>,
    %k: memref<8x1x32x128xbf16>,
    %v: memref<8x1x32x128xbf16>,
    %a: memref<8x1x32x128xbf16>,
    %A_log: memref<32xf32>,
    %dt_bias: memref<4096xf32>,
    %b: memref<8x1x32xbf16>,
    %state_indices: memref<8xi32>,
    %pool: memref<12x32x128x128xf32>,
    %o: memref<8x1x32x128xbf16>) {
  gdn.recurrent q(%q : memref<8x1x32x128xbf16>)
      k(%k : memref<8x1x32x128xbf16>)
      v(%v : memref<8x1x32x128xbf16>)
      a(%a : memref<8x1x32x128xbf16>)
      A_log(%A_log : memref<32xf32>)
      dt_bias(%dt_bias : memref<4096xf32>)
      b(%b : memref<8x1x32xbf16>)
      state_indices(%state_indices : memref<8xi32>)
      initial_state(%pool : memref<12x32x128x128xf32>)
      final_state(%pool : memref<12x32x128x128xf32>)
      o(%o : memref<8x1x32x128xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
