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
    by a `gpu.launch_func`. The kernel is built for the complete schedule in
    the op's `gdn.schedule` attribute (a `#gdn.schedule` with every
    parameter, as `gdn-select-schedule` attaches it): this pass runs no cost
    model, and an op without a complete schedule is a diagnostic (run
    `gdn-select-schedule` first). It checks the schedule for `chip`, its
    only option, with the checks `gdn-select-schedule` runs; schedules the
    kernel cannot take are diagnostics on the op.

    The kernel runs one CTA per (sequence n, value head hv, block of V
    columns); a warp's lanes are split `lanes_along_v` along V and
    32 / lanes_along_v along K, each lane owning `columns_per_lane` V columns
    and K / (32 / lanes_along_v) key rows, so the [K, V] state tile of the CTA lives in registers for the
    whole token loop and is read and written with coalesced 16-byte accesses
    in either layout. The two K-reductions (Sᵀk, Sᵀq) and the L2 norms are
    butterfly shuffle trees, side by side on the carried state or in turn
    (`reductions`); fused gating and sigmoid(b) are computed in the
    kernel from the raw inputs.

    With `staged_tokens` (T > 1, varlen) the tokens' q, k, the CTA's columns
    of v and the gates go through shared memory `staged_tokens` tokens at a
    time: every thread loads them before one barrier a chunk, or, with
    `producer_stages` > 0 (warp specialization, sm_90/sm_90a), one producer
    warp after the `warps` consumer warps fills a ring of that
    many chunk slots with `cp.async.bulk` copies (lane j: token j's rows)
    and the gates, under a `full` and an `empty` mbarrier a slot, while the
    consumers run the previous chunk; `consumer_registers` (sm_90a) makes the
    producer a warpgroup that gives registers back (`setmaxnreg.dec` to 24)
    and raises the consumers' to that count (`setmaxnreg.inc`). With
    `solve = cuda_cores` a chunk's tokens are solved at once in the WY
    (UT-transform) form: its Gram matrices once a CTA in shared memory, every
    token's Sᵀk and Sᵀq side by side, a forward substitution in registers and
    one rank-C state update; with `tensor_cores` the same on tensor cores
    (`mma.sync` in the schedule's `precision`: tf32 split in three or
    rounded once, or bf16 for the products with bf16 q and k; the state tile
    as accumulator fragments, TensorCoreSolve.cpp).

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
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
  let options = [
    Option<"chip", "chip", "std::string", "\"sm_90a\"",
           "Target GPU architecture: a row of GPUTarget.cpp (sm_80, sm_86, "
           "sm_87, sm_89, sm_90, sm_90a, sm_100, sm_100a)">
  ];
}

def GDNSelectSchedulePass : Pass<"gdn-select-schedule", "::mlir::ModuleOp"> {
  let summary = "Choose the GPU schedule of every gdn.recurrent and gdn.replay_commit (cost model)";
  let description = [{
    Attaches a complete `#gdn.schedule` (every parameter present) as the
    `gdn.schedule` attribute of every `gdn.recurrent` (memref or tensor form);
    `convert-gdn-to-gpu` builds exactly that kernel. A parameter of the
    `schedule` option pins it, then one already on the op; the cost model
    chooses the rest for `chip` (its SM count, or `sm-count`). The cost
    model, measured on the H200, in short: decode is latency-bound at small
    N and bandwidth-bound at large N, so a lane takes the most V columns
    (8, 4, 2, 1) that still leave about half the device's warp slots busy;
    staged multi-token kernels (T > 1, varlen) stage up to 16 tokens (8
    varlen) and split a warp's 8 V columns over 2 or 4 lanes; a token's
    K-reductions run side by side unless the grid is bandwidth-bound, two
    staged tokens a step on a tiny grid; verify and the final state of
    8 < T <= 16 take a producer warp on a tiny grid; the final state of a
    fixed 8 < T <= 16 with bf16/f16 q and k runs the tensor-core solve above
    it, a longer fixed T the chunk-parallel one (its scan split along T
    into segments where a few long sequences would leave SMs idle) and a
    varlen batch of
    prefills (8 tokens a sequence or more on average) the tensor-core one, both with
    bf16 products for bf16 q and k (precision = bf16), else one tf32 product
    (precision = tf32); bandwidth-bound bf16 decode and large tensor-core grids prefetch a
    later CTA's data into L2. Each rule, its reason and its measurements:
    docs/cost-model.md. Schedules the kernel cannot take are diagnostics on
    the op (the checks `convert-gdn-to-gpu` runs again).

    Decode on a 16-SM part (examples/qwen3_next_decode.mlir, `sm-count=16`;
    bandwidth-bound: 8 columns a lane, one-warp CTAs, reductions in turn):

    ```mlir
    gdn.recurrent ... {gdn.schedule = #gdn.schedule<columns_per_lane = 8,
        lanes_along_v = 1, warps = 1, staged_tokens = 0, unroll_tokens = 1,
        reductions = in_turn, solve = token_by_token, precision = tf32x3,
        producer_stages = 0, consumer_registers = 0, state_prefetch_distance = 0,
        input_prefetch_distance = 0, chunk_prefetch_distance = 0, max_registers = 0,
        launch = ordinary, segments = 1, concurrent_solves = 0>}
    ```

    Pinning two parameters from the command line (docs/schedule.md):
    `gdn-opt --gdn-select-schedule="schedule={#gdn.schedule<columns_per_lane = 2, warps = 4>}"`.

    A `gdn.replay_commit` gets the token-loop schedule of its recurrence
    view (its layer 0 read as a gdn.recurrent of L tokens): the same
    pins and cost model, with no staging, solve, producer, prefetch or
    programmatic launch.
  }];
  // The replay's recurrence view is built from arith and memref ops.
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
  let options = [
    Option<"chip", "chip", "std::string", "\"sm_90a\"",
           "Target GPU architecture (its SM count feeds the cost model)">,
    Option<"smCount", "sm-count", "int64_t", "0",
           "Multiprocessors of the target device (0: the chip's largest part)">,
    Option<"schedule", "schedule", "std::string", "\"\"",
           "A #gdn.schedule<...> whose parameters pin those of every op "
           "(the rest: the op's own, else the cost model's)">
  ];
}

//===----------------------------------------------------------------------===//
// GPUModuleToPTX
//===----------------------------------------------------------------------===//

def GDNGPUModuleToPTXPass : Pass<"gdn-gpu-module-to-ptx", "::mlir::ModuleOp"> {
  let summary = "Serialize every #nvvm.target gpu.module to PTX with the kernel LLVM pipeline";
  let description = [{
    `gpu-module-to-binary{format=isa}` for the kernels of `convert-gdn-to-gpu`
    (a `gpu.module` with one `#nvvm.target`, already in the LLVM and NVVM
    dialects): translates the module to LLVM IR, runs the LLVM pass pipeline
    `llvm-pipeline`, then the NVPTX back end at the target's `O`, and replaces
    the module by a `gpu.binary` holding the PTX (a `#gpu.object` of format
    assembly, the same as `gpu-module-to-binary` makes).

    At the target's O = 2 the default pipeline (`kernelPipelineO2` in
    GPUModuleToPTX.cpp) is LLVM's own O2 with GVN's memory dependence
    analysis off (`gvn<no-memdep>`), after the target's pipeline-start
    passes (nvvm-reflect): the same PTX as O2 for every kernel of the
    repository, O2's time down by about a sixth on the tensor-core kernels
    (docs/compile-time.md); other O levels run LLVM's own pipeline.
    `llvm-pipeline=default<O2>` runs LLVM's O2 unchanged;
    `llvm-pipeline=print` writes the module before optimization to stderr;
    `print-llvm-pipeline` reports the text a module runs as a remark.
    libdevice is linked only into a module that calls a `__nv_` function.
    The object has the properties gpu-module-to-binary gives (`O`), not its
    timings.

    A module without an `#nvvm.target`, or with more than one target, is a
    diagnostic; so are a pipeline LLVM cannot parse, a libdevice call with
    no CUDA toolkit found, and an error LLVM reports (e.g. of its back end).
  }];
  let options = [
    Option<"llvmPipeline", "llvm-pipeline", "std::string", "\"\"",
           "LLVM new-pass-manager pipeline text run on each kernel module "
           "(empty: the kernel pipeline; default<O2>: LLVM's O2)">,
    Option<"printLLVMPipeline", "print-llvm-pipeline", "bool", "false",
           "Report the LLVM pipeline text each module runs as a remark">
  ];
}

def GDNSplitKernelModulesPass
    : Pass<"gdn-split-kernel-modules", "::mlir::ModuleOp"> {
  let summary = "One gpu.module a kernel, so that each compiles on its own thread";
  let description = [{
    Moves every `gpu.func` kernel of a `gpu.module` that holds more than one
    (and nothing else) into a `gpu.module` of its own with the same targets,
    named `<module>_<kernel>` (made unique by the symbol table), and points
    every `gpu.launch_func` at it. The pass manager then runs the nested
    `gpu.module` pipelines, and `gdn-gpu-module-to-ptx` the LLVM pipelines,
    of the kernels in parallel (when the context is multithreaded): the two
    kernels of a chunk-parallel prefill compile side by side
    (docs/compile-time.md). Each kernel's PTX is the same as in the shared
    module. A module with anything but kernels in it is left as it is.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

#endif // GDN_CONVERSION_PASSES_TD
