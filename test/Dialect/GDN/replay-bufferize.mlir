// RUN: gdn-opt %s --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s
// RUN: gdn-opt %s --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --gdn-lower-to-cpu | FileCheck %s --check-prefix=LLVM

// One-shot bufferization of the tensor form of gdn.replay_commit: the init
// `state` is read (the replay starts from it) and written in part, so the
// checkpoints are updated in place, attributes kept.

// CHECK-LABEL: func @in_place
// CHECK-SAME: %[[S:[^:]*]]: memref<2x4x2x16x16xf32>)
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK: gdn.replay_commit k_window(%{{.*}} : memref<2x4x1x3x16xbf16>) v_window(%{{.*}} : memref<2x4x2x3x16xbf16>) g_window(%{{.*}} : memref<2x4x2x3xf32>) beta_window(%{{.*}} : memref<2x4x2x3xf32>) accepted(%{{.*}} : memref<2xi32>) state_indices(%{{.*}} : memref<2xi32>) state(%[[S]] : memref<2x4x2x16x16xf32>) {qk_l2norm, state_layout = #gdn.layout<vk>}{{$}}
// CHECK: return %[[S]] : memref<2x4x2x16x16xf32>
// LLVM-LABEL: llvm.func @in_place
// LLVM-NOT: gdn.
func.func @in_place(%kw: tensor<2x4x1x3x16xbf16>, %vw: tensor<2x4x2x3x16xbf16>, %gw: tensor<2x4x2x3xf32>,
                    %bw: tensor<2x4x2x3xf32>, %acc: tensor<2xi32>, %idx: tensor<2xi32>,
                    %s: tensor<2x4x2x16x16xf32>) -> tensor<2x4x2x16x16xf32> {
  %r = gdn.replay_commit k_window(%kw : tensor<2x4x1x3x16xbf16>) v_window(%vw : tensor<2x4x2x3x16xbf16>)
      g_window(%gw : tensor<2x4x2x3xf32>) beta_window(%bw : tensor<2x4x2x3xf32>)
      accepted(%acc : tensor<2xi32>) state_indices(%idx : tensor<2xi32>)
      state(%s : tensor<2x4x2x16x16xf32>) {qk_l2norm, state_layout = #gdn.layout<vk>}
      -> tensor<2x4x2x16x16xf32>
  return %r : tensor<2x4x2x16x16xf32>
}
