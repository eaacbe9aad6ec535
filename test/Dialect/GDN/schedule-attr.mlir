// RUN: gdn-opt %s | gdn-opt | FileCheck %s
// RUN: gdn-opt %s -mlir-print-op-generic | gdn-opt | FileCheck %s

// Round trip of #gdn.schedule: parameters in any order print in their fixed
// order (columns_per_lane, lanes_along_v, warps, staged_tokens,
// unroll_tokens, reductions, solve, precision, producer_stages,
// consumer_registers, state_prefetch_distance, input_prefetch_distance,
// chunk_prefetch_distance, max_registers, launch); absent ones
// (the cost model's choice) stay absent, and 0 where it means none stays 0.

// CHECK-LABEL: func.func @partial
// CHECK: gdn.recurrent {{.*}} {gdn.schedule = #gdn.schedule<columns_per_lane = 2, warps = 4, staged_tokens = 0, reductions = token_pairs, launch = programmatic>}
// CHECK: gdn.recurrent {{.*}} {gdn.schedule = #gdn.schedule<solve = tensor_cores, input_prefetch_distance = 132>, state_layout = #gdn.layout<vk>}
// CHECK: gdn.recurrent {{.*}} {gdn.schedule = #gdn.schedule<>}
func.func @partial(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>)
      {gdn.schedule = #gdn.schedule<launch = programmatic, warps = 4, reductions = token_pairs, columns_per_lane = 2, staged_tokens = 0>}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>)
      {state_layout = #gdn.layout<vk>, gdn.schedule = #gdn.schedule<input_prefetch_distance = 132, solve = tensor_cores>}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>)
      {gdn.schedule = #gdn.schedule<>}
  return
}

// CHECK-LABEL: func.func @complete
// CHECK: gdn.recurrent {{.*}} {gdn.schedule = #gdn.schedule<columns_per_lane = 4, lanes_along_v = 2, warps = 8, staged_tokens = 16, unroll_tokens = 4, reductions = in_turn, solve = cuda_cores, precision = tf32x3, producer_stages = 3, consumer_registers = 152, state_prefetch_distance = 924, input_prefetch_distance = 66, chunk_prefetch_distance = 0, max_registers = 168, launch = programmatic_after_recurrence>}
// CHECK: gdn.recurrent {{.*}} {gdn.schedule = #gdn.schedule<columns_per_lane = 1048576, lanes_along_v = 1, warps = 1, staged_tokens = 0, unroll_tokens = 1, reductions = side_by_side, solve = token_by_token, precision = tf32, producer_stages = 0, consumer_registers = 0, state_prefetch_distance = 0, input_prefetch_distance = 0, chunk_prefetch_distance = 0, max_registers = 0, launch = programmatic_at_start>}
func.func @complete(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>)
      {gdn.schedule = #gdn.schedule<columns_per_lane = 4, lanes_along_v = 2, warps = 8, staged_tokens = 16, unroll_tokens = 4, reductions = in_turn, solve = cuda_cores, precision = tf32x3, producer_stages = 3, consumer_registers = 152, state_prefetch_distance = 924, input_prefetch_distance = 66, chunk_prefetch_distance = 0, max_registers = 168, launch = programmatic_after_recurrence>}
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>)
      {gdn.schedule = #gdn.schedule<launch = programmatic_at_start, max_registers = 0, chunk_prefetch_distance = 0, input_prefetch_distance = 0, state_prefetch_distance = 0, consumer_registers = 0, producer_stages = 0, precision = tf32, solve = token_by_token, reductions = side_by_side, unroll_tokens = 1, staged_tokens = 0, warps = 1, lanes_along_v = 1, columns_per_lane = 1048576>}
  return
}
