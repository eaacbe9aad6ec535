// RUN: gdn-run --emit=ptx --function=verify %s | FileCheck %s
// RUN: gdn-run --emit=ptx --function=convert %s | FileCheck %s --check-prefix=CONVERT
// RUN: gdn-opt %s --gdn-lower-to-ptx | FileCheck %s --check-prefix=IR
// gdn.commit through gdn-lower-to-ptx: one copy kernel per op, each in a
// binary of its own (gdn-split-kernel-modules; ptxas-commit.mlir assembles
// them); gdn-run compiles only the function it is given, so one kernel each.

// IR: gpu.launch_func @gdn_kernels::@verify_commit
// IR: gpu.launch_func @gdn_kernels_convert_commit::@convert_commit
// IR: gpu.binary @gdn_kernels  [#gpu.object<#nvvm.target<chip = "sm_90a", features = "+ptx80">, properties = {{.*}}, assembly = "{{.*}}.entry verify_commit(
// IR: gpu.binary @gdn_kernels_convert_commit  [#gpu.object<#nvvm.target<chip = "sm_90a", features = "+ptx80">, properties = {{.*}}, assembly = "{{.*}}.entry convert_commit(

// CHECK: .target sm_90a
// CHECK-LABEL: .visible .entry verify_commit(
// CHECK: .maxntid 128, 1, 1
// CHECK-NOT: .local
// The row's count: rows that commit nothing branch to the end.
// CHECK: mov.u32 {{.*}}%ctaid.z
// CHECK: ld.global.b32
// CHECK: bra
// 64-bit addresses (a pool of 64 x 32 x 128 x 128 bf16 is 64 MiB; larger
// pools pass 2^31 elements).
// CHECK: add.s64
// Four 16-byte loads in flight, then four 16-byte stores, bits unchanged.
// CHECK-COUNT-4: ld.global.v4.b32
// CHECK-NOT: cvt.rn
// CHECK-COUNT-4: st.global.v4.b32
// CHECK: ret;
// An f32 buffer into a bf16 pool: 16-byte loads, one rounding (cvt.rn),
// 8-byte stores.
// CHECK-NOT: .entry
// CONVERT-NOT: .entry verify_commit
// CONVERT-LABEL: .visible .entry convert_commit(
// CONVERT: ld.global.v4.b32
// CONVERT: cvt.rn.bf16x2.f32
// CONVERT: st.global.v2.b32
func.func @verify(%buf: memref<9x4x32x128x128xbf16>, %acc: memref<8xi32>, %slots: memref<8xi32>,
                  %rows: memref<8xi32>, %pool: memref<64x32x128x128xbf16>) {
  gdn.commit intermediate_states(%buf : memref<9x4x32x128x128xbf16>) accepted(%acc : memref<8xi32>)
      state_indices(%slots : memref<8xi32>) intermediate_state_indices(%rows : memref<8xi32>)
      state(%pool : memref<64x32x128x128xbf16>) {state_layout = #gdn.layout<vk>}
  return
}

func.func @convert(%buf: memref<2x2x2x64x32xf32>, %acc: memref<2xi64>, %slots: memref<2xi64>,
                   %pool: memref<5x2x64x32xbf16>) {
  gdn.commit intermediate_states(%buf : memref<2x2x2x64x32xf32>) accepted(%acc : memref<2xi64>)
      state_indices(%slots : memref<2xi64>) state(%pool : memref<5x2x64x32xbf16>)
  return
}
