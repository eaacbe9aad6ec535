// RUN: gdn-opt %s -split-input-file -gdn-select-schedule | FileCheck %s --check-prefix=DEFAULT
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<solve = tensor_cores, precision = bf16>}" | FileCheck %s --check-prefix=BF16PIN
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<solve = cuda_cores>}" | FileCheck %s --check-prefix=ON
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<solve = token_by_token>}" | FileCheck %s --check-prefix=OFF
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<staged_tokens = 12>}" | FileCheck %s --check-prefix=S12
// RUN: gdn-opt %s -split-input-file -pass-pipeline="builtin.module(gdn-lower-to-ptx{schedule={#gdn.schedule<solve = cuda_cores>}})" | FileCheck %s --check-prefix=PTX

// The cost model takes the chunked solve on tensor cores (solve = tensor_cores,
// a chunk of whole 8-token tiles) for the final state of T > 8, and the
// token loop below (the T = 4 case in gdn-select-schedule-producer.mlir and
// @t4 here); solve = cuda_cores asks for the CUDA-core form, and the
// option's parameter overrides the one already on the op. (N = 8: at N = 1 the token loop
// with a producer warp is taken, gdn-select-schedule.mlir.)

// One chunk (verify) keeps the 3xTF32 products (precision = tf32x3).
// DEFAULT-LABEL: func.func @t12
// DEFAULT: gdn.schedule = #gdn.schedule<{{.*}}staged_tokens = 16, {{.*}}solve = tensor_cores, precision = tf32x3,
// A chunk the tensor cores cannot take (not 8 or 16 tokens) keeps the token
// loop rather than failing.
// S12-LABEL: func.func @t12
// S12: gdn.schedule = #gdn.schedule<{{.*}}staged_tokens = 12, {{.*}}solve = token_by_token,
// ON-LABEL: func.func @t12
// ON: gdn.schedule = #gdn.schedule<{{.*}}staged_tokens = 12, {{.*}}solve = cuda_cores,
// OFF-LABEL: func.func @t12
// OFF: gdn.schedule = #gdn.schedule<{{.*}}solve = token_by_token,
// PTX-LABEL: func.func @t12
// PTX: gpu.launch_func @gdn_kernels::@t12_recurrent
func.func @t12(%q: memref<8x12x16x128xbf16>, %k: memref<8x12x16x128xbf16>, %v: memref<8x12x32x128xbf16>,
               %g: memref<8x12x32xf32>, %beta: memref<8x12x32xf32>,
               %s: memref<8x32x128x128xf32>, %o: memref<8x12x32x128xbf16>) {
  gdn.recurrent q(%q : memref<8x12x16x128xbf16>) k(%k : memref<8x12x16x128xbf16>) v(%v : memref<8x12x32x128xbf16>)
      g(%g : memref<8x12x32xf32>) beta(%beta : memref<8x12x32xf32>)
      initial_state(%s : memref<8x32x128x128xf32>) final_state(%s : memref<8x32x128x128xf32>)
      o(%o : memref<8x12x32x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// DEFAULT-LABEL: func.func @pinned
// DEFAULT: gdn.schedule = #gdn.schedule<{{.*}}solve = cuda_cores,
// ON-LABEL: func.func @pinned
// ON: gdn.schedule = #gdn.schedule<{{.*}}solve = cuda_cores,
// OFF-LABEL: func.func @pinned
// OFF: gdn.schedule = #gdn.schedule<{{.*}}solve = token_by_token,
func.func @pinned(%q: memref<1x4x16x128xbf16>, %k: memref<1x4x16x128xbf16>, %v: memref<1x4x32x128xbf16>,
                  %s: memref<1x32x128x128xf32>, %o: memref<1x4x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x4x16x128xbf16>) k(%k : memref<1x4x16x128xbf16>) v(%v : memref<1x4x32x128xbf16>)
      initial_state(%s : memref<1x32x128x128xf32>) final_state(%s : memref<1x32x128x128xf32>)
      o(%o : memref<1x4x32x128xbf16>)
      {gdn.schedule = #gdn.schedule<solve = cuda_cores>, state_layout = #gdn.layout<vk>}
  return
}

// -----

// DEFAULT-LABEL: func.func @t4
// DEFAULT: gdn.schedule = #gdn.schedule<{{.*}}solve = token_by_token,
// ON-LABEL: func.func @t4
// ON: gdn.schedule = #gdn.schedule<{{.*}}solve = cuda_cores,
func.func @t4(%q: memref<1x4x16x128xbf16>, %k: memref<1x4x16x128xbf16>, %v: memref<1x4x32x128xbf16>,
              %s: memref<1x32x128x128xf32>, %o: memref<1x4x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x4x16x128xbf16>) k(%k : memref<1x4x16x128xbf16>) v(%v : memref<1x4x32x128xbf16>)
      initial_state(%s : memref<1x32x128x128xf32>) final_state(%s : memref<1x32x128x128xf32>)
      o(%o : memref<1x4x32x128xbf16>) {state_layout = #gdn.layout<vk>}
  return
}

// -----

// A varlen batch of prefills (T / N >= 8 tokens a sequence: 128 here, 16
// in an SGLang extend) takes the tensor cores as a long fixed T does:
// 16-token chunks, the products with bf16 q and k on bf16 mma; from 64
// tokens a sequence on average in chunk_parallel's two launches (4 warps
// for 2 sequences: 128 CTAs), below that the one-launch form on 8 warps;
// shorter sequences (4 tokens a sequence) keep the token loop.
// DEFAULT-LABEL: func.func @varlen_prefill
// DEFAULT: gdn.schedule = #gdn.schedule<{{.*}}warps = 4, staged_tokens = 16, {{.*}}solve = chunk_parallel, precision = bf16,
// DEFAULT-LABEL: func.func @varlen_extend16
// DEFAULT: gdn.schedule = #gdn.schedule<{{.*}}warps = 8, staged_tokens = 16, {{.*}}solve = tensor_cores, precision = bf16,
// DEFAULT-LABEL: func.func @varlen_extend4
// A pinned precision = bf16 stages whole m16n8k16 tiles: 16 tokens where
// the tensor cores would otherwise take 8.
// BF16PIN-LABEL: func.func @varlen_extend4
// BF16PIN: gdn.schedule = #gdn.schedule<{{.*}}staged_tokens = 16, {{.*}}solve = tensor_cores, precision = bf16,
// DEFAULT: gdn.schedule = #gdn.schedule<{{.*}}staged_tokens = 8, {{.*}}solve = token_by_token, precision = tf32x3,
func.func @varlen_prefill(%q: memref<1x256x16x128xbf16>, %k: memref<1x256x16x128xbf16>, %v: memref<1x256x32x128xbf16>,
                          %g: memref<1x256x32xf32>, %beta: memref<1x256x32xf32>, %cu: memref<3xi32>,
                          %s: memref<2x32x128x128xf32>, %o: memref<1x256x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x256x16x128xbf16>) k(%k : memref<1x256x16x128xbf16>) v(%v : memref<1x256x32x128xbf16>)
      g(%g : memref<1x256x32xf32>) beta(%beta : memref<1x256x32xf32>) cu_seqlens(%cu : memref<3xi32>)
      initial_state(%s : memref<2x32x128x128xf32>) final_state(%s : memref<2x32x128x128xf32>)
      o(%o : memref<1x256x32x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
func.func @varlen_extend16(%q: memref<1x64x16x128xbf16>, %k: memref<1x64x16x128xbf16>, %v: memref<1x64x32x128xbf16>,
                           %g: memref<1x64x32xf32>, %beta: memref<1x64x32xf32>, %cu: memref<5xi32>,
                           %s: memref<4x32x128x128xf32>, %o: memref<1x64x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x64x16x128xbf16>) k(%k : memref<1x64x16x128xbf16>) v(%v : memref<1x64x32x128xbf16>)
      g(%g : memref<1x64x32xf32>) beta(%beta : memref<1x64x32xf32>) cu_seqlens(%cu : memref<5xi32>)
      initial_state(%s : memref<4x32x128x128xf32>) final_state(%s : memref<4x32x128x128xf32>)
      o(%o : memref<1x64x32x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
func.func @varlen_extend4(%q: memref<1x64x16x128xbf16>, %k: memref<1x64x16x128xbf16>, %v: memref<1x64x32x128xbf16>,
                          %g: memref<1x64x32xf32>, %beta: memref<1x64x32xf32>, %cu: memref<17xi32>,
                          %s: memref<16x32x128x128xf32>, %o: memref<1x64x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x64x16x128xbf16>) k(%k : memref<1x64x16x128xbf16>) v(%v : memref<1x64x32x128xbf16>)
      g(%g : memref<1x64x32xf32>) beta(%beta : memref<1x64x32xf32>) cu_seqlens(%cu : memref<17xi32>)
      initial_state(%s : memref<16x32x128x128xf32>) final_state(%s : memref<16x32x128x128xf32>)
      o(%o : memref<1x64x32x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
