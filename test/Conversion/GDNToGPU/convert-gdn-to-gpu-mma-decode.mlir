// RUN: gdn-opt %s -gdn-select-schedule=chip=sm_90a | FileCheck %s --check-prefix=SCHED
// RUN: gdn-opt %s -gdn-select-schedule=chip=sm_90a -convert-gdn-to-gpu=chip=sm_90a | FileCheck %s
// RUN: gdn-opt %s -gdn-select-schedule="chip=sm_90a schedule={#gdn.schedule<columns_per_lane = 2>}" -convert-gdn-to-gpu=chip=sm_90a | FileCheck %s --check-prefix=ONE
// RUN: gdn-opt %s -gdn-select-schedule="chip=sm_90a schedule={#gdn.schedule<launch = programmatic_at_start>}" -convert-gdn-to-gpu=chip=sm_90a | FileCheck %s --check-prefix=PDL
// reductions = mma (MmaDecode.cpp): an e4m3 pool decode whose sums over K
// are f16 m16n8k16 mma.sync on the e4m3 values widened a pair at a time,
// and whose update, row max and requantization are f16 pair arithmetic.
// Pinned alone it takes 8 columns a lane (4 tiles a warp), 8 lanes along V
// and, at V = 128, 2 warps: one CTA a head.
// SCHED: columns_per_lane = 8, lanes_along_v = 8, warps = 2
// SCHED-SAME: reductions = mma

// CHECK-LABEL: gpu.func @decode_recurrent
// A lane's 32 keys of a row: one load, 16 pairs widened to f16.
// CHECK: vector.load %{{.*}} : memref<64x32x128x128xf8E4M3FN>, vector<32xf8E4M3FN>
// CHECK: nvvm.convert.f8x2.to.f16x2 %{{.*}} : vector<2xi8>(f8E4M3FN) -> vector<2xf16>
// The row scales of the lane's 8 rows in one load.
// CHECK: vector.load %{{.*}} : memref<64x32x128xf32>, vector<8xf32>
// k̂ and q̂ as f16 pairs; B's column is k̂ on row group 0, q̂ on 1, else 0.
// CHECK: arith.truncf %{{.*}} : vector<2xf32> to vector<2xf16>
// CHECK: arith.select %{{.*}} : vector<2xf16>
// Eight k-steps of 16 keys a tile, four tiles: 32 mma.
// CHECK-COUNT-32: nvvm.mma.sync {{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32)
// CHECK-NOT: nvvm.mma.sync
// The sums from lane t = 0 of the row group.
// CHECK: gpu.shuffle  idx
// The update, its row max (over the row group's 4 lanes) and the new
// values, a pair at a time.
// CHECK: arith.mulf %{{.*}} : vector<2xf16>
// CHECK: arith.addf %{{.*}} : vector<2xf16>
// CHECK: arith.maximumf %{{.*}} : vector<2xf16>
// CHECK: gpu.shuffle  xor %{{.*}}, %c2_i32{{.*}} : f32
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32{{.*}} : f32
// CHECK: nvvm.convert.f16x2.to.f8x2 %{{.*}} : vector<2xf16> -> i16(f8E4M3FN)
// CHECK: vector.store %{{.*}} : memref<64x32x128x128xf8E4M3FN>, vector<32xf8E4M3FN>
// CHECK: vector.store %{{.*}} : memref<64x32x128xf32>, vector<8xf32>
// CHECK: gpu.return

// After a programmatic launch the token (q here) loads after the wait for
// the previous grid, which may write it; the state before.
// PDL-LABEL: gpu.func @decode_recurrent
// PDL-NOT: vector.load {{.*}} : memref<64x1x16x128xbf16>
// PDL: vector.load {{.*}} : memref<64x32x128x128xf8E4M3FN>
// PDL-NOT: vector.load {{.*}} : memref<64x1x16x128xbf16>
// PDL: griddepcontrol.wait
// PDL: vector.load {{.*}} : memref<64x1x16x128xbf16>

// One tile a warp: 8 mma.
// ONE-LABEL: gpu.func @decode_recurrent
// ONE-COUNT-8: nvvm.mma.sync
// ONE-NOT: nvvm.mma.sync
// ONE: gpu.return

func.func @decode(%q: memref<64x1x16x128xbf16>, %k: memref<64x1x16x128xbf16>,
                  %v: memref<64x1x32x128xbf16>, %a: memref<64x1x32xbf16>,
                  %A_log: memref<32xf32>, %dt_bias: memref<32xf32>,
                  %b: memref<64x1x32xbf16>, %idx: memref<64xi32>,
                  %pool: memref<64x32x128x128xf8E4M3FN>, %scale: memref<64x32x128xf32>,
                  %o: memref<64x1x32x128xbf16>) {
  gdn.recurrent q(%q : memref<64x1x16x128xbf16>) k(%k : memref<64x1x16x128xbf16>)
      v(%v : memref<64x1x32x128xbf16>) a(%a : memref<64x1x32xbf16>)
      A_log(%A_log : memref<32xf32>) dt_bias(%dt_bias : memref<32xf32>)
      b(%b : memref<64x1x32xbf16>) state_indices(%idx : memref<64xi32>)
      initial_state(%pool : memref<64x32x128x128xf8E4M3FN>)
      state_scale(%scale : memref<64x32x128xf32>)
      final_state(%pool : memref<64x32x128x128xf8E4M3FN>)
      o(%o : memref<64x1x32x128xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<vk>,
       gdn.schedule = #gdn.schedule<reductions = mma>}
  return
}
