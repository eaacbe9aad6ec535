// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<columns_per_lane = 4, staged_tokens = 0>}" -convert-gdn-to-gpu | FileCheck %s
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<columns_per_lane = 2, warps = 1>}" -convert-gdn-to-gpu | FileCheck %s --check-prefix=SCHED
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<columns_per_lane = 4, staged_tokens = 0, reductions = in_turn>}" -convert-gdn-to-gpu | FileCheck %s --check-prefix=TURN

// kv layout, K = 32, V = 64: a warp's lanes split 4 along V (4 columns each:
// 64 contiguous bytes of a key row) and 8 along K (4 key rows each); 4 warps
// cover V, one CTA per (n, hv). The state moves as vector<4xf32> along V.
// CHECK-LABEL: func.func @kv
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C128:.*]] = arith.constant 128 : index
// CHECK: gpu.launch_func @gdn_kernels::@kv_recurrent blocks in (%[[C1]], %[[C2]], %[[C3]]) threads in (%[[C128]], %{{.*}}, %{{.*}}) args(
// CHECK: gpu.module @gdn_kernels [#nvvm.target<chip = "sm_90a", features = "+ptx80">]
// CHECK: gpu.func @kv_recurrent({{.*}}) kernel attributes {known_block_size = array<i32: 128, 1, 1>}
// CHECK-COUNT-4: vector.load %{{.*}} {alignment = 16 : i64} : memref<3x2x32x64xf32>, vector<4xf32>
// CHECK: scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)
// Decay from log-space g: exp(g) = ex2.approx(g * log2(e)), no libdevice.
// CHECK: llvm.inline_asm "ex2.approx.ftz.f32 $0, $1;"
// k·q, then for each of the 4 columns S^T k and S^T q of the carried state
// (side by side: o = exp(g) S^T q + (k·q) u), each over the 8 key lanes in 3
// steps: 3 + 24 shuffles.
// CHECK-COUNT-27: gpu.shuffle xor
// CHECK-NOT: gpu.shuffle
// CHECK: scf.if
// CHECK: vector.store %{{.*}} : memref<3x1x2x64xf32>, vector<4xf32>
// CHECK-COUNT-4: vector.store %{{.*}} {alignment = 16 : i64} : memref<3x2x32x64xf32>, vector<4xf32>
// In turn (reductions = in_turn, chosen when bandwidth-bound): decay, then
// S^T k, the update, then S^T q: 4 columns x 2 trees x 3 steps, no k·q.
// TURN-LABEL: func.func @kv
// TURN: llvm.inline_asm "ex2.approx.ftz.f32 $0, $1;"
// TURN-COUNT-24: gpu.shuffle xor
// TURN-NOT: gpu.shuffle
// TURN-LABEL: func.func @vk
// SCHED-LABEL: func.func @kv
// SCHED: gpu.launch_func @gdn_kernels::@kv_recurrent blocks in (%c4, %c2, %c3) threads in (%c32,
func.func @kv(%q: memref<3x1x1x32xf32>, %k: memref<3x1x1x32xf32>, %v: memref<3x1x2x64xf32>,
              %g: memref<3x1x2xf32>, %s: memref<3x2x32x64xf32>, %o: memref<3x1x2x64xf32>) {
  gdn.recurrent q(%q : memref<3x1x1x32xf32>) k(%k : memref<3x1x1x32xf32>) v(%v : memref<3x1x2x64xf32>)
      g(%g : memref<3x1x2xf32>) initial_state(%s : memref<3x2x32x64xf32>) final_state(%s : memref<3x2x32x64xf32>)
      o(%o : memref<3x1x2x64xf32>)
  return
}

// -----

// vk layout, K = 128: each lane holds 4 contiguous key columns of a row, so
// the state moves as vector<4xf32> along K; bf16 q/k come as vector<4xbf16>.
// Fused gating and sigmoid(b) are computed in the kernel first; then every
// reduction of the token runs on the raw q, k side by side: |k|², |q|² (each
// followed by its rsqrt), k·q, and Sᵀk, Sᵀq for the 4 columns, 5 shuffle steps
// each (3 x 5 + 8 x 5).
// CHECK-LABEL: func.func @vk
// CHECK: gpu.func @vk_recurrent
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<1x4x16x128xf32>, vector<4xf32>
// CHECK: vector.load %{{.*}} {alignment = 8 : i64} : memref<1x2x2x128xbf16>, vector<4xbf16>
// CHECK: arith.extf %{{.*}} : vector<4xbf16> to vector<4xf32>
// CHECK: llvm.inline_asm "lg2.approx.ftz.f32 $0, $1;"
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK: llvm.inline_asm "rsqrt.approx.ftz.f32 $0, $1;"
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK: llvm.inline_asm "rsqrt.approx.ftz.f32 $0, $1;"
// CHECK-COUNT-45: gpu.shuffle xor
// CHECK-NOT: gpu.shuffle
// CHECK: arith.truncf %{{.*}} : vector<4xf32> to vector<4xbf16>
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<1x4x16x128xf32>, vector<4xf32>
func.func @vk(%q: memref<1x2x2x128xbf16>, %k: memref<1x2x2x128xbf16>, %v: memref<1x2x4x16xbf16>,
              %a: memref<1x2x4xbf16>, %A_log: memref<4xf32>, %dt_bias: memref<4xf32>, %b: memref<1x2x4xbf16>,
              %s: memref<1x4x16x128xf32>, %o: memref<1x2x4x16xbf16>) {
  gdn.recurrent q(%q : memref<1x2x2x128xbf16>) k(%k : memref<1x2x2x128xbf16>) v(%v : memref<1x2x4x16xbf16>)
      a(%a : memref<1x2x4xbf16>) A_log(%A_log : memref<4xf32>) dt_bias(%dt_bias : memref<4xf32>)
      b(%b : memref<1x2x4xbf16>)
      initial_state(%s : memref<1x4x16x128xf32>) final_state(%s : memref<1x4x16x128xf32>)
      o(%o : memref<1x2x4x16xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
