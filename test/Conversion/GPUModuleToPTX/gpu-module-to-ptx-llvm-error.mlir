// RUN: gdn-opt %s -verify-diagnostics -gdn-gpu-module-to-ptx -o /dev/null
// An error LLVM's back end reports (here: a dynamic alloca, which PTX ISA
// 6.0 cannot express) is an error on the module; LLVM's default handler
// would have ended the process.
module attributes {gpu.container_module} {
  // expected-error @+2 {{LLVM: <unknown>:0:0: in function k void (ptr, i64): Support for dynamic alloca introduced in PTX ISA version 7.3}}
  // expected-error @+1 {{gdn-gpu-module-to-ptx: serialization failed}}
  gpu.module @old_ptx [#nvvm.target<chip = "sm_70", features = "+ptx60">] {
    llvm.func @k(%p: !llvm.ptr, %n: i64) attributes {nvvm.kernel} {
      %a = llvm.alloca %n x i32 : (i64) -> !llvm.ptr
      %one = llvm.mlir.constant(1 : i32) : i32
      llvm.store volatile %one, %a : i32, !llvm.ptr
      %v = llvm.load volatile %a : !llvm.ptr -> i32
      llvm.store %v, %p : i32, !llvm.ptr
      llvm.return
    }
  }
}
