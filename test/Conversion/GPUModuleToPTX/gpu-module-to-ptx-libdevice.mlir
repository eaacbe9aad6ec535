// REQUIRES: libdevice
// RUN: env CUDA_HOME=%cuda_home gdn-opt %s -gdn-gpu-module-to-ptx | FileCheck %s
// RUN: env CUDA_HOME=/nonexistent gdn-opt %s -verify-diagnostics -gdn-gpu-module-to-ptx
// A kernel that calls libdevice (__nv_expf) gets it linked from the CUDA
// toolkit and inlined: the PTX computes exp with ex2.approx and calls
// nothing. Without a toolkit that is a diagnostic, not an abort (a kernel
// that calls nothing needs no toolkit: gpu-module-to-ptx.mlir).

// CHECK-LABEL: gpu.binary @kernels
// CHECK-SAME: .entry store_exp(
// CHECK-SAME: ex2.approx
// CHECK-NOT: call.uni
// CHECK-NOT: __nv_expf
// libdevice's __nv_fast_tanhf asks __nvvm_reflect for the architecture: 900
// (nvvm-reflect with the chip's SM version, as in LLVM's O2) picks tanh.approx.
// CHECK-SAME: .entry store_tanh(
// CHECK-SAME: tanh.approx.f32
module attributes {gpu.container_module} {
  // expected-error @+3 {{CUDA path: /nonexistent does not exist or is not a directory}}
  // expected-error @+2 {{a kernel calls libdevice and no CUDA toolkit with nvvm/libdevice/libdevice.10.bc was found (set CUDA_HOME)}}
  // expected-error @+1 {{gdn-gpu-module-to-ptx: serialization failed}}
  gpu.module @kernels [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
    llvm.func @__nv_expf(f32) -> f32
    llvm.func @store_exp(%p: !llvm.ptr, %x: f32) attributes {nvvm.kernel} {
      %e = llvm.call @__nv_expf(%x) : (f32) -> f32
      llvm.store %e, %p : f32, !llvm.ptr
      llvm.return
    }
    llvm.func @__nv_fast_tanhf(f32) -> f32
    llvm.func @store_tanh(%p: !llvm.ptr, %x: f32) attributes {nvvm.kernel} {
      %t = llvm.call @__nv_fast_tanhf(%x) : (f32) -> f32
      llvm.store %t, %p : f32, !llvm.ptr
      llvm.return
    }
  }
}
