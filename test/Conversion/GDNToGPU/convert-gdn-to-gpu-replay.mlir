// RUN: gdn-opt %s -split-input-file -gdn-select-schedule -convert-gdn-to-gpu | FileCheck %s
// RUN: gdn-opt %s -split-input-file -gdn-lower-to-ptx | FileCheck %s --check-prefix=PTX
// A global pin of a recurrence-only parameter does not reach the replay's
// token loop (tokenLoopPins): chunk_prefetch_distance, segments (the split
// scan's, which a replay refused before).
// RUN: gdn-opt %s -split-input-file -pass-pipeline="builtin.module(gdn-lower-to-ptx{schedule={#gdn.schedule<chunk_prefetch_distance = 1>}})" | FileCheck %s --check-prefix=PTX
// RUN: gdn-opt %s -split-input-file -pass-pipeline="builtin.module(gdn-lower-to-ptx{schedule={#gdn.schedule<segments = 4>}})" | FileCheck %s --check-prefix=PTX
// gdn.replay_commit on the GPU: the token loop of its recurrence view, one
// launch for every (layer, row).

// Three layers, two rows, a pool of 6 slots, windows of L = 4 steps. The
// grid's z is layers * N = 6; each CTA takes its layer z / 2 and row z % 2,
// views the layer (a reinterpret_cast at layer * elements a layer), reads
// its row's slot and count (clamped to [0, 4], 0 for padding) and runs that
// many tokens from the slot's window row: no output is stored.
// CHECK-LABEL: func.func @commit
// CHECK-NOT: gdn.replay_commit
// CHECK-DAG: %[[C6:.*]] = arith.constant 6 : index
// CHECK: gpu.launch_func @gdn_kernels::@commit_replay blocks in (%{{.*}}, %{{.*}}, %[[C6]])
// CHECK: gpu.func @commit_replay
// CHECK: %[[Z:.*]] = gpu.block_id z
// CHECK: %[[LAYER:.*]] = arith.divui %[[Z]], %{{.*}} : index
// CHECK: %[[KOFF:.*]] = arith.muli %[[LAYER]], %{{.*}} : index
// CHECK: %[[KVIEW:.*]] = memref.reinterpret_cast %arg0 to offset: [%[[KOFF]]], sizes: [6, 4, 2, 128], strides: [1024, 128, 512, 1]
// CHECK: memref.reinterpret_cast %arg6 to offset: [%{{.*}}], sizes: [6, 4, 128, 128], strides: [65536, 16384, 128, 1]
// CHECK: %[[Z2:.*]] = gpu.block_id z
// CHECK: %[[N:.*]] = arith.remui %[[Z2]], %{{.*}} : index
// CHECK: memref.load %arg5[%[[N]]] : memref<2xi32>
// CHECK: %[[ACC:.*]] = memref.load %arg4[%[[N]]] : memref<2xi64>
// CHECK: arith.maxsi
// CHECK: %[[CLAMPED:.*]] = arith.minsi %{{.*}}, %{{.*}} : index
// CHECK: %[[COUNT:.*]] = arith.select %{{.*}}, %[[CLAMPED]], %{{.*}} : index
// CHECK: %[[ROW:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : index
// CHECK: %[[SOME:.*]] = arith.cmpi sgt, %[[COUNT]], %{{.*}} : index
// CHECK: scf.if %[[SOME]]
// The four window steps' loads first (in bounds whatever the count), then
// each token while t < count.
// CHECK: vector.load %[[KVIEW]][%[[ROW]], %c0, %{{.*}}, %{{.*}}]
// CHECK: vector.load %[[KVIEW]][%[[ROW]], %c3, %{{.*}}, %{{.*}}]
// CHECK: %[[RUN0:.*]] = arith.cmpi slt, %c0, %[[COUNT]] : index
// CHECK: scf.if %[[RUN0]]
// CHECK: %[[RUN3:.*]] = arith.cmpi slt, %c3, %[[COUNT]] : index
// CHECK: scf.if %[[RUN3]]
// CHECK-NOT: memref<2x4x4x128xbf16>
// CHECK: gpu.return
// PTX: gpu.binary @gdn_kernels
func.func @commit(%kw: memref<3x6x2x4x128xbf16>, %vw: memref<3x6x4x4x128xbf16>, %gw: memref<3x6x4x4xf32>,
                  %bw: memref<3x6x4x4xf32>, %acc: memref<2xi64>, %idx: memref<2xi32>,
                  %s: memref<3x6x4x128x128xf32>) {
  gdn.replay_commit k_window(%kw : memref<3x6x2x4x128xbf16>) v_window(%vw : memref<3x6x4x4x128xbf16>)
      g_window(%gw : memref<3x6x4x4xf32>) beta_window(%bw : memref<3x6x4x4xf32>)
      accepted(%acc : memref<2xi64>) state_indices(%idx : memref<2xi32>)
      state(%s : memref<3x6x4x128x128xf32>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// A pinned schedule is kept where the token loop allows it; staging is not.
// CHECK-LABEL: func.func @pinned
// CHECK: gpu.func @pinned_replay
// CHECK-SAME: known_block_size = array<i32: 64, 1, 1>
func.func @pinned(%kw: memref<1x2x1x3x128xf32>, %gw: memref<1x2x1x3xf32>, %acc: memref<2xi32>,
                  %s: memref<1x2x1x128x128xf32>) {
  gdn.replay_commit k_window(%kw : memref<1x2x1x3x128xf32>) v_window(%kw : memref<1x2x1x3x128xf32>)
      g_window(%gw : memref<1x2x1x3xf32>) beta_window(%gw : memref<1x2x1x3xf32>)
      accepted(%acc : memref<2xi32>) state(%s : memref<1x2x1x128x128xf32>)
      {gdn.schedule = #gdn.schedule<warps = 2, staged_tokens = 2>}
  return
}

// -----

// EAGLE tree: the parent table is a kernel argument; each CTA walks its
// row's path up the table (from step count - 1) into a mask before the
// token loop, and window step t runs when bit t is set.
// CHECK-LABEL: func.func @commit_tree
// CHECK: gpu.func @commit_tree_replay({{.*}}%arg6: memref<2x4xi32>
// CHECK: %[[PATH:.*]]:2 = scf.while
// CHECK: memref.load %arg6[%{{.*}}, %{{.*}}] : memref<2x4xi32>
// CHECK: arith.shrui %[[PATH]]#1
// CHECK: arith.shrui %[[PATH]]#1
// CHECK: arith.shrui %[[PATH]]#1
// CHECK: arith.shrui %[[PATH]]#1
// CHECK-NOT: arith.shrui %[[PATH]]#1
// CHECK: gpu.return
// PTX: gpu.binary @gdn_kernels
func.func @commit_tree(%kw: memref<1x6x2x4x128xbf16>, %vw: memref<1x6x4x4x128xbf16>, %gw: memref<1x6x4x4xf32>,
                       %bw: memref<1x6x4x4xf32>, %acc: memref<2xi32>, %idx: memref<2xi32>,
                       %p: memref<2x4xi32>, %s: memref<1x6x4x128x128xbf16>) {
  gdn.replay_commit k_window(%kw : memref<1x6x2x4x128xbf16>) v_window(%vw : memref<1x6x4x4x128xbf16>)
      g_window(%gw : memref<1x6x4x4xf32>) beta_window(%bw : memref<1x6x4x4xf32>)
      accepted(%acc : memref<2xi32>) state_indices(%idx : memref<2xi32>)
      retrieve_parent_token(%p : memref<2x4xi32>)
      state(%s : memref<1x6x4x128x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// A bandwidth-bound replay onto f32 checkpoints (N = 64, HV = 32): CTAs of
// 4 warps, 4 columns on one lane, side by side (the view alone would take
// one-warp CTAs, 4x as many).
// CHECK-LABEL: func.func @f32_n64
// CHECK: gpu.launch_func @gdn_kernels::@f32_n64_replay blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%c128,
// CHECK: gpu.func @f32_n64_replay
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
func.func @f32_n64(%kw: memref<1x64x16x4x128xbf16>, %vw: memref<1x64x32x4x128xbf16>, %gw: memref<1x64x32x4xf32>,
                   %acc: memref<64xi32>, %s: memref<1x64x32x128x128xf32>) {
  gdn.replay_commit k_window(%kw : memref<1x64x16x4x128xbf16>) v_window(%vw : memref<1x64x32x4x128xbf16>)
      g_window(%gw : memref<1x64x32x4xf32>) beta_window(%gw : memref<1x64x32x4xf32>)
      accepted(%acc : memref<64xi32>) state(%s : memref<1x64x32x128x128xf32>)
      {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
