// RUN: gdn-opt %s -gdn-select-schedule="schedule={#gdn.schedule<solve = chunk_parallel>}" -convert-gdn-to-gpu | FileCheck %s
// RUN: gdn-opt %s -gdn-select-schedule="schedule={#gdn.schedule<solve = chunk_parallel>}" -gdn-lower-to-ptx -o /dev/null

// solve = chunk_parallel on a varlen batch (N = 2 sequences packed into
// T = 40 tokens, 16-token chunks): the records are [HV, ceil(T / C) + N]
// (1 x (3 + 2) x 692 floats), sequence n's chunk i at slot floor(lo_n / 16)
// + n + i; the first launch runs over (slots, HV, 1), each CTA finding its
// sequence by a binary search of cu_seqlens (N = 2: one step, the entries
// of candidate 1) and doing nothing at a slot past its sequence's chunks;
// the scan over (V blocks, HV, N) reads sequence n's records from slot
// floor(lo_n / 16) + n (docs/math.md §5).
// CHECK-LABEL: func.func @varlen
// CHECK: %[[W:.*]] = gpu.alloc () : memref<3460xf32>
// CHECK: gpu.launch_func @gdn_kernels::@varlen_chunk_solves blocks in (%c5, %c1{{.*}}, %c1{{.*}}) {{.*}} args({{.*}}, %[[W]] : memref<3460xf32>)
// CHECK: gpu.launch_func @gdn_kernels::@varlen_recurrent blocks in ({{.*}}, %c1{{.*}}, %c2{{.*}}) {{.*}} args({{.*}}, %[[W]] : memref<3460xf32>)
// CHECK-NEXT: gpu.dealloc %[[W]] : memref<3460xf32>
// CHECK-LABEL: gpu.func @varlen_chunk_solves
// CHECK-SAME: %[[CU:arg[0-9]+]]: memref<3xi32>
// CHECK: %[[X:.*]] = gpu.block_id x
// The candidate's first token and its first slot, against the CTA's.
// CHECK: %[[CAND:.*]] = arith.addi %c0, %c1 : index
// CHECK: memref.load %[[CU]][%[[CAND]]] : memref<3xi32>
// CHECK: %[[SLOT:.*]] = arith.divui %{{.*}}, %c16 : index
// CHECK: %[[FIRST:.*]] = arith.addi %[[SLOT]], %[[CAND]] : index
// CHECK: %[[BELOW:.*]] = arith.cmpi ule, %[[FIRST]], %[[X]] : index
// CHECK: %[[N:.*]] = arith.select %[[BELOW]], %[[CAND]], %c0 : index
// CHECK: memref.load %[[CU]][%[[N]]] : memref<3xi32>
// CHECK: %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %{{.*}} : index
// CHECK-NEXT: scf.if %[[IN]] {
// CHECK: vector.store %{{.*}} : memref<3460xf32>, vector<4xf32>
// CHECK: gpu.return
// CHECK-LABEL: gpu.func @varlen_recurrent
// CHECK: nvgpu.device_async_copy %{{.*}} : memref<3460xf32> to
func.func @varlen(%q: memref<1x40x1x16xbf16>, %k: memref<1x40x1x16xbf16>,
                  %v: memref<1x40x1x32xbf16>, %cu: memref<3xi32>,
                  %o: memref<1x40x1x32xbf16>) {
  gdn.recurrent q(%q : memref<1x40x1x16xbf16>) k(%k : memref<1x40x1x16xbf16>)
      v(%v : memref<1x40x1x32xbf16>) cu_seqlens(%cu : memref<3xi32>)
      o(%o : memref<1x40x1x32xbf16>) {state_layout = #gdn.layout<vk>}
  return
}
