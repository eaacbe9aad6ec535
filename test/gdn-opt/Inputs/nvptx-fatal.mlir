// Kernels the NVPTX back end aborts on (test/gdn-opt/faults.test).
//--- f128.mlir
module attributes {gpu.container_module} {
  gpu.module @m [#nvvm.target<chip = "sm_90">] {
    llvm.func @k(%p: !llvm.ptr, %a: f128) attributes {nvvm.kernel} {
      %c = llvm.intr.sin(%a) : (f128) -> f128
      llvm.store %c, %p : f128, !llvm.ptr
      llvm.return
    }
  }
}
//--- kernel.mlir
module attributes {gpu.container_module} {
  gpu.module @m [#nvvm.target<chip = "sm_90">] {
    llvm.func @k(%p: !llvm.ptr) attributes {nvvm.kernel} {
      %seven = llvm.mlir.constant(7 : i32) : i32
      llvm.store %seven, %p : i32, !llvm.ptr
      llvm.return
    }
  }
}
