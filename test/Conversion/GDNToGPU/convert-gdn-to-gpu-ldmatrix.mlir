// RUN: gdn-opt %s -gdn-select-schedule="schedule={#gdn.schedule<solve = chunk_parallel, warps = 4>}" -convert-gdn-to-gpu | FileCheck %s
// RUN: gdn-opt %s -gdn-select-schedule="schedule={#gdn.schedule<solve = chunk_parallel, warps = 8>}" -convert-gdn-to-gpu | FileCheck %s
// RUN: gdn-opt %s -gdn-select-schedule="schedule={#gdn.schedule<solve = chunk_parallel, warps = 2>}" -convert-gdn-to-gpu | FileCheck %s --check-prefix=WORDS
// RUN: gdn-opt %s -gdn-select-schedule="schedule={#gdn.schedule<solve = tensor_cores, warps = 8, precision = bf16>}" -convert-gdn-to-gpu | FileCheck %s --check-prefix=WORDS
// The bf16 products' staged operands (docs/cost-model.md#scan-operand-loads):
// chunk_parallel at 4 warps a CTA or more loads them by ldmatrix, x4 (x2
// for a Gram row tile's top half only), .trans for the scan's update; at 2
// warps, and in the tensor_cores form, one 32-bit word a register.

// CHECK-LABEL: gpu.func @prefill_chunk_solves
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = false} : memref<{{.*}}xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
// CHECK: nvvm.mma.sync
// CHECK-LABEL: gpu.func @prefill_recurrent
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = false}
// CHECK: nvvm.mma.sync
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = true}
// CHECK: nvvm.mma.sync

// WORDS-NOT: nvgpu.ldmatrix
// WORDS: nvvm.mma.sync
// WORDS-NOT: nvgpu.ldmatrix

func.func @prefill(%q: memref<1x40x1x32xbf16>, %k: memref<1x40x1x32xbf16>, %v: memref<1x40x1x128xbf16>, %g: memref<1x40x1xf32>, %beta: memref<1x40x1xf32>, %s: memref<1x1x128x32xf32>, %o: memref<1x40x1x128xbf16>) {
  gdn.recurrent q(%q : memref<1x40x1x32xbf16>) k(%k : memref<1x40x1x32xbf16>) v(%v : memref<1x40x1x128xbf16>) g(%g : memref<1x40x1xf32>) beta(%beta : memref<1x40x1xf32>) initial_state(%s : memref<1x1x128x32xf32>) final_state(%s : memref<1x1x128x32xf32>) o(%o : memref<1x40x1x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
