// RUN: gdn-opt %s -split-input-file -gdn-select-schedule | FileCheck %s
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="sm-count=66" | FileCheck %s --check-prefix=SM66
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="chip=sm_80" | FileCheck %s --check-prefix=SM80
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="l2-prefetch-distance=-1" | FileCheck %s --check-prefix=NONE
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="l2-prefetch-distance=100" -verify-diagnostics | FileCheck %s --check-prefix=PINNED
// RUN: not gdn-opt %s -split-input-file -gdn-select-schedule="chip=sm_80 l2-prefetch-distance=100" 2>&1 | FileCheck %s --check-prefix=SM80PIN

// The L2 prefetch of a later CTA's state tile (l2_prefetch_distance): chosen
// for the bandwidth-bound bf16 decode (N = 64, HV = 32: CTAs of 4 warps x 8
// columns, ~72 registers a thread, 7 CTAs an SM), one wave of CTAs ahead:
// 132 x 7 = 924 (66 SMs: 462); never on sm_80 (no cp.async.bulk.prefetch),
// nor for an f32 state (unmeasured) or a small grid (N = 8). A pinned
// distance goes on any decode kernel whose tile is one contiguous run.
// CHECK-LABEL: func.func @bf16_n64
// CHECK: l2_prefetch_distance = 924 : i64
// SM66-LABEL: func.func @bf16_n64
// SM66: l2_prefetch_distance = 462 : i64
// SM80-LABEL: func.func @bf16_n64
// SM80: l2_prefetch_distance = -1 : i64
// SM80PIN: l2-prefetch-distance = 100 needs cp.async.bulk.prefetch (sm_90 or sm_90a)
// NONE-LABEL: func.func @bf16_n64
// NONE: l2_prefetch_distance = -1 : i64
// PINNED-LABEL: func.func @bf16_n64
// PINNED: l2_prefetch_distance = 100 : i64
func.func @bf16_n64(%q: memref<64x1x16x128xbf16>, %k: memref<64x1x16x128xbf16>,
                    %v: memref<64x1x32x128xbf16>, %g: memref<64x1x32xf32>,
                    %idx: memref<64xi32>, %pool: memref<68x32x128x128xbf16>,
                    %o: memref<64x1x32x128xbf16>) {
  gdn.recurrent q(%q : memref<64x1x16x128xbf16>) k(%k : memref<64x1x16x128xbf16>)
      v(%v : memref<64x1x32x128xbf16>) g(%g : memref<64x1x32xf32>)
      state_indices(%idx : memref<64xi32>)
      initial_state(%pool : memref<68x32x128x128xbf16>) final_state(%pool : memref<68x32x128x128xbf16>)
      o(%o : memref<64x1x32x128xbf16>) {state_layout = #gdn.layout<vk>}
  return
}

// -----

// CHECK-LABEL: func.func @f32_n64
// CHECK: l2_prefetch_distance = -1 : i64
// PINNED-LABEL: func.func @f32_n64
// PINNED: l2_prefetch_distance = 100 : i64
func.func @f32_n64(%q: memref<64x1x16x128xbf16>, %k: memref<64x1x16x128xbf16>,
                   %v: memref<64x1x32x128xbf16>, %g: memref<64x1x32xf32>,
                   %s: memref<64x32x128x128xf32>, %o: memref<64x1x32x128xbf16>) {
  gdn.recurrent q(%q : memref<64x1x16x128xbf16>) k(%k : memref<64x1x16x128xbf16>)
      v(%v : memref<64x1x32x128xbf16>) g(%g : memref<64x1x32xf32>)
      initial_state(%s : memref<64x32x128x128xf32>) final_state(%s : memref<64x32x128x128xf32>)
      o(%o : memref<64x1x32x128xbf16>) {state_layout = #gdn.layout<vk>}
  return
}

// -----

// CHECK-LABEL: func.func @bf16_n8
// CHECK: l2_prefetch_distance = -1 : i64
// PINNED-LABEL: func.func @bf16_n8
// PINNED: l2_prefetch_distance = 100 : i64
func.func @bf16_n8(%q: memref<8x1x16x128xbf16>, %k: memref<8x1x16x128xbf16>,
                   %v: memref<8x1x32x128xbf16>, %g: memref<8x1x32xf32>,
                   %s: memref<8x32x128x128xbf16>, %o: memref<8x1x32x128xbf16>) {
  gdn.recurrent q(%q : memref<8x1x16x128xbf16>) k(%k : memref<8x1x16x128xbf16>)
      v(%v : memref<8x1x32x128xbf16>) g(%g : memref<8x1x32xf32>)
      initial_state(%s : memref<8x32x128x128xbf16>) final_state(%s : memref<8x32x128x128xbf16>)
      o(%o : memref<8x1x32x128xbf16>) {state_layout = #gdn.layout<vk>}
  return
}

// -----

// Staged tokens (T = 4), a kv state: a pinned distance is refused.
func.func @staged(%q: memref<8x4x16x128xbf16>, %k: memref<8x4x16x128xbf16>,
                  %v: memref<8x4x32x128xbf16>, %g: memref<8x4x32xf32>,
                  %s: memref<8x32x128x128xbf16>, %o: memref<8x4x32x128xbf16>) {
  // expected-error @+1 {{cannot be lowered to the GPU: l2-prefetch-distance = 100 needs a kernel without staged tokens or tensor cores}}
  gdn.recurrent q(%q : memref<8x4x16x128xbf16>) k(%k : memref<8x4x16x128xbf16>)
      v(%v : memref<8x4x32x128xbf16>) g(%g : memref<8x4x32xf32>)
      initial_state(%s : memref<8x32x128x128xbf16>) final_state(%s : memref<8x32x128x128xbf16>)
      o(%o : memref<8x4x32x128xbf16>) {state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @kv(%q: memref<8x1x16x128xbf16>, %k: memref<8x1x16x128xbf16>,
              %v: memref<8x1x32x128xbf16>, %g: memref<8x1x32xf32>,
              %s: memref<8x32x128x128xf32>, %o: memref<8x1x32x128xbf16>) {
  // expected-error @+1 {{an initial state in the vk layout}}
  gdn.recurrent q(%q : memref<8x1x16x128xbf16>) k(%k : memref<8x1x16x128xbf16>)
      v(%v : memref<8x1x32x128xbf16>) g(%g : memref<8x1x32xf32>)
      initial_state(%s : memref<8x32x128x128xf32>) final_state(%s : memref<8x32x128x128xf32>)
      o(%o : memref<8x1x32x128xbf16>)
  return
}

// -----

// The tensor-core solve of a single chunk (FLA-style T = 12, a kv f32 state)
// prefetches a later CTA's staged inputs instead of its state: chosen once
// the grid (N x HV = 2048 CTAs of 8 warps) outgrows the 2 CTAs an SM the
// device holds, one CTA an SM ahead (132; 66 SMs: 66), on sm_90/sm_90a
// only: LLVM's NVPTX backend selects prefetch.global.L2 only there (on
// sm_80 it aborted with "Cannot select"; a pinned distance is refused).
// CHECK-LABEL: func.func @tensor_cores_n64
// CHECK: chunked_solve = 2 : i64, {{.*}}l2_prefetch_distance = 132 : i64
// SM66-LABEL: func.func @tensor_cores_n64
// SM66: l2_prefetch_distance = 66 : i64
// SM80-LABEL: func.func @tensor_cores_n64
// SM80: l2_prefetch_distance = -1 : i64
// SM80PIN: l2-prefetch-distance = 100 needs prefetch.global.L2 (sm_90 or sm_90a)
// NONE-LABEL: func.func @tensor_cores_n64
// NONE: l2_prefetch_distance = -1 : i64
// PINNED-LABEL: func.func @tensor_cores_n64
// PINNED: l2_prefetch_distance = 100 : i64
func.func @tensor_cores_n64(%q: memref<64x12x16x128xbf16>, %k: memref<64x12x16x128xbf16>,
                            %v: memref<64x12x32x128xbf16>, %g: memref<64x12x32xf32>,
                            %beta: memref<64x12x32xbf16>, %h0: memref<64x32x128x128xf32>,
                            %ht: memref<64x32x128x128xf32>, %o: memref<64x12x32x128xbf16>) {
  gdn.recurrent q(%q : memref<64x12x16x128xbf16>) k(%k : memref<64x12x16x128xbf16>)
      v(%v : memref<64x12x32x128xbf16>) g(%g : memref<64x12x32xf32>)
      beta(%beta : memref<64x12x32xbf16>)
      initial_state(%h0 : memref<64x32x128x128xf32>) final_state(%ht : memref<64x32x128x128xf32>)
      o(%o : memref<64x12x32x128xbf16>) {qk_l2norm}
  return
}

// -----

// N = 8: 256 CTAs, all resident at once: no later CTA to prefetch for.
// CHECK-LABEL: func.func @tensor_cores_n8
// CHECK: chunked_solve = 2 : i64, {{.*}}l2_prefetch_distance = -1 : i64
// PINNED-LABEL: func.func @tensor_cores_n8
// PINNED: l2_prefetch_distance = 100 : i64
func.func @tensor_cores_n8(%q: memref<8x12x16x128xbf16>, %k: memref<8x12x16x128xbf16>,
                           %v: memref<8x12x32x128xbf16>, %g: memref<8x12x32xf32>,
                           %beta: memref<8x12x32xbf16>, %h0: memref<8x32x128x128xf32>,
                           %ht: memref<8x32x128x128xf32>, %o: memref<8x12x32x128xbf16>) {
  gdn.recurrent q(%q : memref<8x12x16x128xbf16>) k(%k : memref<8x12x16x128xbf16>)
      v(%v : memref<8x12x32x128xbf16>) g(%g : memref<8x12x32xf32>)
      beta(%beta : memref<8x12x32xbf16>)
      initial_state(%h0 : memref<8x32x128x128xf32>) final_state(%ht : memref<8x32x128x128xf32>)
      o(%o : memref<8x12x32x128xbf16>) {qk_l2norm}
  return
}

// -----

// Packed sequences (cu_seqlens): a CTA's tokens are known only from
// cu_seqlens, so a pinned distance is refused there, tensor cores or not.
func.func @varlen(%q: memref<1x24x16x128xbf16>, %k: memref<1x24x16x128xbf16>,
                  %v: memref<1x24x32x128xbf16>, %g: memref<1x24x32xf32>,
                  %cu: memref<3xi32>, %s: memref<2x32x128x128xf32>,
                  %o: memref<1x24x32x128xbf16>) {
  // expected-error @+1 {{or the tensor-core solve of a single chunk (T <= stage-tokens) with a fixed batch and identity inputs}}
  gdn.recurrent q(%q : memref<1x24x16x128xbf16>) k(%k : memref<1x24x16x128xbf16>)
      v(%v : memref<1x24x32x128xbf16>) g(%g : memref<1x24x32xf32>)
      cu_seqlens(%cu : memref<3xi32>)
      initial_state(%s : memref<2x32x128x128xf32>) final_state(%s : memref<2x32x128x128xf32>)
      o(%o : memref<1x24x32x128xbf16>) {gdn.schedule = {chunked_solve = 2 : i64}}
  return
}
