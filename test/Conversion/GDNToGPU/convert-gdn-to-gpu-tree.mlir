// RUN: gdn-opt %s -gdn-select-schedule="schedule={#gdn.schedule<columns_per_lane = 4, warps = 2, producer_stages = 0>}" -convert-gdn-to-gpu | FileCheck %s
// RUN: gdn-opt %s -gdn-select-schedule="schedule={#gdn.schedule<columns_per_lane = 4, warps = 2, staged_tokens = 0>}" -convert-gdn-to-gpu | FileCheck %s --check-prefix=OFF

// EAGLE tree verify: before a token's math the state tile is replaced by the
// parent's stored state (intermediate_states[row, p], the elements this thread
// stored itself, in 16-byte vectors of the buffer's bf16: no barrier) or, for
// a root, by the initial state (the pool slot, 16-byte f32 vectors); otherwise
// the carried tile flows on.
//
// Staged tokens: the gate thread of token j also computes its parent source
// (p >= 0: reload step p, -1: carried, -2: restart) from the [N, steps] table
// into shared memory; the token loop reads it after the one barrier.
// CHECK-LABEL: func.func @tree
// CHECK: gpu.func @tree_recurrent({{.*}}%[[PAR:arg9]]: memref<2x4xi64>, %[[POOL:arg10]]: memref<3x2x8x256xf32>, %[[BUF:arg11]]: memref<3x4x2x8x256xbf16>, %{{.*}}) workgroup({{.*}}, %[[SRC:.*]] : memref<4xi32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK: memref.load %arg8[%block_id_z] : memref<2xi32>
// CHECK: %[[ROW:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK: memref.load %[[PAR]][%block_id_z, %{{.*}}] : memref<2x4xi64>
// CHECK: arith.constant -2 : i64
// CHECK: arith.constant -1 : i64
// CHECK: memref.store %{{.*}}, %[[SRC]][%thread_id_x] : memref<4xi32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[C0:arg[0-9]+]] =
// CHECK-NEXT: arith.addi
// CHECK-NEXT: %[[S:.*]] = memref.load %[[SRC]][%[[J]]]
// CHECK: %[[RELOAD:.*]] = arith.cmpi sge, %[[S]], %{{.*}} : i32
// CHECK-NEXT: scf.if %[[RELOAD]] -> (f32, f32, f32, f32, {{.*}})
// CHECK-NEXT: %[[P:.*]] = arith.index_cast %[[S]] : i32 to index
// CHECK-NEXT: vector.load %[[BUF]][%[[ROW]], %[[P]], %block_id_y, %{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<3x4x2x8x256xbf16>, vector<8xbf16>
// CHECK: } else {
// CHECK: %[[ROOT:.*]] = arith.cmpi eq, %[[S]], %c-2_i32 : i32
// CHECK: scf.if %[[ROOT]]
// CHECK: vector.load %[[POOL]][{{.*}}] {alignment = 16 : i64} : memref<3x2x8x256xf32>, vector<8xf32>
// CHECK: scf.yield %[[C0]], {{.*}} : f32,
// The token's math reads the staged k after the reload, and the state after
// the token is stored at step j.
// CHECK: vector.load %arg{{.*}}[%[[J]], %{{.*}}] {{.*}} : memref<4x256xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK: vector.store %{{.*}}, %[[BUF]][%[[ROW]], %{{.*}}, %block_id_y, %{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<3x4x2x8x256xbf16>, vector<8xbf16>
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return

// Straight from global memory: the table is read in the token loop itself.
// OFF-LABEL: func.func @tree
// OFF-NOT: workgroup
// OFF: scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// OFF-NEXT: %[[STEP:.*]] = arith.subi %[[T]], %{{.*}} : index
// OFF-NEXT: memref.load %arg9[%block_id_z, %[[STEP]]] : memref<2x4xi64>
// OFF: scf.if %{{.*}} -> (f32,
// OFF: vector.load %arg11[{{.*}}] {alignment = 16 : i64} : memref<3x4x2x8x256xbf16>, vector<8xbf16>
// OFF: vector.load %arg10[{{.*}}] {alignment = 16 : i64} : memref<3x2x8x256xf32>, vector<8xf32>
// OFF: vector.load %arg1[%block_id_z, %[[T]], {{.*}}] {{.*}} : memref<2x4x1x256xbf16>, vector<8xbf16>
// OFF-NOT: gpu.barrier
// OFF: gpu.return
func.func @tree(%q: memref<2x4x1x256xbf16>, %k: memref<2x4x1x256xbf16>, %v: memref<2x4x2x8xbf16>,
                %a: memref<2x4x2xbf16>, %A_log: memref<2xf32>, %dt_bias: memref<2xf32>, %b: memref<2x4x2xbf16>,
                %idx: memref<2xi32>, %iidx: memref<2xi32>, %par: memref<2x4xi64>,
                %pool: memref<3x2x8x256xf32>, %inter: memref<3x4x2x8x256xbf16>, %o: memref<2x4x2x8xbf16>) {
  gdn.recurrent q(%q : memref<2x4x1x256xbf16>) k(%k : memref<2x4x1x256xbf16>) v(%v : memref<2x4x2x8xbf16>)
      a(%a : memref<2x4x2xbf16>) A_log(%A_log : memref<2xf32>) dt_bias(%dt_bias : memref<2xf32>)
      b(%b : memref<2x4x2xbf16>) state_indices(%idx : memref<2xi32>)
      intermediate_state_indices(%iidx : memref<2xi32>) retrieve_parent_token(%par : memref<2x4xi64>)
      initial_state(%pool : memref<3x2x8x256xf32>) intermediate_states(%inter : memref<3x4x2x8x256xbf16>)
      o(%o : memref<2x4x2x8xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
