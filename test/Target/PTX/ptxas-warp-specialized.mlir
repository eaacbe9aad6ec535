// REQUIRES: ptxas
// A producer warp's kernels (producer_stages) assemble for sm_90a with no
// stack frame and no spills, and their PTX holds what the schedule asks for:
// the ring's mbarriers, bulk async copies completing on them as transactions,
// the consumers' parity waits and, with consumer_registers, setmaxnreg under
// a register count fixed at entry (reqntid, minnctapersm 1: without them
// ptxas ignores setmaxnreg, warning C7508). Without producer_stages none of
// it is emitted (the cost model takes a producer for verify and the T = 12
// final state on a tiny grid only, N * HV <= 32 at V = 128: not for
// sglang_verify_t4.mlir, N = 8).
// A pinned ring past 48 KiB (8 slots of 32 tokens, 146 KiB): its slots in
// dynamic shared memory, the mbarriers (8 x 16 bytes) static (RING).
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<producer_stages = 8, staged_tokens = 32>' %examples/qwen3_next_mtp.mlir > %t.ring.ptx
// RUN: FileCheck %s --check-prefix=RINGPTX < %t.ring.ptx
// RUN: %ptxas -arch=sm_90a -v %t.ring.ptx -o %t.ring.cubin 2>&1 | FileCheck %s --check-prefixes=CHECK,RING
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<producer_stages = 2>' %examples/sglang_verify_t4.mlir > %t.ws.ptx
// RUN: FileCheck %s --check-prefix=WS < %t.ws.ptx
// RUN: %ptxas -arch=sm_90a -v %t.ws.ptx -o %t.ws.cubin 2>&1 | FileCheck %s
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<staged_tokens = 2, producer_stages = 3>' %examples/sglang_varlen_extend.mlir > %t.varlen.ptx
// RUN: FileCheck %s --check-prefix=WS < %t.varlen.ptx
// RUN: %ptxas -arch=sm_90a -v %t.varlen.ptx -o %t.varlen.cubin 2>&1 | FileCheck %s
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<producer_stages = 2>' %examples/kimi_linear_kda_verify_t4.mlir > %t.kda.ptx
// RUN: %ptxas -arch=sm_90a -v %t.kda.ptx -o %t.kda.cubin 2>&1 | FileCheck %s
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<producer_stages = 2>' %examples/sglang_verify_tree.mlir > %t.tree.ptx
// RUN: %ptxas -arch=sm_90a -v %t.tree.ptx -o %t.tree.cubin 2>&1 | FileCheck %s
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<columns_per_lane = 2, warps = 4, producer_stages = 2, consumer_registers = 128>' %examples/sglang_verify_t4.mlir > %t.regs.ptx
// RUN: FileCheck %s --check-prefixes=WS,REGS < %t.regs.ptx
// RUN: %ptxas -arch=sm_90a -v %t.regs.ptx -o %t.regs.cubin 2>&1 | FileCheck %s --check-prefix=ASM-REGS
// The T = 12 final state on a tiny grid takes a producer by default (and two
// tokens a step, reductions = token_pairs), which stages each token's norm
// factors: a 2 x 12 x 16-byte ring buffer, stored
// with one 16-byte store after the producer's two rsqrt (the only ones: the
// consumers load them).
// RUN: gdn-run --emit=ptx %gdn_src_root/bench/sweeps/fla_t12_n1_kv.mlir > %t.norms.ptx
// RUN: FileCheck %s --check-prefix=NORMS < %t.norms.ptx
// RUN: %ptxas -arch=sm_90a -v %t.norms.ptx -o %t.norms.cubin 2>&1 | FileCheck %s
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<producer_stages = 0>' %examples/sglang_verify_t4.mlir | FileCheck %s --check-prefix=NONE
// RUN: gdn-run --emit=ptx %examples/qwen3_next_mtp.mlir | FileCheck %s --check-prefix=NONE

// CHECK-NOT: warning
// CHECK: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// RING: Used {{[0-9]+}} registers, used 1 barriers, 136 bytes smem
// RINGPTX: .shared .align 16 .b8 __dynamic_shmem__0;
// RINGPTX: mbarrier.init
// ASM-REGS-NOT: C7508
// ASM-REGS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// ASM-REGS: Used 128 registers

// REGS: .reqntid 256, 1, 1
// REGS: .minnctapersm 1
// WS: mbarrier.init.shared.b64
// REGS-DAG: setmaxnreg.inc.sync.aligned.u32 128;
// WS-DAG: mbarrier.try_wait.parity.shared.b64
// WS-DAG: mbarrier.arrive
// REGS-DAG: setmaxnreg.dec.sync.aligned.u32 24;
// WS-DAG: mbarrier.expect_tx
// WS-DAG: cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes
// NORMS: .shared .align 16 .b8 __wg_fla_recurrent_{{[0-9]+}}[384];
// NORMS-COUNT-2: rsqrt.approx.ftz.f32
// NORMS-NOT: rsqrt.approx
// NORMS: st.shared.v4.b32
// NORMS-NOT: rsqrt.approx
// NONE-NOT: mbarrier
// NONE-NOT: cp.async.bulk
// NONE-NOT: setmaxnreg
