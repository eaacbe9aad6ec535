// RUN: gdn-opt %s -split-input-file -gdn-select-schedule -convert-gdn-to-gpu | FileCheck %s

// launch = programmatic_at_start: every thread lets the next kernel launch first
// thing (griddepcontrol.launch_dependents), issues its state loads, and
// waits for the previous kernel (griddepcontrol.wait, inline PTX with a
// memory clobber so LLVM moves no load of the previous kernel's outputs above
// it) before the token inputs are read; the launch carries gdn.launch for the JIT.
// CHECK-LABEL: func.func @decode
// CHECK: gpu.launch_func @gdn_kernels::@decode_recurrent {{.*}} {gdn.launch = #gdn.launch<programmatic_at_start>}
// CHECK-LABEL: gpu.func @decode_recurrent
// CHECK: nvvm.griddepcontrol launch_dependents
// CHECK: vector.load %{{.*}} : memref<2x32x128x128xf32>, vector<4xf32>
// CHECK: llvm.inline_asm has_side_effects "griddepcontrol.wait;", "~{memory}"
// CHECK-NOT: memref<2x32x128x128xf32>, vector<4xf32>
// CHECK: scf.for
// CHECK: vector.load %{{.*}} : memref<2x1x16x128xbf16>
func.func @decode(%q: memref<2x1x16x128xbf16>, %k: memref<2x1x16x128xbf16>,
                  %v: memref<2x1x32x128xbf16>, %g: memref<2x1x32xf32>,
                  %s: memref<2x32x128x128xf32>, %o: memref<2x1x32x128xbf16>) {
  gdn.recurrent q(%q : memref<2x1x16x128xbf16>) k(%k : memref<2x1x16x128xbf16>)
      v(%v : memref<2x1x32x128xbf16>) g(%g : memref<2x1x32xf32>)
      initial_state(%s : memref<2x32x128x128xf32>) final_state(%s : memref<2x32x128x128xf32>)
      o(%o : memref<2x1x32x128xbf16>)
      {state_layout = #gdn.layout<vk>, gdn.schedule = #gdn.schedule<launch = programmatic_at_start>}
  return
}

// -----

// With a producer warp (pinned at the start, 2): the consumers wait after
// their state loads, the producer before its first bulk copy of the tokens.
// CHECK-LABEL: gpu.func @producer_recurrent
// CHECK: nvvm.griddepcontrol launch_dependents
// CHECK: nvvm.mbarrier.init
// CHECK: vector.load %{{.*}} : memref<1x32x128x128xf32>
// CHECK: llvm.inline_asm has_side_effects "griddepcontrol.wait;"
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: } else {
// CHECK-NEXT: llvm.inline_asm has_side_effects "griddepcontrol.wait;"
// CHECK: nvvm.cp.async.bulk.shared.cluster.global
func.func @producer(%q: memref<1x12x16x128xbf16>, %k: memref<1x12x16x128xbf16>,
                    %v: memref<1x12x32x128xbf16>, %g: memref<1x12x32xf32>,
                    %beta: memref<1x12x32xbf16>, %s: memref<1x32x128x128xf32>,
                    %o: memref<1x12x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x12x16x128xbf16>) k(%k : memref<1x12x16x128xbf16>)
      v(%v : memref<1x12x32x128xbf16>) g(%g : memref<1x12x32xf32>) beta(%beta : memref<1x12x32xbf16>)
      initial_state(%s : memref<1x32x128x128xf32>) final_state(%s : memref<1x32x128x128xf32>)
      o(%o : memref<1x12x32x128xbf16>)
      {qk_l2norm, gdn.schedule = #gdn.schedule<reductions = side_by_side, producer_stages = 2, launch = programmatic_at_start>}
  return
}

// -----

// launch = programmatic_after_recurrence: the next kernel may launch once the recurrence is
// done, before the final state store.
// CHECK-LABEL: gpu.func @late_recurrent
// CHECK-NOT: nvvm.griddepcontrol
// CHECK: llvm.inline_asm has_side_effects "griddepcontrol.wait;"
// CHECK: scf.for
// CHECK: }
// CHECK: nvvm.griddepcontrol launch_dependents
// CHECK: vector.store %{{.*}} : memref<2x32x128x128xf32>
func.func @late(%q: memref<2x1x16x128xbf16>, %k: memref<2x1x16x128xbf16>,
                %v: memref<2x1x32x128xbf16>, %g: memref<2x1x32xf32>,
                %s: memref<2x32x128x128xf32>, %o: memref<2x1x32x128xbf16>) {
  gdn.recurrent q(%q : memref<2x1x16x128xbf16>) k(%k : memref<2x1x16x128xbf16>)
      v(%v : memref<2x1x32x128xbf16>) g(%g : memref<2x1x32xf32>)
      initial_state(%s : memref<2x32x128x128xf32>) final_state(%s : memref<2x32x128x128xf32>)
      o(%o : memref<2x1x32x128xbf16>)
      {state_layout = #gdn.layout<vk>, gdn.schedule = #gdn.schedule<launch = programmatic_after_recurrence>}
  return
}
