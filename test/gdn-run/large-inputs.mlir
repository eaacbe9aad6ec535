// An input of more than 2^20 elements (v: 320 x 32 x 128) is drawn in
// blocks on every core (gdn-run.cpp, makeInput): the check still passes,
// and the same seed gives the same inputs, so the same errors to the digit.
// RUN: gdn-run --target=cpu --check --seed=3 %s > %t.1
// RUN: gdn-run --target=cpu --check --seed=3 %s > %t.2
// RUN: FileCheck %s < %t.1
// RUN: grep "^check" %t.1 > %t.1.check
// RUN: grep "^check" %t.2 > %t.2.check
// RUN: diff %t.1.check %t.2.check
// CHECK: check final_state {{.*}} ok
// CHECK: check o {{.*}} ok
// CHECK-NOT: FAILED
func.func @prefill(%q: memref<1x320x16x128xbf16>, %k: memref<1x320x16x128xbf16>, %v: memref<1x320x32x128xbf16>, %g: memref<1x320x32xf32>, %beta: memref<1x320x32xbf16>, %initial_state: memref<1x32x128x128xf32>, %final_state: memref<1x32x128x128xf32>, %o: memref<1x320x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x320x16x128xbf16>) k(%k : memref<1x320x16x128xbf16>) v(%v : memref<1x320x32x128xbf16>) g(%g : memref<1x320x32xf32>) beta(%beta : memref<1x320x32xbf16>) initial_state(%initial_state : memref<1x32x128x128xf32>) final_state(%final_state : memref<1x32x128x128xf32>) o(%o : memref<1x320x32x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
