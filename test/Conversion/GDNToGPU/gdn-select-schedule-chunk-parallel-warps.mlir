// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="chip=sm_90a sm-count=132" | FileCheck %s --check-prefix=H100
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="chip=sm_90a sm-count=66" | FileCheck %s --check-prefix=HALF
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="chip=sm_90a sm-count=132 schedule={#gdn.schedule<solve = chunk_parallel, staged_tokens = 96>}" | FileCheck %s --check-prefix=C96
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="chip=sm_90a sm-count=132 schedule={#gdn.schedule<segments = 1, concurrent_solves = 0>}" | FileCheck %s --check-prefix=UNSPLIT
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="chip=sm_90a sm-count=132 schedule={#gdn.schedule<solve = chunk_parallel, columns_per_lane = 2>}" | FileCheck %s --check-prefix=ONE
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="chip=sm_90a sm-count=132 schedule={#gdn.schedule<max_registers = 128>}" | FileCheck %s --check-prefix=CAP

// chunk_parallel's scan holds 16 V rows a warp whatever its warps, so fewer
// warps a CTA make more CTAs: the cost model takes the fewest warps (2, 4)
// whose grid, N * HV * V / (16 * warps) CTAs, still fits one CTA an SM,
// else 8 (docs/cost-model.md#chunk-parallel-warps). Where that is 8, a
// warp holds two row tiles, 32 V rows, on 4 warps instead
// (columns_per_lane = 4, docs/cost-model.md#scan-row-tiles); pinned to one
// row tile (ONE), 8 warps; so with a pinned register cap (CAP), under
// which two row tiles would spill. T = 4096, K = V = 128.

// N = 1, HV = 32: 128 CTAs of 2 warps on 132 SMs (the scan unsplit); on 66,
// 64 CTAs of 4. Unpinned on 132 SMs the scan is split in 2 segments on 4
// warps instead (docs/cost-model.md#context-parallel-segments).
// UNSPLIT-LABEL: func.func @n1
// UNSPLIT: warps = 2, {{.*}}solve = chunk_parallel
// H100-LABEL: func.func @n1
// H100: warps = 4, {{.*}}solve = chunk_parallel, {{.*}}segments = 2, concurrent_solves = 0>
// HALF-LABEL: func.func @n1
// HALF: warps = 4, {{.*}}solve = chunk_parallel
// A pinned chunk of 96 tokens needs 96 threads in the first launch (a
// thread a token): 4 warps, not 2.
// C96-LABEL: func.func @n1
// C96: warps = 4, staged_tokens = 96, {{.*}}solve = chunk_parallel
func.func @n1(%q: memref<1x4096x16x128xbf16>, %k: memref<1x4096x16x128xbf16>, %v: memref<1x4096x32x128xbf16>, %g: memref<1x4096x32xf32>, %beta: memref<1x4096x32xf32>,
    %s: memref<1x32x128x128xf32>, %o: memref<1x4096x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x4096x16x128xbf16>) k(%k : memref<1x4096x16x128xbf16>) v(%v : memref<1x4096x32x128xbf16>)
      g(%g : memref<1x4096x32xf32>) beta(%beta : memref<1x4096x32xf32>)
      initial_state(%s : memref<1x32x128x128xf32>) final_state(%s : memref<1x32x128x128xf32>) o(%o : memref<1x4096x32x128xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// N = 2: 128 CTAs of 4 warps (256 of 2 would be two waves); on 66 SMs, 64
// CTAs of 4 warps of two row tiles (of one, 8 warps).
// H100-LABEL: func.func @n2
// H100: columns_per_lane = 2, {{.*}}warps = 4, {{.*}}solve = chunk_parallel
// HALF-LABEL: func.func @n2
// HALF: columns_per_lane = 4, {{.*}}warps = 4, {{.*}}solve = chunk_parallel
func.func @n2(%q: memref<2x4096x16x128xbf16>, %k: memref<2x4096x16x128xbf16>, %v: memref<2x4096x32x128xbf16>, %g: memref<2x4096x32xf32>, %beta: memref<2x4096x32xf32>,
    %s: memref<2x32x128x128xf32>, %o: memref<2x4096x32x128xbf16>) {
  gdn.recurrent q(%q : memref<2x4096x16x128xbf16>) k(%k : memref<2x4096x16x128xbf16>) v(%v : memref<2x4096x32x128xbf16>)
      g(%g : memref<2x4096x32xf32>) beta(%beta : memref<2x4096x32xf32>)
      initial_state(%s : memref<2x32x128x128xf32>) final_state(%s : memref<2x32x128x128xf32>) o(%o : memref<2x4096x32x128xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// N = 4: 128 CTAs of 4 warps of two row tiles; of one row tile, 8 warps.
// H100-LABEL: func.func @n4
// H100: columns_per_lane = 4, {{.*}}warps = 4, {{.*}}solve = chunk_parallel, {{.*}}chunk_prefetch_distance = 1, max_registers = 0,
// ONE-LABEL: func.func @n4
// ONE: columns_per_lane = 2, {{.*}}warps = 8, {{.*}}solve = chunk_parallel
// CAP-LABEL: func.func @n4
// CAP: columns_per_lane = 2, {{.*}}warps = 8, {{.*}}solve = chunk_parallel, {{.*}}max_registers = 128,
func.func @n4(%q: memref<4x4096x16x128xbf16>, %k: memref<4x4096x16x128xbf16>, %v: memref<4x4096x32x128xbf16>, %g: memref<4x4096x32xf32>, %beta: memref<4x4096x32xf32>,
    %s: memref<4x32x128x128xf32>, %o: memref<4x4096x32x128xbf16>) {
  gdn.recurrent q(%q : memref<4x4096x16x128xbf16>) k(%k : memref<4x4096x16x128xbf16>) v(%v : memref<4x4096x32x128xbf16>)
      g(%g : memref<4x4096x32xf32>) beta(%beta : memref<4x4096x32xf32>)
      initial_state(%s : memref<4x32x128x128xf32>) final_state(%s : memref<4x32x128x128xf32>) o(%o : memref<4x4096x32x128xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// N = 1, HV = 64 (Qwen3.5): 128 CTAs of 4 warps.
// H100-LABEL: func.func @hv64
// H100: warps = 4, {{.*}}solve = chunk_parallel
func.func @hv64(%q: memref<1x4096x16x128xbf16>, %k: memref<1x4096x16x128xbf16>, %v: memref<1x4096x64x128xbf16>, %g: memref<1x4096x64xf32>, %beta: memref<1x4096x64xf32>,
    %s: memref<1x64x128x128xf32>, %o: memref<1x4096x64x128xbf16>) {
  gdn.recurrent q(%q : memref<1x4096x16x128xbf16>) k(%k : memref<1x4096x16x128xbf16>) v(%v : memref<1x4096x64x128xbf16>)
      g(%g : memref<1x4096x64xf32>) beta(%beta : memref<1x4096x64xf32>)
      initial_state(%s : memref<1x64x128x128xf32>) final_state(%s : memref<1x64x128x128xf32>) o(%o : memref<1x4096x64x128xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
