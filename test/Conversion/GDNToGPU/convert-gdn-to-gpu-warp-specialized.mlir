// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<columns_per_lane = 4, warps = 2, staged_tokens = 2, reductions = side_by_side, producer_stages = 2>}" -convert-gdn-to-gpu | FileCheck %s
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<columns_per_lane = 2, warps = 4, staged_tokens = 2, reductions = side_by_side, producer_stages = 3, consumer_registers = 128>}" -convert-gdn-to-gpu | FileCheck %s --check-prefix=REGS

// A producer warp (producer_stages): the CTA's 2 consumer warps plus one
// producer warp (96 threads). T = 4 in chunks of 2 tokens through a ring of
// 2 slots, so q, k and v buffers hold 2 x 2 rows. Thread 0 initializes each
// slot's `full` mbarrier for the 32 producer lanes and its `empty` one for
// the 64 consumer threads, then one CTA barrier, the only one. The ring also
// holds each token's norm factors from the producer (ik, iq, k̂·q̂, a pad).
// CHECK-LABEL: func.func @mtp
// CHECK: gpu.launch_func @gdn_kernels::@mtp_recurrent blocks in ({{.*}}) threads in (%c96, %c1, %c1{{.*}})
// CHECK: gpu.func @mtp_recurrent({{.*}}) workgroup(%[[QS:.*]] : memref<4x128xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[KS:.*]] : memref<4x128xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[VS:.*]] : memref<4x8xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[DS:.*]] : memref<4xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[BS:.*]] : memref<4xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[NS:.*]] : memref<4x4xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[FULL:.*]] : memref<2xi64, #gpu.address_space<workgroup>> {llvm.align = 8 : i64}, %[[EMPTY:.*]] : memref<2xi64, #gpu.address_space<workgroup>> {llvm.align = 8 : i64}) kernel attributes {known_block_size = array<i32: 96, 1, 1>}
// CHECK-COUNT-2: nvvm.mbarrier.init %{{.*}}, %c32_i32{{.*}} : !llvm.ptr<3>, i32
// CHECK-NOT: nvvm.mbarrier.init %{{.*}}, %c32_i32
// CHECK: gpu.barrier
// CHECK-NOT: gpu.barrier
// Consumers (warp < 2): the state tile, then per chunk wait on the slot's
// `full` barrier, run its tokens from shared memory (the norm factors too:
// no rsqrt), arrive on `empty`.
// CHECK: %[[CONSUMER:.*]] = arith.cmpi ult, %{{.*}}, %c2
// CHECK: scf.if %[[CONSUMER]] {
// CHECK: scf.for %{{.*}} = %c0 to %c4{{.*}} step %c2
// CHECK: nvvm.mbarrier.try_wait.parity %{{.*}}, %{{.*}}, %{{.*}} : !llvm.ptr<3>, i32, i32
// CHECK: scf.for
// CHECK-NOT: vector.load %arg0
// CHECK-NOT: rsqrt
// CHECK: vector.load %[[NS]]
// CHECK-NOT: vector.load %arg0
// CHECK-NOT: rsqrt
// CHECK: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
// CHECK: vector.store {{.*}} : memref<2x4x64x128xf32>
// The producer (warp 2): per chunk it loads q and k from global memory for
// the norm factors (16 lanes a token), waits until the slot is empty (the
// phase parity flipped: a fresh barrier passes), then lane j < count expects
// the token's 2 x 256 + 16 bytes and copies its q and k rows and the CTA's 8
// columns of v with cp.async.bulk, completing on `full`; it stages the gates
// and the norm factors (4 shuffle levels), and every lane arrives on
// `full`.
// CHECK: } else {
// CHECK-NOT: nvvm.setmaxregister
// CHECK: scf.for %{{.*}} = %c0 to %c4{{.*}} step %c2
// CHECK: vector.load %arg1{{.*}} : memref<2x4x2x128xbf16>, vector<8xbf16>
// CHECK: vector.load %arg0{{.*}} : memref<2x4x2x128xbf16>, vector<8xbf16>
// CHECK: %[[FLIP:.*]] = arith.xori %{{.*}}, %c1_i32
// CHECK: nvvm.mbarrier.try_wait.parity %{{.*}}, %[[FLIP]]
// CHECK: nvvm.mbarrier.expect_tx %[[BAR:.*]], %c528_i32 : !llvm.ptr<3>, i32
// CHECK: nvvm.cp.async.bulk.shared.cluster.global %{{.*}}, %{{.*}}, %[[BAR]], %c256_i32 : !llvm.ptr<7>, <1>
// CHECK: nvvm.cp.async.bulk.shared.cluster.global %{{.*}}, %{{.*}}, %[[BAR]], %c256_i32{{.*}} : !llvm.ptr<7>, <1>
// CHECK: nvvm.cp.async.bulk.shared.cluster.global %{{.*}}, %{{.*}}, %[[BAR]], %c16_i32 : !llvm.ptr<7>, <1>
// CHECK: memref.store %{{.*}}, %[[DS]]
// CHECK: memref.store %{{.*}}, %[[BS]]
// CHECK: gpu.shuffle xor %{{.*}}, %c8_i32
// CHECK: rsqrt.approx
// CHECK: vector.store %{{.*}}, %[[NS]]
// CHECK: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
// CHECK: gpu.return

// With consumer_registers the producer is a warpgroup (4 consumer warps + 4
// = 256 threads, the register count fixed at entry by reqntid and minctasm =
// 1, no known_block_size), that gives registers back while the consumers
// take 128 each. Its producer keeps to its 24 registers: the consumers
// compute the norms (no norm buffer).
// REGS-LABEL: func.func @mtp
// REGS: gpu.func @mtp_recurrent({{.*}}) workgroup({{.*}} : memref<6xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<3xi64, {{.*}}) kernel attributes {nvvm.minctasm = 1 : i32, nvvm.reqntid = array<i32: 256, 1, 1>}
// REGS-COUNT-3: nvvm.mbarrier.init %{{.*}}, %c128_i32
// REGS: scf.if
// REGS-NEXT: nvvm.setmaxregister increase 128
// REGS: rsqrt.approx
// REGS: } else {
// REGS-NEXT: nvvm.setmaxregister decrease 24
// REGS: %[[COPIER:.*]] = arith.cmpi eq, %{{.*}}, %c4
// REGS: scf.if %[[COPIER]] {
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
