// An e4m3 state on sm_89 (Ada) lowers to PTX ISA 8.1, the first version
// from which NVPTX selects cvt with e4m3x2 operands for sm_89: under 8.0
// LLVM aborted the host process ("Cannot select") on every e4m3 kernel,
// the token loop's, the tensor-core forms' and the mma decode's.
// RUN: gdn-run --emit=ptx --chip=sm_89 %examples/sglang_varlen_extend_fp8.mlir | FileCheck %s
// RUN: gdn-run --emit=ptx --chip=sm_89 %S/ptxas-mma-decode.mlir | FileCheck %s --check-prefixes=CHECK,MMA
// RUN: gdn-run --emit=ptx --chip=sm_89 --schedule='#gdn.schedule<reductions = side_by_side>' %S/ptxas-mma-decode.mlir | FileCheck %s
// CHECK: .version 8.1
// CHECK: .target sm_89
// CHECK: cvt.rn.f16x2.e4m3x2
// MMA: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK: cvt.rn.satfinite.e4m3x2
