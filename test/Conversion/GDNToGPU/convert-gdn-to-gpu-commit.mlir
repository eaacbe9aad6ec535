// RUN: gdn-opt %s -split-input-file -gdn-select-schedule -convert-gdn-to-gpu | FileCheck %s
// gdn.commit on the GPU: a copy kernel over (chunk of a head, hv, n). Each
// CTA reads its row's count and indices, skips rows that commit nothing, and
// copies its chunk with 16-byte vectors along the contiguous dimension.

// SGLang verify: bf16 buffer and pool, K = V = 128, 8 rows, T = 4. A head is
// 16384 bf16 = 2048 vectors of 8; 128 threads x 4 vectors a thread = 4 CTAs a
// head, so the grid is (4, HV = 32, N = 8).
// CHECK-LABEL: func.func @verify
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C128:.*]] = arith.constant 128 : index
// CHECK: gpu.launch_func @gdn_kernels::@verify_commit blocks in (%[[C4]], %[[C32]], %[[C8]]) threads in (%[[C128]], %{{.*}}, %{{.*}}) args(%arg0 : memref<9x4x32x128x128xbf16>, %arg1 : memref<8xi32>, %arg2 : memref<8xi32>, %arg3 : memref<8xi32>, %arg4 : memref<64x32x128x128xbf16>)
// CHECK: gpu.module @gdn_kernels
// CHECK: gpu.func @verify_commit({{.*}}) kernel attributes {known_block_size = array<i32: 128, 1, 1>}
// CHECK-DAG: %[[TID:.*]] = gpu.thread_id x
// CHECK-DAG: %[[CHUNK:.*]] = gpu.block_id x
// CHECK-DAG: %[[HV:.*]] = gpu.block_id y
// CHECK-DAG: %[[N:.*]] = gpu.block_id z
// The count, clamped to T = 4; the step is count - 1.
// CHECK: %[[ACC:.*]] = memref.load %arg1[%[[N]]] : memref<8xi32>
// CHECK: %[[A:.*]] = arith.minsi %{{.*}}, %{{.*}} : i64
// CHECK: %[[SOME:.*]] = arith.cmpi sge, %[[A]], %{{.*}} : i64
// CHECK: %[[STEP:.*]] = arith.index_cast %{{.*}} : i64 to index
// Slot and buffer row, each in range (0 <= x < slots or rows, unsigned) or
// the row is skipped.
// CHECK: memref.load %arg2[%[[N]]] : memref<8xi32>
// CHECK: %[[SLOTOK:.*]] = arith.cmpi ult
// CHECK: %[[V1:.*]] = arith.andi %[[SOME]], %[[SLOTOK]] : i1
// CHECK: %[[SLOT:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK: memref.load %arg3[%[[N]]] : memref<8xi32>
// CHECK: %[[ROWOK:.*]] = arith.cmpi ult
// CHECK: %[[VALID:.*]] = arith.andi %[[V1]], %[[ROWOK]] : i1
// CHECK: %[[ROW:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK: scf.if %[[VALID]] {
// Thread t of chunk c takes vectors 512 c + t + 128 u, u < 4: four 16-byte
// loads in flight, then four 16-byte stores (same dtype: no conversion).
// Vector v is element 8 v of the head: row 8 v / 128, column 8 v % 128.
// CHECK: %[[C512:.*]] = arith.constant 512 : index
// CHECK: %[[BASE:.*]] = arith.muli %[[CHUNK]], %[[C512]] : index
// CHECK: %[[FIRST:.*]] = arith.addi %[[BASE]], %[[TID]] : index
// CHECK: %[[E0:.*]] = arith.muli %[[FIRST]], %c8{{(_[0-9]+)?}} : index
// CHECK: %[[I0:.*]] = arith.divui %[[E0]], %c128{{(_[0-9]+)?}} : index
// CHECK: %[[J0:.*]] = arith.remui %[[E0]], %c128{{(_[0-9]+)?}} : index
// CHECK: %[[V1:.*]] = arith.addi %[[FIRST]], %c128{{(_[0-9]+)?}} : index
// CHECK: %[[E1:.*]] = arith.muli %[[V1]], %c8{{(_[0-9]+)?}} : index
// CHECK: %[[V2:.*]] = arith.addi %[[FIRST]], %c256{{(_[0-9]+)?}} : index
// CHECK: %[[V3:.*]] = arith.addi %[[FIRST]], %c384{{(_[0-9]+)?}} : index
// CHECK: %[[E3:.*]] = arith.muli %[[V3]], %c8{{(_[0-9]+)?}} : index
// CHECK: %[[I3:.*]] = arith.divui %[[E3]], %c128{{(_[0-9]+)?}} : index
// CHECK: %[[J3:.*]] = arith.remui %[[E3]], %c128{{(_[0-9]+)?}} : index
// CHECK: %[[X0:.*]] = vector.load %arg0[%[[ROW]], %[[STEP]], %[[HV]], %[[I0]], %[[J0]]] {alignment = 16 : i64} : memref<9x4x32x128x128xbf16>, vector<8xbf16>
// CHECK-COUNT-2: vector.load %arg0[%[[ROW]], %[[STEP]], %[[HV]], %{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<9x4x32x128x128xbf16>, vector<8xbf16>
// CHECK: %[[X3:.*]] = vector.load %arg0[%[[ROW]], %[[STEP]], %[[HV]], %[[I3]], %[[J3]]] {alignment = 16 : i64} : memref<9x4x32x128x128xbf16>, vector<8xbf16>
// CHECK-NOT: arith.extf
// CHECK-NOT: arith.truncf
// CHECK: vector.store %[[X0]], %arg4[%[[SLOT]], %[[HV]], %[[I0]], %[[J0]]] {alignment = 16 : i64} : memref<64x32x128x128xbf16>, vector<8xbf16>
// CHECK-COUNT-2: vector.store %{{.*}}, %arg4[%[[SLOT]], %[[HV]], %{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<64x32x128x128xbf16>, vector<8xbf16>
// CHECK: vector.store %[[X3]], %arg4[%[[SLOT]], %[[HV]], %[[I3]], %[[J3]]] {alignment = 16 : i64} : memref<64x32x128x128xbf16>, vector<8xbf16>
// CHECK: gpu.return
func.func @verify(%buf: memref<9x4x32x128x128xbf16>, %acc: memref<8xi32>, %slots: memref<8xi32>,
                  %rows: memref<8xi32>, %pool: memref<64x32x128x128xbf16>) {
  gdn.commit intermediate_states(%buf : memref<9x4x32x128x128xbf16>) accepted(%acc : memref<8xi32>)
      state_indices(%slots : memref<8xi32>) intermediate_state_indices(%rows : memref<8xi32>)
      state(%pool : memref<64x32x128x128xbf16>) {state_layout = #gdn.layout<vk>}
  return
}

// -----

// An f32 buffer into a bf16 pool: vectors are 16 bytes of the wider dtype
// (4 x f32), rounded once, and stored as 8 bytes.
// CHECK-LABEL: gpu.func @convert_commit
// CHECK: %[[X:.*]] = vector.load %arg0{{.*}} {alignment = 16 : i64} : memref<2x2x2x64x32xf32>, vector<4xf32>
// CHECK: %[[R:.*]] = arith.truncf %[[X]] : vector<4xf32> to vector<4xbf16>
// CHECK-NEXT: vector.store %[[R]], %arg3{{.*}} {alignment = 8 : i64} : memref<5x2x64x32xbf16>, vector<4xbf16>
func.func @convert(%buf: memref<2x2x2x64x32xf32>, %acc: memref<2xi64>, %slots: memref<2xi64>,
                   %pool: memref<5x2x64x32xbf16>) {
  gdn.commit intermediate_states(%buf : memref<2x2x2x64x32xf32>) accepted(%acc : memref<2xi64>)
      state_indices(%slots : memref<2xi64>) state(%pool : memref<5x2x64x32xbf16>)
  return
}

// -----

// A head smaller than a CTA's share, with 6 contiguous columns: vectors of 2
// (the widest that tile a row), one warp, and a bounds check on each vector.
// Batch-scoped buffer and no pool: row n reads buffer row n, writes state row n.
// CHECK-LABEL: func.func @ragged
// CHECK: gpu.launch_func @gdn_kernels::@ragged_commit blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%[[T:.*]], %{{.*}}, %{{.*}})
// CHECK-LABEL: gpu.func @ragged_commit
// CHECK-SAME: known_block_size = array<i32: 32, 1, 1>
// CHECK: %[[N:.*]] = gpu.block_id z
// CHECK: scf.if
// CHECK: %[[V:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK: %[[E:.*]] = arith.muli %[[V]], %c2{{(_[0-9]+)?}} : index
// CHECK: %[[I:.*]] = arith.divui %[[E]], %c6{{(_[0-9]+)?}} : index
// CHECK: %[[J:.*]] = arith.remui %[[E]], %c6{{(_[0-9]+)?}} : index
// 8 x 6 elements = 24 vectors of 2.
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[V]], %c24{{(_[0-9]+)?}} : index
// CHECK: scf.if %[[IN]] {
// CHECK: %[[X:.*]] = vector.load %arg0[%[[N]], %{{.*}}, %{{.*}}, %[[I]], %[[J]]] {alignment = 8 : i64} : memref<2x3x1x8x6xf32>, vector<2xf32>
// CHECK: vector.store %[[X]], %arg2[%[[N]], %{{.*}}, %[[I]], %[[J]]] {alignment = 8 : i64} : memref<2x1x8x6xf32>, vector<2xf32>
func.func @ragged(%buf: memref<2x3x1x8x6xf32>, %acc: memref<2xi32>, %s: memref<2x1x8x6xf32>) {
  gdn.commit intermediate_states(%buf : memref<2x3x1x8x6xf32>) accepted(%acc : memref<2xi32>)
      state(%s : memref<2x1x8x6xf32>)
  return
}

// -----

// A recurrence and a commit in one module share the kernel module.
// CHECK-LABEL: func.func @step
// CHECK: gpu.launch_func @gdn_kernels::@step_recurrent
// CHECK-LABEL: func.func @accept
// CHECK: gpu.launch_func @gdn_kernels::@accept_commit
// CHECK: gpu.module @gdn_kernels
// CHECK: gpu.func @step_recurrent
// CHECK: gpu.func @accept_commit
// CHECK-NOT: gpu.module
func.func @step(%q: memref<2x2x1x32xf32>, %k: memref<2x2x1x32xf32>, %v: memref<2x2x1x8xf32>,
                %inter: memref<2x2x1x32x8xf32>, %s: memref<2x1x32x8xf32>, %o: memref<2x2x1x8xf32>) {
  gdn.recurrent q(%q : memref<2x2x1x32xf32>) k(%k : memref<2x2x1x32xf32>) v(%v : memref<2x2x1x8xf32>)
      initial_state(%s : memref<2x1x32x8xf32>) intermediate_states(%inter : memref<2x2x1x32x8xf32>)
      o(%o : memref<2x2x1x8xf32>)
  return
}
func.func @accept(%inter: memref<2x2x1x32x8xf32>, %acc: memref<2xi32>, %s: memref<2x1x32x8xf32>) {
  gdn.commit intermediate_states(%inter : memref<2x2x1x32x8xf32>) accepted(%acc : memref<2xi32>)
      state(%s : memref<2x1x32x8xf32>)
  return
}
