// RUN: gdn-opt %s -split-input-file -convert-gdn-to-cpu | FileCheck %s
// RUN: gdn-opt %s -split-input-file -gdn-lower-to-cpu | FileCheck %s --check-prefix=LLVM
// The CPU pipeline expands bf16 <-> f32 casts to integer arithmetic: no
// fptrunc or fpext reaches LLVM, whose x86 lowering of a bf16 fptrunc is a
// __truncsfbf2 libcall that the JIT cannot resolve against an older libgcc.
// RUN: gdn-opt %s -split-input-file -gdn-lower-to-cpu | FileCheck %s --check-prefix=BF16 --implicit-check-not=llvm.fptrunc --implicit-check-not=llvm.fpext

// kv layout with log-space g and given beta: a [K, V] scratch state, loops
// over (n, hv) with the state read in its layout [n, hv, k, v].
// CHECK-LABEL: func.func @kv
// CHECK-NOT: gdn.recurrent
// CHECK: %[[S:.*]] = memref.alloc() : memref<32x8xf32>
// CHECK: scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step
// CHECK: scf.for %[[HV:.*]] = %{{.*}} to %{{.*}} step
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step
// CHECK: scf.for %[[V:.*]] = %{{.*}} to %{{.*}} step
// CHECK: memref.load %arg5[%[[N]], %[[HV]], %[[K]], %[[V]]] : memref<1x2x32x8xf32>
// CHECK: memref.store %{{.*}}, %[[S]][%[[K]], %[[V]]]
// exp(g) from the log-space decay.
// CHECK: %[[G:.*]] = memref.load %arg3
// CHECK: math.exp %[[G]] : f32
// LLVM-LABEL: llvm.func @kv(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr
// LLVM-NOT: gdn.
// LLVM-NOT: scf.
func.func @kv(%q: memref<1x2x1x32xf32>, %k: memref<1x2x1x32xf32>, %v: memref<1x2x2x8xf32>,
              %g: memref<1x2x2xf32>, %beta: memref<1x2x2xf32>, %s: memref<1x2x32x8xf32>,
              %o: memref<1x2x2x8xf32>) {
  gdn.recurrent q(%q : memref<1x2x1x32xf32>) k(%k : memref<1x2x1x32xf32>) v(%v : memref<1x2x2x8xf32>)
      g(%g : memref<1x2x2xf32>) beta(%beta : memref<1x2x2xf32>)
      initial_state(%s : memref<1x2x32x8xf32>) final_state(%s : memref<1x2x32x8xf32>)
      o(%o : memref<1x2x2x8xf32>)
  return
}

// -----

// vk layout, fused gating, beta logits, L2 norm, bf16 in and out: the state
// is read as [n, hv, v, k]; softplus uses log1p; o is rounded to bf16.
// CHECK-LABEL: func.func @vk
// CHECK: scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step
// CHECK: scf.for %[[HV:.*]] = %{{.*}} to %{{.*}} step
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step
// CHECK: scf.for %[[V:.*]] = %{{.*}} to %{{.*}} step
// CHECK: memref.load %arg7[%[[N]], %[[HV]], %[[V]], %[[K]]] : memref<1x2x16x32xf32>
// CHECK: math.sqrt
// CHECK: math.log1p
// CHECK: arith.select
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// BF16-LABEL: llvm.func @vk(
// BF16: llvm.bitcast %{{.*}} : bf16 to i16
// BF16: llvm.bitcast %{{.*}} : i16 to bf16
// CHECK: memref.store %{{.*}}, %arg7[%[[N2:.*]], %[[HV2:.*]], %[[V2:.*]], %[[K2:.*]]] : memref<1x2x16x32xf32>
func.func @vk(%q: memref<1x1x1x32xbf16>, %k: memref<1x1x1x32xbf16>, %v: memref<1x1x2x16xbf16>,
              %a: memref<1x1x2xbf16>, %A_log: memref<2xf32>, %dt_bias: memref<2xf32>, %b: memref<1x1x2xbf16>,
              %s: memref<1x2x16x32xf32>, %o: memref<1x1x2x16xbf16>) {
  gdn.recurrent q(%q : memref<1x1x1x32xbf16>) k(%k : memref<1x1x1x32xbf16>) v(%v : memref<1x1x2x16xbf16>)
      a(%a : memref<1x1x2xbf16>) A_log(%A_log : memref<2xf32>) dt_bias(%dt_bias : memref<2xf32>)
      b(%b : memref<1x1x2xbf16>)
      initial_state(%s : memref<1x2x16x32xf32>) final_state(%s : memref<1x2x16x32xf32>)
      o(%o : memref<1x1x2x16xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// A pool: the slot comes from state_indices, state reads and the final store
// sit under `0 <= slot < 3` (one unsigned compare: a slot past the pool is
// padding too), and padding rows output zeros.
// CHECK-LABEL: func.func @pool
// CHECK: %[[RAW:.*]] = memref.load %arg5[%{{.*}}] : memref<2xi64>
// CHECK: %[[SLOTS:.*]] = arith.constant 3 : i64
// CHECK: %[[VALID:.*]] = arith.cmpi ult, %[[RAW]], %[[SLOTS]] : i64
// CHECK: scf.if %[[VALID]] -> (f32)
// CHECK: arith.select %[[VALID]]
// CHECK: scf.if %[[VALID]] {
func.func @pool(%q: memref<2x1x1x32xf32>, %k: memref<2x1x1x32xf32>, %v: memref<2x1x1x8xf32>,
                %g: memref<2x1x1xf32>, %beta: memref<2x1x1xf32>, %idx: memref<2xi64>,
                %s: memref<3x1x32x8xf32>, %o: memref<2x1x1x8xf32>) {
  gdn.recurrent q(%q : memref<2x1x1x32xf32>) k(%k : memref<2x1x1x32xf32>) v(%v : memref<2x1x1x8xf32>)
      g(%g : memref<2x1x1xf32>) beta(%beta : memref<2x1x1xf32>) state_indices(%idx : memref<2xi64>)
      initial_state(%s : memref<3x1x32x8xf32>) final_state(%s : memref<3x1x32x8xf32>)
      o(%o : memref<2x1x1x8xf32>)
  return
}

// -----

// KDA: fused gating per key channel and beta logits per value channel. The
// decay is computed inside the key loop from a[n, t, hv, k], A_log[hv] and
// dt_bias[hv * K + k] and scales that key row (the inner V loop); beta comes
// from b[n, t, hv, v] inside the V loop of the delta.
// CHECK-LABEL: func.func @kda
// CHECK: scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step
// CHECK: scf.for %[[HV:.*]] = %{{.*}} to %{{.*}} step
// CHECK: memref.load %arg3[%[[N]], %[[T:[a-z0-9_]+]], %[[HV]], %[[K:[a-z0-9_]+]]] : memref<1x1x2x32xbf16>
// CHECK: memref.load %arg4[%[[HV]]] : memref<2xf32>
// CHECK: %[[ROW:.*]] = arith.muli %[[HV]], %c32{{.*}} : index
// CHECK: %[[AT:.*]] = arith.addi %[[ROW]], %[[K]] : index
// CHECK: memref.load %arg5[%[[AT]]] : memref<64xf32>
// CHECK: math.log1p
// CHECK: %[[G:.*]] = arith.select %{{.*}}, %cst{{.*}}, %{{.*}} : f32
// CHECK-NEXT: %[[DECAY:.*]] = math.exp %[[G]] : f32
// CHECK: scf.for %[[V:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[S:.*]] = memref.load %{{.*}}[%[[K]], %[[V]]] : memref<32x8xf32>
// CHECK: arith.mulf %[[S]], %[[DECAY]] : f32
// CHECK: scf.for %[[V2:.*]] = %{{.*}} to %{{.*}} step
// CHECK: memref.load %arg6[%[[N]], %[[T]], %[[HV]], %[[V2]]] : memref<1x1x2x8xf32>
// CHECK: math.exp
// CHECK: arith.divf
func.func @kda(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x2x8xf32>,
               %a: memref<1x1x2x32xbf16>, %A_log: memref<2xf32>, %dt_bias: memref<64xf32>,
               %b: memref<1x1x2x8xf32>, %s: memref<1x2x32x8xf32>, %o: memref<1x1x2x8xf32>) {
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x2x8xf32>)
      a(%a : memref<1x1x2x32xbf16>) A_log(%A_log : memref<2xf32>) dt_bias(%dt_bias : memref<64xf32>)
      b(%b : memref<1x1x2x8xf32>)
      initial_state(%s : memref<1x2x32x8xf32>) final_state(%s : memref<1x2x32x8xf32>)
      o(%o : memref<1x1x2x8xf32>)
  return
}
