// RUN: gdn-opt %s -split-input-file -gdn-select-schedule | FileCheck %s
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<chunk_prefetch_distance = 0>}" | FileCheck %s --check-prefix=PIN
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<solve = chunk_parallel>}" | FileCheck %s --check-prefix=CP
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<solve = chunk_parallel, columns_per_lane = 2>}" | FileCheck %s --check-prefix=ONE
// The tensor-core forms' chunk loop (chunk_parallel's scan; a varlen
// prefill's tensor_cores: gdn-select-schedule-chunk-prefetch-varlen.mlir)
// copies the next chunk with cp.async while it solves this one
// (chunk_prefetch_distance = 1) where its grid (V blocks x HV x N CTAs of 8
// warps, 128 V columns each) runs one CTA an SM: at Qwen3-Next's heads (HV = 32, K = V = 128) N = 4 makes 128 CTAs on the
// H200's 132 SMs, N = 5 160 (docs/cost-model.md#chunk-prefetch). A pinned
// 0 is kept, and a single chunk (T <= 16, chunk_parallel pinned) has no
// next chunk to copy. Past the SMs the scan holds two row tiles a warp (4
// warps: N = 5 makes 160 CTAs of 128 columns) and copies on any grid
// (docs/cost-model.md#scan-row-tiles); with one row tile pinned (ONE), not,
// and a pinned 0 keeps one row tile (the PIN run: two measured 2.2x slower without).

// CHECK-LABEL: func.func @n4
// CHECK: solve = chunk_parallel, {{.*}}chunk_prefetch_distance = 1,
// CP-LABEL: func.func @n4
// CP: solve = chunk_parallel, {{.*}}chunk_prefetch_distance = 1,
// PIN-LABEL: func.func @n4
// PIN: solve = chunk_parallel, {{.*}}chunk_prefetch_distance = 0,
func.func @n4(%q: memref<4x64x16x128xbf16>, %k: memref<4x64x16x128xbf16>, %v: memref<4x64x32x128xbf16>, %g: memref<4x64x32xf32>, %beta: memref<4x64x32xbf16>, %s: memref<4x32x128x128xf32>, %o: memref<4x64x32x128xbf16>) {
  gdn.recurrent q(%q : memref<4x64x16x128xbf16>) k(%k : memref<4x64x16x128xbf16>) v(%v : memref<4x64x32x128xbf16>) g(%g : memref<4x64x32xf32>) beta(%beta : memref<4x64x32xbf16>) initial_state(%s : memref<4x32x128x128xf32>) final_state(%s : memref<4x32x128x128xf32>) o(%o : memref<4x64x32x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// CHECK-LABEL: func.func @n5
// CHECK: columns_per_lane = 4, {{.*}}solve = chunk_parallel, {{.*}}chunk_prefetch_distance = 1,
// PIN-LABEL: func.func @n5
// PIN: columns_per_lane = 2, {{.*}}solve = chunk_parallel, {{.*}}chunk_prefetch_distance = 0,
// ONE-LABEL: func.func @n5
// ONE: columns_per_lane = 2, {{.*}}solve = chunk_parallel, {{.*}}chunk_prefetch_distance = 0,
func.func @n5(%q: memref<5x64x16x128xbf16>, %k: memref<5x64x16x128xbf16>, %v: memref<5x64x32x128xbf16>, %g: memref<5x64x32xf32>, %beta: memref<5x64x32xbf16>, %s: memref<5x32x128x128xf32>, %o: memref<5x64x32x128xbf16>) {
  gdn.recurrent q(%q : memref<5x64x16x128xbf16>) k(%k : memref<5x64x16x128xbf16>) v(%v : memref<5x64x32x128xbf16>) g(%g : memref<5x64x32xf32>) beta(%beta : memref<5x64x32xbf16>) initial_state(%s : memref<5x32x128x128xf32>) final_state(%s : memref<5x32x128x128xf32>) o(%o : memref<5x64x32x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// CP-LABEL: func.func @t16
// CP: solve = chunk_parallel, {{.*}}chunk_prefetch_distance = 0,
func.func @t16(%q: memref<4x16x16x128xbf16>, %k: memref<4x16x16x128xbf16>, %v: memref<4x16x32x128xbf16>, %g: memref<4x16x32xf32>, %beta: memref<4x16x32xbf16>, %s: memref<4x32x128x128xf32>, %o: memref<4x16x32x128xbf16>) {
  gdn.recurrent q(%q : memref<4x16x16x128xbf16>) k(%k : memref<4x16x16x128xbf16>) v(%v : memref<4x16x32x128xbf16>) g(%g : memref<4x16x32xf32>) beta(%beta : memref<4x16x32xbf16>) initial_state(%s : memref<4x32x128x128xf32>) final_state(%s : memref<4x32x128x128xf32>) o(%o : memref<4x16x32x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
