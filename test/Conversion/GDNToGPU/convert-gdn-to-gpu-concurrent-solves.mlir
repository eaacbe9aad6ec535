// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<concurrent_solves = 1>}" | FileCheck %s --check-prefix=SCHED
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule | FileCheck %s --check-prefix=DEFAULT
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<concurrent_solves = 1>}" -convert-gdn-to-gpu | FileCheck %s
// concurrent_solves = 1: chunk_parallel's solves beside the scan
// (ChunkParallel.cpp, docs/cost-model.md#concurrent-solves). Three launches:
// one zeroing the counts (an i32 workspace of N * HV * ceil(slots / 8) =
// 2 * 2 * 1 here), the solves in persistent CTAs (min(items, 4 CTAs on each
// of the target's 132 SMs): 3 chunks x 1 key head x 2 sequences = 6 items,
// slots outermost) capped at 64 registers, which let the next launch start
// first thing, copy each item's q and k while the item before is solved,
// then count each item's records (one a value head) with a
// release once every thread's stores are done; and the scan, a
// programmatic launch, whose threads each acquire their group's count
// before they copy its first chunk's record, and which waits for the
// solves' grid after its recurrence.

// SCHED: solve = chunk_parallel, {{.*}}concurrent_solves = 1>
// DEFAULT: concurrent_solves = 0>
// CHECK-LABEL: func.func @prefill
// CHECK: %[[W:.*]] = gpu.alloc () : memref<8304xf32>
// CHECK-NEXT: %[[N:.*]] = gpu.alloc () : memref<4xi32>
// CHECK: gpu.launch_func @gdn_kernels::@prefill_zero_counts blocks in (%c1{{.*}}, %c1{{.*}}, %c1{{.*}}) threads in (%c64{{.*}} args({{.*}}, %[[W]] : memref<8304xf32>, %[[N]] : memref<4xi32>)
// CHECK-NOT: gdn.launch
// CHECK: gpu.launch_func @gdn_kernels::@prefill_chunk_solves blocks in (%c6, %c1{{.*}}, %c1{{.*}}) threads in (%c64{{.*}} args({{.*}}, %[[W]] : memref<8304xf32>, %[[N]] : memref<4xi32>)
// CHECK-NOT: gdn.launch
// CHECK: gpu.launch_func @gdn_kernels::@prefill_recurrent blocks in (%c1{{.*}}, %c2{{.*}}, %c2{{.*}}) threads in (%c64{{.*}} args({{.*}}, %[[W]] : memref<8304xf32>, %[[N]] : memref<4xi32>) {gdn.launch = #gdn.launch<programmatic_after_recurrence>}
// CHECK-NEXT: gpu.dealloc %[[W]] : memref<8304xf32>
// CHECK-NEXT: gpu.dealloc %[[N]] : memref<4xi32>
// CHECK-LABEL: gpu.func @prefill_zero_counts
// CHECK: memref.store %c0_i32, %arg9[%{{.*}}] : memref<4xi32>
// CHECK-LABEL: gpu.func @prefill_chunk_solves
// CHECK-SAME: nvvm.maxnreg = 64
// CHECK: nvvm.griddepcontrol launch_dependents
// CHECK: %[[GRID:.*]] = gpu.grid_dim x
// The first item's q and k copies (into the first set of buffers) before
// the loop:
// CHECK: nvgpu.device_async_copy %arg0{{.*}}, %[[Q0:arg[0-9]+]][
// CHECK: nvgpu.device_async_copy %arg1{{.*}}, %[[K0:arg[0-9]+]][
// CHECK-NEXT: nvgpu.device_async_create_group
// CHECK: scf.for %{{.*}} = %block_id_x to %c6 step %[[GRID]]
// The item's tid plus a zero the compilers cannot fold (its addresses are
// computed in the item, not hoisted and held across the loop):
// CHECK: llvm.inline_asm has_side_effects "shr.u64 $0, $1, 48;", "=l,l,~{memory}"
// The next item's copies into the other set (item j's is set j % 2), then
// this item's solve waits for all but that latest group:
// CHECK: %[[QN:.*]] = arith.select %[[ODD:.*]], %[[Q0]], %[[Q1:arg[0-9]+]] : memref<16x24xbf16, #gpu.address_space<workgroup>>
// CHECK: %[[KN:.*]] = arith.select %[[ODD]], %[[K0]], %[[K1:arg[0-9]+]] : memref
// CHECK: nvgpu.device_async_copy %arg0{{.*}}, %[[QN]][
// CHECK: nvgpu.device_async_copy %arg1{{.*}}, %[[KN]][
// CHECK-NEXT: %[[NEXT:.*]] = nvgpu.device_async_create_group
// CHECK: arith.select %[[ODD]], %[[Q1]], %[[Q0]] : memref
// CHECK: arith.select %[[ODD]], %[[K1]], %[[K0]] : memref
// CHECK: nvgpu.device_async_wait %[[NEXT]] {numGroups = 1 : i32}
// The item's last barrier, then thread 0's releases (the loop's end):
// CHECK: gpu.barrier
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: llvm.inline_asm has_side_effects "red.release.gpu.global.add.u32 [$0], 1;"
// CHECK-NOT: gpu.barrier
// CHECK: llvm.inline_asm has_side_effects "red.release.gpu.global.add.u32 [$0], 1;"
// CHECK-NEXT: {{^ *}}}
// CHECK-NEXT: {{^ *}}}
// The last item's prefetch (a repeat, unread) lands before the exit:
// CHECK-NEXT: %[[LAST:.*]] = nvgpu.device_async_create_group
// CHECK-NEXT: nvgpu.device_async_wait %[[LAST]] {numGroups = 0 : i32}
// CHECK-NEXT: gpu.return
// Each thread acquires its group's count before chunk 0's copies and, in
// the chunk loop, before the next chunk's; a count not full yet is polled
// (relaxed, with a nanosleep), then acquired again:
// CHECK-LABEL: gpu.func @prefill_recurrent
// CHECK: %[[A:.*]] = llvm.inline_asm has_side_effects "ld.acquire.gpu.global.b32 $0, [$1];", "=r,l,~{memory}"
// CHECK-NEXT: %[[SHORT:.*]] = arith.cmpi ult, %[[A]]
// CHECK-NEXT: scf.if %[[SHORT]] {
// CHECK-NEXT: scf.while
// CHECK-NEXT: llvm.inline_asm has_side_effects "nanosleep.u32 64;", "~{memory}"
// CHECK-NEXT: llvm.inline_asm has_side_effects "ld.relaxed.gpu.global.b32 $0, [$1];"
// CHECK: llvm.inline_asm has_side_effects "ld.acquire.gpu.global.b32 $0, [$1];"
// CHECK: nvgpu.device_async_copy %arg8
// CHECK: scf.for
// CHECK: llvm.inline_asm has_side_effects "ld.acquire.gpu.global.b32 $0, [$1];"
// CHECK: nvgpu.device_async_copy %arg8
// CHECK: llvm.inline_asm has_side_effects "griddepcontrol.wait;"
// CHECK-NEXT: gpu.return
func.func @prefill(%q: memref<2x40x1x16xbf16>, %k: memref<2x40x1x16xbf16>, %v: memref<2x40x2x32xbf16>, %g: memref<2x40x2xf32>, %beta: memref<2x40x2xf32>, %s: memref<2x2x32x16xf32>, %o: memref<2x40x2x32xbf16>) {
  gdn.recurrent q(%q : memref<2x40x1x16xbf16>) k(%k : memref<2x40x1x16xbf16>) v(%v : memref<2x40x2x32xbf16>) g(%g : memref<2x40x2xf32>) beta(%beta : memref<2x40x2xf32>) initial_state(%s : memref<2x2x32x16xf32>) final_state(%s : memref<2x2x32x16xf32>) o(%o : memref<2x40x2x32xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
