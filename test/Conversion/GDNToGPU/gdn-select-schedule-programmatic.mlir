// RUN: gdn-opt %s -split-input-file -gdn-select-schedule | FileCheck %s
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="programmatic-launch=1" | FileCheck %s --check-prefix=ON
// RUN: not gdn-opt %s -split-input-file -gdn-select-schedule="chip=sm_80 programmatic-launch=1" 2>&1 | FileCheck %s --check-prefix=SM80
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="programmatic-launch=3" | FileCheck %s --check-prefix=LATE
// RUN: not gdn-opt %s -split-input-file -gdn-select-schedule="programmatic-launch=4" 2>&1 | FileCheck %s --check-prefix=RANGE

// Programmatic dependent launch (programmatic_launch): never chosen by the
// cost model (the kernel reads its initial state before the previous kernel
// of the stream has finished, which only the caller knows to be safe); a pin
// of 1 goes on any kernel of sm_90 or sm_90a, and needs griddepcontrol. It
// resolves to where the next kernel may launch: at this one's start (2), or
// after the recurrence (3) for a producer warp's tiny latency-bound grid; a
// pin of 2 or 3 stays.
// CHECK-LABEL: func.func @decode
// CHECK: programmatic_launch = -1 : i64
// ON-LABEL: func.func @decode
// ON: programmatic_launch = 2 : i64
// LATE-LABEL: func.func @decode
// LATE: programmatic_launch = 3 : i64
// SM80: programmatic-launch = 1 needs griddepcontrol (sm_90 or sm_90a)
// RANGE: programmatic-launch = 4 must be -1, 0, 1, 2 or 3
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
// CHECK: pipeline_stages = 2 : i64, programmatic_launch = -1 : i64
// ON-LABEL: func.func @t12
// ON: pipeline_stages = 2 : i64, programmatic_launch = 3 : i64
// LATE-LABEL: func.func @t12
// LATE: pipeline_stages = 2 : i64, programmatic_launch = 3 : i64
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
