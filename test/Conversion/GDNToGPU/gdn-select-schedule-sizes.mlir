// RUN: gdn-opt %s -split-input-file -gdn-select-schedule -verify-diagnostics
// Sizes past int64 once overflowed the cost model's and the kernel
// builders' arithmetic (UBSan; chunk_parallel's workspace a wrapped size):
// an operand of more than 2^40 elements is refused before any of it, and
// the staging sizes of pinned parameters saturate.

// N * HV * chunks * record overflows: chunk_parallel's workspace.
func.func @tokens(%q: memref<65535x1099511627776x1x128xbf16>, %v: memref<65535x1099511627776x1x128xbf16>,
                  %o: memref<65535x1099511627776x1x128xbf16>) {
  // expected-error @+1 {{'gdn.recurrent' op cannot be lowered to the GPU: operand #0 of type 'memref<65535x1099511627776x1x128xbf16>' has more than 2^40 elements (or a dimension past 2^40)}}
  gdn.recurrent q(%q : memref<65535x1099511627776x1x128xbf16>) k(%q : memref<65535x1099511627776x1x128xbf16>)
      v(%v : memref<65535x1099511627776x1x128xbf16>) o(%o : memref<65535x1099511627776x1x128xbf16>)
      {gdn.schedule = #gdn.schedule<solve = chunk_parallel>}
  return
}

// -----

// V + 7 overflows.
func.func @columns(%q: memref<1x1x1x128xbf16>, %v: memref<1x1x1x9223372036854775807xbf16>,
                   %o: memref<1x1x1x9223372036854775807xbf16>) {
  // expected-error @+1 {{operand #2 of type 'memref<1x1x1x9223372036854775807xbf16>' has more than 2^40 elements}}
  gdn.recurrent q(%q : memref<1x1x1x128xbf16>) k(%q : memref<1x1x1x128xbf16>)
      v(%v : memref<1x1x1x9223372036854775807xbf16>) o(%o : memref<1x1x1x9223372036854775807xbf16>)
  return
}

// -----

// 2^40 keys: the staged chunk's bytes saturate; the state tile is refused.
func.func @keys(%q: memref<1x1x1x1099511627776xbf16>, %v: memref<1x1x1x1xbf16>, %o: memref<1x1x1x1xbf16>) {
  // expected-error @+1 {{a thread would hold columns_per_lane * K / (32 / lanes_along_v)}}
  gdn.recurrent q(%q : memref<1x1x1x1099511627776xbf16>) k(%q : memref<1x1x1x1099511627776xbf16>)
      v(%v : memref<1x1x1x1xbf16>) o(%o : memref<1x1x1x1xbf16>)
      {gdn.schedule = #gdn.schedule<staged_tokens = 1048576>}
  return
}

// -----

// Parameters at the attribute's edge: a block of 2^60 columns.
func.func @parameters(%q: memref<1x4x1x128xbf16>, %v: memref<1x4x1x128xbf16>, %o: memref<1x4x1x128xbf16>) {
  // expected-error @+1 {{lanes_along_v = 1048576 must be a power of two in [1, 32]}}
  gdn.recurrent q(%q : memref<1x4x1x128xbf16>) k(%q : memref<1x4x1x128xbf16>)
      v(%v : memref<1x4x1x128xbf16>) o(%o : memref<1x4x1x128xbf16>)
      {gdn.schedule = #gdn.schedule<columns_per_lane = 1048576, warps = 1048576, lanes_along_v = 1048576>}
  return
}
