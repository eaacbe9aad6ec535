// RUN: gdn-opt %s -split-input-file -gdn-select-schedule | FileCheck %s
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="sm-count=66" | FileCheck %s --check-prefix=SM66
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="chip=sm_80" | FileCheck %s --check-prefix=SM80
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<state_prefetch_distance = 0, input_prefetch_distance = 0>}" | FileCheck %s --check-prefix=NONE
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<state_prefetch_distance = 100>}" -verify-diagnostics | FileCheck %s --check-prefix=PINNED
// RUN: not gdn-opt %s -split-input-file -gdn-select-schedule="chip=sm_80 schedule={#gdn.schedule<state_prefetch_distance = 100>}" 2>&1 | FileCheck %s --check-prefix=SM80PIN

// The L2 prefetch of a later CTA's state tile (state_prefetch_distance): chosen
// for the bandwidth-bound bf16 decode (N = 64, HV = 32: CTAs of 4 warps x 8
// columns, ~72 registers a thread, 7 CTAs an SM), one wave of CTAs ahead:
// 132 x 7 = 924 (66 SMs: 462); never on sm_80 (no cp.async.bulk.prefetch),
// nor for an f32 state (unmeasured) or a small grid (N = 8). A pinned
// distance goes on any decode kernel whose tile is one contiguous run. (The
// staged inputs' prefetch of the tensor-core solve:
// gdn-select-schedule-prefetch-inputs.mlir.)
// CHECK-LABEL: func.func @bf16_n64
// CHECK: state_prefetch_distance = 924, input_prefetch_distance = 0,
// SM66-LABEL: func.func @bf16_n64
// SM66: state_prefetch_distance = 462, input_prefetch_distance = 0,
// SM80-LABEL: func.func @bf16_n64
// SM80: state_prefetch_distance = 0, input_prefetch_distance = 0,
// SM80PIN: state_prefetch_distance = 100 needs cp.async.bulk.prefetch (sm_90 on)
// NONE-LABEL: func.func @bf16_n64
// NONE: state_prefetch_distance = 0, input_prefetch_distance = 0,
// PINNED-LABEL: func.func @bf16_n64
// PINNED: state_prefetch_distance = 100, input_prefetch_distance = 0,
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
// CHECK: state_prefetch_distance = 0, input_prefetch_distance = 0,
// PINNED-LABEL: func.func @f32_n64
// PINNED: state_prefetch_distance = 100, input_prefetch_distance = 0,
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
// CHECK: state_prefetch_distance = 0, input_prefetch_distance = 0,
// PINNED-LABEL: func.func @bf16_n8
// PINNED: state_prefetch_distance = 100, input_prefetch_distance = 0,
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
  // expected-error @+1 {{cannot be lowered to the GPU: state_prefetch_distance = 100 needs a kernel without staged tokens or tensor cores}}
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

// Packed sequences (cu_seqlens): a CTA's tokens are known only from
// cu_seqlens, so a pinned distance is refused there, even without staged
// tokens in vk (the tensor-core solve's:
// gdn-select-schedule-prefetch-inputs.mlir).
func.func @varlen(%q: memref<1x24x16x128xbf16>, %k: memref<1x24x16x128xbf16>,
                  %v: memref<1x24x32x128xbf16>, %g: memref<1x24x32xf32>,
                  %cu: memref<3xi32>, %s: memref<2x32x128x128xf32>,
                  %o: memref<1x24x32x128xbf16>) {
  // expected-error @+1 {{state_prefetch_distance = 100 needs a kernel without staged tokens or tensor cores (staged_tokens = 0 or T = 1), an initial state in the vk layout (identity, a CTA's 8 rows of K a multiple of 16 bytes) and a fixed batch (no cu_seqlens)}}
  gdn.recurrent q(%q : memref<1x24x16x128xbf16>) k(%k : memref<1x24x16x128xbf16>)
      v(%v : memref<1x24x32x128xbf16>) g(%g : memref<1x24x32xf32>)
      cu_seqlens(%cu : memref<3xi32>)
      initial_state(%s : memref<2x32x128x128xf32>) final_state(%s : memref<2x32x128x128xf32>)
      o(%o : memref<1x24x32x128xbf16>) {gdn.schedule = #gdn.schedule<staged_tokens = 0>, state_layout = #gdn.layout<vk>}
  return
}
