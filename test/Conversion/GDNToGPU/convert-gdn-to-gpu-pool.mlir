// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<columns_per_lane = 4>}" -convert-gdn-to-gpu | FileCheck %s
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<columns_per_lane = 4>}" -convert-gdn-to-gpu | FileCheck %s --check-prefix=BF16
// A state pool: the kernel reads sequence n's slot from state_indices; a
// padding row (slot < 0, or past the pool's 6 slots) starts from zeros, stores nothing and writes zero
// outputs. One token (decode): the token's inputs load first, then the state
// without a branch (slot 0 read for a padding row, then zeros selected), so
// every load is issued before any math waits on one.
// CHECK-LABEL: gpu.func @pool_recurrent
// CHECK: %[[N:.*]] = gpu.block_id z
// CHECK: %[[RAW:.*]] = memref.load %{{.*}}[%[[N]]] : memref<4xi32>
// CHECK: %[[SLOT:.*]] = arith.extsi %[[RAW]] : i32 to i64
// CHECK: %[[VALID:.*]] = arith.cmpi ult, %[[SLOT]], %{{.*}} : i64
// CHECK: %[[ROW:.*]] = arith.index_cast %[[SLOT]] : i64 to index
// CHECK: memref<4x1x1x128xbf16>, vector<4xbf16>
// CHECK: memref<4x1x2x16xbf16>
// CHECK: %[[SAFE:.*]] = arith.select %[[VALID]], %[[ROW]], %{{.*}} : index
// CHECK: %[[S:.*]] = vector.load %{{.*}}[%[[SAFE]], {{.*}} : memref<6x2x16x128xf32>, vector<4xf32>
// CHECK: arith.select %[[VALID]], %{{.*}}, %{{.*}} : f32
// CHECK: arith.select %[[VALID]]
// CHECK: scf.if %[[VALID]] {
// CHECK: vector.store %{{.*}}[%[[ROW]], {{.*}} : memref<6x2x16x128xf32>, vector<4xf32>
func.func @pool(%q: memref<4x1x1x128xbf16>, %k: memref<4x1x1x128xbf16>, %v: memref<4x1x2x16xbf16>,
                %idx: memref<4xi32>, %pool: memref<6x2x16x128xf32>, %o: memref<4x1x2x16xbf16>) {
  gdn.recurrent q(%q : memref<4x1x1x128xbf16>) k(%k : memref<4x1x1x128xbf16>) v(%v : memref<4x1x2x16xbf16>)
      state_indices(%idx : memref<4xi32>)
      initial_state(%pool : memref<6x2x16x128xf32>) final_state(%pool : memref<6x2x16x128xf32>)
      o(%o : memref<4x1x2x16xbf16>) {state_layout = #gdn.layout<vk>}
  return
}

// -----

// A bf16 state: 8-byte vector loads widened to f32, rounded once on store.
// BF16-LABEL: gpu.func @bf16_recurrent
// BF16: %[[S:.*]] = vector.load %{{.*}} {alignment = 8 : i64} : memref<2x2x16x128xbf16>, vector<4xbf16>
// BF16: arith.extf %[[S]] : vector<4xbf16> to vector<4xf32>
// BF16: scf.yield
// BF16: %[[R:.*]] = arith.truncf %{{.*}} : vector<4xf32> to vector<4xbf16>
// BF16-NEXT: vector.store %[[R]], %{{.*}} {alignment = 8 : i64} : memref<2x2x16x128xbf16>, vector<4xbf16>
func.func @bf16(%q: memref<2x1x1x128xbf16>, %k: memref<2x1x1x128xbf16>, %v: memref<2x1x2x16xbf16>,
                %s: memref<2x2x16x128xbf16>, %o: memref<2x1x2x16xbf16>) {
  gdn.recurrent q(%q : memref<2x1x1x128xbf16>) k(%k : memref<2x1x1x128xbf16>) v(%v : memref<2x1x2x16xbf16>)
      initial_state(%s : memref<2x2x16x128xbf16>) final_state(%s : memref<2x2x16x128xbf16>)
      o(%o : memref<2x1x2x16xbf16>) {state_layout = #gdn.layout<vk>}
  return
}
