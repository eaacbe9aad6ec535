// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<solve = chunk_parallel, segments = 4, concurrent_solves = 0>}" -convert-gdn-to-gpu | FileCheck %s
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<solve = chunk_parallel, segments = 2, concurrent_solves = 0>}" -convert-gdn-to-gpu | FileCheck %s --check-prefix=TWO
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule | FileCheck %s --check-prefix=SCHED
// Context-parallel segments (docs/math.md §7): chunk_parallel's records,
// then T = 200 in 4 segments of 64 tokens: the segment maps over (V / 32 +
// K / 32 = 2 blocks, HV, N (P - 1) = 3) into a second workspace [N P = 4,
// HV, V + K, K] f32 (slot 0 a copy of the initial state, slot p + 1
// segment p's end state in rows [0, V) and transition in [V, V + K)), the join over (V / 4, HV, N) CTAs of 128 threads, the scan
// over (V blocks, HV, N P = 4); both workspaces freed after. A segment map
// runs the scan's state products without R and o (8 bf16 and 4 tf32 mma
// at K = V = 32, against the scan's 12 and 8) and stores no o; the join
// steps X_{p+1} = X_p A_p + B_p for p = 1, 2, X_p's rows in shared memory
// (X_1 loaded, X_2 from the first step's sums) and each step's K = 32 keys
// of A_p loaded in one loop trip. Two
// segments join nothing (X_1 = B_0). The cost model splits nothing this
// short (gdn-select-schedule-segments.mlir).
// SCHED: launch = ordinary, segments = 1, concurrent_solves = 0>
// CHECK-LABEL: func.func @prefill
// CHECK: %[[W:.*]] = gpu.alloc () : memref<17992xf32>
// CHECK: gpu.launch_func @gdn_kernels::@prefill_chunk_solves
// CHECK: %[[M:.*]] = gpu.alloc () : memref<4x2x64x32xf32>
// CHECK: gpu.launch_func @gdn_kernels::@prefill_segment_maps blocks in (%c2{{.*}}, %c2{{.*}}, %c3{{.*}}) threads in (%c64{{.*}} args({{.*}}, %[[W]] : memref<17992xf32>, %[[M]] : memref<4x2x64x32xf32>)
// CHECK: gpu.launch_func @gdn_kernels::@prefill_segment_join blocks in (%c8{{.*}}, %c2{{.*}}, %c1{{.*}}) threads in (%c128{{.*}} args({{.*}}, %[[M]] : memref<4x2x64x32xf32>)
// CHECK: gpu.launch_func @gdn_kernels::@prefill_recurrent blocks in (%c1{{.*}}, %c2{{.*}}, %c4{{.*}}) threads in (%c64{{.*}} args({{.*}}, %[[M]] : memref<4x2x64x32xf32>)
// CHECK-NEXT: gpu.dealloc %[[M]]
// CHECK-NEXT: gpu.dealloc %[[W]]
// CHECK-LABEL: gpu.func @prefill_segment_maps
// CHECK-SAME: %[[O:arg7]]: memref<1x200x2x32xbf16>, %{{.*}}: memref<17992xf32>, %[[MAPS:arg9]]: memref<4x2x64x32xf32>
// The copy of the initial state (X_0, which the scan's segment 0 reads, so
// no CTA of the scan reads an in-place final state another one writes):
// CHECK: vector.store %{{.*}}, %[[MAPS]][
// CHECK-COUNT-12: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
// CHECK-NOT: %[[O]][
// CHECK: vector.store %{{.*}}, %[[MAPS]][
// CHECK: gpu.return
// CHECK-LABEL: gpu.func @prefill_segment_join
// CHECK-SAME: workgroup(%[[XS:arg[0-9]+]] : memref<4x32xf32, #gpu.address_space<workgroup>>
// Threads past K = 32 read column 31 and store nothing:
// CHECK: arith.minui %{{.*}}, %c31
// CHECK: scf.if
// CHECK: memref.store %{{.*}}, %[[XS]]
// CHECK: gpu.barrier
// CHECK: scf.for {{.*}} step %c32
// CHECK: memref.load %arg9
// CHECK: memref.load %[[XS]]
// CHECK: memref.store %{{.*}}, %arg9
// CHECK: gpu.barrier
// CHECK: memref.store %{{.*}}, %[[XS]]
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK: memref.load %[[XS]]
// CHECK: memref.store %{{.*}}, %arg9
// CHECK-NOT: gpu.barrier
// CHECK-NOT: scf.for
// CHECK: gpu.return
// CHECK-LABEL: gpu.func @prefill_recurrent
// CHECK-NOT: %arg5[
// CHECK: vector.load %arg9[
// CHECK-COUNT-20: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
// CHECK: gpu.return
// TWO: gpu.launch_func @gdn_kernels::@prefill_chunk_solves
// TWO: gpu.alloc () : memref<2x2x64x32xf32>
// TWO: gpu.launch_func @gdn_kernels::@prefill_segment_maps blocks in (%c2{{.*}}, %c2{{.*}}, %c1{{.*}})
// TWO-NOT: segment_join
// TWO: gpu.launch_func @gdn_kernels::@prefill_recurrent blocks in (%c1{{.*}}, %c2{{.*}}, %c2{{.*}})
func.func @prefill(%q: memref<1x200x1x32xbf16>, %k: memref<1x200x1x32xbf16>, %v: memref<1x200x2x32xbf16>, %g: memref<1x200x2xf32>, %beta: memref<1x200x2xf32>, %s: memref<1x2x32x32xf32>, %o: memref<1x200x2x32xbf16>) {
  gdn.recurrent q(%q : memref<1x200x1x32xbf16>) k(%k : memref<1x200x1x32xbf16>) v(%v : memref<1x200x2x32xbf16>) g(%g : memref<1x200x2xf32>) beta(%beta : memref<1x200x2xf32>) initial_state(%s : memref<1x2x32x32xf32>) final_state(%s : memref<1x2x32x32xf32>) o(%o : memref<1x200x2x32xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
