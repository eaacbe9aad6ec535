// RUN: gdn-opt %s -split-input-file -verify-diagnostics -gdn-gpu-module-to-ptx="llvm-pipeline=no-such-pass"
// Bad input is a diagnostic on the module, not an abort: a pipeline LLVM
// cannot parse, a module with no #nvvm.target (gpu-module-to-ptx-llvm-error:
// an error of LLVM's back end).

module attributes {gpu.container_module} {
  // expected-error @below {{llvm-pipeline: unknown pass name 'no-such-pass'}}
  // expected-error @below {{gdn-gpu-module-to-ptx: serialization failed}}
  gpu.module @kernels [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
    llvm.func @k() attributes {nvvm.kernel} {
      llvm.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  // expected-error @below {{gdn-gpu-module-to-ptx: a gpu.module needs exactly one #nvvm.target}}
  gpu.module @no_target {
    llvm.func @k() attributes {nvvm.kernel} {
      llvm.return
    }
  }
}

