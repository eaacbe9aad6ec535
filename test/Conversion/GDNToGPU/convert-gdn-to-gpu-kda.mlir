// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<columns_per_lane = 4, warps = 2>}" -convert-gdn-to-gpu | FileCheck %s

// KDA decode (T = 1, no staging), vk: each lane owns the 4 key rows at k0
// and the 4 V columns at v0. The per-key gate input a is one vector load at
// k0, dt_bias one vector load at hv * K + k0; the per-channel beta logits
// one vector load at v0.
// CHECK-LABEL: func.func @kda_decode
// CHECK: gpu.func @kda_decode_recurrent
// CHECK-NOT: workgroup
// CHECK: vector.load %arg8[%block_id_z, %block_id_y, %[[V0:.*]], %[[K0:.*]]] {{.*}} : memref<2x4x64x128xf32>, vector<4xf32>
// CHECK: scf.for
// CHECK: vector.load %arg3[%block_id_z, %{{.*}}, %block_id_y, %[[K0]]] {{.*}} : memref<2x1x4x128xbf16>, vector<4xbf16>
// CHECK: memref.load %arg4[%block_id_y] : memref<4xf32>
// CHECK: %[[ROW:.*]] = arith.muli %block_id_y, %c128 : index
// CHECK: %[[AT:.*]] = arith.addi %[[ROW]], %[[K0]] : index
// CHECK: vector.load %arg5[%[[AT]]] {{.*}} : memref<512xf32>, vector<4xf32>
// Four decays, each exp of a fused gate.
// CHECK-COUNT-4: arith.cmpf ogt, %{{.*}}, %cst{{.*}} : f32
// CHECK: vector.load %arg6[%block_id_z, %{{.*}}, %block_id_y, %[[V0]]] {{.*}} : memref<2x1x4x64xbf16>, vector<4xbf16>
// CHECK: gpu.return
func.func @kda_decode(%q: memref<2x1x2x128xbf16>, %k: memref<2x1x2x128xbf16>, %v: memref<2x1x4x64xbf16>,
                      %a: memref<2x1x4x128xbf16>, %A_log: memref<4xf32>, %dt_bias: memref<512xf32>,
                      %b: memref<2x1x4x64xbf16>, %s: memref<2x4x64x128xf32>, %o: memref<2x1x4x64xbf16>) {
  gdn.recurrent q(%q : memref<2x1x2x128xbf16>) k(%k : memref<2x1x2x128xbf16>) v(%v : memref<2x1x4x64xbf16>)
      a(%a : memref<2x1x4x128xbf16>) A_log(%A_log : memref<4xf32>) dt_bias(%dt_bias : memref<512xf32>)
      b(%b : memref<2x1x4x64xbf16>)
      initial_state(%s : memref<2x4x64x128xf32>) final_state(%s : memref<2x4x64x128xf32>)
      o(%o : memref<2x1x4x64xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// KDA with T = 4 staged: the decay buffer is [chunk, K] f32 and the beta
// buffer [chunk, BV] f32 (BV = 8 columns a CTA). Every thread computes
// 8-wide vectors of exp(g) from 16-byte loads of a and dt_bias, and of beta
// at the CTA's columns, before the one barrier; no thread computes per-token
// scalars. The token loop reads the lane's 4 decays at k0 and 4 betas at its
// column.
// CHECK-LABEL: func.func @kda_staged
// CHECK: gpu.func @kda_staged_recurrent({{.*}}) workgroup(%{{.*}} : memref<4x128xbf16, {{.*}}>{{.*}}, %{{.*}} : memref<4x128xbf16, {{.*}}>{{.*}}, %{{.*}} : memref<4x8xbf16, {{.*}}>{{.*}}, %[[DS:.*]] : memref<4x128xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[BS:.*]] : memref<4x8xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK: vector.load %arg8[%block_id_z, %block_id_y, %{{.*}}, %[[K0:.*]]] {{.*}} : memref<2x4x64x128xf32>, vector<4xf32>
// CHECK: vector.load %arg3{{.*}} : memref<2x4x4x128xbf16>, vector<8xbf16>
// CHECK: vector.load %arg5{{.*}} : memref<512xf32>, vector<8xf32>
// CHECK: vector.store %{{.*}}, %[[DS]][%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<4x128xf32, #gpu.address_space<workgroup>>, vector<8xf32>
// CHECK: vector.load %arg6{{.*}} : memref<2x4x4x64xbf16>, vector<8xbf16>
// CHECK: vector.store %{{.*}}, %[[BS]][%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<4x8xf32, #gpu.address_space<workgroup>>, vector<8xf32>
// CHECK-NOT: memref.store
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK: vector.load %[[DS]][%{{.*}}, %[[K0]]] {{.*}} : memref<4x128xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: vector.load %[[BS]]{{.*}} : memref<4x8xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-NOT: vector.load %arg3
// CHECK: gpu.return
func.func @kda_staged(%q: memref<2x4x2x128xbf16>, %k: memref<2x4x2x128xbf16>, %v: memref<2x4x4x64xbf16>,
                      %a: memref<2x4x4x128xbf16>, %A_log: memref<4xf32>, %dt_bias: memref<512xf32>,
                      %b: memref<2x4x4x64xbf16>, %s: memref<2x4x64x128xf32>, %o: memref<2x4x4x64xbf16>) {
  gdn.recurrent q(%q : memref<2x4x2x128xbf16>) k(%k : memref<2x4x2x128xbf16>) v(%v : memref<2x4x4x64xbf16>)
      a(%a : memref<2x4x4x128xbf16>) A_log(%A_log : memref<4xf32>) dt_bias(%dt_bias : memref<512xf32>)
      b(%b : memref<2x4x4x64xbf16>)
      initial_state(%s : memref<2x4x64x128xf32>) final_state(%s : memref<2x4x64x128xf32>)
      o(%o : memref<2x4x4x64xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// Log-space gk per key with a per-head beta, staged: the decay buffer is
// [chunk, K] (4-wide f32 vectors of exp(g)), beta stays one scalar a token
// computed by thread j.
// CHECK-LABEL: func.func @gk_head_beta
// CHECK: workgroup({{.*}}, %[[DS:.*]] : memref<3x32xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[BS:.*]] : memref<3xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK: vector.load %arg3{{.*}} : memref<1x3x1x32xf32>, vector<4xf32>
// CHECK-COUNT-4: llvm.inline_asm "ex2.approx.ftz.f32 $0, $1;"
// CHECK-NOT: llvm.inline_asm
// CHECK: vector.store %{{.*}}, %[[DS]]{{.*}} : memref<3x32xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-NOT: memref.store %{{.*}}, %[[DS]]
// CHECK: memref.store %{{.*}}, %[[BS]][%thread_id_x]
// CHECK: gpu.barrier
func.func @gk_head_beta(%q: memref<1x3x1x32xf32>, %k: memref<1x3x1x32xf32>, %v: memref<1x3x1x32xf32>,
                        %g: memref<1x3x1x32xf32>, %beta: memref<1x3x1xf32>,
                        %h0: memref<1x1x32x32xf32>, %o: memref<1x3x1x32xf32>) {
  gdn.recurrent q(%q : memref<1x3x1x32xf32>) k(%k : memref<1x3x1x32xf32>) v(%v : memref<1x3x1x32xf32>)
      g(%g : memref<1x3x1x32xf32>) beta(%beta : memref<1x3x1xf32>)
      initial_state(%h0 : memref<1x1x32x32xf32>) final_state(%h0 : memref<1x1x32x32xf32>)
      o(%o : memref<1x3x1x32xf32>)
  return
}

// -----

// Per-head decay with beta per value channel, kv: exp(g) stays one scalar a
// token, beta is [chunk, BV] (BV = 32 here).
// CHECK-LABEL: func.func @head_decay_channel_beta
// CHECK: workgroup({{.*}}, %[[DS:.*]] : memref<3xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[BS:.*]] : memref<3x32xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK: vector.store %{{.*}}, %[[BS]]{{.*}} : memref<3x32xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: memref.store %{{.*}}, %[[DS]][%thread_id_x]
// CHECK-NOT: memref.store %{{.*}}, %[[BS]]
// CHECK: gpu.barrier
func.func @head_decay_channel_beta(%q: memref<1x3x1x32xf32>, %k: memref<1x3x1x32xf32>, %v: memref<1x3x1x32xf32>,
                                   %g: memref<1x3x1xf32>, %beta: memref<1x3x1x32xf32>,
                                   %h0: memref<1x1x32x32xf32>, %o: memref<1x3x1x32xf32>) {
  gdn.recurrent q(%q : memref<1x3x1x32xf32>) k(%k : memref<1x3x1x32xf32>) v(%v : memref<1x3x1x32xf32>)
      g(%g : memref<1x3x1xf32>) beta(%beta : memref<1x3x1x32xf32>)
      initial_state(%h0 : memref<1x1x32x32xf32>) final_state(%h0 : memref<1x1x32x32xf32>)
      o(%o : memref<1x3x1x32xf32>)
  return
}
