// RUN: gdn-opt %s -split-input-file -gdn-select-schedule -verify-diagnostics
// A schedule the op's kernel cannot take is a diagnostic on the op, for the
// pass that sets it; the lowering that reads it runs the same checks on the
// complete schedule (convert-gdn-to-gpu-complete.mlir). (A malformed
// #gdn.schedule, or one on the wrong op, is the verifier's:
// Dialect/GDN/schedule-attr-invalid.mlir.)

func.func @does_not_divide(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  // expected-error @+1 {{V = 8 is not a multiple of columns_per_lane * lanes_along_v * warps = 3}}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>) {gdn.schedule = #gdn.schedule<columns_per_lane = 3, warps = 1>, state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @producer_without_staging(%q: memref<1x4x1x32xf32>, %k: memref<1x4x1x32xf32>, %v: memref<1x4x1x8xf32>, %o: memref<1x4x1x8xf32>) {
  // expected-error @+1 {{producer_stages = 2 needs staged tokens (staged_tokens > 0)}}
  gdn.recurrent q(%q : memref<1x4x1x32xf32>) k(%k : memref<1x4x1x32xf32>) v(%v : memref<1x4x1x8xf32>) o(%o : memref<1x4x1x8xf32>) {gdn.schedule = #gdn.schedule<staged_tokens = 0, producer_stages = 2>, state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @producer_too_deep(%q: memref<1x4x1x32xf32>, %k: memref<1x4x1x32xf32>, %v: memref<1x4x1x8xf32>, %o: memref<1x4x1x8xf32>) {
  // expected-error @+1 {{producer_stages = 9 must be at most 8}}
  gdn.recurrent q(%q : memref<1x4x1x32xf32>) k(%k : memref<1x4x1x32xf32>) v(%v : memref<1x4x1x8xf32>) o(%o : memref<1x4x1x8xf32>) {gdn.schedule = #gdn.schedule<producer_stages = 9>, state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @producer_chunk_over_a_warp(%q: memref<1x64x1x32xf32>, %k: memref<1x64x1x32xf32>, %v: memref<1x64x1x8xf32>, %o: memref<1x64x1x8xf32>) {
  // expected-error @+1 {{producer_stages = 2 needs staged_tokens <= 32 (one producer lane a token), not 64}}
  gdn.recurrent q(%q : memref<1x64x1x32xf32>) k(%k : memref<1x64x1x32xf32>) v(%v : memref<1x64x1x8xf32>) o(%o : memref<1x64x1x8xf32>) {gdn.schedule = #gdn.schedule<columns_per_lane = 1, warps = 8, staged_tokens = 64, producer_stages = 2>, state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @producer_copy_not_16_bytes(%q: memref<1x4x1x32xf32>, %k: memref<1x4x1x32xf32>, %v: memref<1x4x1x8xf32>, %o: memref<1x4x1x8xf32>) {
  // expected-error @+1 {{producer_stages = 2 copies rows of q and k (128 bytes), v (32) and the CTA's columns of v (8) with cp.async.bulk, which needs multiples of 16 bytes}}
  gdn.recurrent q(%q : memref<1x4x1x32xf32>) k(%k : memref<1x4x1x32xf32>) v(%v : memref<1x4x1x8xf32>) o(%o : memref<1x4x1x8xf32>) {gdn.schedule = #gdn.schedule<columns_per_lane = 1, warps = 2, producer_stages = 2>, state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @producer_with_chunked_solve(%q: memref<1x4x1x32xf32>, %k: memref<1x4x1x32xf32>, %v: memref<1x4x1x8xf32>, %o: memref<1x4x1x8xf32>) {
  // expected-error @+1 {{producer_stages = 2 (a producer warp) and solve = cuda_cores cannot be combined (a solving producer takes solve = tensor_cores)}}
  gdn.recurrent q(%q : memref<1x4x1x32xf32>) k(%k : memref<1x4x1x32xf32>) v(%v : memref<1x4x1x8xf32>) o(%o : memref<1x4x1x8xf32>) {gdn.schedule = #gdn.schedule<columns_per_lane = 4, warps = 2, solve = cuda_cores, precision = tf32x3, producer_stages = 2>, state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @registers_without_producer(%q: memref<1x4x1x32xf32>, %k: memref<1x4x1x32xf32>, %v: memref<1x4x1x8xf32>, %o: memref<1x4x1x8xf32>) {
  // expected-error @+1 {{consumer_registers needs a producer warp (producer_stages > 0)}}
  gdn.recurrent q(%q : memref<1x4x1x32xf32>) k(%k : memref<1x4x1x32xf32>) v(%v : memref<1x4x1x8xf32>) o(%o : memref<1x4x1x8xf32>) {gdn.schedule = #gdn.schedule<consumer_registers = 128>, state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @registers_not_warpgroups(%q: memref<1x4x1x32xf32>, %k: memref<1x4x1x32xf32>, %v: memref<1x4x1x8xf32>, %o: memref<1x4x1x8xf32>) {
  // expected-error @+1 {{consumer_registers needs whole consumer warpgroups (setmaxnreg acts on warpgroups), but warps = 2 is not a multiple of 4}}
  gdn.recurrent q(%q : memref<1x4x1x32xf32>) k(%k : memref<1x4x1x32xf32>) v(%v : memref<1x4x1x8xf32>) o(%o : memref<1x4x1x8xf32>) {gdn.schedule = #gdn.schedule<columns_per_lane = 4, warps = 2, producer_stages = 2, consumer_registers = 128>, state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @registers_out_of_range(%q: memref<1x4x1x32xf32>, %k: memref<1x4x1x32xf32>, %v: memref<1x4x1x8xf32>, %o: memref<1x4x1x8xf32>) {
  // expected-error @+1 {{consumer_registers = 260 must be a multiple of 8 in [24, 256] with the CTA's registers (69632) at most 65536}}
  gdn.recurrent q(%q : memref<1x4x1x32xf32>) k(%k : memref<1x4x1x32xf32>) v(%v : memref<1x4x1x8xf32>) o(%o : memref<1x4x1x8xf32>) {gdn.schedule = #gdn.schedule<columns_per_lane = 1, warps = 8, producer_stages = 2, consumer_registers = 260>, state_layout = #gdn.layout<vk>}
  return
}

// -----

// The chunked solve on tensor cores maps 16 or 32 V columns to a warp (2 or 4
// a lane, 8 lanes along V), takes tiles of 8 tokens and 8 keys, and holds K / 2
// state values a thread a row tile.
func.func @tensor_cores_mapping(%q: memref<1x4x1x32xf32>, %k: memref<1x4x1x32xf32>, %v: memref<1x4x1x16xf32>, %o: memref<1x4x1x16xf32>) {
  // expected-error @+1 {{solve = tensor_cores maps 16 or 32 V columns to a warp: columns_per_lane must be 2 or 4 and lanes_along_v 8 (or both left to the cost model), not 8 and 8}}
  gdn.recurrent q(%q : memref<1x4x1x32xf32>) k(%k : memref<1x4x1x32xf32>) v(%v : memref<1x4x1x16xf32>) o(%o : memref<1x4x1x16xf32>) {gdn.schedule = #gdn.schedule<columns_per_lane = 8, solve = tensor_cores>, state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @tensor_cores_tokens(%q: memref<1x12x1x32xf32>, %k: memref<1x12x1x32xf32>, %v: memref<1x12x1x16xf32>, %o: memref<1x12x1x16xf32>) {
  // expected-error @+1 {{solve = tensor_cores needs staged_tokens = 8 or a multiple of 16 on tensor cores (the Gram's mma tiles of 16 tokens), not 12}}
  gdn.recurrent q(%q : memref<1x12x1x32xf32>) k(%k : memref<1x12x1x32xf32>) v(%v : memref<1x12x1x16xf32>) o(%o : memref<1x12x1x16xf32>) {gdn.schedule = #gdn.schedule<staged_tokens = 12, solve = tensor_cores>, state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @tensor_cores_keys(%q: memref<1x4x1x12xf32>, %k: memref<1x4x1x12xf32>, %v: memref<1x4x1x16xf32>, %o: memref<1x4x1x16xf32>) {
  // expected-error @+1 {{solve = tensor_cores needs K a multiple of 8 on tensor cores (mma tiles of 8 keys)}}
  gdn.recurrent q(%q : memref<1x4x1x12xf32>) k(%k : memref<1x4x1x12xf32>) v(%v : memref<1x4x1x16xf32>) o(%o : memref<1x4x1x16xf32>) {gdn.schedule = #gdn.schedule<solve = tensor_cores>, state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @tensor_cores_k256(%q: memref<1x4x1x256xbf16>, %k: memref<1x4x1x256xbf16>, %v: memref<1x4x1x16xbf16>, %o: memref<1x4x1x16xbf16>) {
  // expected-error @+1 {{a thread would hold columns_per_lane * K / (32 / lanes_along_v) = 128 state values, more than 64 (K = 256 must be at most 128 for this schedule)}}
  gdn.recurrent q(%q : memref<1x4x1x256xbf16>) k(%k : memref<1x4x1x256xbf16>) v(%v : memref<1x4x1x16xbf16>) o(%o : memref<1x4x1x16xbf16>) {gdn.schedule = #gdn.schedule<solve = tensor_cores>, state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @chunk_parallel_programmatic(%q: memref<2x40x1x16xbf16>, %k: memref<2x40x1x16xbf16>, %v: memref<2x40x1x32xbf16>, %o: memref<2x40x1x32xbf16>) {
  // expected-error @+1 {{solve = chunk_parallel needs launch = ordinary (its scan reads what its first launch writes), not programmatic_at_start}}
  gdn.recurrent q(%q : memref<2x40x1x16xbf16>) k(%k : memref<2x40x1x16xbf16>) v(%v : memref<2x40x1x32xbf16>) o(%o : memref<2x40x1x32xbf16>) {gdn.schedule = #gdn.schedule<solve = chunk_parallel, launch = programmatic_at_start>, state_layout = #gdn.layout<vk>}
  return
}

// -----

// precision = tf32 trades accuracy for fewer tf32 mma; a form without them
// has none to make cheaper: the pin is refused, not ignored.
func.func @tf32_token_loop(%q: memref<2x40x1x16xbf16>, %k: memref<2x40x1x16xbf16>, %v: memref<2x40x1x32xbf16>, %o: memref<2x40x1x32xbf16>) {
  // expected-error @+1 {{precision = tf32 needs solve = tensor_cores or chunk_parallel (the mma products), not token_by_token}}
  gdn.recurrent q(%q : memref<2x40x1x16xbf16>) k(%k : memref<2x40x1x16xbf16>) v(%v : memref<2x40x1x32xbf16>) o(%o : memref<2x40x1x32xbf16>) {gdn.schedule = #gdn.schedule<solve = token_by_token, precision = tf32>, state_layout = #gdn.layout<vk>}
  return
}

// -----

// precision = bf16 multiplies the state by q and k on bf16 mma: f16 q and k
// are not its operands (an f16 state operand would overflow past 65504).
func.func @bf16_f16_qk(%q: memref<2x40x1x16xf16>, %k: memref<2x40x1x16xf16>, %v: memref<2x40x1x32xf16>, %o: memref<2x40x1x32xf16>) {
  // expected-error @+1 {{precision = bf16 needs bf16 q and k (the bf16 mma's operands), not 'f16' and 'f16'}}
  gdn.recurrent q(%q : memref<2x40x1x16xf16>) k(%k : memref<2x40x1x16xf16>) v(%v : memref<2x40x1x32xf16>) o(%o : memref<2x40x1x32xf16>) {gdn.schedule = #gdn.schedule<solve = chunk_parallel, precision = bf16>, state_layout = #gdn.layout<vk>}
  return
}

// -----

// ... and whole m16n8k16 tiles: 16 keys and 16 tokens an mma.
func.func @bf16_chunk_of_8(%q: memref<2x40x1x16xbf16>, %k: memref<2x40x1x16xbf16>, %v: memref<2x40x1x32xbf16>, %o: memref<2x40x1x32xbf16>) {
  // expected-error @+1 {{precision = bf16 needs K and staged_tokens multiples of 16 (16 keys and 16 tokens an mma), not K = 16 and staged_tokens = 8}}
  gdn.recurrent q(%q : memref<2x40x1x16xbf16>) k(%k : memref<2x40x1x16xbf16>) v(%v : memref<2x40x1x32xbf16>) o(%o : memref<2x40x1x32xbf16>) {gdn.schedule = #gdn.schedule<solve = chunk_parallel, precision = bf16, staged_tokens = 8>, state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @bf16_token_loop(%q: memref<2x40x1x16xbf16>, %k: memref<2x40x1x16xbf16>, %v: memref<2x40x1x32xbf16>, %o: memref<2x40x1x32xbf16>) {
  // expected-error @+1 {{precision = bf16 needs solve = tensor_cores or chunk_parallel (the mma products), not token_by_token}}
  gdn.recurrent q(%q : memref<2x40x1x16xbf16>) k(%k : memref<2x40x1x16xbf16>) v(%v : memref<2x40x1x32xbf16>) o(%o : memref<2x40x1x32xbf16>) {gdn.schedule = #gdn.schedule<solve = token_by_token, precision = bf16>, state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @bf16_k8(%q: memref<2x40x1x8xbf16>, %k: memref<2x40x1x8xbf16>, %v: memref<2x40x1x32xbf16>, %o: memref<2x40x1x32xbf16>) {
  // expected-error @+1 {{precision = bf16 needs K and staged_tokens multiples of 16 (16 keys and 16 tokens an mma), not K = 8 and staged_tokens = 16}}
  gdn.recurrent q(%q : memref<2x40x1x8xbf16>) k(%k : memref<2x40x1x8xbf16>) v(%v : memref<2x40x1x32xbf16>) o(%o : memref<2x40x1x32xbf16>) {gdn.schedule = #gdn.schedule<solve = chunk_parallel, precision = bf16>, state_layout = #gdn.layout<vk>}
  return
}

// -----

// chunk_prefetch_distance: the next chunk only, in the tensor-core forms'
// chunk loop, with a second set of the chunk's buffers in static shared
// memory.
func.func @chunk_prefetch_two(%q: memref<2x40x1x16xbf16>, %k: memref<2x40x1x16xbf16>, %v: memref<2x40x1x32xbf16>, %o: memref<2x40x1x32xbf16>) {
  // expected-error @+1 {{chunk_prefetch_distance = 2 must be 0 or 1}}
  gdn.recurrent q(%q : memref<2x40x1x16xbf16>) k(%k : memref<2x40x1x16xbf16>) v(%v : memref<2x40x1x32xbf16>) o(%o : memref<2x40x1x32xbf16>) {gdn.schedule = #gdn.schedule<solve = chunk_parallel, chunk_prefetch_distance = 2>, state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @chunk_prefetch_cuda_cores(%q: memref<2x40x1x16xbf16>, %k: memref<2x40x1x16xbf16>, %v: memref<2x40x1x32xbf16>, %o: memref<2x40x1x32xbf16>) {
  // expected-error @+1 {{chunk_prefetch_distance = 1 needs solve = tensor_cores or chunk_parallel (their chunk loop)}}
  gdn.recurrent q(%q : memref<2x40x1x16xbf16>) k(%k : memref<2x40x1x16xbf16>) v(%v : memref<2x40x1x32xbf16>) o(%o : memref<2x40x1x32xbf16>) {gdn.schedule = #gdn.schedule<solve = cuda_cores, chunk_prefetch_distance = 1>, state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @chunk_prefetch_c32(%q: memref<1x4096x16x128xbf16>, %k: memref<1x4096x16x128xbf16>, %v: memref<1x4096x32x128xbf16>, %o: memref<1x4096x32x128xbf16>) {
  // expected-error @+1 {{chunk_prefetch_distance = 1 with staged_tokens = 32 needs 88320 bytes of static shared memory (a second set of the chunk's buffers), more than 49152}}
  gdn.recurrent q(%q : memref<1x4096x16x128xbf16>) k(%k : memref<1x4096x16x128xbf16>) v(%v : memref<1x4096x32x128xbf16>) o(%o : memref<1x4096x32x128xbf16>) {gdn.schedule = #gdn.schedule<solve = chunk_parallel, staged_tokens = 32, chunk_prefetch_distance = 1, warps = 8>, state_layout = #gdn.layout<vk>}
  return
}

// -----

// max_registers: 0 (no cap) or what .maxnreg can hold a thread, and not
// beside setmaxnreg (consumer_registers), which fixes the count at entry.
func.func @max_registers_small(%q: memref<2x40x1x16xbf16>, %k: memref<2x40x1x16xbf16>, %v: memref<2x40x1x32xbf16>, %o: memref<2x40x1x32xbf16>) {
  // expected-error @+1 {{max_registers = 16 must be 0 (no cap) or in [24, 255]}}
  gdn.recurrent q(%q : memref<2x40x1x16xbf16>) k(%k : memref<2x40x1x16xbf16>) v(%v : memref<2x40x1x32xbf16>) o(%o : memref<2x40x1x32xbf16>) {gdn.schedule = #gdn.schedule<max_registers = 16>, state_layout = #gdn.layout<vk>}
  return
}

// -----

// ptxas needs 28 registers a thread for the tensor cores' mma.sync.
func.func @max_registers_tensor_cores(%q: memref<2x40x1x16xbf16>, %k: memref<2x40x1x16xbf16>, %v: memref<2x40x1x32xbf16>, %o: memref<2x40x1x32xbf16>) {
  // expected-error @+1 {{max_registers = 27 is below 28, the fewest with which ptxas compiles the tensor cores' mma.sync}}
  gdn.recurrent q(%q : memref<2x40x1x16xbf16>) k(%k : memref<2x40x1x16xbf16>) v(%v : memref<2x40x1x32xbf16>) o(%o : memref<2x40x1x32xbf16>) {gdn.schedule = #gdn.schedule<solve = chunk_parallel, max_registers = 27>, state_layout = #gdn.layout<vk>}
  return
}

// -----

// So does the e4m3 decode's (reductions = mma): at 24 to 27 ptxas stopped
// with "Insufficient registers" (found by a fault hunt).
func.func @max_registers_mma_decode(%q: memref<8x1x2x128xbf16>, %k: memref<8x1x2x128xbf16>, %v: memref<8x1x4x128xbf16>, %g: memref<8x1x4xf32>, %beta: memref<8x1x4xf32>, %s: memref<8x4x128x128xf8E4M3FN>, %sscale: memref<8x4x128xf32>, %o: memref<8x1x4x128xbf16>) {
  // expected-error @+1 {{max_registers = 24 is below 28, the fewest with which ptxas compiles the tensor cores' mma.sync}}
  gdn.recurrent q(%q : memref<8x1x2x128xbf16>) k(%k : memref<8x1x2x128xbf16>) v(%v : memref<8x1x4x128xbf16>) g(%g : memref<8x1x4xf32>) beta(%beta : memref<8x1x4xf32>) initial_state(%s : memref<8x4x128x128xf8E4M3FN>) state_scale(%sscale : memref<8x4x128xf32>) final_state(%s : memref<8x4x128x128xf8E4M3FN>) o(%o : memref<8x1x4x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>, gdn.schedule = #gdn.schedule<reductions = mma, max_registers = 24>}
  return
}

// -----

// The CUDA-core solve unrolls its chunk: a chunk of 128 tokens x 16 columns
// took 100 s and 2.2 GB to compile (found by a fault hunt).
func.func @cuda_cores_chunk(%q: memref<1x1024x1x32xbf16>, %k: memref<1x1024x1x32xbf16>, %v: memref<1x1024x1x64xbf16>, %g: memref<1x1024x1xf32>, %beta: memref<1x1024x1xf32>, %s: memref<1x1x64x32xf32>, %o: memref<1x1024x1x64xbf16>) {
  // expected-error @+1 {{solve = cuda_cores needs staged_tokens at most 64 and staged_tokens * columns_per_lane at most 256 (its chunk is unrolled: the compile grows with both), not 128 * 16}}
  gdn.recurrent q(%q : memref<1x1024x1x32xbf16>) k(%k : memref<1x1024x1x32xbf16>) v(%v : memref<1x1024x1x64xbf16>) g(%g : memref<1x1024x1xf32>) beta(%beta : memref<1x1024x1xf32>) initial_state(%s : memref<1x1x64x32xf32>) final_state(%s : memref<1x1x64x32xf32>) o(%o : memref<1x1024x1x64xbf16>) {state_layout = #gdn.layout<vk>, gdn.schedule = #gdn.schedule<solve = cuda_cores, staged_tokens = 128, columns_per_lane = 16, lanes_along_v = 1, warps = 4>}
  return
}

// -----

func.func @max_registers_large(%q: memref<2x40x1x16xbf16>, %k: memref<2x40x1x16xbf16>, %v: memref<2x40x1x32xbf16>, %o: memref<2x40x1x32xbf16>) {
  // expected-error @+1 {{max_registers = 256 must be 0 (no cap) or in [24, 255]}}
  gdn.recurrent q(%q : memref<2x40x1x16xbf16>) k(%k : memref<2x40x1x16xbf16>) v(%v : memref<2x40x1x32xbf16>) o(%o : memref<2x40x1x32xbf16>) {gdn.schedule = #gdn.schedule<max_registers = 256>, state_layout = #gdn.layout<vk>}
  return
}

// -----

func.func @max_registers_setmaxnreg(%q: memref<1x12x16x128xbf16>, %k: memref<1x12x16x128xbf16>, %v: memref<1x12x32x128xbf16>, %o: memref<1x12x32x128xbf16>) {
  // expected-error @+1 {{max_registers (.maxnreg) and consumer_registers (setmaxnreg) cannot be combined}}
  gdn.recurrent q(%q : memref<1x12x16x128xbf16>) k(%k : memref<1x12x16x128xbf16>) v(%v : memref<1x12x32x128xbf16>) o(%o : memref<1x12x32x128xbf16>) {gdn.schedule = #gdn.schedule<warps = 4, staged_tokens = 16, producer_stages = 2, consumer_registers = 232, max_registers = 128>, state_layout = #gdn.layout<vk>}
  return
}
// -----

func.func @solving_producer_three_slots(%q: memref<2x40x1x16xbf16>, %k: memref<2x40x1x16xbf16>, %v: memref<2x40x2x32xbf16>, %g: memref<2x40x2xf32>, %beta: memref<2x40x2xf32>, %o: memref<2x40x2x32xbf16>) {
  // expected-error @+1 {{producer_stages = 3 with solve = tensor_cores (a solving producer) needs exactly 2 ring slots}}
  gdn.recurrent q(%q : memref<2x40x1x16xbf16>) k(%k : memref<2x40x1x16xbf16>) v(%v : memref<2x40x2x32xbf16>) g(%g : memref<2x40x2xf32>) beta(%beta : memref<2x40x2xf32>) o(%o : memref<2x40x2x32xbf16>) {gdn.schedule = #gdn.schedule<solve = tensor_cores, producer_stages = 3>, state_layout = #gdn.layout<vk>}
  return
}
// -----

func.func @solving_producer_chunk_prefetch(%q: memref<2x40x1x16xbf16>, %k: memref<2x40x1x16xbf16>, %v: memref<2x40x2x32xbf16>, %g: memref<2x40x2xf32>, %beta: memref<2x40x2xf32>, %o: memref<2x40x2x32xbf16>) {
  // expected-error @+1 {{producer_stages = 2 with solve = tensor_cores (a solving producer) takes chunk_prefetch_distance = 0 (its ring is the prefetch)}}
  gdn.recurrent q(%q : memref<2x40x1x16xbf16>) k(%k : memref<2x40x1x16xbf16>) v(%v : memref<2x40x2x32xbf16>) g(%g : memref<2x40x2xf32>) beta(%beta : memref<2x40x2xf32>) o(%o : memref<2x40x2x32xbf16>) {gdn.schedule = #gdn.schedule<solve = tensor_cores, producer_stages = 2, chunk_prefetch_distance = 1>, state_layout = #gdn.layout<vk>}
  return
}
// -----

func.func @solving_producer_consumer_registers(%q: memref<2x40x1x16xbf16>, %k: memref<2x40x1x16xbf16>, %v: memref<2x40x2x32xbf16>, %g: memref<2x40x2xf32>, %beta: memref<2x40x2xf32>, %o: memref<2x40x2x32xbf16>) {
  // expected-error @+1 {{producer_stages = 2 with solve = tensor_cores (a solving producer) takes no consumer_registers}}
  gdn.recurrent q(%q : memref<2x40x1x16xbf16>) k(%k : memref<2x40x1x16xbf16>) v(%v : memref<2x40x2x32xbf16>) g(%g : memref<2x40x2xf32>) beta(%beta : memref<2x40x2xf32>) o(%o : memref<2x40x2x32xbf16>) {gdn.schedule = #gdn.schedule<warps = 2, solve = tensor_cores, producer_stages = 2, consumer_registers = 232>, state_layout = #gdn.layout<vk>}
  return
}
// -----

func.func @solving_producer_programmatic(%q: memref<2x40x1x16xbf16>, %k: memref<2x40x1x16xbf16>, %v: memref<2x40x2x32xbf16>, %g: memref<2x40x2xf32>, %beta: memref<2x40x2xf32>, %o: memref<2x40x2x32xbf16>) {
  // expected-error @+1 {{producer_stages = 2 with solve = tensor_cores (a solving producer) needs launch = ordinary, not programmatic_at_start}}
  gdn.recurrent q(%q : memref<2x40x1x16xbf16>) k(%k : memref<2x40x1x16xbf16>) v(%v : memref<2x40x2x32xbf16>) g(%g : memref<2x40x2xf32>) beta(%beta : memref<2x40x2xf32>) o(%o : memref<2x40x2x32xbf16>) {gdn.schedule = #gdn.schedule<solve = tensor_cores, producer_stages = 2, launch = programmatic_at_start>, state_layout = #gdn.layout<vk>}
  return
}
// -----

func.func @solving_producer_chunk_past_threads(%q: memref<2x40x1x16xbf16>, %k: memref<2x40x1x16xbf16>, %v: memref<2x40x2x32xbf16>, %g: memref<2x40x2xf32>, %beta: memref<2x40x2xf32>, %o: memref<2x40x2x32xbf16>) {
  // expected-error @+1 {{staged_tokens = 144 exceeds the 128 threads of the producer warpgroup}}
  gdn.recurrent q(%q : memref<2x40x1x16xbf16>) k(%k : memref<2x40x1x16xbf16>) v(%v : memref<2x40x2x32xbf16>) g(%g : memref<2x40x2xf32>) beta(%beta : memref<2x40x2xf32>) o(%o : memref<2x40x2x32xbf16>) {gdn.schedule = #gdn.schedule<warps = 2, staged_tokens = 144, solve = tensor_cores, producer_stages = 2>, state_layout = #gdn.layout<vk>}
  return
}
// -----

func.func @solving_producer_chunk_parallel(%q: memref<2x40x1x16xbf16>, %k: memref<2x40x1x16xbf16>, %v: memref<2x40x2x32xbf16>, %g: memref<2x40x2xf32>, %beta: memref<2x40x2xf32>, %o: memref<2x40x2x32xbf16>) {
  // expected-error @+1 {{producer_stages = 2 (a producer warp) and solve = chunk_parallel cannot be combined (a solving producer takes solve = tensor_cores)}}
  gdn.recurrent q(%q : memref<2x40x1x16xbf16>) k(%k : memref<2x40x1x16xbf16>) v(%v : memref<2x40x2x32xbf16>) g(%g : memref<2x40x2xf32>) beta(%beta : memref<2x40x2xf32>) o(%o : memref<2x40x2x32xbf16>) {gdn.schedule = #gdn.schedule<solve = chunk_parallel, producer_stages = 2>, state_layout = #gdn.layout<vk>}
  return
}
// -----

// Two sets of a 32-token chunk's buffers at K = V = 128 (35840 bytes each)
// and the producer's Gram pass its own pass past the 48 KiB of static
// shared memory.
func.func @solving_producer_shared_memory(%q: memref<1x64x16x128xbf16>, %k: memref<1x64x16x128xbf16>, %v: memref<1x64x32x128xbf16>, %g: memref<1x64x32xf32>, %beta: memref<1x64x32xf32>, %o: memref<1x64x32x128xbf16>) {
  // expected-error-re @+1 {{producer_stages = 2 with solve = tensor_cores (a solving producer) with staged_tokens = 32 needs {{[0-9]+}} bytes of static shared memory (two sets of the chunk's buffers and the ring's mbarriers), more than 49152}}
  gdn.recurrent q(%q : memref<1x64x16x128xbf16>) k(%k : memref<1x64x16x128xbf16>) v(%v : memref<1x64x32x128xbf16>) g(%g : memref<1x64x32xf32>) beta(%beta : memref<1x64x32xf32>) o(%o : memref<1x64x32x128xbf16>) {gdn.schedule = #gdn.schedule<warps = 8, staged_tokens = 32, solve = tensor_cores, producer_stages = 2>, state_layout = #gdn.layout<vk>}
  return
}

// -----

// Context-parallel segments split chunk_parallel's scan, nothing else.
func.func @segments_without_chunk_parallel(%q: memref<1x200x1x32xbf16>, %k: memref<1x200x1x32xbf16>, %v: memref<1x200x2x32xbf16>, %g: memref<1x200x2xf32>, %beta: memref<1x200x2xf32>, %o: memref<1x200x2x32xbf16>) {
  // expected-error @+1 {{segments = 4 needs solve = chunk_parallel (its scan is what splits), not tensor_cores}}
  gdn.recurrent q(%q : memref<1x200x1x32xbf16>) k(%k : memref<1x200x1x32xbf16>) v(%v : memref<1x200x2x32xbf16>) g(%g : memref<1x200x2xf32>) beta(%beta : memref<1x200x2xf32>) o(%o : memref<1x200x2x32xbf16>) {gdn.schedule = #gdn.schedule<solve = tensor_cores, segments = 4>, qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// T = 200 in 4 segments of 64 tokens (ceil(200 / 4) = 50, whole chunks of
// 16): 3 x 64 < 200 holds them all; 8 of 32 leave the last one empty.
func.func @segments_empty(%q: memref<1x200x1x32xbf16>, %k: memref<1x200x1x32xbf16>, %v: memref<1x200x2x32xbf16>, %g: memref<1x200x2xf32>, %beta: memref<1x200x2xf32>, %o: memref<1x200x2x32xbf16>) {
  // expected-error @+1 {{segments = 8 leaves a segment empty: T = 200 in segments of 32 tokens (whole chunks)}}
  gdn.recurrent q(%q : memref<1x200x1x32xbf16>) k(%k : memref<1x200x1x32xbf16>) v(%v : memref<1x200x2x32xbf16>) g(%g : memref<1x200x2xf32>) beta(%beta : memref<1x200x2xf32>) o(%o : memref<1x200x2x32xbf16>) {gdn.schedule = #gdn.schedule<solve = chunk_parallel, segments = 8>, qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// At most 32 segments: the join's steps are unrolled (512 took 33 s and
// 3.7 GB to compile here; found by a fault hunt).
func.func @segments_many(%q: memref<1x8192x1x32xbf16>, %k: memref<1x8192x1x32xbf16>, %v: memref<1x8192x2x32xbf16>, %g: memref<1x8192x2xf32>, %beta: memref<1x8192x2xf32>, %o: memref<1x8192x2x32xbf16>) {
  // expected-error @+1 {{segments = 64 must be at most 32 (the join's steps are unrolled: its compile grows with P)}}
  gdn.recurrent q(%q : memref<1x8192x1x32xbf16>) k(%k : memref<1x8192x1x32xbf16>) v(%v : memref<1x8192x2x32xbf16>) g(%g : memref<1x8192x2xf32>) beta(%beta : memref<1x8192x2xf32>) o(%o : memref<1x8192x2x32xbf16>) {gdn.schedule = #gdn.schedule<solve = chunk_parallel, segments = 64>, qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// A segment map's transition blocks hold K state rows in CTAs of the V
// block's width: K = 32 in blocks of 64 columns (4 warps) does not divide.
func.func @segments_transition_blocks(%q: memref<1x200x1x32xbf16>, %k: memref<1x200x1x32xbf16>, %v: memref<1x200x2x64xbf16>, %g: memref<1x200x2xf32>, %beta: memref<1x200x2xf32>, %o: memref<1x200x2x64xbf16>) {
  // expected-error @+1 {{segments = 2 needs K = 32 a multiple of the CTA's V columns, 64 (the transition's blocks)}}
  gdn.recurrent q(%q : memref<1x200x1x32xbf16>) k(%k : memref<1x200x1x32xbf16>) v(%v : memref<1x200x2x64xbf16>) g(%g : memref<1x200x2xf32>) beta(%beta : memref<1x200x2xf32>) o(%o : memref<1x200x2x64xbf16>) {gdn.schedule = #gdn.schedule<solve = chunk_parallel, warps = 4, segments = 2>, qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// A split scan writes no replay windows (the last tokens of each sequence,
// which the unsplit scan's CTAs copy before their chunks).
func.func @segments_replay_windows(%q: memref<1x200x1x32xbf16>, %k: memref<1x200x1x32xbf16>, %v: memref<1x200x2x32xbf16>, %g: memref<1x200x2xf32>, %beta: memref<1x200x2xf32>, %s: memref<1x2x32x32xf32>, %kw: memref<1x1x4x32xbf16>, %vw: memref<1x2x4x32xbf16>, %gw: memref<1x2x4xf32>, %bw: memref<1x2x4xf32>, %o: memref<1x200x2x32xbf16>) {
  // expected-error @+1 {{segments = 2 takes no intermediate_states and no replay windows}}
  gdn.recurrent q(%q : memref<1x200x1x32xbf16>) k(%k : memref<1x200x1x32xbf16>) v(%v : memref<1x200x2x32xbf16>) g(%g : memref<1x200x2xf32>) beta(%beta : memref<1x200x2xf32>) initial_state(%s : memref<1x2x32x32xf32>) k_window(%kw : memref<1x1x4x32xbf16>) v_window(%vw : memref<1x2x4x32xbf16>) g_window(%gw : memref<1x2x4xf32>) beta_window(%bw : memref<1x2x4xf32>) final_state(%s : memref<1x2x32x32xf32>) o(%o : memref<1x200x2x32xbf16>) {gdn.schedule = #gdn.schedule<solve = chunk_parallel, segments = 2>, qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// concurrent_solves = 1 needs chunk_parallel's solves, an unsplit scan and
// a fixed batch; its value is 0 or 1.
func.func @concurrent_tensor_cores(%q: memref<1x40x1x16xbf16>, %k: memref<1x40x1x16xbf16>, %v: memref<1x40x1x32xbf16>, %g: memref<1x40x1xf32>, %beta: memref<1x40x1xf32>, %o: memref<1x40x1x32xbf16>) {
  // expected-error @+1 {{concurrent_solves = 1 needs solve = chunk_parallel}}
  gdn.recurrent q(%q : memref<1x40x1x16xbf16>) k(%k : memref<1x40x1x16xbf16>) v(%v : memref<1x40x1x32xbf16>) g(%g : memref<1x40x1xf32>) beta(%beta : memref<1x40x1xf32>) o(%o : memref<1x40x1x32xbf16>) {state_layout = #gdn.layout<vk>, gdn.schedule = #gdn.schedule<solve = tensor_cores, concurrent_solves = 1>}
  return
}

// -----

func.func @concurrent_two(%q: memref<1x40x1x16xbf16>, %k: memref<1x40x1x16xbf16>, %v: memref<1x40x1x32xbf16>, %g: memref<1x40x1xf32>, %beta: memref<1x40x1xf32>, %o: memref<1x40x1x32xbf16>) {
  // expected-error @+1 {{concurrent_solves = 2 must be 0 or 1}}
  gdn.recurrent q(%q : memref<1x40x1x16xbf16>) k(%k : memref<1x40x1x16xbf16>) v(%v : memref<1x40x1x32xbf16>) g(%g : memref<1x40x1xf32>) beta(%beta : memref<1x40x1xf32>) o(%o : memref<1x40x1x32xbf16>) {state_layout = #gdn.layout<vk>, gdn.schedule = #gdn.schedule<concurrent_solves = 2>}
  return
}
