// RUN: gdn-opt %s -split-input-file -convert-gdn-to-gpu | FileCheck %s
// RUN: gdn-opt %s -split-input-file -gdn-lower-to-ptx | FileCheck %s --check-prefix=PTX
// RUN: not gdn-opt %s -split-input-file -convert-gdn-to-gpu="chip=sm_86" 2>&1 | FileCheck %s --check-prefix=CHIP
// gdn.commit into an f8E4M3FN pool (docs/math.md §6): a warp a row (V
// column) of the head, 4 warps a CTA (grid x = V / 4 = 32); each lane loads
// one 16-byte vector of the f32 row (4 keys, 32 lanes = K = 128), the row's
// amax over the warp by xor shuffles, scale = amax / 448 stored by lane 0,
// the elements times 448 / amax rounded to e4m3 a pair at a time.

// CHIP: error: 'gdn.commit' op cannot be lowered to the GPU: an f8E4M3FN pool or buffer needs cvt with e4m3x2 operands (sm_89 on), not sm_86

// CHECK-LABEL: func.func @fp8_pool
// CHECK: gpu.launch_func @gdn_kernels::@fp8_pool_commit blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%c128
// CHECK: gpu.func @fp8_pool_commit
// CHECK: %[[X:.*]] = vector.load %arg0[{{.*}}] {{.*}} : memref<5x4x32x128x128xf32>, vector<4xf32>
// CHECK: arith.maximumf
// CHECK: gpu.shuffle  xor %{{.*}}, %c16
// CHECK: gpu.shuffle  xor %{{.*}}, %c1
// CHECK: arith.divf
// CHECK: arith.divf
// CHECK: memref.store %{{.*}}, %arg4[{{.*}}] : memref<64x32x128xf32>
// CHECK: nvvm.convert.f32x2.to.f8x2
// CHECK: vector.store %{{.*}}, %arg5[{{.*}}] {{.*}} : memref<64x32x128x128xf8E4M3FN>, vector<4xf8E4M3FN>
// PTX: gpu.binary @gdn_kernels
func.func @fp8_pool(%buf: memref<5x4x32x128x128xf32>, %acc: memref<8xi32>, %slots: memref<8xi32>,
                    %rows: memref<8xi32>, %sc: memref<64x32x128xf32>, %pool: memref<64x32x128x128xf8E4M3FN>) {
  gdn.commit intermediate_states(%buf : memref<5x4x32x128x128xf32>) accepted(%acc : memref<8xi32>)
      state_indices(%slots : memref<8xi32>) intermediate_state_indices(%rows : memref<8xi32>)
      state_scale(%sc : memref<64x32x128xf32>) state(%pool : memref<64x32x128x128xf8E4M3FN>)
      {state_layout = #gdn.layout<vk>}
  return
}

// -----

// From f8E4M3FN per-token states (intermediate_state_scale) into an
// f8E4M3FN pool: the e4m3 bits copied 16 bytes a vector, and CTA 0 of the
// head copies the step's row scales into state_scale.
// CHECK-LABEL: func.func @fp8_buffer
// CHECK: gpu.func @fp8_buffer_commit
// CHECK: scf.for %[[V:.*]] = %thread_id_x to %c128{{.*}} step %c128
// CHECK-NEXT: %[[SCALE:.*]] = memref.load %arg4[%{{.*}}, %{{.*}}, %block_id_y, %[[V]]] : memref<5x4x32x128xf32>
// CHECK-NEXT: memref.store %[[SCALE]], %arg5[%{{.*}}, %block_id_y, %[[V]]] : memref<64x32x128xf32>
// CHECK: %[[BITS:.*]] = vector.load %arg0[{{.*}}] {{.*}} : memref<5x4x32x128x128xf8E4M3FN>, vector<16xf8E4M3FN>
// CHECK-NOT: nvvm.convert
// CHECK: vector.store %[[BITS]], %arg6[{{.*}}] {{.*}} : memref<64x32x128x128xf8E4M3FN>, vector<16xf8E4M3FN>
// PTX: gpu.binary @gdn_kernels
func.func @fp8_buffer(%buf: memref<5x4x32x128x128xf8E4M3FN>, %acc: memref<8xi32>, %slots: memref<8xi32>,
                      %rows: memref<8xi32>, %isc: memref<5x4x32x128xf32>, %sc: memref<64x32x128xf32>,
                      %pool: memref<64x32x128x128xf8E4M3FN>) {
  gdn.commit intermediate_states(%buf : memref<5x4x32x128x128xf8E4M3FN>) accepted(%acc : memref<8xi32>)
      state_indices(%slots : memref<8xi32>) intermediate_state_indices(%rows : memref<8xi32>)
      intermediate_state_scale(%isc : memref<5x4x32x128xf32>)
      state_scale(%sc : memref<64x32x128xf32>) state(%pool : memref<64x32x128x128xf8E4M3FN>)
      {state_layout = #gdn.layout<vk>}
  return
}

// -----

// From f8E4M3FN per-token states into a bf16 pool in layout kv: a vector
// runs along V, so each element has its own row scale (a vector load of the
// scales), e4m3 x scale rounded once to bf16.
// CHECK-LABEL: func.func @fp8_to_bf16_kv
// CHECK: gpu.func @fp8_to_bf16_kv_commit
// CHECK: vector.load %arg0[{{.*}}] {{.*}} : memref<5x4x32x128x128xf8E4M3FN>, vector<8xf8E4M3FN>
// CHECK: nvvm.convert.f8x2.to.f16x2
// CHECK: %[[SCALES:.*]] = vector.load %arg4[%{{.*}}, %{{.*}}, %block_id_y, %[[J:.*]]] {{.*}} : memref<5x4x32x128xf32>, vector<8xf32>
// CHECK: arith.mulf %{{.*}}, %[[SCALES]] : vector<8xf32>
// CHECK: vector.store %{{.*}}, %arg5[%{{.*}}, %block_id_y, %{{.*}}, %[[J]]] {{.*}} : memref<64x32x128x128xbf16>, vector<8xbf16>
// PTX: gpu.binary @gdn_kernels
func.func @fp8_to_bf16_kv(%buf: memref<5x4x32x128x128xf8E4M3FN>, %acc: memref<8xi32>, %slots: memref<8xi32>,
                          %rows: memref<8xi32>, %isc: memref<5x4x32x128xf32>,
                          %pool: memref<64x32x128x128xbf16>) {
  gdn.commit intermediate_states(%buf : memref<5x4x32x128x128xf8E4M3FN>) accepted(%acc : memref<8xi32>)
      state_indices(%slots : memref<8xi32>) intermediate_state_indices(%rows : memref<8xi32>)
      intermediate_state_scale(%isc : memref<5x4x32x128xf32>)
      state(%pool : memref<64x32x128x128xbf16>)
  return
}
