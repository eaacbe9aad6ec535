// Qwen3.5-27B (dense) decode: GQA ratio 3 (H=16 q/k heads, HV=48 value heads),
// K=V=128, N=4, bf16 inputs, fused gating, beta logits, L2 norm, vk state.
func.func @gqa3(%q: memref<4x1x16x128xbf16>,
    %k: memref<4x1x16x128xbf16>,
    %v: memref<4x1x48x128xbf16>,
    %a: memref<4x1x48xbf16>,
    %A_log: memref<48xf32>,
    %dt_bias: memref<48xf32>,
    %b: memref<4x1x48xbf16>,
    %state: memref<4x48x128x128xf32>,
    %o: memref<4x1x48x128xbf16>) {
  gdn.recurrent q(%q : memref<4x1x16x128xbf16>)
      k(%k : memref<4x1x16x128xbf16>)
      v(%v : memref<4x1x48x128xbf16>)
      a(%a : memref<4x1x48xbf16>)
      A_log(%A_log : memref<48xf32>)
      dt_bias(%dt_bias : memref<48xf32>)
      b(%b : memref<4x1x48xbf16>)
      initial_state(%state : memref<4x48x128x128xf32>)
      final_state(%state : memref<4x48x128x128xf32>)
      o(%o : memref<4x1x48x128xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
