// Strided operands (OperandLayouts.h) on the CPU, checked against the fp64
// reference: q, k, v as views of a packed projection (SGLang's mixed_qkv
// [N * T, 2 * H * K + HV * V]: token stride 192 elements), the gates as views
// of a packed [N * T, 2 * HV] `ba`, and a pool whose slots are views of a
// larger per-slot record (pitch 2112 elements). gdn-run places every element
// at its strides and poisons the gaps, which must come back unchanged.
// RUN: gdn-run --target=cpu --check --function=mixed_qkv %s | FileCheck %s
// RUN: gdn-run --target=cpu --check --function=verify %s | FileCheck %s --check-prefixes=CHECK,VERIFY
// CHECK: check final_state {{.*}} ok
// CHECK: check untouched slots: 0 of {{[1-9][0-9]*}} changed  ok
// VERIFY: check intermediate {{.*}} ok
// VERIFY: check unwritten intermediate steps: 0 of {{[0-9]+}} changed  ok
// CHECK: check o {{.*}} ok
// CHECK: check gaps of strided buffers: 0 bytes changed  ok
// CHECK-NOT: FAILED
// Overlapping read-only strides (stride 0: every sequence reads row 0 of q
// and the gates of token 0), as torch's expand() gives:
// RUN: gdn-run --target=cpu --check --function=broadcast %s | FileCheck %s --check-prefix=BCAST
// BCAST: check final_state {{.*}} ok
// BCAST: check o {{.*}} ok
// BCAST-NOT: FAILED
// The strided twins of the examples (scripts/strided-variant.py: the types
// of q, k, v, the gates and the state buffers only):
// RUN: python3 %gdn_src_root/scripts/strided-variant.py %examples/sglang_verify_t4.mlir > %t.verify.mlir
// RUN: gdn-run --target=cpu --check %t.verify.mlir | FileCheck %s --check-prefix=TWIN
// RUN: python3 %gdn_src_root/scripts/strided-variant.py %examples/sglang_varlen_extend.mlir > %t.varlen.mlir
// RUN: gdn-run --target=cpu --check %t.varlen.mlir | FileCheck %s --check-prefix=TWIN
// TWIN: check o {{.*}} ok
// TWIN: check gaps of strided buffers: 0 bytes changed  ok
// TWIN-NOT: FAILED

!q = memref<3x2x2x32xbf16, strided<[384, 192, 32, 1]>>
!v = memref<3x2x4x16xbf16, strided<[384, 192, 16, 1]>>
!gate = memref<3x2x4xbf16, strided<[16, 8, 1]>>
!pool = memref<5x4x16x32xf32, strided<[2112, 512, 32, 1]>>
!inter = memref<6x2x4x16x32xbf16, strided<[4160, 2048, 512, 32, 1]>>

func.func @mixed_qkv(%q: !q, %k: !q, %v: !v, %a: !gate, %A_log: memref<4xf32>,
                     %dt_bias: memref<4xf32>, %b: !gate, %idx: memref<3xi32>,
                     %pool: !pool, %o: memref<3x2x4x16xbf16>) {
  gdn.recurrent q(%q : !q) k(%k : !q) v(%v : !v) a(%a : !gate)
      A_log(%A_log : memref<4xf32>) dt_bias(%dt_bias : memref<4xf32>) b(%b : !gate)
      state_indices(%idx : memref<3xi32>)
      initial_state(%pool : !pool) final_state(%pool : !pool)
      o(%o : memref<3x2x4x16xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// Verify with a row pitch on the pool-scoped buffer of per-token states.
func.func @verify(%q: !q, %k: !q, %v: !v, %a: !gate, %A_log: memref<4xf32>,
                  %dt_bias: memref<4xf32>, %b: !gate, %idx: memref<3xi32>,
                  %iidx: memref<3xi32>, %pool: !pool, %inter: !inter,
                  %o: memref<3x2x4x16xbf16>) {
  gdn.recurrent q(%q : !q) k(%k : !q) v(%v : !v) a(%a : !gate)
      A_log(%A_log : memref<4xf32>) dt_bias(%dt_bias : memref<4xf32>) b(%b : !gate)
      state_indices(%idx : memref<3xi32>) intermediate_state_indices(%iidx : memref<3xi32>)
      initial_state(%pool : !pool) intermediate_states(%inter : !inter) final_state(%pool : !pool)
      o(%o : memref<3x2x4x16xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

!qb = memref<3x2x2x32xbf16, strided<[0, 64, 32, 1]>>
!gb = memref<3x2x4xf32, strided<[4, 0, 1]>>
func.func @broadcast(%q: !qb, %k: memref<3x2x2x32xbf16>, %v: memref<3x2x4x16xbf16>,
                     %g: !gb, %beta: !gb, %h0: memref<3x4x32x16xf32>,
                     %ht: memref<3x4x32x16xf32>, %o: memref<3x2x4x16xbf16>) {
  gdn.recurrent q(%q : !qb) k(%k : memref<3x2x2x32xbf16>) v(%v : memref<3x2x4x16xbf16>)
      g(%g : !gb) beta(%beta : !gb) initial_state(%h0 : memref<3x4x32x16xf32>)
      final_state(%ht : memref<3x4x32x16xf32>) o(%o : memref<3x2x4x16xbf16>) {qk_l2norm}
  return
}
