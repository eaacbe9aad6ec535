// REQUIRES: ptxas
// Strided operands (views of SGLang's mixed_qkv, pools with a slot pitch;
// scripts/strided-variant.py) take the same kernel paths as dense ones: the
// producer warp's cp.async.bulk row copies (16-byte multiples, 16-byte
// aligned under the verifier's stride rule) and the L2 prefetch of a later
// CTA's state tile, and assemble for sm_90a without spills.
// RUN: python3 %gdn_src_root/scripts/strided-variant.py %examples/sglang_verify_t4.mlir > %t.verify.mlir
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<producer_stages = 2>' %t.verify.mlir > %t.ws.ptx
// RUN: FileCheck %s --check-prefix=WS < %t.ws.ptx
// RUN: %ptxas -arch=sm_90a -v %t.ws.ptx -o %t.ws.cubin 2>&1 | FileCheck %s
// RUN: python3 %gdn_src_root/scripts/strided-variant.py %gdn_src_root/bench/sweeps/decode_n64_bf16_pool.mlir > %t.decode.mlir
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<state_prefetch_distance = 1>' %t.decode.mlir > %t.decode.ptx
// RUN: FileCheck %s --check-prefix=PREFETCH < %t.decode.ptx
// RUN: %ptxas -arch=sm_90a -v %t.decode.ptx -o %t.decode.cubin 2>&1 | FileCheck %s
// WS: cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes
// PREFETCH: cp.async.bulk.prefetch.L2.global
// CHECK: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
