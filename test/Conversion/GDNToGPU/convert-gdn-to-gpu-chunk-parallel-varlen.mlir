// RUN: gdn-opt %s -gdn-select-schedule="schedule={#gdn.schedule<solve = chunk_parallel>}" -convert-gdn-to-gpu | FileCheck %s
// RUN: gdn-opt %s -gdn-select-schedule="schedule={#gdn.schedule<solve = chunk_parallel>}" -gdn-lower-to-ptx -o /dev/null

// solve = chunk_parallel on a varlen batch (N = 3 sequences packed into
// T = 40 tokens, 16-token chunks): the records are [HV, ceil(T / C) + N]
// (1 x (3 + 3) x 692 floats), sequence n's chunk i at slot first(n) + i,
// first(n) = floor(lo_n / 16) + n (docs/math.md §5). The first launch runs
// over (slots, HV, 1); each CTA finds its sequence by a binary search of
// cu_seqlens (N = 3: two steps, candidate 1, then the base + 1) and works
// only where its slot is one of that sequence's (x >= first(n), and its
// chunk starts before the sequence's end). The scan, over (V blocks, HV,
// N), reads sequence n's chunk at token c from record hv * 6 + (c - lo_n) /
// 16 + first(n).
// CHECK-LABEL: func.func @varlen
// CHECK: %[[W:.*]] = gpu.alloc () : memref<4152xf32>
// CHECK: gpu.launch_func @gdn_kernels::@varlen_chunk_solves blocks in (%c6, %c1{{.*}}, %c1{{.*}}) {{.*}} args({{.*}}, %[[W]] : memref<4152xf32>)
// CHECK: gpu.launch_func @gdn_kernels::@varlen_recurrent blocks in ({{.*}}, %c1{{.*}}, %c3{{.*}}) {{.*}} args({{.*}}, %[[W]] : memref<4152xf32>)
// CHECK-NEXT: gpu.dealloc %[[W]] : memref<4152xf32>

// CHECK-LABEL: gpu.func @varlen_chunk_solves
// CHECK-SAME: %[[CU:arg[0-9]+]]: memref<4xi32>
// CHECK: %[[X:.*]] = gpu.block_id x
// CHECK: %[[C1:.*]] = arith.addi %c0, %c1 : index
// CHECK: memref.load %[[CU]][%[[C1]]] : memref<4xi32>
// CHECK: %[[S1:.*]] = arith.divui %{{.*}}, %c16 : index
// CHECK: %[[F1:.*]] = arith.addi %[[S1]], %[[C1]] : index
// CHECK: %[[LE1:.*]] = arith.cmpi ule, %[[F1]], %[[X]] : index
// CHECK: %[[B1:.*]] = arith.select %[[LE1]], %[[C1]], %c0 : index
// CHECK: %[[C2:.*]] = arith.addi %[[B1]], %c1 : index
// CHECK: memref.load %[[CU]][%[[C2]]] : memref<4xi32>
// CHECK: %[[LE2:.*]] = arith.cmpi ule, %{{.*}}, %[[X]] : index
// CHECK: %[[N:.*]] = arith.select %[[LE2]], %[[C2]], %[[B1]] : index
// CHECK: memref.load %[[CU]][%[[N]]] : memref<4xi32>
// CHECK: %[[LOSLOT:.*]] = arith.divui %{{.*}}, %c16 : index
// CHECK: %[[FIRST:.*]] = arith.addi %[[LOSLOT]], %[[N]] : index
// CHECK: %[[AFTER:.*]] = arith.cmpi uge, %[[X]], %[[FIRST]] : index
// CHECK: %[[BEFORE:.*]] = arith.cmpi ult, %{{.*}}, %{{.*}} : index
// CHECK: %[[IN:.*]] = arith.andi %[[AFTER]], %[[BEFORE]] : i1
// CHECK-NEXT: scf.if %[[IN]] {
// CHECK: vector.store %{{.*}} : memref<4152xf32>, vector<4xf32>
// CHECK: gpu.return

// CHECK-LABEL: gpu.func @varlen_recurrent
// CHECK: %[[SN:.*]] = gpu.block_id z
// CHECK: memref.load %{{.*}}[%[[SN]]] : memref<4xi32>
// CHECK: %[[LO:.*]] = arith.minsi %{{.*}}, %c40 : index
// CHECK: %[[REL:.*]] = arith.subi %{{.*}}, %[[LO]] : index
// CHECK: %[[CHUNK:.*]] = arith.divui %[[REL]], %c16 : index
// CHECK: %[[LOS:.*]] = arith.divui %[[LO]], %c16 : index
// CHECK: %[[SFIRST:.*]] = arith.addi %[[LOS]], %[[SN]] : index
// CHECK: %[[SLOT:.*]] = arith.addi %[[CHUNK]], %[[SFIRST]] : index
// CHECK: %[[ROW:.*]] = arith.muli %{{.*}}, %c6 : index
// CHECK: %[[REC:.*]] = arith.addi %[[ROW]], %[[SLOT]] : index
// CHECK: arith.muli %[[REC]], %c692 : index
// CHECK: vector.load %{{.*}} : memref<4152xf32>, vector<4xf32>
func.func @varlen(%q: memref<1x40x1x16xbf16>, %k: memref<1x40x1x16xbf16>,
                  %v: memref<1x40x1x32xbf16>, %cu: memref<4xi32>,
                  %o: memref<1x40x1x32xbf16>) {
  gdn.recurrent q(%q : memref<1x40x1x16xbf16>) k(%k : memref<1x40x1x16xbf16>)
      v(%v : memref<1x40x1x32xbf16>) cu_seqlens(%cu : memref<4xi32>)
      o(%o : memref<1x40x1x32xbf16>) {state_layout = #gdn.layout<vk>}
  return
}
