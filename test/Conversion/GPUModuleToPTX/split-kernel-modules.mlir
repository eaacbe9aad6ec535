// RUN: gdn-opt %s -split-input-file -gdn-split-kernel-modules | FileCheck %s
// A gpu.module of several kernels becomes one module a kernel (same targets,
// the first kernel stays), and every launch points at its kernel's module;
// a module of one kernel, or with anything but kernels in it, is left as it is.

// CHECK-LABEL: func.func @two
// CHECK: gpu.launch_func @kernels::@a
// CHECK: gpu.launch_func @kernels_b::@b
// CHECK: gpu.launch_func @kernels::@a
// CHECK: gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {
// CHECK-NEXT: gpu.func @a() kernel
// CHECK-NOT: gpu.func
// CHECK: gpu.module @kernels_b [#nvvm.target<chip = "sm_90a">] {
// CHECK-NEXT: gpu.func @b() kernel
// CHECK-NOT: gpu.module
module attributes {gpu.container_module} {
  func.func @two() {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@a blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @kernels::@b blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @kernels::@a blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
  gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {
    gpu.func @a() kernel {
      gpu.return
    }
    gpu.func @b() kernel {
      gpu.return
    }
  }
}

// -----

// A name that is taken is made unique.
// CHECK-LABEL: func.func @clash
// CHECK: gpu.launch_func @kernels_b_0::@b
// CHECK: gpu.module @kernels [
// CHECK: gpu.module @kernels_b_0 [
// CHECK: gpu.module @kernels_b [
module attributes {gpu.container_module} {
  func.func @clash() {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@b blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
  gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {
    gpu.func @a() kernel {
      gpu.return
    }
    gpu.func @b() kernel {
      gpu.return
    }
  }
  gpu.module @kernels_b [#nvvm.target<chip = "sm_90a">] {
    gpu.func @c() kernel {
      gpu.return
    }
  }
}

// -----

// A module holding a helper function besides its kernels stays whole.
// CHECK-LABEL: func.func @helper
// CHECK: gpu.launch_func @kernels::@b
// CHECK: gpu.module @kernels
// CHECK-NOT: gpu.module
module attributes {gpu.container_module} {
  func.func @helper() {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@b blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
  gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {
    gpu.func @a() kernel {
      gpu.return
    }
    gpu.func @b() kernel {
      gpu.return
    }
    func.func @f() {
      return
    }
  }
}
