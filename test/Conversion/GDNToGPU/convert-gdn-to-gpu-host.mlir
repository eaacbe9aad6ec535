// RUN: gdn-opt %s -split-input-file -convert-gdn-to-gpu -verify-diagnostics
// The ops become kernel launches: inside device code they are refused with a
// diagnostic on the op (before, this lowered into invalid IR that failed
// later with <<UNKNOWN SSA VALUE>> notes).

module attributes {gpu.container_module} {
  gpu.module @device {
    gpu.func @f(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) kernel {
      // expected-error @+1 {{'gdn.recurrent' op cannot be lowered to the GPU: it launches a kernel, so it must be in host code, not inside 'gpu.func'}}
      gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>) {state_layout = #gdn.layout<vk>}
      gpu.return
    }
  }
}

// -----

func.func @in_launch(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%a = %c1, %b = %c1, %c = %c1) {
    // expected-error @+1 {{'gdn.recurrent' op cannot be lowered to the GPU: it launches a kernel, so it must be in host code, not inside 'gpu.launch'}}
    gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>) {state_layout = #gdn.layout<vk>}
    gpu.terminator
  }
  return
}

// -----

module attributes {gpu.container_module} {
  gpu.module @device {
    gpu.func @c(%inter: memref<2x4x1x8x32xf32>, %acc: memref<2xi32>, %s: memref<2x1x8x32xf32>) kernel {
      // expected-error @+1 {{'gdn.commit' op cannot be lowered to the GPU: it launches a kernel, so it must be in host code, not inside 'gpu.func'}}
      gdn.commit intermediate_states(%inter : memref<2x4x1x8x32xf32>) accepted(%acc : memref<2xi32>) state(%s : memref<2x1x8x32xf32>) {state_layout = #gdn.layout<vk>}
      gpu.return
    }
  }
}
