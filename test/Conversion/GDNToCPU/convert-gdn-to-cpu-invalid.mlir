// RUN: gdn-opt %s -split-input-file -convert-gdn-to-cpu -verify-diagnostics

// What the CPU lowering refuses, with a diagnostic on the op: each once
// lowered to IR that wrapped an allocation's size or could not be
// translated.

// One head's scratch (K x V f32) past 2^40 bytes: its size once wrapped to
// malloc(0).
func.func @scratch_too_large(%q: memref<1x1x1x2147483648xbf16>, %v: memref<1x1x1x2147483648xbf16>, %o: memref<1x1x1x2147483648xbf16>) {
  // expected-error @+1 {{'gdn.recurrent' op cannot be lowered to the CPU: one head's f32 scratch (a K x V state with K = 2147483648, V = 2147483648) takes more than 2^40 bytes}}
  gdn.recurrent q(%q : memref<1x1x1x2147483648xbf16>) k(%q : memref<1x1x1x2147483648xbf16>) v(%v : memref<1x1x1x2147483648xbf16>) o(%o : memref<1x1x1x2147483648xbf16>)
  return
}

// -----

func.func @scratch_overflows(%q: memref<2x2x1x1099511627776xf32>, %v: memref<2x2x2x1099511627776xf32>, %o: memref<2x2x2x1099511627776xf32>) {
  // expected-error @+1 {{takes more than 2^40 bytes}}
  gdn.recurrent q(%q : memref<2x2x1x1099511627776xf32>) k(%q : memref<2x2x1x1099511627776xf32>) v(%v : memref<2x2x2x1099511627776xf32>) o(%o : memref<2x2x2x1099511627776xf32>)
  return
}

// -----

// Device code: the loops' scratch lives on the host's heap.
func.func @in_launch(%q: memref<2x2x1x32xf32>, %v: memref<2x2x2x8xf32>, %o: memref<2x2x2x8xf32>) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%a = %c1, %b = %c1, %c = %c1) {
    // expected-error @+1 {{'gdn.recurrent' op cannot be lowered to the CPU: it must be in host code, not inside 'gpu.launch'}}
    gdn.recurrent q(%q : memref<2x2x1x32xf32>) k(%q : memref<2x2x1x32xf32>) v(%v : memref<2x2x2x8xf32>) o(%o : memref<2x2x2x8xf32>)
    gpu.terminator
  }
  return
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @kern(%q: memref<2x2x1x32xf32>, %v: memref<2x2x2x8xf32>, %o: memref<2x2x2x8xf32>) kernel {
      // expected-error @+1 {{'gdn.recurrent' op cannot be lowered to the CPU: it must be in host code, not inside 'gpu.func'}}
      gdn.recurrent q(%q : memref<2x2x1x32xf32>) k(%q : memref<2x2x1x32xf32>) v(%v : memref<2x2x2x8xf32>) o(%o : memref<2x2x2x8xf32>)
      gpu.return
    }
  }
}
