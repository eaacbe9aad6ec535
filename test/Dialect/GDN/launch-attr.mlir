// RUN: gdn-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// `gdn.launch` (GDNDialect.td): the launch mode of a gpu.launch_func, a
// #gdn.launch that names the point the kernel was built for. It round-trips,
// and the dialect's attribute verifier refuses it elsewhere, of another
// kind, or as the pin `programmatic`.

module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_90a">, "">]
  // CHECK-LABEL: func.func @at_start
  func.func @at_start(%a: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    // CHECK: gpu.launch_func @kernels::@k {{.*}} {gdn.launch = #gdn.launch<programmatic_at_start>}
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>) {gdn.launch = #gdn.launch<programmatic_at_start>}
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_90a">, "">]
  func.func @pin(%a: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    // expected-error @+1 {{'gdn.launch' must name the point the kernel lets the next one launch (programmatic_at_start or programmatic_after_recurrence): 'programmatic' is a schedule pin only}}
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>) {gdn.launch = #gdn.launch<programmatic>}
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_90a">, "">]
  func.func @not_a_mode(%a: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    // expected-error @+1 {{'gdn.launch' must be a #gdn.launch<...>, not true}}
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>) {gdn.launch = true}
    return
  }
}

// -----

func.func @not_a_launch() {
  // expected-error @+1 {{'gdn.launch' is only meaningful on gpu.launch_func}}
  %c1 = arith.constant {gdn.launch = #gdn.launch<ordinary>} 1 : index
  return
}

// -----

// The standalone form has brackets and the enum's cases.
// expected-error @+2 {{expected ::mlir::gdn::LaunchMode to be one of: ordinary, programmatic, programmatic_at_start, programmatic_after_recurrence}}
// expected-error @+1 {{failed to parse GDN_LaunchModeAttr parameter 'value'}}
func.func @bad_mode() attributes {x = #gdn.launch<later>} {
  return
}
