// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<columns_per_lane = 4, warps = 2, staged_tokens = 32>}" -convert-gdn-to-gpu -verify-diagnostics
// The per-key decay buffer [chunk, K] f32 counts in the shared-memory budget:
// 32 staged tokens of f32 q and k (K = 128) and 8 V columns take 32 * (1024 +
// 32 + 8) = 34048 bytes with a per-head g, and 32 * (1024 + 32 + 4 * 128 + 4)
// = 50304 bytes, past 48 KiB, with a per-key gk.

func.func @per_head_fits(%q: memref<1x32x1x128xf32>, %k: memref<1x32x1x128xf32>, %v: memref<1x32x1x64xf32>,
                         %g: memref<1x32x1xf32>, %o: memref<1x32x1x64xf32>) {
  gdn.recurrent q(%q : memref<1x32x1x128xf32>) k(%k : memref<1x32x1x128xf32>) v(%v : memref<1x32x1x64xf32>)
      g(%g : memref<1x32x1xf32>) o(%o : memref<1x32x1x64xf32>) {state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @per_key_does_not(%q: memref<1x32x1x128xf32>, %k: memref<1x32x1x128xf32>, %v: memref<1x32x1x64xf32>,
                            %g: memref<1x32x1x128xf32>, %o: memref<1x32x1x64xf32>) {
  // expected-error @+1 {{cannot be lowered to the GPU: staged_tokens = 32 needs 50304 bytes of shared memory, more than 48 KiB}}
  gdn.recurrent q(%q : memref<1x32x1x128xf32>) k(%k : memref<1x32x1x128xf32>) v(%v : memref<1x32x1x64xf32>)
      g(%g : memref<1x32x1x128xf32>) o(%o : memref<1x32x1x64xf32>) {state_layout = #gdn.layout<vk>}
  return
}
