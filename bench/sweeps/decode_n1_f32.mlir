// Qwen3-Next decode at N=1 (one sequence; H=16, HV=32, K=V=128, fp32 vk state
// in place): the latency case of issue 4, where the cost model takes 1 V
// column a lane over 2 lanes along V. Run: gdn-run --check --bench bench/sweeps/decode_n1_f32.mlir
func.func @decode(%q: memref<1x1x16x128xbf16>,
    %k: memref<1x1x16x128xbf16>,
    %v: memref<1x1x32x128xbf16>,
    %a: memref<1x1x32xbf16>,
    %A_log: memref<32xf32>,
    %dt_bias: memref<32xf32>,
    %b: memref<1x1x32xbf16>,
    %state: memref<1x32x128x128xf32>,
    %o: memref<1x1x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x1x16x128xbf16>)
      k(%k : memref<1x1x16x128xbf16>)
      v(%v : memref<1x1x32x128xbf16>)
      a(%a : memref<1x1x32xbf16>)
      A_log(%A_log : memref<32xf32>)
      dt_bias(%dt_bias : memref<32xf32>)
      b(%b : memref<1x1x32xbf16>)
      initial_state(%state : memref<1x32x128x128xf32>)
      final_state(%state : memref<1x32x128x128xf32>)
      o(%o : memref<1x1x32x128xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
