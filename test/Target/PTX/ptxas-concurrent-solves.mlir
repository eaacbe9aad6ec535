// REQUIRES: ptxas
// concurrent_solves = 1 (ChunkParallel.cpp, docs/cost-model.md#concurrent-solves)
// at K = V = 128, HV = 32: launch 0 zeroes the counts, launch 1 (the
// solves' persistent CTAs) signals the scan's launch first thing, adds to a
// group's count with a release, and assembles in at most 64 registers
// (kConcurrentSolveRegisters: four such CTAs of 4 warps fit an SM beside a
// scan CTA of 4 warps); launch 2 (the scan) acquires a count (polling a
// count not full yet relaxed, with a nanosleep), and waits for the solves'
// grid at its end.
// RUN: split-file %s %t
// RUN: gdn-run --emit=ptx --launch=1 --schedule='#gdn.schedule<concurrent_solves = 1>' %t/vk.mlir > %t.solves.ptx
// RUN: FileCheck %s --check-prefix=SOLVES < %t.solves.ptx
// RUN: %ptxas -arch=sm_90a -v %t.solves.ptx -o %t.solves.cubin 2>&1 | FileCheck %s --check-prefix=REGS
// RUN: gdn-run --emit=ptx --launch=2 --schedule='#gdn.schedule<concurrent_solves = 1>' %t/vk.mlir > %t.scan.ptx
// RUN: FileCheck %s --check-prefix=SCAN < %t.scan.ptx
// RUN: %ptxas -arch=sm_90a -v %t.scan.ptx -o %t.scan.cubin 2>&1 | FileCheck %s --check-prefix=NOSPILL
// RUN: gdn-run --emit=ptx --launch=0 --schedule='#gdn.schedule<concurrent_solves = 1>' %t/vk.mlir | FileCheck %s --check-prefix=ZERO

// ZERO: .entry prefill_zero_counts
// ZERO: st.global.b32
// SOLVES: .entry prefill_chunk_solves
// SOLVES: .maxnreg 64
// SOLVES: griddepcontrol.launch_dependents
// SOLVES: bar.sync
// SOLVES: red.release.gpu.global.add.u32
// REGS: Used {{([0-9]|[1-5][0-9]|6[0-4])}} registers
// SCAN: .entry prefill_recurrent
// SCAN: ld.acquire.gpu.global.b32
// SCAN: nanosleep.u32 64;
// SCAN: ld.relaxed.gpu.global.b32
// SCAN: ld.acquire.gpu.global.b32
// SCAN: griddepcontrol.wait
// SCAN-NEXT: // end inline asm
// SCAN-NEXT: ret;
// NOSPILL: 0 bytes spill stores, 0 bytes spill loads

//--- vk.mlir
func.func @prefill(%q: memref<2x64x16x128xbf16>, %k: memref<2x64x16x128xbf16>, %v: memref<2x64x32x128xbf16>, %g: memref<2x64x32xf32>, %beta: memref<2x64x32xbf16>, %s: memref<2x32x128x128xf32>, %o: memref<2x64x32x128xbf16>) {
  gdn.recurrent q(%q : memref<2x64x16x128xbf16>) k(%k : memref<2x64x16x128xbf16>) v(%v : memref<2x64x32x128xbf16>) g(%g : memref<2x64x32xf32>) beta(%beta : memref<2x64x32xbf16>) initial_state(%s : memref<2x32x128x128xf32>) final_state(%s : memref<2x32x128x128xf32>) o(%o : memref<2x64x32x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
