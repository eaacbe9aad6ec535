// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="chip=sm_90a sm-count=132" | FileCheck %s

// A varlen prefill on tensor cores takes chunk_parallel's two launches from
// 64 tokens a sequence on average (T >= 64 * N, kVarlenChunkParallelTokens;
// docs/cost-model.md#varlen-chunk-parallel), the one-launch form below.

// 2 sequences in 128 tokens: a mean of 64, chunk_parallel (4 warps: 128
// CTAs).
// CHECK-LABEL: func.func @mean64
// CHECK: warps = 4, staged_tokens = 16, {{.*}}solve = chunk_parallel,
func.func @mean64(%q: memref<1x128x16x128xbf16>, %k: memref<1x128x16x128xbf16>, %v: memref<1x128x32x128xbf16>, %g: memref<1x128x32xf32>, %beta: memref<1x128x32xf32>,
    %cu: memref<3xi32>, %s: memref<2x32x128x128xf32>, %o: memref<1x128x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x128x16x128xbf16>) k(%k : memref<1x128x16x128xbf16>) v(%v : memref<1x128x32x128xbf16>)
      g(%g : memref<1x128x32xf32>) beta(%beta : memref<1x128x32xf32>) cu_seqlens(%cu : memref<3xi32>)
      initial_state(%s : memref<2x32x128x128xf32>) final_state(%s : memref<2x32x128x128xf32>) o(%o : memref<1x128x32x128xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// 2 sequences in 112 tokens: a mean of 56, the one-launch form on 8 warps.
// CHECK-LABEL: func.func @mean56
// CHECK: warps = 8, staged_tokens = 16, {{.*}}solve = tensor_cores,
func.func @mean56(%q: memref<1x112x16x128xbf16>, %k: memref<1x112x16x128xbf16>, %v: memref<1x112x32x128xbf16>, %g: memref<1x112x32xf32>, %beta: memref<1x112x32xf32>,
    %cu: memref<3xi32>, %s: memref<2x32x128x128xf32>, %o: memref<1x112x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x112x16x128xbf16>) k(%k : memref<1x112x16x128xbf16>) v(%v : memref<1x112x32x128xbf16>)
      g(%g : memref<1x112x32xf32>) beta(%beta : memref<1x112x32xf32>) cu_seqlens(%cu : memref<3xi32>)
      initial_state(%s : memref<2x32x128x128xf32>) final_state(%s : memref<2x32x128x128xf32>) o(%o : memref<1x112x32x128xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// 32 sequences in 18368 tokens (one long sequence among short ones, as far
// as the cost model knows: lengths are not static): 4 warps past the SMs
// (2048 CTAs; 8 would give the longest sequence 32 SMs, 4 give it 64), the
// next chunk's copies in flight on any grid (the long sequence's CTAs end
// up alone on their SMs), 128 registers (CTAs share SMs at first).
// CHECK-LABEL: func.func @long_among_short
// CHECK: warps = 4, staged_tokens = 16, {{.*}}solve = chunk_parallel, {{.*}}chunk_prefetch_distance = 1, max_registers = 128,
func.func @long_among_short(%q: memref<1x18368x16x128xbf16>, %k: memref<1x18368x16x128xbf16>, %v: memref<1x18368x32x128xbf16>, %g: memref<1x18368x32xf32>, %beta: memref<1x18368x32xbf16>,
    %cu: memref<33xi32>, %s0: memref<32x32x128x128xf32>, %s1: memref<32x32x128x128xf32>, %o: memref<1x18368x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x18368x16x128xbf16>) k(%k : memref<1x18368x16x128xbf16>) v(%v : memref<1x18368x32x128xbf16>)
      g(%g : memref<1x18368x32xf32>) beta(%beta : memref<1x18368x32xbf16>) cu_seqlens(%cu : memref<33xi32>)
      initial_state(%s0 : memref<32x32x128x128xf32>) final_state(%s1 : memref<32x32x128x128xf32>) o(%o : memref<1x18368x32x128xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<kv>}
  return
}

// -----

// The same tokens as a fixed batch (N = 32, T = 574: every sequence as long)
// take two row tiles a warp on 4 warps, with the copies, uncapped
// (docs/cost-model.md#scan-row-tiles); a varlen batch keeps one row tile.
// CHECK-LABEL: func.func @fixed_n32
// CHECK: columns_per_lane = 4, {{.*}}warps = 4, staged_tokens = 16, {{.*}}solve = chunk_parallel, {{.*}}chunk_prefetch_distance = 1, max_registers = 0,
func.func @fixed_n32(%q: memref<32x574x16x128xbf16>, %k: memref<32x574x16x128xbf16>, %v: memref<32x574x32x128xbf16>, %g: memref<32x574x32xf32>, %beta: memref<32x574x32xbf16>,
    %s0: memref<32x32x128x128xf32>, %s1: memref<32x32x128x128xf32>, %o: memref<32x574x32x128xbf16>) {
  gdn.recurrent q(%q : memref<32x574x16x128xbf16>) k(%k : memref<32x574x16x128xbf16>) v(%v : memref<32x574x32x128xbf16>)
      g(%g : memref<32x574x32xf32>) beta(%beta : memref<32x574x32xbf16>)
      initial_state(%s0 : memref<32x32x128x128xf32>) final_state(%s1 : memref<32x32x128x128xf32>) o(%o : memref<32x574x32x128xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<kv>}
  return
}
