// RUN: gdn-opt %s -split-input-file | FileCheck %s
// RUN: gdn-opt %s -split-input-file | gdn-opt -split-input-file | FileCheck %s
// Round trip of gdn.commit in every form: batch-scoped and pool-scoped
// buffers, with and without a state pool, mixed dtypes, memref and tensor form.

// Batch-scoped buffer into a per-row state, kv layout (the default).
// CHECK-LABEL: func @batch
// CHECK: gdn.commit intermediate_states(%{{.*}} : memref<2x3x4x32x16xf32>) accepted(%{{.*}} : memref<2xi32>) state(%{{.*}} : memref<2x4x32x16xf32>)
// CHECK-NOT: state_layout
func.func @batch(%buf: memref<2x3x4x32x16xf32>, %acc: memref<2xi32>, %s: memref<2x4x32x16xf32>) {
  gdn.commit intermediate_states(%buf : memref<2x3x4x32x16xf32>) accepted(%acc : memref<2xi32>)
      state(%s : memref<2x4x32x16xf32>)
  return
}

// -----

// SGLang: pool-scoped bf16 buffer into a bf16 pool, vk, i64 counts.
// CHECK-LABEL: func @pool
// CHECK: gdn.commit intermediate_states(%{{.*}} : memref<5x4x2x16x32xbf16>) accepted(%{{.*}} : memref<3xi64>) state_indices(%{{.*}} : memref<3xi32>) intermediate_state_indices(%{{.*}} : memref<3xi64>) state(%{{.*}} : memref<7x2x16x32xbf16>) {state_layout = #gdn.layout<vk>}
func.func @pool(%buf: memref<5x4x2x16x32xbf16>, %acc: memref<3xi64>, %slots: memref<3xi32>,
                %rows: memref<3xi64>, %pool: memref<7x2x16x32xbf16>) {
  gdn.commit intermediate_states(%buf : memref<5x4x2x16x32xbf16>) accepted(%acc : memref<3xi64>)
      state_indices(%slots : memref<3xi32>) intermediate_state_indices(%rows : memref<3xi64>)
      state(%pool : memref<7x2x16x32xbf16>) {state_layout = #gdn.layout<vk>}
  return
}

// -----

// A pool with a batch-scoped buffer; the state dtype differs from the buffer's.
// CHECK-LABEL: func @mixed
// CHECK: gdn.commit intermediate_states(%{{.*}} : memref<2x2x1x8x8xf16>) accepted(%{{.*}} : memref<2xi32>) state_indices(%{{.*}} : memref<2xi64>) state(%{{.*}} : memref<9x1x8x8xf32>)
func.func @mixed(%buf: memref<2x2x1x8x8xf16>, %acc: memref<2xi32>, %slots: memref<2xi64>,
                 %pool: memref<9x1x8x8xf32>) {
  gdn.commit intermediate_states(%buf : memref<2x2x1x8x8xf16>) accepted(%acc : memref<2xi32>)
      state_indices(%slots : memref<2xi64>) state(%pool : memref<9x1x8x8xf32>)
  return
}

// -----

// Tensor form: the new pool is the result, tied to the `state` init.
// CHECK-LABEL: func @tensor
// CHECK: %[[NEW:.*]] = gdn.commit intermediate_states(%{{.*}} : tensor<2x4x2x16x32xf32>) accepted(%{{.*}} : tensor<2xi32>) state_indices(%{{.*}} : tensor<2xi32>) state(%{{.*}} : tensor<6x2x16x32xf32>) {state_layout = #gdn.layout<vk>} -> tensor<6x2x16x32xf32>
// CHECK: return %[[NEW]]
func.func @tensor(%buf: tensor<2x4x2x16x32xf32>, %acc: tensor<2xi32>, %slots: tensor<2xi32>,
                  %pool: tensor<6x2x16x32xf32>) -> tensor<6x2x16x32xf32> {
  %new = gdn.commit intermediate_states(%buf : tensor<2x4x2x16x32xf32>) accepted(%acc : tensor<2xi32>)
      state_indices(%slots : tensor<2xi32>) state(%pool : tensor<6x2x16x32xf32>)
      {state_layout = #gdn.layout<vk>} -> tensor<6x2x16x32xf32>
  return %new : tensor<6x2x16x32xf32>
}

// -----

// An f8E4M3FN pool with its row scales [slots, HV, V] (docs/math.md §6).
// CHECK-LABEL: func @fp8_pool
// CHECK: gdn.commit intermediate_states(%{{.*}} : memref<3x4x2x16x32xf32>) accepted(%{{.*}} : memref<3xi32>) state_indices(%{{.*}} : memref<3xi32>) state_scale(%{{.*}} : memref<7x2x16xf32>) state(%{{.*}} : memref<7x2x16x32xf8E4M3FN>) {state_layout = #gdn.layout<vk>}
func.func @fp8_pool(%buf: memref<3x4x2x16x32xf32>, %acc: memref<3xi32>, %slots: memref<3xi32>,
                    %sc: memref<7x2x16xf32>, %pool: memref<7x2x16x32xf8E4M3FN>) {
  gdn.commit intermediate_states(%buf : memref<3x4x2x16x32xf32>) accepted(%acc : memref<3xi32>)
      state_indices(%slots : memref<3xi32>) state_scale(%sc : memref<7x2x16xf32>)
      state(%pool : memref<7x2x16x32xf8E4M3FN>) {state_layout = #gdn.layout<vk>}
  return
}
