// RUN: gdn-opt %s -split-input-file -gdn-select-schedule -convert-gdn-to-gpu | FileCheck %s
// Kernel names are PTX identifiers whatever the function is called, and the
// kernel module goes into the op's own module under a name that is free.

// CHECK-LABEL: func.func @"my-fn"
// CHECK: gpu.launch_func @gdn_kernels::@my_fn_recurrent
// CHECK: gpu.func @my_fn_recurrent
func.func @"my-fn"(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>)
  return
}

// -----

// CHECK-LABEL: func.func @"1abc"
// CHECK: gpu.launch_func @gdn_kernels::@_1abc_recurrent
func.func @"1abc"(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>)
  return
}

// -----

// A symbol named gdn_kernels already exists: the kernel module gets another name.
// CHECK-LABEL: func.func @clash
// CHECK: gpu.launch_func @[[MOD:gdn_kernels_[0-9]+]]::@clash_recurrent
// CHECK: func.func @gdn_kernels()
// CHECK: gpu.module @[[MOD]]
func.func @clash(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>)
  return
}
func.func @gdn_kernels() {
  return
}

// -----

// The op in a nested module: the kernel module and the container attribute go there.
// CHECK: module @inner attributes {gpu.container_module}
// CHECK: gpu.launch_func @gdn_kernels::@nested_recurrent
// CHECK: gpu.module @gdn_kernels
module @inner {
  func.func @nested(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
    gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>)
    return
  }
}
