// RUN: gdn-opt %s -split-input-file -gdn-select-schedule | FileCheck %s
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<warps = 2>}" | FileCheck %s --check-prefix=W2
// RUN: gdn-opt %s -split-input-file -gdn-select-schedule="schedule={#gdn.schedule<warps = 8>}" | FileCheck %s --check-prefix=W8
// The cost model splits chunk_parallel's scan along T (segments, docs/cost-
// model.md#context-parallel-segments) where a fixed batch's scan in CTAs of 4
// warps would fill at most half the SMs (132) and each sequence has 4096 tokens
// or more: the most segments, a power of two, that keep the split scan at one
// CTA an SM with segments of at least 512 tokens, or two CTAs an SM with
// segments of at least 2048, on 4 warps and with the next chunk's copies. One
// sequence at HV = 32 (64 CTAs): 2 segments at T = 4096 (4 would be 256 CTAs of
// 1024 tokens), 4 of 2048 tokens at T = 8192, 4 at T = 32768 (8 would be 512
// CTAs); at HV = 8 (16 CTAs) 8 at T = 4096 and 8192 (16 would be 256 CTAs of
// 256 or 512 tokens), 16 at T = 32768. One varlen sequence of 32768 packed
// tokens as the fixed one: 4; not two varlen sequences (their lengths unknown,
// a split measured slower). Not four sequences (256 CTAs), nor 128 CTAs (HV =
// 64, or two sequences at HV = 32: 2 segments measured slower), replay windows
// (a split scan writes none), or warps pinned to 2 (measured slower); pinned to
// 8 (32 CTAs of 128 columns), still 4 at T = 8192 (segments of 2048 tokens). At
// most 16 segments: at HV = 1, K = V = 64 (one CTA) and T = 524289 the SMs
// would take 256 (the join's unrolled steps took minutes to compile at 128).
// The split's CTAs (two an SM) keep the 128-register cap of tensor-core CTAs
// past the SMs (uncapped, KDA's split ran 1.14x slower, GDN's no faster).
// CHECK-LABEL: func.func @n1_t8192
// CHECK: warps = 4, {{.*}}chunk_prefetch_distance = 1, max_registers = 128, launch = ordinary, segments = 4, concurrent_solves = 0>
// W2-LABEL: func.func @n1_t8192
// W2: warps = 2, {{.*}}segments = 1, concurrent_solves = 0>
// W2-LABEL: func.func @n1_t32768
// W8-LABEL: func.func @n1_t8192
// W8: warps = 8, {{.*}}segments = 4, concurrent_solves = 0>
// W8-LABEL: func.func @n1_t32768
func.func @n1_t8192(%q: memref<1x8192x16x128xbf16>, %k: memref<1x8192x16x128xbf16>, %v: memref<1x8192x32x128xbf16>, %g: memref<1x8192x32xf32>, %beta: memref<1x8192x32xbf16>, %s: memref<1x32x128x128xf32>, %o: memref<1x8192x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x8192x16x128xbf16>) k(%k : memref<1x8192x16x128xbf16>) v(%v : memref<1x8192x32x128xbf16>) g(%g : memref<1x8192x32xf32>) beta(%beta : memref<1x8192x32xbf16>) initial_state(%s : memref<1x32x128x128xf32>) final_state(%s : memref<1x32x128x128xf32>) o(%o : memref<1x8192x32x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// CHECK-LABEL: func.func @n1_t32768
// CHECK: warps = 4, {{.*}}segments = 4, concurrent_solves = 0>
func.func @n1_t32768(%q: memref<1x32768x16x128xbf16>, %k: memref<1x32768x16x128xbf16>, %v: memref<1x32768x32x128xbf16>, %g: memref<1x32768x32xf32>, %beta: memref<1x32768x32xbf16>, %s: memref<1x32x128x128xf32>, %o: memref<1x32768x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x32768x16x128xbf16>) k(%k : memref<1x32768x16x128xbf16>) v(%v : memref<1x32768x32x128xbf16>) g(%g : memref<1x32768x32xf32>) beta(%beta : memref<1x32768x32xbf16>) initial_state(%s : memref<1x32x128x128xf32>) final_state(%s : memref<1x32x128x128xf32>) o(%o : memref<1x32768x32x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// CHECK-LABEL: func.func @hv8_t32768
// CHECK: warps = 4, {{.*}}segments = 16, concurrent_solves = 0>
func.func @hv8_t32768(%q: memref<1x32768x4x128xbf16>, %k: memref<1x32768x4x128xbf16>, %v: memref<1x32768x8x128xbf16>, %g: memref<1x32768x8xf32>, %beta: memref<1x32768x8xbf16>, %s: memref<1x8x128x128xf32>, %o: memref<1x32768x8x128xbf16>) {
  gdn.recurrent q(%q : memref<1x32768x4x128xbf16>) k(%k : memref<1x32768x4x128xbf16>) v(%v : memref<1x32768x8x128xbf16>) g(%g : memref<1x32768x8xf32>) beta(%beta : memref<1x32768x8xbf16>) initial_state(%s : memref<1x8x128x128xf32>) final_state(%s : memref<1x8x128x128xf32>) o(%o : memref<1x32768x8x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// CHECK-LABEL: func.func @n1_t4096
// CHECK: warps = 4, {{.*}}segments = 2, concurrent_solves = 0>
func.func @n1_t4096(%q: memref<1x4096x16x128xbf16>, %k: memref<1x4096x16x128xbf16>, %v: memref<1x4096x32x128xbf16>, %g: memref<1x4096x32xf32>, %beta: memref<1x4096x32xbf16>, %s: memref<1x32x128x128xf32>, %o: memref<1x4096x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x4096x16x128xbf16>) k(%k : memref<1x4096x16x128xbf16>) v(%v : memref<1x4096x32x128xbf16>) g(%g : memref<1x4096x32xf32>) beta(%beta : memref<1x4096x32xbf16>) initial_state(%s : memref<1x32x128x128xf32>) final_state(%s : memref<1x32x128x128xf32>) o(%o : memref<1x4096x32x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// CHECK-LABEL: func.func @n4_t8192
// CHECK: segments = 1, concurrent_solves = 0>
func.func @n4_t8192(%q: memref<4x8192x16x128xbf16>, %k: memref<4x8192x16x128xbf16>, %v: memref<4x8192x32x128xbf16>, %g: memref<4x8192x32xf32>, %beta: memref<4x8192x32xbf16>, %s: memref<4x32x128x128xf32>, %o: memref<4x8192x32x128xbf16>) {
  gdn.recurrent q(%q : memref<4x8192x16x128xbf16>) k(%k : memref<4x8192x16x128xbf16>) v(%v : memref<4x8192x32x128xbf16>) g(%g : memref<4x8192x32xf32>) beta(%beta : memref<4x8192x32xbf16>) initial_state(%s : memref<4x32x128x128xf32>) final_state(%s : memref<4x32x128x128xf32>) o(%o : memref<4x8192x32x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// CHECK-LABEL: func.func @varlen_t32768
// CHECK: warps = 4, {{.*}}solve = chunk_parallel, {{.*}}segments = 4, concurrent_solves = 0>
func.func @varlen_t32768(%q: memref<1x32768x16x128xbf16>, %k: memref<1x32768x16x128xbf16>, %v: memref<1x32768x32x128xbf16>, %g: memref<1x32768x32xf32>, %beta: memref<1x32768x32xbf16>, %cu: memref<2xi32>, %s: memref<1x32x128x128xf32>, %o: memref<1x32768x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x32768x16x128xbf16>) k(%k : memref<1x32768x16x128xbf16>) v(%v : memref<1x32768x32x128xbf16>) g(%g : memref<1x32768x32xf32>) beta(%beta : memref<1x32768x32xbf16>) cu_seqlens(%cu : memref<2xi32>) initial_state(%s : memref<1x32x128x128xf32>) final_state(%s : memref<1x32x128x128xf32>) o(%o : memref<1x32768x32x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// CHECK-LABEL: func.func @varlen_n2_t32768
// CHECK: solve = chunk_parallel, {{.*}}segments = 1, concurrent_solves = 0>
func.func @varlen_n2_t32768(%q: memref<1x32768x16x128xbf16>, %k: memref<1x32768x16x128xbf16>, %v: memref<1x32768x32x128xbf16>, %g: memref<1x32768x32xf32>, %beta: memref<1x32768x32xbf16>, %cu: memref<3xi32>, %s: memref<2x32x128x128xf32>, %o: memref<1x32768x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x32768x16x128xbf16>) k(%k : memref<1x32768x16x128xbf16>) v(%v : memref<1x32768x32x128xbf16>) g(%g : memref<1x32768x32xf32>) beta(%beta : memref<1x32768x32xbf16>) cu_seqlens(%cu : memref<3xi32>) initial_state(%s : memref<2x32x128x128xf32>) final_state(%s : memref<2x32x128x128xf32>) o(%o : memref<1x32768x32x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// CHECK-LABEL: func.func @windows_t8192
// CHECK: solve = chunk_parallel, {{.*}}segments = 1, concurrent_solves = 0>
func.func @windows_t8192(%q: memref<1x8192x16x128xbf16>, %k: memref<1x8192x16x128xbf16>, %v: memref<1x8192x32x128xbf16>, %g: memref<1x8192x32xf32>, %beta: memref<1x8192x32xbf16>, %s: memref<1x32x128x128xf32>, %kw: memref<1x16x4x128xbf16>, %vw: memref<1x32x4x128xbf16>, %gw: memref<1x32x4xf32>, %bw: memref<1x32x4xf32>, %o: memref<1x8192x32x128xbf16>) {
  gdn.recurrent q(%q : memref<1x8192x16x128xbf16>) k(%k : memref<1x8192x16x128xbf16>) v(%v : memref<1x8192x32x128xbf16>) g(%g : memref<1x8192x32xf32>) beta(%beta : memref<1x8192x32xbf16>) initial_state(%s : memref<1x32x128x128xf32>) k_window(%kw : memref<1x16x4x128xbf16>) v_window(%vw : memref<1x32x4x128xbf16>) g_window(%gw : memref<1x32x4xf32>) beta_window(%bw : memref<1x32x4xf32>) final_state(%s : memref<1x32x128x128xf32>) o(%o : memref<1x8192x32x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// CHECK-LABEL: func.func @hv1_t524289
// CHECK: segments = 16, concurrent_solves = 0>
func.func @hv1_t524289(%q: memref<1x524289x1x64xbf16>, %k: memref<1x524289x1x64xbf16>, %v: memref<1x524289x1x64xbf16>, %g: memref<1x524289x1xf32>, %beta: memref<1x524289x1xf32>, %s: memref<1x1x64x64xf32>, %o: memref<1x524289x1x64xbf16>) {
  gdn.recurrent q(%q : memref<1x524289x1x64xbf16>) k(%k : memref<1x524289x1x64xbf16>) v(%v : memref<1x524289x1x64xbf16>) g(%g : memref<1x524289x1xf32>) beta(%beta : memref<1x524289x1xf32>) initial_state(%s : memref<1x1x64x64xf32>) final_state(%s : memref<1x1x64x64xf32>) o(%o : memref<1x524289x1x64xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// CHECK-LABEL: func.func @hv8_t4096
// CHECK: warps = 4, {{.*}}segments = 8, concurrent_solves = 0>
func.func @hv8_t4096(%q: memref<1x4096x4x128xbf16>, %k: memref<1x4096x4x128xbf16>, %v: memref<1x4096x8x128xbf16>, %g: memref<1x4096x8xf32>, %beta: memref<1x4096x8xbf16>, %s: memref<1x8x128x128xf32>, %o: memref<1x4096x8x128xbf16>) {
  gdn.recurrent q(%q : memref<1x4096x4x128xbf16>) k(%k : memref<1x4096x4x128xbf16>) v(%v : memref<1x4096x8x128xbf16>) g(%g : memref<1x4096x8xf32>) beta(%beta : memref<1x4096x8xbf16>) initial_state(%s : memref<1x8x128x128xf32>) final_state(%s : memref<1x8x128x128xf32>) o(%o : memref<1x4096x8x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// CHECK-LABEL: func.func @hv8_t8192
// CHECK: warps = 4, {{.*}}segments = 8, concurrent_solves = 0>
func.func @hv8_t8192(%q: memref<1x8192x4x128xbf16>, %k: memref<1x8192x4x128xbf16>, %v: memref<1x8192x8x128xbf16>, %g: memref<1x8192x8xf32>, %beta: memref<1x8192x8xbf16>, %s: memref<1x8x128x128xf32>, %o: memref<1x8192x8x128xbf16>) {
  gdn.recurrent q(%q : memref<1x8192x4x128xbf16>) k(%k : memref<1x8192x4x128xbf16>) v(%v : memref<1x8192x8x128xbf16>) g(%g : memref<1x8192x8xf32>) beta(%beta : memref<1x8192x8xbf16>) initial_state(%s : memref<1x8x128x128xf32>) final_state(%s : memref<1x8x128x128xf32>) o(%o : memref<1x8192x8x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// CHECK-LABEL: func.func @hv64_t8192
// CHECK: segments = 1, concurrent_solves = 0>
func.func @hv64_t8192(%q: memref<1x8192x32x128xbf16>, %k: memref<1x8192x32x128xbf16>, %v: memref<1x8192x64x128xbf16>, %g: memref<1x8192x64xf32>, %beta: memref<1x8192x64xbf16>, %s: memref<1x64x128x128xf32>, %o: memref<1x8192x64x128xbf16>) {
  gdn.recurrent q(%q : memref<1x8192x32x128xbf16>) k(%k : memref<1x8192x32x128xbf16>) v(%v : memref<1x8192x64x128xbf16>) g(%g : memref<1x8192x64xf32>) beta(%beta : memref<1x8192x64xbf16>) initial_state(%s : memref<1x64x128x128xf32>) final_state(%s : memref<1x64x128x128xf32>) o(%o : memref<1x8192x64x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}

// -----

// CHECK-LABEL: func.func @n2_t8192
// CHECK: segments = 1, concurrent_solves = 0>
func.func @n2_t8192(%q: memref<2x8192x16x128xbf16>, %k: memref<2x8192x16x128xbf16>, %v: memref<2x8192x32x128xbf16>, %g: memref<2x8192x32xf32>, %beta: memref<2x8192x32xbf16>, %s: memref<2x32x128x128xf32>, %o: memref<2x8192x32x128xbf16>) {
  gdn.recurrent q(%q : memref<2x8192x16x128xbf16>) k(%k : memref<2x8192x16x128xbf16>) v(%v : memref<2x8192x32x128xbf16>) g(%g : memref<2x8192x32xf32>) beta(%beta : memref<2x8192x32xbf16>) initial_state(%s : memref<2x32x128x128xf32>) final_state(%s : memref<2x32x128x128xf32>) o(%o : memref<2x8192x32x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
