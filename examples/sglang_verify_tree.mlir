// SGLang EAGLE tree verify (topk > 1, T=4 draft tokens): N=8 requests,
// Qwen3-Next rank shapes (H=16, HV=32, K=V=128), fused gating, beta logits,
// L2 norm. As examples/sglang_verify_t4.mlir (the bf16 pool is read at
// state_indices and not written; the state after every draft token goes to
// the pool-scoped buffer), plus SGLang's retrieve_parent_token [N, T]: draft
// token s starts from the state after its parent token p, read back from the
// buffer (as stored, in bf16) unless p = s - 1 (the carried fp32 state).
// gdn-run draws a random tree per request (--parents=random), e.g.
//        0
//       / \
//      1   2      retrieve_parent_token = [-1, 0, 0, 1]
//     /
//    3
// Run: gdn-run --check examples/sglang_verify_tree.mlir
//      gdn-run --check --parents=-1,0,0,1 examples/sglang_verify_tree.mlir
func.func @verify_tree(%q: memref<8x4x16x128xbf16>,
    %k: memref<8x4x16x128xbf16>,
    %v: memref<8x4x32x128xbf16>,
    %a: memref<8x4x32xbf16>,
    %A_log: memref<32xf32>,
    %dt_bias: memref<32xf32>,
    %b: memref<8x4x32xbf16>,
    %state_indices: memref<8xi32>,
    %intermediate_state_indices: memref<8xi32>,
    %retrieve_parent_token: memref<8x4xi32>,
    %pool: memref<12x32x128x128xbf16>,
    %intermediate: memref<12x4x32x128x128xbf16>,
    %o: memref<8x4x32x128xbf16>) {
  gdn.recurrent q(%q : memref<8x4x16x128xbf16>)
      k(%k : memref<8x4x16x128xbf16>)
      v(%v : memref<8x4x32x128xbf16>)
      a(%a : memref<8x4x32xbf16>)
      A_log(%A_log : memref<32xf32>)
      dt_bias(%dt_bias : memref<32xf32>)
      b(%b : memref<8x4x32xbf16>)
      state_indices(%state_indices : memref<8xi32>)
      intermediate_state_indices(%intermediate_state_indices : memref<8xi32>)
      retrieve_parent_token(%retrieve_parent_token : memref<8x4xi32>)
      initial_state(%pool : memref<12x32x128x128xbf16>)
      intermediate_states(%intermediate : memref<12x4x32x128x128xbf16>)
      o(%o : memref<8x4x32x128xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
