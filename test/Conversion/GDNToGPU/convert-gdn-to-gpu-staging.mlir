// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<columns_per_lane = 4, warps = 2, unroll_tokens = 4, reductions = side_by_side>}" -convert-gdn-to-gpu | FileCheck %s
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<columns_per_lane = 4, warps = 2, reductions = side_by_side>}" -convert-gdn-to-gpu | FileCheck %s --check-prefix=LOOP
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<columns_per_lane = 4, warps = 2, staged_tokens = 0, reductions = side_by_side>}" -convert-gdn-to-gpu | FileCheck %s --check-prefix=OFF

// Token staging: with T > 1 a chunk of tokens' q, k, v (this CTA's 8 V
// columns) and gates goes through shared memory, every load issued before one
// barrier; the token loop then reads shared memory only. A fixed T = 4 fits
// one chunk, whose tokens are unrolled with unroll_tokens = 4 and by default
// stay a loop (unrolling measured slower from N = 8 on).
// CHECK-LABEL: func.func @mtp
// CHECK: gpu.func @mtp_recurrent({{.*}}) workgroup(%[[QS:.*]] : memref<4x128xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[KS:.*]] : memref<4x128xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[VS:.*]] : memref<4x8xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[DS:.*]] : memref<4xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[BS:.*]] : memref<4xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK: vector.load %arg0{{.*}} : memref<2x4x2x128xbf16>, vector<8xbf16>
// CHECK-NEXT: vector.store %{{.*}}, %[[QS]]
// CHECK: vector.load %arg1{{.*}} : memref<2x4x2x128xbf16>, vector<8xbf16>
// CHECK-NEXT: vector.store %{{.*}}, %[[KS]]
// CHECK: vector.load %arg2{{.*}} : memref<2x4x4x64xbf16>, vector<8xbf16>
// CHECK-NEXT: vector.store %{{.*}}, %[[VS]]
// CHECK: memref.store %{{.*}}, %[[DS]][%thread_id_x]
// CHECK: memref.store %{{.*}}, %[[BS]][%thread_id_x]
// CHECK: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK-NOT: scf.for
// CHECK-COUNT-4: memref.load %[[DS]]
// CHECK-NOT: vector.load %arg0
// CHECK: vector.store {{.*}} : memref<2x4x64x128xf32>
// CHECK: gpu.return
// LOOP-LABEL: func.func @mtp
// LOOP: gpu.barrier
// LOOP: scf.for %{{.*}} = %c0{{.*}} to %c4{{.*}} step %c1{{.*}} iter_args
// LOOP-COUNT-1: memref.load %{{.*}} : memref<4xf32, #gpu.address_space<workgroup>>
// LOOP: scf.yield
// OFF-LABEL: func.func @mtp
// OFF-NOT: workgroup
// OFF-NOT: gpu.barrier
// OFF: scf.for
func.func @mtp(%q: memref<2x4x2x128xbf16>, %k: memref<2x4x2x128xbf16>, %v: memref<2x4x4x64xbf16>,
               %a: memref<2x4x4xbf16>, %A_log: memref<4xf32>, %dt_bias: memref<4xf32>, %b: memref<2x4x4xbf16>,
               %s: memref<2x4x64x128xf32>, %o: memref<2x4x4x64xbf16>) {
  gdn.recurrent q(%q : memref<2x4x2x128xbf16>) k(%k : memref<2x4x2x128xbf16>) v(%v : memref<2x4x4x64xbf16>)
      a(%a : memref<2x4x4xbf16>) A_log(%A_log : memref<4xf32>) dt_bias(%dt_bias : memref<4xf32>)
      b(%b : memref<2x4x4xbf16>)
      initial_state(%s : memref<2x4x64x128xf32>) final_state(%s : memref<2x4x64x128xf32>)
      o(%o : memref<2x4x4x64xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// Varlen: chunks of 8 tokens in a loop over the sequence's range, each the
// last count = min(8, hi - c) tokens, with a barrier before the buffers are
// refilled.
// CHECK-LABEL: func.func @varlen
// CHECK: scf.for %[[C:.*]] = %{{.*}} to %[[HI:.*]] step %c8
// CHECK: %[[LEFT:.*]] = arith.subi %[[HI]], %[[C]]
// CHECK: %[[COUNT:.*]] = arith.minui %{{.*}}, %[[LEFT]]
// CHECK: gpu.barrier
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[COUNT]] step
// CHECK: gpu.barrier
// CHECK: scf.yield
// OFF-LABEL: func.func @varlen
// OFF-NOT: gpu.barrier
func.func @varlen(%q: memref<1x9x1x32xf32>, %k: memref<1x9x1x32xf32>, %v: memref<1x9x1x8xf32>,
                  %b: memref<1x9x1xf32>, %cu: memref<4xi32>,
                  %h0: memref<3x1x8x32xf32>, %o: memref<1x9x1x8xf32>) {
  gdn.recurrent q(%q : memref<1x9x1x32xf32>) k(%k : memref<1x9x1x32xf32>) v(%v : memref<1x9x1x8xf32>)
      b(%b : memref<1x9x1xf32>) cu_seqlens(%cu : memref<4xi32>)
      initial_state(%h0 : memref<3x1x8x32xf32>) final_state(%h0 : memref<3x1x8x32xf32>)
      o(%o : memref<1x9x1x8xf32>) {state_layout = #gdn.layout<vk>}
  return
}

// -----

// T = 12: one chunk of 12 tokens, its loop unrolled by 4 (unroll_tokens):
// three iterations of four tokens each.
// CHECK-LABEL: func.func @dflash
// CHECK: gpu.barrier
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c12{{.*}} step %c4{{.*}} iter_args
// CHECK-COUNT-4: memref.load %{{.*}} : memref<12xf32, #gpu.address_space<workgroup>>
// CHECK: scf.yield
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
// OFF-LABEL: func.func @dflash
// OFF-NOT: gpu.barrier
func.func @dflash(%q: memref<1x12x1x32xf32>, %k: memref<1x12x1x32xf32>, %v: memref<1x12x1x32xf32>,
                  %g: memref<1x12x1xf32>, %h0: memref<1x1x32x32xf32>, %o: memref<1x12x1x32xf32>) {
  gdn.recurrent q(%q : memref<1x12x1x32xf32>) k(%k : memref<1x12x1x32xf32>) v(%v : memref<1x12x1x32xf32>)
      g(%g : memref<1x12x1xf32>) initial_state(%h0 : memref<1x1x32x32xf32>) final_state(%h0 : memref<1x1x32x32xf32>)
      o(%o : memref<1x12x1x32xf32>)
  return
}
