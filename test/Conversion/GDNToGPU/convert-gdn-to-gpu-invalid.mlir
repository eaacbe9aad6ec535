// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<columns_per_lane = 8>}" -convert-gdn-to-gpu -verify-diagnostics
// Shapes the register-tiled kernel cannot take get a diagnostic, not a crash.

func.func @k_not_multiple_of_key_lanes(%q: memref<1x1x1x48xf32>, %k: memref<1x1x1x48xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  // expected-error @+1 {{cannot be lowered to the GPU: K = 48 must be a multiple of 32 / lanes_along_v = 32}}
  gdn.recurrent q(%q : memref<1x1x1x48xf32>) k(%k : memref<1x1x1x48xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>) {state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @k_too_large(%q: memref<1x1x1x512xf32>, %k: memref<1x1x1x512xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  // expected-error @+1 {{cannot be lowered to the GPU: a thread would hold columns_per_lane * K / (32 / lanes_along_v) = 128 state values, more than 64 (K = 512 must be at most 256 for this schedule)}}
  gdn.recurrent q(%q : memref<1x1x1x512xf32>) k(%k : memref<1x1x1x512xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>) {state_layout = #gdn.layout<vk>}
  return
}

// -----

// The chunked solve needs the final state only, a chain of tokens, a decay and
// beta per head, and staged tokens.
func.func @chunked_intermediate(%q: memref<1x2x1x32xf32>, %k: memref<1x2x1x32xf32>, %v: memref<1x2x1x8xf32>, %inter: memref<1x2x1x8x32xf32>, %o: memref<1x2x1x8xf32>) {
  // expected-error @+1 {{cannot be lowered to the GPU: solve = cuda_cores needs the final state only (no intermediate_states)}}
  gdn.recurrent q(%q : memref<1x2x1x32xf32>) k(%k : memref<1x2x1x32xf32>) v(%v : memref<1x2x1x8xf32>) intermediate_states(%inter : memref<1x2x1x8x32xf32>) o(%o : memref<1x2x1x8xf32>) {gdn.schedule = #gdn.schedule<solve = cuda_cores>, state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @chunked_tree(%q: memref<1x2x1x32xf32>, %k: memref<1x2x1x32xf32>, %v: memref<1x2x1x8xf32>, %parents: memref<1x2xi32>, %inter: memref<1x2x1x8x32xf32>, %o: memref<1x2x1x8xf32>) {
  // expected-error @+1 {{cannot be lowered to the GPU: solve = cuda_cores needs a chain of tokens (no parent table, EAGLE tree)}}
  gdn.recurrent q(%q : memref<1x2x1x32xf32>) k(%k : memref<1x2x1x32xf32>) v(%v : memref<1x2x1x8xf32>) retrieve_parent_token(%parents : memref<1x2xi32>) intermediate_states(%inter : memref<1x2x1x8x32xf32>) o(%o : memref<1x2x1x8xf32>) {gdn.schedule = #gdn.schedule<solve = cuda_cores>, state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @chunked_kda(%q: memref<1x2x1x32xf32>, %k: memref<1x2x1x32xf32>, %v: memref<1x2x1x8xf32>, %g: memref<1x2x1x32xf32>, %o: memref<1x2x1x8xf32>) {
  // expected-error @+1 {{cannot be lowered to the GPU: solve = cuda_cores needs a decay per head (a per-key decay, KDA, takes solve = chunk_parallel)}}
  gdn.recurrent q(%q : memref<1x2x1x32xf32>) k(%k : memref<1x2x1x32xf32>) v(%v : memref<1x2x1x8xf32>) g(%g : memref<1x2x1x32xf32>) o(%o : memref<1x2x1x8xf32>) {gdn.schedule = #gdn.schedule<solve = cuda_cores>, state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @chunked_channel_beta(%q: memref<1x2x1x32xf32>, %k: memref<1x2x1x32xf32>, %v: memref<1x2x1x8xf32>, %beta: memref<1x2x1x8xf32>, %o: memref<1x2x1x8xf32>) {
  // expected-error @+1 {{cannot be lowered to the GPU: solve = cuda_cores needs a beta per head (no per-channel beta)}}
  gdn.recurrent q(%q : memref<1x2x1x32xf32>) k(%k : memref<1x2x1x32xf32>) v(%v : memref<1x2x1x8xf32>) beta(%beta : memref<1x2x1x8xf32>) o(%o : memref<1x2x1x8xf32>) {gdn.schedule = #gdn.schedule<solve = cuda_cores>, state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @chunked_unstaged(%q: memref<1x2x1x32xf32>, %k: memref<1x2x1x32xf32>, %v: memref<1x2x1x8xf32>, %o: memref<1x2x1x8xf32>) {
  // expected-error @+1 {{cannot be lowered to the GPU: solve = cuda_cores needs tokens staged in shared memory (staged_tokens > 0)}}
  gdn.recurrent q(%q : memref<1x2x1x32xf32>) k(%k : memref<1x2x1x32xf32>) v(%v : memref<1x2x1x8xf32>) o(%o : memref<1x2x1x8xf32>) {gdn.schedule = #gdn.schedule<staged_tokens = 0, solve = cuda_cores>, state_layout = #gdn.layout<vk>}
  return
}
