//===- Passes.td - gdn conversion passes -------------------*- tablegen -*-===//
#ifndef GDN_CONVERSION_PASSES_TD
#define GDN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// GDNToCPU
//===----------------------------------------------------------------------===//

def ConvertGDNToCPUPass : Pass<"convert-gdn-to-cpu", "::mlir::ModuleOp"> {
  let summary = "Lower gdn.recurrent and gdn.commit to plain scf loops for the CPU";
  let description = [{
    Replaces every `gdn.recurrent` by loops over (n, hv, t) that compute the
    recurrence in fp32 with the same semantics as the GPU kernel: a scratch
    [K, V] state per head, the decay, the delta, the rank-1 update and the
    output, then the store of the final state in its layout.

    Before:
    ```mlir
    gdn.recurrent q(%q : memref<1x1x1x64xf32>) ... o(%o : memref<1x1x1x64xf32>)
    ```
    After: `memref.alloc` scratch buffers (freed after the loops), nested `scf.for` loops with
    `arith`/`math` ops; no `gdn` op remains.

    Every `gdn.commit` becomes a loop over its rows with an `scf.if` on the
    commit condition (slot >= 0, buffer row >= 0, accepted >= 1) around loops
    that copy one step of the buffer into the row's slot:
    ```mlir
    gdn.commit intermediate_states(%buf : memref<2x4x1x8x8xf32>)
        accepted(%acc : memref<2xi32>) state(%s : memref<2x1x8x8xf32>)
    ```
    becomes `scf.for %n { scf.if %valid { scf.for %hv, %i, %j { memref.load
    %buf[%row, %step, %hv, %i, %j]; memref.store ... %s[%slot, %hv, %i, %j] } } }`.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

//===----------------------------------------------------------------------===//
// GDNToGPU
//===----------------------------------------------------------------------===//

def ConvertGDNToGPUPass : Pass<"convert-gdn-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Lower gdn.recurrent to a register-tiled GPU kernel, gdn.commit to a copy kernel";
  let description = [{
    Outlines every `gdn.recurrent` into a `gpu.func` of the module
    `@gdn_kernels` (which carries an `#nvvm.target` for `chip`) and replaces it
    by a `gpu.launch_func`. The kernel is built for the schedule pinned by the
    op's `gdn.schedule` attribute (see `gdn-select-schedule`), or, where there
    is none (or for the entries it leaves out), the cost model's choice for
    `chip`'s SM count; the pass's only option is `chip`. Schedules the kernel
    cannot take are diagnostics on the op.

    The kernel runs one CTA per (sequence n, value head hv, block of V
    columns); a warp's lanes are split `v_lanes` along V and 32 / v_lanes
    along K, each lane owning `rows_per_warp` V columns and K / (32 / v_lanes)
    key rows, so the [K, V] state tile of the CTA lives in registers for the
    whole token loop and is read and written with coalesced 16-byte accesses
    in either layout. The two K-reductions (Sᵀk, Sᵀq) and the L2 norms are
    butterfly shuffle trees, side by side on the carried state or in turn
    (`overlap_reductions`); fused gating and sigmoid(b) are computed in the
    kernel from the raw inputs.

    With `stage_tokens` (T > 1, varlen) the tokens' q, k, the CTA's columns
    of v and the gates go through shared memory `stage_tokens` tokens at a
    time: every thread loads them before one barrier a chunk, or, with
    `pipeline_stages` > 0 (warp specialization, sm_90/sm_90a), one producer
    warp after the `warps_per_block` consumer warps fills a ring of that
    many chunk slots with `cp.async.bulk` copies (lane j: token j's rows)
    and the gates, under a `full` and an `empty` mbarrier a slot, while the
    consumers run the previous chunk; `consumer_registers` (sm_90a) makes the
    producer a warpgroup that gives registers back (`setmaxnreg.dec` to 24)
    and raises the consumers' to that count (`setmaxnreg.inc`). With
    `chunked_solve` = 1 a chunk's tokens are solved at once in the WY
    (UT-transform) form: its Gram matrices once a CTA in shared memory, every
    token's Sᵀk and Sᵀq side by side, a forward substitution in registers and
    one rank-C state update; with 2 the same on tensor cores (m16n8k8 tf32
    `mma.sync` in split 3xTF32 precision, the state tile as accumulator
    fragments, TensorCoreSolve.cpp).

    Every `gdn.commit` becomes a kernel `@<function>_commit` of the same
    module launched over (chunks of a head, HV, N): each CTA reads row n's
    count and indices once, returns unless the row commits, and copies its
    chunk of the head with 16-byte vectors along the contiguous dimension
    (several in flight a thread), converting through f32 when the buffer and
    the pool differ in dtype.

    Before:
    ```mlir
    func.func @decode(%q: memref<8x1x16x128xbf16>, ...) {
      gdn.recurrent q(%q : memref<8x1x16x128xbf16>) ... o(%o : ...)
    }
    ```
    After:
    ```mlir
    module attributes {gpu.container_module} {
      func.func @decode(...) {
        gpu.launch_func @gdn_kernels::@decode_recurrent blocks in (...) threads in (...) args(...)
      }
      gpu.module @gdn_kernels [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
        gpu.func @decode_recurrent(...) kernel { ... }
      }
    }
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
  let options = [
    Option<"chip", "chip", "std::string", "\"sm_90a\"",
           "Target GPU architecture: sm_80, sm_86, sm_87, sm_89, sm_90 or sm_90a">
  ];
}

def GDNSelectSchedulePass : Pass<"gdn-select-schedule", "::mlir::ModuleOp"> {
  let summary = "Choose the GPU schedule of every gdn.recurrent (cost model)";
  let description = [{
    Attaches `gdn.schedule = {rows_per_warp, warps_per_block, v_lanes,
    stage_tokens, unroll_tokens, overlap_reductions, chunked_solve,
    pipeline_stages, consumer_registers, l2_prefetch_distance}` to every
    `gdn.recurrent` (memref or tensor form), always with all ten entries;
    `convert-gdn-to-gpu` builds exactly that kernel. Each option left 0 is
    chosen by the cost model measured on the H200 (bench/results): decode is
    latency-bound at small N and bandwidth-bound at large N, so a lane takes
    the most V columns (8, 4, 2, 1) that still leave about half the device's
    warp slots busy (4096 warps on 132 SMs, scaled by `sm-count`);
    bandwidth-bound `vk` decode runs one-warp CTAs (a bf16/f16 state with
    K >= 128 and no per-key decay on a grid of 8x that many warps: 4 columns
    x 2 lanes, 16-byte key slices, in CTAs of 4 warps, each CTA prefetching
    into L2 the state tile of the CTA one wave later: l2_prefetch_distance
    = SMs x resident CTAs an SM), and `vk` decode that
    one column a lane does not fill
    (N = 1 at HV = 32) 2 lanes along V. With
    `v-lanes` given, the columns a lane are the most whose state tile fits
    64 registers. Staged multi-token
    kernels (T > 1 or varlen) stage up to 16 tokens' inputs (8 varlen) in
    shared memory and, for K a power of two >= 64 and V a multiple of 8, split
    a warp's 8 V columns over lanes along V: in `vk` 4 columns x 2 lanes when
    8 columns a lane already leave that many warps, else 2 x 4; in `kv` 2 x 4
    while N * HV * V is at most that warp count (else 4 columns x 4 lanes, as
    decode). A token's K-reductions run side by side
    (overlap_reductions = 1, a shorter dependent chain) unless the grid is
    bandwidth-bound (rows_per_warp left to the cost model, whose first
    candidate, 8 columns a lane or 4 in kv, already leaves that many warps),
    then in turn (-1, fewer registers); a per-key decay (KDA) or a
    per-channel beta is always built side by side. Staged tokens on a tiny
    grid (below) without intermediate states or a tree go two a step
    (overlap_reductions = 2: the state sums of both tokens on the state
    before the pair, one shuffle tree deep for the two). On a tiny grid (warps of
    8 V columns at most an eighth of the target: N * HV <= 32 at V = 128)
    verify (intermediate states) and the final state of a fixed
    8 < T <= 16 with bf16 or f16 q and k take a producer warp with a 2-slot
    ring (pipeline_stages = 2), the latter in the token loop (T = 12, N = 1:
    6.8 us vs 9.1 on tensor cores), where stage_tokens <= 32, no chunked
    solve and 16-byte bulk copies allow it; other kernels and larger grids
    none (-1; verify T = 4 from N = 8 at HV = 32 is 4-9% faster without,
    since the fp32 math contracts to fma); consumer_registers is
    never chosen (0). The chunked (WY) solve of a staged chunk on tensor
    cores (chunked_solve = 2: the state as mma.sync accumulator fragments,
    16 V columns a warp) is chosen for the final state of a fixed
    8 < T <= 16 with bf16 or f16 q and k, K <= 128 a multiple of 8 and V a
    multiple of 32, above that tiny grid, with 8, 4 or 2 warps by grid size
    (T = 12 on the H200: 1.1-1.7x the token loop), and, on a grid of more
    CTAs than the device holds, each CTA prefetching into L2 the staged
    inputs of the CTA one per SM later (l2_prefetch_distance = SMs); on CUDA
    cores (chunked_solve = 1, measured slower) only when asked for; both
    need staged tokens, the final state only, no tree, no producer warp, and
    a decay and beta per head. An attribute already on the op pins its
    entries unless an option overrides them. Schedules the kernel cannot take
    are diagnostics on the op.

    Decode on a 16-SM part (bandwidth-bound: 8 columns a lane, one-warp CTAs,
    reductions in turn):

    ```mlir
    gdn.recurrent ... {gdn.schedule = {chunked_solve = -1 : i64,
                       consumer_registers = 0 : i64, l2_prefetch_distance = -1 : i64, overlap_reductions = -1 : i64,
                       pipeline_stages = -1 : i64, programmatic_launch = -1 : i64, rows_per_warp = 8 : i64,
                       stage_tokens = -1 : i64, unroll_tokens = 1 : i64, v_lanes = 1 : i64,
                       warps_per_block = 1 : i64}}
    ```

    Verify with T = 4 (examples/sglang_verify_t4.mlir, N = 8, 132 SMs: 4
    columns x 2 lanes along V, 4 warps, no producer warp):

    ```mlir
    gdn.recurrent ... {gdn.schedule = {chunked_solve = -1 : i64,
                       consumer_registers = 0 : i64, l2_prefetch_distance = -1 : i64, overlap_reductions = -1 : i64,
                       pipeline_stages = -1 : i64, programmatic_launch = -1 : i64, rows_per_warp = 4 : i64,
                       stage_tokens = 4 : i64, unroll_tokens = 1 : i64, v_lanes = 2 : i64,
                       warps_per_block = 4 : i64}}
    ```
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"sm_90a\"",
           "Target GPU architecture (its SM count feeds the cost model)">,
    Option<"smCount", "sm-count", "int64_t", "0",
           "Multiprocessors of the target device (0: the chip's largest part)">,
    Option<"rowsPerWarp", "rows-per-warp", "int64_t", "0",
           "V columns of the state held by each lane (a warp holds "
           "rows-per-warp * v-lanes; 0: chosen from the shapes)">,
    Option<"warpsPerBlock", "warps-per-block", "int64_t", "0",
           "Warps per CTA (0: chosen from the shapes)">,
    Option<"vLanes", "v-lanes", "int64_t", "0",
           "Lanes of a warp along V, the rest along K (0: 1 for vk; for kv the "
           "first of 16, 8, 4, 2 with rows-per-warp * v-lanes <= 16 that the "
           "shapes divide and that keeps a lane's state tile <= 64 values, else 1; "
           "staged kernels (T > 1, varlen) with rows-per-warp also 0: 2 or 4 "
           "in vk, 4 in kv on tiny grids)">,
    Option<"stageTokens", "stage-tokens", "int64_t", "0",
           "Tokens whose q, k, v and gates are staged in shared memory at a "
           "time (0: chosen from the shapes, -1: none)">,
    Option<"unrollTokens", "unroll-tokens", "int64_t", "0",
           "Unroll factor of the staged token loop (0: chosen, -1 or 1: a "
           "loop); chunks of at most this many tokens are unrolled fully">,
    Option<"overlapReductions", "overlap-reductions", "int64_t", "0",
           "A token's K-reductions side by side on the carried state (1), "
           "also two staged tokens a step with every state sum of both on "
           "the state before the pair (2; as 1 where tokens are not staged, "
           "with a tree or the chunked solve), or one after another with fewer "
           "registers (-1); 0: chosen (side by side unless bandwidth-bound, "
           "two a step for staged tokens on a tiny grid without intermediate "
           "states)">,
    Option<"chunkedSolve", "chunked-solve", "int64_t", "0",
           "A staged chunk's tokens solved at once in the WY (UT-transform) "
           "form on CUDA cores (1) or tensor cores (2: mma.sync, 3xTF32), or "
           "token by token (-1); 0: chosen. Needs staged tokens, the final "
           "state only, no tree, no producer warp, and a decay and beta per "
           "head; tensor cores also K <= 128 a multiple of 8 and 8 or 16 "
           "staged tokens">,
    Option<"pipelineStages", "pipeline-stages", "int64_t", "0",
           "Warp specialization: slots of the shared-memory ring a producer "
           "warp fills with cp.async.bulk copies of each staged chunk, "
           "guarded by mbarriers (at most 8; needs stage-tokens <= 32, 16-byte "
           "rows and the ring within 48 KiB; sm_90 or sm_90a); -1: no producer "
           "warp; 0: chosen (2 for verify and for the final state of 8 < T <= 16 "
           "on a tiny grid, N * HV <= 32 at V = 128; else none)">,
    Option<"consumerRegisters", "consumer-registers", "int64_t", "0",
           "With a producer: registers a consumer thread gets through "
           "setmaxnreg (sm_90a; a multiple of 8 in [24, 256], warps-per-block "
           "a multiple of 4, the CTA's registers with the producer warpgroup's "
           "4 x 32 x 24 at most 65536); 0: no setmaxnreg (never chosen)">,
    Option<"l2PrefetchDistance", "l2-prefetch-distance", "int64_t", "0",
           "L2 prefetch distance in CTAs: thread 0 of each CTA prefetches "
           "(cp.async.bulk.prefetch.L2) the state tile of the CTA this many "
           "CTAs later in launch order (no staged tokens, a vk initial state, "
           "no cu_seqlens; sm_90 or sm_90a), or, on the tensor-core solve of "
           "a single chunk (no cu_seqlens), threads t < T that CTA's token t "
           "q, k, v rows and gates (prefetch.global.L2, sm_90 or sm_90a); -1: "
           "none; 0: chosen "
           "(the bandwidth-bound bf16/f16 decode, at SMs x resident CTAs an "
           "SM; the tensor-core solve on a grid past its resident CTAs, at "
           "SMs)">,
    Option<"programmaticLaunch", "programmatic-launch", "int64_t", "0",
           "A kernel for programmatic dependent launch (griddepcontrol, sm_90 "
           "or sm_90a): it reads the state slot, cu_seqlens, the intermediate "
           "row and the initial state before it waits for the previous "
           "kernel, so only where that kernel writes none of them; the next "
           "kernel may launch where the cost model says (1: after the "
           "recurrence with a producer warp, else at the start), at this "
           "one's start (2) or once its recurrence is done, before its state "
           "store (3); 0 or -1: off (never chosen)">
  ];
}

#endif // GDN_CONVERSION_PASSES_TD
