// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="chip=sm_86" -verify-diagnostics
// The schedules a quantized state cannot take.

// sm_86 has no cvt with e4m3x2 operands.
func.func @sm86(%q: memref<2x1x2x64xbf16>, %v: memref<2x1x4x64xbf16>, %g: memref<2x1x4xf32>,
                %s: memref<2x4x64x64xf8E4M3FN>, %sc: memref<2x4x64xf32>, %o: memref<2x1x4x64xbf16>) {
  // expected-error @+1 {{cannot be lowered to the GPU: an f8E4M3FN state needs cvt with e4m3x2 operands (sm_89 on), not sm_86}}
  gdn.recurrent q(%q : memref<2x1x2x64xbf16>) k(%q : memref<2x1x2x64xbf16>) v(%v : memref<2x1x4x64xbf16>)
      g(%g : memref<2x1x4xf32>) initial_state(%s : memref<2x4x64x64xf8E4M3FN>) state_scale(%sc : memref<2x4x64xf32>)
      final_state(%s : memref<2x4x64x64xf8E4M3FN>) o(%o : memref<2x1x4x64xbf16>)
  return
}

