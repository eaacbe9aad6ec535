// RUN: gdn-opt %s -split-input-file -gdn-select-schedule | FileCheck %s
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<launch = programmatic>}" | FileCheck %s --check-prefix=ON
// RUN: not gdn-opt %s -split-input-file -gdn-select-schedule="chip=sm_80 schedule={#gdn.schedule<launch = programmatic>}" 2>&1 | FileCheck %s --check-prefix=SM80
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<launch = programmatic_after_recurrence>}" | FileCheck %s --check-prefix=LATE
// RUN: not gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<launch = 4>}" 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<launch = programmatic_at_end>}" 2>&1 | FileCheck %s --check-prefix=CASE

// Programmatic dependent launch (launch = programmatic*): never chosen by
// the cost model (the kernel reads its initial state before the previous
// kernel of the stream has finished, which only the caller knows to be
// safe); a pin of `programmatic` goes on any kernel of sm_90 or sm_90a, and
// needs griddepcontrol (checked on the resolved point, as a pin of that
// point would be). It resolves to where the next kernel may launch: at
// this one's start (programmatic_at_start), or after the recurrence
// (programmatic_after_recurrence) for a producer warp's tiny latency-bound
// grid; a pin of either of those stays. A launch that is no case of the
// enum (the old flag's 4, or a misspelt name) is the option's parse error.
// CHECK-LABEL: func.func @decode
// CHECK: launch = ordinary, segments = 1, concurrent_solves = 0>
// ON-LABEL: func.func @decode
// ON: launch = programmatic_at_start, segments = 1, concurrent_solves = 0>
// LATE-LABEL: func.func @decode
// LATE: launch = programmatic_after_recurrence, segments = 1, concurrent_solves = 0>
// SM80: launch = programmatic_at_start needs griddepcontrol (sm_90 on)
// RANGE: error: gdn-select-schedule: option schedule = '#gdn.schedule<launch = 4>' is not a #gdn.schedule<...>: expected valid keyword or string
// CASE: error: gdn-select-schedule: option schedule = '#gdn.schedule<launch = programmatic_at_end>' is not a #gdn.schedule<...>: expected ::mlir::gdn::LaunchMode to be one of: ordinary, programmatic, programmatic_at_start, programmatic_after_recurrence
func.func @decode(%q: memref<1x1x16x128xbf16>, %k: memref<1x1x16x128xbf16>,
                  %v: memref<1x1x32x128xbf16>, %g: memref<1x1x32xf32>,
                  %s: memref<1x32x128x128xf32>, %o: memref<1x1x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x1x16x128xbf16>) k(%k : memref<1x1x16x128xbf16>)
      v(%v : memref<1x1x32x128xbf16>) g(%g : memref<1x1x32xf32>)
      initial_state(%s : memref<1x32x128x128xf32>) final_state(%s : memref<1x32x128x128xf32>)
      o(%o : memref<1x1x32x128xbf16>) {state_layout = #gdn.layout<vk>}
  return
}

// -----

// The T = 12 final state on a tiny grid (a producer warp) takes it too.
// CHECK-LABEL: func.func @t12
// CHECK: producer_stages = 2, {{.*}}launch = ordinary, segments = 1, concurrent_solves = 0>
// ON-LABEL: func.func @t12
// ON: producer_stages = 2, {{.*}}launch = programmatic_after_recurrence, segments = 1, concurrent_solves = 0>
// LATE-LABEL: func.func @t12
// LATE: producer_stages = 2, {{.*}}launch = programmatic_after_recurrence, segments = 1, concurrent_solves = 0>
func.func @t12(%q: memref<1x12x16x128xbf16>, %k: memref<1x12x16x128xbf16>,
               %v: memref<1x12x32x128xbf16>, %g: memref<1x12x32xf32>,
               %beta: memref<1x12x32xbf16>, %s: memref<1x32x128x128xf32>,
               %o: memref<1x12x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x12x16x128xbf16>) k(%k : memref<1x12x16x128xbf16>)
      v(%v : memref<1x12x32x128xbf16>) g(%g : memref<1x12x32xf32>) beta(%beta : memref<1x12x32xbf16>)
      initial_state(%s : memref<1x32x128x128xf32>) final_state(%s : memref<1x32x128x128xf32>)
      o(%o : memref<1x12x32x128xbf16>) {qk_l2norm}
  return
}
