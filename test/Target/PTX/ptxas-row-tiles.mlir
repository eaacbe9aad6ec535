// REQUIRES: ptxas
// Two row tiles a warp on tensor cores (columns_per_lane = 4: 32 V columns,
// docs/cost-model.md#scan-row-tiles): chunk_parallel's scan at K = 128, 16
// tokens a chunk, does twice a tile's mma (2 x 48 bf16 m16n8k16 for P, R and
// the update, 2 x 8 tf32 m16n8k8 for Uᵀ and Oᵀ) on the same 24 ldmatrix of
// q and k, and assembles with its 128 state values a thread and no spills,
// in the vk and the kv layout. The grid halves: 4 warps hold V = 128.
// RUN: split-file %s %t
// RUN: gdn-run --emit=ptx --launch=1 --schedule='#gdn.schedule<solve = chunk_parallel, warps = 4, columns_per_lane = 4>' %t/vk.mlir > %t.vk.ptx
// RUN: FileCheck %s --check-prefix=MMA < %t.vk.ptx
// RUN: FileCheck %s --check-prefix=LDM < %t.vk.ptx
// RUN: FileCheck %s --check-prefix=TF < %t.vk.ptx
// RUN: %ptxas -arch=sm_90a -v %t.vk.ptx -o %t.vk.cubin 2>&1 | FileCheck %s
// RUN: gdn-run --emit=ptx --launch=1 --schedule='#gdn.schedule<solve = chunk_parallel, warps = 4, columns_per_lane = 2>' %t/vk.mlir | FileCheck %s --check-prefix=ONE
// RUN: sed 's/layout<vk>/layout<kv>/' %t/vk.mlir > %t/kv.mlir
// RUN: gdn-run --emit=ptx --launch=1 --schedule='#gdn.schedule<solve = chunk_parallel, warps = 4, columns_per_lane = 4>' %t/kv.mlir > %t.kv.ptx
// RUN: %ptxas -arch=sm_90a -v %t.kv.ptx -o %t.kv.cubin 2>&1 | FileCheck %s
// RUN: gdn-opt %t/vk.mlir -gdn-select-schedule="schedule={#gdn.schedule<solve = chunk_parallel, warps = 4, columns_per_lane = 4>}" -convert-gdn-to-gpu | FileCheck %s --check-prefix=GRID

// CHECK-NOT: spill stores
// CHECK: 0 bytes spill stores, 0 bytes spill loads
// CHECK-NOT: spill stores

// MMA-COUNT-96: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// MMA-NOT: mma.sync.aligned.m16n8k16
// TF-COUNT-16: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// TF-NOT: mma.sync.aligned.m16n8k8
// LDM-COUNT-24: ldmatrix
// LDM-NOT: ldmatrix

// ONE-COUNT-48: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// ONE-NOT: mma.sync.aligned.m16n8k16

// GRID: gpu.launch_func @{{.*}}::@prefill_recurrent blocks in (%c1{{(_[0-9]+)?}}, %c32{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}) threads in (%c128{{(_[0-9]+)?}},

//--- vk.mlir
func.func @prefill(%q: memref<2x64x16x128xbf16>, %k: memref<2x64x16x128xbf16>, %v: memref<2x64x32x128xbf16>, %g: memref<2x64x32xf32>, %beta: memref<2x64x32xbf16>, %s: memref<2x32x128x128xf32>, %o: memref<2x64x32x128xbf16>) {
  gdn.recurrent q(%q : memref<2x64x16x128xbf16>) k(%k : memref<2x64x16x128xbf16>) v(%v : memref<2x64x32x128xbf16>) g(%g : memref<2x64x32xf32>) beta(%beta : memref<2x64x32xbf16>) initial_state(%s : memref<2x32x128x128xf32>) final_state(%s : memref<2x32x128x128xf32>) o(%o : memref<2x64x32x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
