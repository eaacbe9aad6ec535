// RUN: gdn-opt %s -split-input-file --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s
// RUN: gdn-opt %s -split-input-file --one-shot-bufferize="bufferize-function-boundaries" | FileCheck %s --check-prefix=STRIDED
// RUN: gdn-opt %s -split-input-file --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --gdn-lower-to-cpu | FileCheck %s --check-prefix=LLVM
// RUN: not gdn-opt %s -split-input-file -convert-gdn-to-cpu 2>&1 | FileCheck %s --check-prefix=CPU-TENSOR
// RUN: not gdn-opt %s -split-input-file -convert-gdn-to-gpu 2>&1 | FileCheck %s --check-prefix=GPU-TENSOR

// One-shot bufferization of the tensor form of gdn.commit into its memref
// form. The init `state` is read (slots that are not committed keep their
// values) and written in part; its buffer is the result.

// The pool is updated in place: no allocation, no copy.
// CHECK-LABEL: func @in_place
// CHECK-SAME: (%[[BUF:[^:]*]]: memref<2x4x2x16x32xf32>, %[[ACC:[^:]*]]: memref<2xi32>, %[[IDX:[^:]*]]: memref<2xi32>, %[[POOL:[^:]*]]: memref<6x2x16x32xf32>)
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK: gdn.commit intermediate_states(%[[BUF]] : memref<2x4x2x16x32xf32>) accepted(%[[ACC]] : memref<2xi32>) state_indices(%[[IDX]] : memref<2xi32>) state(%[[POOL]] : memref<6x2x16x32xf32>) {state_layout = #gdn.layout<vk>}{{$}}
// CHECK-NOT: memref.copy
// CHECK: return %[[POOL]] : memref<6x2x16x32xf32>

// Function arguments with a fully dynamic layout are copied into contiguous
// buffers, the pool included (it is read), and the pool is copied back.
// STRIDED-LABEL: func @in_place
// STRIDED-SAME: %[[POOL:[^:]*]]: memref<6x2x16x32xf32, strided<[?, ?, ?, ?], offset: ?>>)
// STRIDED: %[[B:.*]] = memref.alloc() {{.*}} : memref<2x4x2x16x32xf32>
// STRIDED: memref.copy %{{.*}}, %[[B]]
// STRIDED: %[[C:.*]] = memref.alloc() {{.*}} : memref<6x2x16x32xf32>
// STRIDED: memref.copy %[[POOL]], %[[C]]
// STRIDED: gdn.commit intermediate_states(%[[B]] : memref<2x4x2x16x32xf32>) {{.*}} state(%[[C]] : memref<6x2x16x32xf32>)
// STRIDED: memref.copy %[[C]], %[[POOL]]
// STRIDED: return %[[POOL]]

// LLVM-LABEL: llvm.func @in_place
// LLVM-NOT: gdn.commit

// The lowerings take the memref form only.
// CPU-TENSOR: error: 'gdn.commit' op is in tensor form; convert-gdn-to-cpu needs the memref form: run --one-shot-bufferize first
// GPU-TENSOR: error: 'gdn.commit' op is in tensor form; convert-gdn-to-gpu needs the memref form: run --one-shot-bufferize first
func.func @in_place(%buf: tensor<2x4x2x16x32xf32>, %acc: tensor<2xi32>, %slots: tensor<2xi32>,
                    %pool: tensor<6x2x16x32xf32>) -> tensor<6x2x16x32xf32> {
  %new = gdn.commit intermediate_states(%buf : tensor<2x4x2x16x32xf32>) accepted(%acc : tensor<2xi32>)
      state_indices(%slots : tensor<2xi32>) state(%pool : tensor<6x2x16x32xf32>)
      {state_layout = #gdn.layout<vk>} -> tensor<6x2x16x32xf32>
  return %new : tensor<6x2x16x32xf32>
}

// -----

// The old pool is still read after the op: the op writes a copy of it (a copy
// with the old contents, since the slots it does not commit must keep them).
// CHECK-LABEL: func @old_pool_live
// CHECK-SAME: %[[POOL:[^:]*]]: memref<3x1x8x4xf32>)
// CHECK: %[[NEW:.*]] = memref.alloc() {{.*}} : memref<3x1x8x4xf32>
// CHECK: memref.copy %[[POOL]], %[[NEW]]
// CHECK: gdn.commit {{.*}} state(%[[NEW]] : memref<3x1x8x4xf32>)
// CHECK: return %[[POOL]], %[[NEW]]
func.func @old_pool_live(%buf: tensor<2x3x1x8x4xbf16>, %acc: tensor<2xi64>, %slots: tensor<2xi64>,
                         %pool: tensor<3x1x8x4xf32>) -> (tensor<3x1x8x4xf32>, tensor<3x1x8x4xf32>) {
  %new = gdn.commit intermediate_states(%buf : tensor<2x3x1x8x4xbf16>) accepted(%acc : tensor<2xi64>)
      state_indices(%slots : tensor<2xi64>) state(%pool : tensor<3x1x8x4xf32>) -> tensor<3x1x8x4xf32>
  return %pool, %new : tensor<3x1x8x4xf32>, tensor<3x1x8x4xf32>
}
