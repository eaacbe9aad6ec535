// REQUIRES: ptxas
// The PTX of gdn.commit kernels assembles for sm_90a with no stack frame and
// no spills: same dtype (bf16 pool, vk), f32 into bf16, and a ragged head.
// RUN: gdn-run --emit=ptx --function=verify %S/commit-ptx.mlir > %t.commit.ptx
// RUN: %ptxas -arch=sm_90a -v %t.commit.ptx -o %t.commit.cubin 2>&1 | FileCheck %s
// RUN: gdn-run --emit=ptx --function=convert %S/commit-ptx.mlir > %t.convert.ptx
// RUN: %ptxas -arch=sm_90a -v %t.convert.ptx -o %t.convert.cubin 2>&1 | FileCheck %s --check-prefix=CONVERT
// RUN: gdn-run --emit=ptx %s > %t.ragged.ptx
// RUN: %ptxas -arch=sm_90a -v %t.ragged.ptx -o %t.ragged.cubin 2>&1 | FileCheck %s --check-prefix=RAGGED

// CONVERT: Compiling entry function 'convert_commit' for 'sm_90a'
// CONVERT-NEXT: Function properties for convert_commit
// CONVERT-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK: Compiling entry function 'verify_commit' for 'sm_90a'
// CHECK-NEXT: Function properties for verify_commit
// CHECK-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// RAGGED: Compiling entry function 'ragged_commit' for 'sm_90a'
// RAGGED: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
func.func @ragged(%buf: memref<2x3x1x8x6xf16>, %acc: memref<2xi32>, %s: memref<2x1x8x6xf32>) {
  gdn.commit intermediate_states(%buf : memref<2x3x1x8x6xf16>) accepted(%acc : memref<2xi32>)
      state(%s : memref<2x1x8x6xf32>)
  return
}
