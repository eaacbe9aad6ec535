// RUN: gdn-opt %s -split-input-file -convert-gdn-to-cpu | FileCheck %s
// RUN: gdn-opt %s -split-input-file -gdn-lower-to-cpu | FileCheck %s --check-prefix=LLVM
// gdn.commit on the CPU: a loop over the rows, the commit condition, and a
// copy of one step of the buffer into the row's slot.

// SGLang: a pool and a pool-scoped bf16 buffer into an f32 pool (vk). The
// count is clamped to T = 4, the row commits when count >= 1 and both indices
// are in range (0 <= slot < 7, 0 <= row < 5: one unsigned compare each), and
// the step read is count - 1.
// CHECK-LABEL: func.func @pool
// CHECK-NOT: gdn.commit
// CHECK: scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[ACC:.*]] = memref.load %arg1[%[[N]]] : memref<3xi64>
// CHECK: %[[A:.*]] = arith.minsi %[[ACC]], %{{.*}} : i64
// CHECK: %[[SOME:.*]] = arith.cmpi sge, %[[A]], %{{.*}} : i64
// CHECK: %[[STEP64:.*]] = arith.subi %[[A]], %{{.*}} : i64
// CHECK: %[[STEP:.*]] = arith.index_cast %[[STEP64]] : i64 to index
// CHECK: %[[RAW:.*]] = memref.load %arg2[%[[N]]] : memref<3xi32>
// CHECK: %[[SLOT64:.*]] = arith.extsi %[[RAW]] : i32 to i64
// CHECK: %[[SLOTS:.*]] = arith.constant 7 : i64
// CHECK: %[[SLOTOK:.*]] = arith.cmpi ult, %[[SLOT64]], %[[SLOTS]] : i64
// CHECK: %[[V1:.*]] = arith.andi %[[SOME]], %[[SLOTOK]] : i1
// CHECK: %[[SLOT:.*]] = arith.index_cast %[[SLOT64]] : i64 to index
// CHECK: %[[ROW64:.*]] = memref.load %arg3[%[[N]]] : memref<3xi64>
// CHECK: %[[ROWS:.*]] = arith.constant 5 : i64
// CHECK: %[[ROWOK:.*]] = arith.cmpi ult, %[[ROW64]], %[[ROWS]] : i64
// CHECK: %[[VALID:.*]] = arith.andi %[[V1]], %[[ROWOK]] : i1
// CHECK: %[[ROW:.*]] = arith.index_cast %[[ROW64]] : i64 to index
// CHECK: scf.if %[[VALID]] {
// CHECK: scf.for %[[HV:.*]] = %{{.*}} to %{{.*}} step
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[X:.*]] = memref.load %arg0[%[[ROW]], %[[STEP]], %[[HV]], %[[I]], %[[J]]] : memref<5x4x2x16x32xbf16>
// CHECK: %[[W:.*]] = arith.extf %[[X]] : bf16 to f32
// CHECK: memref.store %[[W]], %arg4[%[[SLOT]], %[[HV]], %[[I]], %[[J]]] : memref<7x2x16x32xf32>
// LLVM-LABEL: llvm.func @pool(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr
// LLVM-NOT: gdn.
// LLVM-NOT: scf.
func.func @pool(%buf: memref<5x4x2x16x32xbf16>, %acc: memref<3xi64>, %slots: memref<3xi32>,
                %rows: memref<3xi64>, %pool: memref<7x2x16x32xf32>) {
  gdn.commit intermediate_states(%buf : memref<5x4x2x16x32xbf16>) accepted(%acc : memref<3xi64>)
      state_indices(%slots : memref<3xi32>) intermediate_state_indices(%rows : memref<3xi64>)
      state(%pool : memref<7x2x16x32xf32>) {state_layout = #gdn.layout<vk>}
  return
}

// -----

// FlashInfer: a batch-scoped buffer into per-row states of the same dtype:
// row n reads buffer row n and writes state row n, and the bits are copied
// unchanged (no conversion).
// CHECK-LABEL: func.func @batch
// CHECK: scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step
// CHECK: memref.load %arg1[%[[N]]] : memref<2xi32>
// CHECK: scf.if
// CHECK: %[[X:.*]] = memref.load %arg0[%[[N]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<2x3x1x8x4xf32>
// CHECK-NEXT: memref.store %[[X]], %arg2[%[[N]], %{{.*}}, %{{.*}}, %{{.*}}] : memref<2x1x8x4xf32>
// CHECK-NOT: arith.extf
// CHECK-NOT: arith.truncf
// CHECK: return
func.func @batch(%buf: memref<2x3x1x8x4xf32>, %acc: memref<2xi32>, %s: memref<2x1x8x4xf32>) {
  gdn.commit intermediate_states(%buf : memref<2x3x1x8x4xf32>) accepted(%acc : memref<2xi32>)
      state(%s : memref<2x1x8x4xf32>)
  return
}

// -----

// An f32 buffer into a bf16 pool: one rounding on store.
// CHECK-LABEL: func.func @round
// CHECK: %[[X:.*]] = memref.load %arg0{{.*}} : memref<2x2x1x8x8xf32>
// CHECK-NEXT: %[[R:.*]] = arith.truncf %[[X]] : f32 to bf16
// CHECK-NEXT: memref.store %[[R]], %arg3{{.*}} : memref<4x1x8x8xbf16>
func.func @round(%buf: memref<2x2x1x8x8xf32>, %acc: memref<2xi32>, %slots: memref<2xi64>,
                 %pool: memref<4x1x8x8xbf16>) {
  gdn.commit intermediate_states(%buf : memref<2x2x1x8x8xf32>) accepted(%acc : memref<2xi32>)
      state_indices(%slots : memref<2xi64>) state(%pool : memref<4x1x8x8xbf16>)
  return
}
