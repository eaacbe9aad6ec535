// RUN: gdn-opt %s -split-input-file -gdn-select-schedule | FileCheck %s
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<max_registers = 0>}" | FileCheck %s --check-prefix=PIN
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<max_registers = 168>}" | FileCheck %s --check-prefix=PIN168
// Tensor-core CTAs of 4 or more warps on chunks of up to 16 tokens are
// capped at 128 registers a thread (max_registers = 128) where several
// share an SM: T = 12 at N = 5 is 160 CTAs of 8 warps on the H200's 132
// SMs; at N = 4 (128 CTAs), a varlen prefill of 2 sequences (128 CTAs of
// 4 warps) and a token loop nothing is capped (docs/cost-model.md#tensor-core-register-cap).
// A pinned value is kept.

// CHECK-LABEL: func.func @t12_n5
// CHECK: solve = tensor_cores, {{.*}}max_registers = 128,
// PIN-LABEL: func.func @t12_n5
// PIN: solve = tensor_cores, {{.*}}max_registers = 0,
// PIN168-LABEL: func.func @t12_n5
// PIN168: solve = tensor_cores, {{.*}}max_registers = 168,
func.func @t12_n5(%q: memref<5x12x16x128xbf16>, %k: memref<5x12x16x128xbf16>, %v: memref<5x12x32x128xbf16>, %g: memref<5x12x32xf32>, %beta: memref<5x12x32xbf16>, %s: memref<5x32x128x128xf32>, %o: memref<5x12x32x128xbf16>) {
  gdn.recurrent q(%q : memref<5x12x16x128xbf16>) k(%k : memref<5x12x16x128xbf16>) v(%v : memref<5x12x32x128xbf16>) g(%g : memref<5x12x32xf32>) beta(%beta : memref<5x12x32xbf16>) initial_state(%s : memref<5x32x128x128xf32>) final_state(%s : memref<5x32x128x128xf32>) o(%o : memref<5x12x32x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// CHECK-LABEL: func.func @t12_n4
// CHECK: solve = tensor_cores, {{.*}}max_registers = 0,
func.func @t12_n4(%q: memref<4x12x16x128xbf16>, %k: memref<4x12x16x128xbf16>, %v: memref<4x12x32x128xbf16>, %g: memref<4x12x32xf32>, %beta: memref<4x12x32xbf16>, %s: memref<4x32x128x128xf32>, %o: memref<4x12x32x128xbf16>) {
  gdn.recurrent q(%q : memref<4x12x16x128xbf16>) k(%k : memref<4x12x16x128xbf16>) v(%v : memref<4x12x32x128xbf16>) g(%g : memref<4x12x32xf32>) beta(%beta : memref<4x12x32xbf16>) initial_state(%s : memref<4x32x128x128xf32>) final_state(%s : memref<4x32x128x128xf32>) o(%o : memref<4x12x32x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// CHECK-LABEL: func.func @varlen_prefill
// CHECK: warps = 4, {{.*}}solve = chunk_parallel, {{.*}}max_registers = 0,
func.func @varlen_prefill(%q: memref<1x4096x16x128xbf16>, %k: memref<1x4096x16x128xbf16>, %v: memref<1x4096x32x128xbf16>, %g: memref<1x4096x32xf32>, %beta: memref<1x4096x32xbf16>, %cu: memref<3xi32>, %s: memref<2x32x128x128xf32>, %o: memref<1x4096x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x4096x16x128xbf16>) k(%k : memref<1x4096x16x128xbf16>) v(%v : memref<1x4096x32x128xbf16>) g(%g : memref<1x4096x32xf32>) beta(%beta : memref<1x4096x32xbf16>) cu_seqlens(%cu : memref<3xi32>) initial_state(%s : memref<2x32x128x128xf32>) final_state(%s : memref<2x32x128x128xf32>) o(%o : memref<1x4096x32x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// CHECK-LABEL: func.func @decode
// CHECK: solve = token_by_token, {{.*}}max_registers = 0,
func.func @decode(%q: memref<256x1x16x128xbf16>, %k: memref<256x1x16x128xbf16>, %v: memref<256x1x32x128xbf16>, %g: memref<256x1x32xf32>, %beta: memref<256x1x32xbf16>, %s: memref<256x32x128x128xf32>, %o: memref<256x1x32x128xbf16>) {
  gdn.recurrent q(%q : memref<256x1x16x128xbf16>) k(%k : memref<256x1x16x128xbf16>) v(%v : memref<256x1x32x128xbf16>) g(%g : memref<256x1x32xf32>) beta(%beta : memref<256x1x32xbf16>) initial_state(%s : memref<256x32x128x128xf32>) final_state(%s : memref<256x32x128x128xf32>) o(%o : memref<256x1x32x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
