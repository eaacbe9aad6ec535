// RUN: gdn-opt %s -gdn-select-schedule="schedule={#gdn.schedule<warps = 8, solve = tensor_cores, max_registers = 128>}" -convert-gdn-to-gpu | FileCheck %s
// RUN: gdn-opt %s -gdn-select-schedule="schedule={#gdn.schedule<warps = 8, solve = tensor_cores>}" -convert-gdn-to-gpu | FileCheck %s --check-prefix=NOCAP
// RUN: gdn-opt %s -gdn-select-schedule="schedule={#gdn.schedule<warps = 2, solve = tensor_cores>}" -convert-gdn-to-gpu | FileCheck %s --check-prefix=TWO
// Where the tensor-core solve of a single chunk loads the state: in CTAs of
// 4 or more warps after the chunk's staging loads (q, k, v, gates), before
// the staging barrier; in CTAs of 2 warps first (TensorCoreSolveKernel::build()).
// max_registers = 128 caps a thread's registers (.maxnreg: 2 CTAs of 8 warps
// an SM); the cost model leaves this one-CTA grid uncapped, as it does CTAs
// of 2 warps.
// CHECK-LABEL: gpu.func @late_state_recurrent
// CHECK-SAME: kernel attributes {known_block_size = array<i32: 256, 1, 1>, nvvm.maxnreg = 128 : i32}
// CHECK-NOT: memref<1x1x128x16xf32>, vector<2xf32>
// CHECK: vector.load {{.*}} : memref<1x12x1x16xbf16>, vector<8xbf16>
// CHECK: vector.load {{.*}} : memref<1x12x1x128xbf16>, vector<8xbf16>
// CHECK: memref.load {{.*}} : memref<1x12x1xf32>
// CHECK-NOT: gpu.barrier
// CHECK: vector.load {{.*}} : memref<1x1x128x16xf32>, vector<2xf32>
// CHECK: gpu.barrier
// NOCAP-LABEL: gpu.func @late_state_recurrent
// NOCAP-SAME: kernel attributes {known_block_size = array<i32: 256, 1, 1>}
// TWO-LABEL: gpu.func @late_state_recurrent
// TWO-SAME: kernel attributes {known_block_size = array<i32: 64, 1, 1>}
// TWO: vector.load {{.*}} : memref<1x1x128x16xf32>, vector<2xf32>
// TWO: vector.load {{.*}} : memref<1x12x1x16xbf16>, vector<8xbf16>
// TWO: gpu.barrier
func.func @late_state(%q: memref<1x12x1x16xbf16>, %k: memref<1x12x1x16xbf16>,
    %v: memref<1x12x1x128xbf16>, %g: memref<1x12x1xf32>, %beta: memref<1x12x1xf32>,
    %state: memref<1x1x128x16xf32>, %o: memref<1x12x1x128xbf16>) {
  gdn.recurrent q(%q : memref<1x12x1x16xbf16>) k(%k : memref<1x12x1x16xbf16>)
      v(%v : memref<1x12x1x128xbf16>) g(%g : memref<1x12x1xf32>)
      beta(%beta : memref<1x12x1xf32>)
      initial_state(%state : memref<1x1x128x16xf32>)
      final_state(%state : memref<1x1x128x16xf32>) o(%o : memref<1x12x1x128xbf16>)
      {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
