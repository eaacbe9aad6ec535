// RUN: gdn-opt %s -gdn-gpu-module-to-ptx | FileCheck %s
// RUN: gdn-opt %s -gdn-gpu-module-to-ptx="llvm-pipeline=default<O2>" | FileCheck %s
// RUN: gdn-opt %s -gpu-module-to-binary="format=isa" | FileCheck %s
// RUN: env CUDA_HOME=/nonexistent gdn-opt %s -gdn-gpu-module-to-ptx | FileCheck %s
// RUN: gdn-opt %s -gdn-gpu-module-to-ptx="llvm-pipeline=\"function(instcombine),print\"" 2>&1 >/dev/null | FileCheck %s --check-prefix=PRINT
// gdn-gpu-module-to-ptx makes the gpu.binary gpu-module-to-binary{format=isa}
// makes: a #gpu.object of format assembly holding the PTX, under the
// module's name. The kernel pipeline folds the kernel to one store of 7, as
// LLVM's O2 does; llvm-pipeline runs another pipeline (`print` writes the
// optimized module to stderr). A kernel that calls no libdevice function
// needs no CUDA toolkit, whatever CUDA_HOME says.

// CHECK-LABEL: gpu.binary @kernels
// CHECK-SAME: #gpu.object<#nvvm.target<chip = "sm_90a", features = "+ptx80">, properties = {{{.*}}O = 2 : i32}, assembly =
// CHECK-SAME: .target sm_90a
// CHECK-SAME: .entry store_seven(
// CHECK-SAME: st.global.b32 {{.*}}, 7;
// CHECK-NOT: gpu.module
// PRINT: define ptx_kernel void @store_seven(ptr %0)
// PRINT: store i32 7, ptr
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
    llvm.func @store_seven(%p: !llvm.ptr) attributes {nvvm.kernel} {
      %three = llvm.mlir.constant(3 : i32) : i32
      %four = llvm.mlir.constant(4 : i32) : i32
      %seven = llvm.add %three, %four : i32
      llvm.store %seven, %p : i32, !llvm.ptr
      llvm.return
    }
  }
}

