// The kernels' LLVM pipeline (gdn-gpu-module-to-ptx's default: LLVM's O2 with
// GVN's memory dependence analysis off) gives the PTX of LLVM's O2 itself,
// byte for byte, on the heaviest kernels: T = 12 on tensor cores, a varlen
// extend and a verify (docs/compile-time.md).
// RUN: gdn-opt %examples/../bench/sweeps/fla_t12_n8_kv.mlir --gdn-lower-to-ptx > %t.t12.kernel
// RUN: gdn-opt %examples/../bench/sweeps/fla_t12_n8_kv.mlir --gdn-lower-to-ptx="llvm-pipeline=default<O2>" > %t.t12.o2
// RUN: diff %t.t12.kernel %t.t12.o2
// RUN: gdn-opt %examples/sglang_varlen_extend.mlir --gdn-lower-to-ptx > %t.varlen.kernel
// RUN: gdn-opt %examples/sglang_varlen_extend.mlir --gdn-lower-to-ptx="llvm-pipeline=default<O2>" > %t.varlen.o2
// RUN: diff %t.varlen.kernel %t.varlen.o2
// RUN: gdn-opt %examples/sglang_verify_t4.mlir --gdn-lower-to-ptx > %t.verify.kernel
// RUN: gdn-opt %examples/sglang_verify_t4.mlir --gdn-lower-to-ptx="llvm-pipeline=default<O2>" > %t.verify.o2
// RUN: diff %t.verify.kernel %t.verify.o2
