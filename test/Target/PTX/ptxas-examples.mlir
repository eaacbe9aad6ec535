// REQUIRES: ptxas
// Every example's PTX assembles for sm_90a with no stack frame and no spills.
// RUN: gdn-run --emit=ptx %examples/qwen3_next_decode.mlir > %t.decode.ptx
// RUN: %ptxas -arch=sm_90a -v %t.decode.ptx -o %t.decode.cubin 2>&1 | FileCheck %s
// RUN: gdn-run --emit=ptx %examples/qwen3_next_mtp.mlir > %t.mtp.ptx
// RUN: %ptxas -arch=sm_90a -v %t.mtp.ptx -o %t.mtp.cubin 2>&1 | FileCheck %s
// RUN: gdn-run --emit=ptx %examples/kv_k128_v64.mlir > %t.kv.ptx
// RUN: %ptxas -arch=sm_90a -v %t.kv.ptx -o %t.kv.cubin 2>&1 | FileCheck %s
// RUN: gdn-run --emit=ptx %examples/qwen35_27b_gqa3.mlir > %t.gqa3.ptx
// RUN: %ptxas -arch=sm_90a -v %t.gqa3.ptx -o %t.gqa3.cubin 2>&1 | FileCheck %s
// N = 1 decode (2 lanes along V by default), f32 in place and a bf16 pool.
// RUN: gdn-run --emit=ptx %examples/../bench/sweeps/decode_n1_f32.mlir > %t.n1.ptx
// RUN: %ptxas -arch=sm_90a -v %t.n1.ptx -o %t.n1.cubin 2>&1 | FileCheck %s
// RUN: gdn-run --emit=ptx %examples/../bench/sweeps/decode_n1_bf16_pool.mlir > %t.n1bf16.ptx
// RUN: %ptxas -arch=sm_90a -v %t.n1bf16.ptx -o %t.n1bf16.cubin 2>&1 | FileCheck %s
// N = 64 bf16 pool decode (2 lanes along V, 4 columns a lane, an L2
// prefetch of a later CTA's 8 KiB state tile).
// RUN: gdn-run --emit=ptx %examples/../bench/sweeps/decode_n64_bf16_pool.mlir > %t.n64bf16.ptx
// RUN: %ptxas -arch=sm_90a -v %t.n64bf16.ptx -o %t.n64bf16.cubin 2>&1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=PREFETCH < %t.n64bf16.ptx
// PREFETCH: cp.async.bulk.prefetch.L2.global [%rd{{[0-9]+}}], %r{{[0-9]+}};
// Programmatic dependent launch on the producer-fed T = 12 token loop: the
// next kernel may launch after the recurrence.
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<launch = programmatic>' %examples/../bench/sweeps/fla_t12_n1_kv.mlir > %t.pdl.ptx
// RUN: %ptxas -arch=sm_90a -v %t.pdl.ptx -o %t.pdl.cubin 2>&1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=PDL < %t.pdl.ptx
// PDL: griddepcontrol.wait;
// PDL: griddepcontrol.wait;
// PDL: cp.async.bulk.shared::cluster.global
// PDL: griddepcontrol.launch_dependents;
// PDL: st.global
// RUN: gdn-run --emit=ptx %examples/sglang_pool_decode.mlir > %t.pool.ptx
// RUN: %ptxas -arch=sm_90a -v %t.pool.ptx -o %t.pool.cubin 2>&1 | FileCheck %s
// RUN: gdn-run --emit=ptx %examples/sglang_pool_decode_bf16.mlir > %t.poolbf16.ptx
// RUN: %ptxas -arch=sm_90a -v %t.poolbf16.ptx -o %t.poolbf16.cubin 2>&1 | FileCheck %s
// RUN: gdn-run --emit=ptx %examples/sglang_verify_t4.mlir > %t.verify.ptx
// RUN: %ptxas -arch=sm_90a -v %t.verify.ptx -o %t.verify.cubin 2>&1 | FileCheck %s
// The SGLang extend (16 tokens a sequence) on its token loop; its default,
// the tensor-core solve on 8 warps, uncapped on its one-CTA-an-SM grid,
// does not spill (docs/cost-model.md#varlen-prefill).
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<solve = token_by_token>' %examples/sglang_varlen_extend.mlir > %t.varlen.ptx
// RUN: %ptxas -arch=sm_90a -v %t.varlen.ptx -o %t.varlen.cubin 2>&1 | FileCheck %s
// RUN: gdn-run --emit=ptx %examples/sglang_varlen_extend.mlir > %t.varlen-tc.ptx
// RUN: FileCheck %s --check-prefix=MMA < %t.varlen-tc.ptx
// RUN: %ptxas -arch=sm_90a -v %t.varlen-tc.ptx -o %t.varlen-tc.cubin 2>&1 | FileCheck %s
// MMA: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// RUN: gdn-run --emit=ptx %examples/kimi_linear_kda_decode.mlir > %t.kda.ptx
// RUN: %ptxas -arch=sm_90a -v %t.kda.ptx -o %t.kda.cubin 2>&1 | FileCheck %s
// RUN: gdn-run --emit=ptx %examples/kimi_linear_kda_verify_t4.mlir > %t.kdaverify.ptx
// RUN: %ptxas -arch=sm_90a -v %t.kdaverify.ptx -o %t.kdaverify.cubin 2>&1 | FileCheck %s
// EAGLE tree verify: staged tokens by every thread before one barrier (at
// N = 1 the default stages them through a producer warp,
// ptxas-warp-specialized.mlir) and straight from global memory. In the staged token loop (after the one
// barrier) the only global loads are the reloads of a parent's or the
// initial state, 16-byte vectors (8 bf16: K / 16 a lane, 2 lanes along V) as
// loadState reads them; no second barrier.
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<producer_stages = 0>' %examples/sglang_verify_tree.mlir > %t.tree.ptx
// RUN: %ptxas -arch=sm_90a -v %t.tree.ptx -o %t.tree.cubin 2>&1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=TREE < %t.tree.ptx
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<staged_tokens = 0>' %examples/sglang_verify_tree.mlir > %t.tree-global.ptx
// RUN: %ptxas -arch=sm_90a -v %t.tree-global.ptx -o %t.tree-global.cubin 2>&1 | FileCheck %s
// The schedules the options can pick assemble as well.
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<columns_per_lane = 1, warps = 8>' %examples/qwen3_next_decode.mlir > %t.r1.ptx
// RUN: %ptxas -arch=sm_90a -v %t.r1.ptx -o %t.r1.cubin 2>&1 | FileCheck %s
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<columns_per_lane = 8, warps = 2>' %examples/qwen3_next_decode.mlir > %t.r8.ptx
// RUN: %ptxas -arch=sm_90a -v %t.r8.ptx -o %t.r8.cubin 2>&1 | FileCheck %s

// CHECK: Compiling entry function '{{.*}}_recurrent' for 'sm_90a'
// CHECK: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// TREE: bar.sync
// TREE-NOT: bar.sync
// TREE: ld.global.v4.b32
// TREE-NOT: bar.sync
// TREE: ret;
