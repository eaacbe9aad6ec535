// RUN: gdn-opt %s -gdn-select-schedule="schedule={#gdn.schedule<solve = tensor_cores, producer_stages = 2>}" | FileCheck %s --check-prefix=SCHED
// RUN: gdn-opt %s -gdn-select-schedule="schedule={#gdn.schedule<solve = tensor_cores, producer_stages = 2>}" -convert-gdn-to-gpu | FileCheck %s
// The warp-specialized WY solve (solve = tensor_cores, producer_stages = 2;
// WarpSpecializedSolve.cpp): one launch, no workspace. The scan's warps
// rule gives 2 consumer warps (4 CTAs, one an SM), a producer warpgroup
// adds 4: 192 threads over (V blocks, HV, N). The ring's two slots get a
// `full` mbarrier of 128 arrivals (the producer's threads) and an `empty`
// one of 64 (the consumers'); after their CTA barrier no thread waits at
// gpu.barrier again (the roles run different loops: one would hang). The
// consumers wait on `full`, run only the state products (no exp: the
// decays are the producer's) and arrive on `empty`; the producer waits on
// `empty`, copies q, k and the CTA's columns of v with cp.async, waits for
// them at named barrier 1 (its 128 threads), forms the Gram products on
// bf16 mma and the substitution behind that barrier, and arrives on `full`.
// SCHED: gdn.schedule = #gdn.schedule<columns_per_lane = 2, lanes_along_v = 8, warps = 2, staged_tokens = 16, {{.*}}solve = tensor_cores, precision = bf16, producer_stages = 2, consumer_registers = 0, {{.*}}input_prefetch_distance = 0, chunk_prefetch_distance = 0, max_registers = 0, launch = ordinary, segments = 1, concurrent_solves = 0>
// CHECK-LABEL: func.func @prefill
// CHECK-NOT: gpu.alloc
// CHECK: gpu.launch_func @gdn_kernels::@prefill_recurrent blocks in (%c1{{.*}}, %c2{{.*}}, %c2{{.*}}) threads in (%c192,
// CHECK-NOT: gpu.launch_func
// CHECK-LABEL: gpu.func @prefill_recurrent
// CHECK: nvvm.mbarrier.init %{{.*}}, %c128_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c64_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c128_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c64_i32
// CHECK: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: scf.for {{.*}} iter_args
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NOT: ex2.approx
// CHECK: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>
// CHECK-NOT: ex2.approx
// CHECK: nvvm.mbarrier.arrive
// CHECK-NOT: gpu.barrier
// CHECK: scf.for
// CHECK-NOT: gpu.barrier
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvgpu.device_async_copy %arg0
// CHECK: nvgpu.device_async_copy %arg1
// CHECK: nvgpu.device_async_copy %arg2
// CHECK: nvgpu.device_async_wait
// CHECK-NEXT: nvvm.barrier id = %c1_i32 number_of_threads = %c128_i32
// CHECK: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>
// CHECK: ex2.approx
// CHECK: nvvm.barrier id = %c1_i32 number_of_threads = %c128_i32
// CHECK-NOT: gpu.barrier
// CHECK: nvvm.mbarrier.arrive
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
func.func @prefill(%q: memref<2x40x1x16xbf16>, %k: memref<2x40x1x16xbf16>, %v: memref<2x40x2x32xbf16>, %g: memref<2x40x2xf32>, %beta: memref<2x40x2xf32>, %s: memref<2x2x32x16xf32>, %o: memref<2x40x2x32xbf16>) {
  gdn.recurrent q(%q : memref<2x40x1x16xbf16>) k(%k : memref<2x40x1x16xbf16>) v(%v : memref<2x40x2x32xbf16>) g(%g : memref<2x40x2xf32>) beta(%beta : memref<2x40x2xf32>) initial_state(%s : memref<2x2x32x16xf32>) final_state(%s : memref<2x2x32x16xf32>) o(%o : memref<2x40x2x32xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
