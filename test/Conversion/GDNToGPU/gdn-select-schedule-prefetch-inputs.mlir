// RUN: gdn-opt %s -split-input-file -gdn-select-schedule | FileCheck %s
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="sm-count=66" | FileCheck %s --check-prefix=SM66
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="chip=sm_80" | FileCheck %s --check-prefix=SM80
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<state_prefetch_distance = 0, input_prefetch_distance = 0>}" | FileCheck %s --check-prefix=NONE
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<input_prefetch_distance = 100>}" -verify-diagnostics | FileCheck %s --check-prefix=PINNED
// RUN: not gdn-opt %s -split-input-file -gdn-select-schedule="chip=sm_80 schedule={#gdn.schedule<input_prefetch_distance = 100>}" 2>&1 | FileCheck %s --check-prefix=SM80PIN

// The tensor-core solve of a single chunk (FLA-style T = 12, a kv f32 state)
// prefetches a later CTA's staged inputs (input_prefetch_distance) instead
// of its state (gdn-select-schedule-prefetch.mlir): chosen once
// the grid (N x HV = 2048 CTAs of 8 warps) outgrows the 2 CTAs an SM the
// device holds, one CTA an SM ahead (132; 66 SMs: 66), on sm_90/sm_90a
// only: LLVM's NVPTX backend selects prefetch.global.L2 only there (on
// sm_80 it aborted with "Cannot select"; a pinned distance is refused).
// CHECK-LABEL: func.func @tensor_cores_n64
// CHECK: solve = tensor_cores, {{.*}}state_prefetch_distance = 0, input_prefetch_distance = 132,
// SM66-LABEL: func.func @tensor_cores_n64
// SM66: state_prefetch_distance = 0, input_prefetch_distance = 66,
// SM80-LABEL: func.func @tensor_cores_n64
// SM80: state_prefetch_distance = 0, input_prefetch_distance = 0,
// SM80PIN: input_prefetch_distance = 100 needs prefetch.global.L2 (sm_90 on)
// NONE-LABEL: func.func @tensor_cores_n64
// NONE: state_prefetch_distance = 0, input_prefetch_distance = 0,
// PINNED-LABEL: func.func @tensor_cores_n64
// PINNED: state_prefetch_distance = 0, input_prefetch_distance = 100,
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
// CHECK: solve = tensor_cores, {{.*}}state_prefetch_distance = 0, input_prefetch_distance = 0,
// PINNED-LABEL: func.func @tensor_cores_n8
// PINNED: state_prefetch_distance = 0, input_prefetch_distance = 100,
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
// cu_seqlens, so a pinned distance is refused there, tensor cores or not
// (without them: gdn-select-schedule-prefetch.mlir).
func.func @varlen(%q: memref<1x24x16x128xbf16>, %k: memref<1x24x16x128xbf16>,
                  %v: memref<1x24x32x128xbf16>, %g: memref<1x24x32xf32>,
                  %cu: memref<3xi32>, %s: memref<2x32x128x128xf32>,
                  %o: memref<1x24x32x128xbf16>) {
  // expected-error @+1 {{cannot be lowered to the GPU: input_prefetch_distance = 100 needs the tensor-core solve of a single chunk (T <= staged_tokens) with a fixed batch (no cu_seqlens)}}
  gdn.recurrent q(%q : memref<1x24x16x128xbf16>) k(%k : memref<1x24x16x128xbf16>)
      v(%v : memref<1x24x32x128xbf16>) g(%g : memref<1x24x32xf32>)
      cu_seqlens(%cu : memref<3xi32>)
      initial_state(%s : memref<2x32x128x128xf32>) final_state(%s : memref<2x32x128x128xf32>)
      o(%o : memref<1x24x32x128xbf16>) {gdn.schedule = #gdn.schedule<solve = tensor_cores>}
  return
}
