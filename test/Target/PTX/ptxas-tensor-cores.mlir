// REQUIRES: ptxas
// The chunked solve on tensor cores (solve = tensor_cores) assembles for sm_90a
// with no stack frame and no spills (the state is K / 2 = 64 accumulator
// registers a thread at K = 128): T = 12 in one chunk of 16 (264 mma: the
// Gram products K Kᵀ, Q Qᵀ, Q Kᵀ on bf16 m16n8k16, 3 x 8 key pairs x 2
// token tiles, then tf32: P and R 16 x 2 x 2 x 2, Uᵀ and Oᵀ 2 x 2 x 3 each,
// the update 16 x 2 x 2), the MTP
// example (T = 4 in a chunk of 8), kv, varlen
// (several chunks), a decode example staged (one token in an 8-row chunk),
// and 1, 2 and 8 warps a CTA; sm_80 takes it too (mma.sync tf32 is sm_80+).
// Two exceptions, a few bytes each: CTAs of 4 or 8 warps capped at 128
// registers a thread (max_registers = 128, .maxnreg: so 16 warps fit an SM,
// the cost model's choice where CTAs share one, as at N = 64 and not at
// N = 1: MAXNREG, NOCAP; T = 12 on 8 warps spilled 4 bytes under the cap
// before Q Qᵀ moved to a third warp, the staged pool decode spills 4: CAP),
// and varlen on 2 warps may spill a few bytes (FEW; none at 212 registers
// today).
// RUN: split-file %s %t
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<warps = 2, solve = tensor_cores>' %t/t12.mlir > %t.t12.ptx
// RUN: FileCheck %s --check-prefix=MMA < %t.t12.ptx
// RUN: %ptxas -arch=sm_90a -v %t.t12.ptx -o %t.t12.cubin 2>&1 | FileCheck %s
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<solve = tensor_cores>' %t/t12.mlir | FileCheck %s --check-prefix=NOCAP
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<solve = tensor_cores, max_registers = 128>' %t/t12.mlir > %t.w8.ptx
// RUN: FileCheck %s --check-prefix=MAXNREG < %t.w8.ptx
// RUN: %ptxas -arch=sm_90a -v %t.w8.ptx -o %t.w8.cubin 2>&1 | FileCheck %s --check-prefix=CAP
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<warps = 1, solve = tensor_cores>' %t/t12.mlir > %t.w1.ptx
// RUN: %ptxas -arch=sm_90a -v %t.w1.ptx -o %t.w1.cubin 2>&1 | FileCheck %s
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<solve = tensor_cores>' %examples/qwen3_next_mtp.mlir > %t.mtp.ptx
// RUN: %ptxas -arch=sm_90a -v %t.mtp.ptx -o %t.mtp.cubin 2>&1 | FileCheck %s
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<warps = 2, solve = tensor_cores>' %examples/kv_k128_v64.mlir > %t.kv.ptx
// RUN: %ptxas -arch=sm_90a -v %t.kv.ptx -o %t.kv.cubin 2>&1 | FileCheck %s
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<warps = 2, solve = tensor_cores>' %examples/sglang_varlen_extend.mlir > %t.varlen.ptx
// RUN: %ptxas -arch=sm_90a -v %t.varlen.ptx -o %t.varlen.cubin 2>&1 | FileCheck %s --check-prefix=FEW
// RUN: FileCheck %s --check-prefix=BF16 < %t.varlen.ptx
// The varlen extend under the cost model: its grid fits the SMs, so no cap
// (NOCAP) and no spill (under the cap it spilled 84 bytes).
// RUN: gdn-run --emit=ptx %examples/sglang_varlen_extend.mlir > %t.varlen-default.ptx
// RUN: FileCheck %s --check-prefix=NOCAP < %t.varlen-default.ptx
// RUN: %ptxas -arch=sm_90a -v %t.varlen-default.ptx -o %t.varlen-default.cubin 2>&1 | FileCheck %s
// 32-token chunks (the Gram in two 16-row tiles) are not capped and do
// not spill (NOCAP). 64-token chunks take 118.5 KiB of staging buffers, views
// of dynamic shared memory (DYN): the kernel declares 1 byte statically.
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<staged_tokens = 64, solve = tensor_cores>' %examples/sglang_varlen_extend.mlir > %t.c64.ptx
// RUN: FileCheck %s --check-prefix=DYNPTX < %t.c64.ptx
// RUN: %ptxas -arch=sm_90a -v %t.c64.ptx -o %t.c64.cubin 2>&1 | FileCheck %s --check-prefix=DYN
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<staged_tokens = 32, solve = tensor_cores>' %examples/sglang_varlen_extend.mlir > %t.c32.ptx
// RUN: FileCheck %s --check-prefix=NOCAP < %t.c32.ptx
// RUN: %ptxas -arch=sm_90a -v %t.c32.ptx -o %t.c32.cubin 2>&1 | FileCheck %s
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<staged_tokens = 8, solve = tensor_cores, max_registers = 128>' %examples/sglang_pool_decode_bf16.mlir > %t.pool.ptx
// RUN: %ptxas -arch=sm_90a -v %t.pool.ptx -o %t.pool.cubin 2>&1 | FileCheck %s --check-prefix=CAP
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<solve = tensor_cores, input_prefetch_distance = 1, max_registers = 128>' %t/t12.mlir > %t.pf.ptx
// RUN: FileCheck %s --check-prefix=PREFETCH < %t.pf.ptx
// RUN: %ptxas -arch=sm_90a -v %t.pf.ptx -o %t.pf.cubin 2>&1 | FileCheck %s --check-prefix=CAP
// chunk_parallel's scan with chunk_prefetch_distance = 1 (T = 64: four
// chunks): the next chunk's cp.async copies in flight while one is solved
// (wait_group 1 in the loop, 0 after it), no spills.
// RUN: sed 's/x12x/x64x/g' %t/t12.mlir > %t/t64.mlir
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<solve = chunk_parallel, chunk_prefetch_distance = 1>' %t/t64.mlir > %t.cpf.ptx
// RUN: FileCheck %s --check-prefix=CPF < %t.cpf.ptx
// RUN: gdn-run --emit=ptx --launch=0 --schedule='#gdn.schedule<solve = chunk_parallel, chunk_prefetch_distance = 1>' %t/t64.mlir > %t.cpf0.ptx
// RUN: %ptxas -arch=sm_90a -v %t.cpf0.ptx -o %t.cpf0.cubin 2>&1 | FileCheck %s --check-prefix=SOLVES
// RUN: gdn-run --emit=ptx --launch=1 --schedule='#gdn.schedule<solve = chunk_parallel, chunk_prefetch_distance = 1>' %t/t64.mlir > %t.cpf1.ptx
// RUN: %ptxas -arch=sm_90a -v %t.cpf1.ptx -o %t.cpf1.cubin 2>&1 | FileCheck %s
// At 8 warps a CTA the bf16 products take their operands by ldmatrix
// (docs/cost-model.md#scan-operand-loads): both launches assemble, no
// spills.
// The record's 4-float pieces are one 16-byte access each way (the
// first launch's stores, and the scan's loads without the next chunk's
// copies; docs/cost-model.md#record-copies), not four of 4 bytes.
// RUN: gdn-run --emit=ptx --launch=0 --schedule='#gdn.schedule<solve = chunk_parallel, warps = 8>' %t/t64.mlir > %t.ldm0.ptx
// RUN: FileCheck %s --check-prefix=RECORDW < %t.ldm0.ptx
// RUN: %ptxas -arch=sm_90a -v %t.ldm0.ptx -o %t.ldm0.cubin 2>&1 | FileCheck %s --check-prefix=SOLVES
// RUN: gdn-run --emit=ptx --launch=1 --schedule='#gdn.schedule<solve = chunk_parallel, warps = 8>' %t/t64.mlir > %t.ldm1.ptx
// RUN: FileCheck %s --check-prefix=LDM < %t.ldm1.ptx
// RUN: gdn-run --emit=ptx --launch=1 --schedule='#gdn.schedule<solve = chunk_parallel, warps = 8, chunk_prefetch_distance = 0>' %t/t64.mlir | FileCheck %s --check-prefix=RECORDR
// RECORDW: st.global.v4.{{f32|b32}}
// RECORDR: ld.global.v4.{{f32|b32}}
// RUN: %ptxas -arch=sm_90a -v %t.ldm1.ptx -o %t.ldm1.cubin 2>&1 | FileCheck %s
// LDM: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// LDM: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// chunk_parallel on a varlen batch with a pool (the SGLang extend pinned to
// it): the first launch's binary search of cu_seqlens and the scan's
// record slots assemble without spills too.
// RUN: gdn-run --emit=ptx --launch=0 --schedule='#gdn.schedule<solve = chunk_parallel>' %examples/sglang_varlen_extend.mlir > %t.vcp0.ptx
// RUN: %ptxas -arch=sm_90a -v %t.vcp0.ptx -o %t.vcp0.cubin 2>&1 | FileCheck %s --check-prefix=SOLVES
// RUN: gdn-run --emit=ptx --launch=1 --schedule='#gdn.schedule<solve = chunk_parallel>' %examples/sglang_varlen_extend.mlir > %t.vcp1.ptx
// RUN: %ptxas -arch=sm_90a -v %t.vcp1.ptx -o %t.vcp1.cubin 2>&1 | FileCheck %s
// A grid past the resident CTAs (N = 64) on sm_80: no input prefetch
// (LLVM selects prefetch.global.L2 only on sm_90; it used to abort here).
// RUN: sed 's/memref<1x/memref<64x/g' %t/t12.mlir > %t/t12n64.mlir
// RUN: gdn-run --emit=ptx --chip=sm_80 %t/t12n64.mlir > %t.sm80n64.ptx
// RUN: FileCheck %s --check-prefix=SM80GRID < %t.sm80n64.ptx
// RUN: %ptxas -arch=sm_80 %t.sm80n64.ptx -o %t.sm80n64.cubin
// RUN: gdn-run --emit=ptx %t/t12n64.mlir | FileCheck %s --check-prefixes=PREFETCH,MAXNREG
// RUN: gdn-run --emit=ptx --chip=sm_80 --schedule='#gdn.schedule<solve = tensor_cores>' %t/t12.mlir > %t.sm80.ptx
// RUN: %ptxas -arch=sm_80 -v %t.sm80.ptx -o %t.sm80.cubin 2>&1 | FileCheck %s --check-prefix=SM80

// The varlen extend (64 tokens, bf16 q and k) takes precision = bf16: the
// Gram (3 x 8 key pairs x 2 token tiles), P and R (8 key pairs x 2 token
// tiles x 2) and the update (16 key tiles) on bf16 m16n8k16, Uᵀ and Oᵀ on
// tf32 (2 x 2 each).
// BF16-COUNT-96: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// BF16-NOT: mma.sync.aligned.m16n8k16
// BF16-COUNT-8: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// BF16-NOT: mma.sync
// CHECK: Compiling entry function '{{.*}}_recurrent' for 'sm_90a'
// CHECK: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// chunk_parallel's first launch, a PTX module of its own (--launch=0).
// SOLVES: Compiling entry function '{{.*}}_chunk_solves' for 'sm_90a'
// SOLVES: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// DYNPTX: .shared .align 16 .b8 __dynamic_shmem__0;
// DYN: Compiling entry function '{{.*}}_recurrent' for 'sm_90a'
// DYN: Used {{[0-9]+}} registers, used 1 barriers, 1 bytes smem
// NOCAP: .maxntid 256, 1, 1
// NOCAP-NOT: .maxnreg
// MAXNREG: .maxntid 256, 1, 1
// MAXNREG-NEXT: .maxnreg 128
// CAP: Compiling entry function '{{.*}}_recurrent' for 'sm_90a'
// CAP: {{[0-9]|1[0-6]}} bytes spill stores, {{[0-9]|1[0-6]}} bytes spill loads
// CAP: Used {{[0-9]|[1-9][0-9]|1[01][0-9]|12[0-8]}} registers
// FEW: Compiling entry function '{{.*}}_recurrent' for 'sm_90a'
// FEW: {{[0-9]|1[0-6]}} bytes spill stores, {{[0-9]|1[0-6]}} bytes spill loads
// SM80: Compiling entry function '{{.*}}_recurrent' for 'sm_80'
// SM80: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// The staged inputs' L2 prefetch of a later CTA (input_prefetch_distance,
// on tensor cores), before the CTA's own loads: q, k and v two lines each,
// the gates a and b one each.
// SM80GRID: .target sm_80
// SM80GRID: mma.sync
// SM80GRID-NOT: prefetch
// PREFETCH-COUNT-8: prefetch.global.L2
// PREFETCH-NOT: prefetch
// PREFETCH: ld.global
// CPF-LABEL: .entry {{.*}}_recurrent(
// The record's pieces past the last and gamma_C (thread 0's) are copied
// under a branch, not by every thread to one address; the chunk's group is
// committed after them either way.
// CPF: cp.async.cg.shared.global
// CPF: @%p{{[0-9]+}} bra
// CPF: cp.async.ca.shared.global [{{.*}}], [{{.*}}], 4;
// CPF-NEXT: $L__BB
// CPF: cp.async.commit_group;
// CPF: cp.async.commit_group;
// CPF-NEXT: cp.async.wait_group 1;
// CPF-NEXT: bar.sync 0;
// CPF: mma.sync
// CPF: cp.async.wait_group 0;
// Staging, the Gram products (48 bf16 mma: bf16 q and k are exact either
// way), the masks and factors, the solve's substitution: four barriers,
// then only tensor-core products, no shuffle.
// MMA: bar.sync 0;
// MMA-COUNT-48: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// MMA-NOT: mma.sync.aligned.m16n8k8
// MMA-COUNT-3: bar.sync 0;
// MMA-NOT: bar.sync
// MMA-NOT: shfl.sync
// MMA-COUNT-216: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// MMA-NOT: mma.sync
// MMA-NOT: shfl.sync

//--- t12.mlir
func.func @t12(%q: memref<1x12x16x128xbf16>, %k: memref<1x12x16x128xbf16>,
    %v: memref<1x12x32x128xbf16>, %a: memref<1x12x32xbf16>,
    %A_log: memref<32xf32>, %dt_bias: memref<32xf32>, %b: memref<1x12x32xbf16>,
    %state: memref<1x32x128x128xf32>, %o: memref<1x12x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x12x16x128xbf16>) k(%k : memref<1x12x16x128xbf16>)
      v(%v : memref<1x12x32x128xbf16>) a(%a : memref<1x12x32xbf16>)
      A_log(%A_log : memref<32xf32>) dt_bias(%dt_bias : memref<32xf32>)
      b(%b : memref<1x12x32xbf16>)
      initial_state(%state : memref<1x32x128x128xf32>)
      final_state(%state : memref<1x32x128x128xf32>)
      o(%o : memref<1x12x32x128xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<kv>}
  return
}
