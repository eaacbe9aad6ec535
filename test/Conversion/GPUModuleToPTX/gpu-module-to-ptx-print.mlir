// RUN: gdn-opt %s -verify-diagnostics -gdn-gpu-module-to-ptx=print-llvm-pipeline -o /dev/null
// print-llvm-pipeline reports the pipeline a module runs: by default LLVM's
// O2 text with GVN's memory dependence analysis off (docs/compile-time.md).

module attributes {gpu.container_module} {
  // expected-remark-re @+1 {{LLVM pipeline: memprof-remove-attributes,{{.*}},gvn<no-memdep>,{{.*}}}}
  gpu.module @kernels [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
    llvm.func @k() attributes {nvvm.kernel} {
      llvm.return
    }
  }
}
