// RUN: gdn-opt %s -split-input-file --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s
// RUN: gdn-opt %s -split-input-file --one-shot-bufferize="bufferize-function-boundaries" | FileCheck %s --check-prefix=STRIDED
// RUN: gdn-opt %s -split-input-file --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --gdn-lower-to-cpu | FileCheck %s --check-prefix=LLVM
// RUN: gdn-opt %s -split-input-file --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --gdn-select-schedule --convert-gdn-to-gpu | FileCheck %s --check-prefix=GPU

// One-shot bufferization of the tensor form of gdn.recurrent into its memref
// form.

// In-place state update (the same tensor is initial_state and the final_state
// init, and nothing reads it afterwards): one buffer, no copy. The o init is a
// tensor.empty: a fresh buffer, never copied into (o is only written).
// CHECK-LABEL: func @in_place
// CHECK-SAME: (%[[Q:[^:]*]]: memref<2x3x1x32xf32>, %[[K:[^:]*]]: memref<2x3x1x32xf32>, %[[V:[^:]*]]: memref<2x3x2x16xf32>, %[[G:[^:]*]]: memref<2x3x2xf32>, %[[S:[^:]*]]: memref<2x2x32x16xf32>)
// CHECK-NOT: memref.copy
// CHECK: %[[O:.*]] = memref.alloc() {{.*}} : memref<2x3x2x16xf32>
// CHECK-NOT: memref.copy
// CHECK: gdn.recurrent q(%[[Q]] : memref<2x3x1x32xf32>) k(%[[K]] : memref<2x3x1x32xf32>) v(%[[V]] : memref<2x3x2x16xf32>) g(%[[G]] : memref<2x3x2xf32>) initial_state(%[[S]] : memref<2x2x32x16xf32>) final_state(%[[S]] : memref<2x2x32x16xf32>) o(%[[O]] : memref<2x3x2x16xf32>) {scale = 1.250000e-01 : f32}{{$}}
// CHECK-NOT: memref.copy
// CHECK: return %[[S]], %[[O]] : memref<2x2x32x16xf32>, memref<2x3x2x16xf32>

// Function arguments with a fully dynamic layout are copied into contiguous
// buffers (the memref form needs them), and the state is copied back.
// STRIDED-LABEL: func @in_place
// STRIDED-SAME: %[[S:[^:]*]]: memref<2x2x32x16xf32, strided<[?, ?, ?, ?], offset: ?>>)
// STRIDED: %[[O:.*]] = memref.alloc() {{.*}} : memref<2x3x2x16xf32>
// STRIDED: %[[Q:.*]] = memref.alloc() {{.*}} : memref<2x3x1x32xf32>
// STRIDED: memref.copy %{{.*}}, %[[Q]]
// STRIDED: %[[C:.*]] = memref.alloc() {{.*}} : memref<2x2x32x16xf32>
// STRIDED: memref.copy %[[S]], %[[C]]
// STRIDED: gdn.recurrent q(%[[Q]] : memref<2x3x1x32xf32>) {{.*}} initial_state(%[[C]] : memref<2x2x32x16xf32>) final_state(%[[C]] : memref<2x2x32x16xf32>) o(%[[O]] : memref<2x3x2x16xf32>)
// STRIDED: memref.copy %[[C]], %[[S]]
// STRIDED: return %[[S]], %[[O]]

// The whole way to the LLVM dialect, and to a kernel launch that updates the
// state argument in place.
// LLVM-LABEL: llvm.func @in_place
// LLVM-NOT: gdn.recurrent
// GPU-LABEL: func.func @in_place
// GPU-SAME: %[[S:[^:]*]]: memref<2x2x32x16xf32>)
// GPU: gpu.launch_func @gdn_kernels::@in_place_recurrent {{.*}} args({{.*}}, %[[S]] : memref<2x2x32x16xf32>, %[[S]] : memref<2x2x32x16xf32>, %{{.*}} : memref<2x3x2x16xf32>)
func.func @in_place(%q: tensor<2x3x1x32xf32>, %k: tensor<2x3x1x32xf32>, %v: tensor<2x3x2x16xf32>,
                    %g: tensor<2x3x2xf32>, %s: tensor<2x2x32x16xf32>)
    -> (tensor<2x2x32x16xf32>, tensor<2x3x2x16xf32>) {
  %init = tensor.empty() : tensor<2x3x2x16xf32>
  %new_s, %o = gdn.recurrent q(%q : tensor<2x3x1x32xf32>) k(%k : tensor<2x3x1x32xf32>) v(%v : tensor<2x3x2x16xf32>)
      g(%g : tensor<2x3x2xf32>)
      initial_state(%s : tensor<2x2x32x16xf32>) final_state(%s : tensor<2x2x32x16xf32>)
      o(%init : tensor<2x3x2x16xf32>) {scale = 0.125 : f32}
      -> tensor<2x2x32x16xf32>, tensor<2x3x2x16xf32>
  return %new_s, %o : tensor<2x2x32x16xf32>, tensor<2x3x2x16xf32>
}

// -----

// The old state is still read after the op: the final state goes to a fresh
// buffer (allocated, not copied into: final_state is only written), and the
// o init, a function argument, is written in place.
// CHECK-LABEL: func @old_state_live
// CHECK-SAME: %[[S:[^:]*]]: memref<1x4x64x32xf32>, %[[O:[^:]*]]: memref<1x1x4x32xbf16>)
// CHECK-NOT: memref.copy
// CHECK: %[[NEW:.*]] = memref.alloc() {{.*}} : memref<1x4x64x32xf32>
// CHECK-NOT: memref.copy
// CHECK: gdn.recurrent {{.*}} initial_state(%[[S]] : memref<1x4x64x32xf32>) final_state(%[[NEW]] : memref<1x4x64x32xf32>) o(%[[O]] : memref<1x1x4x32xbf16>){{$}}
// CHECK: return %[[S]], %[[NEW]], %[[O]]
// LLVM-LABEL: llvm.func @old_state_live
func.func @old_state_live(%q: tensor<1x1x2x64xbf16>, %k: tensor<1x1x2x64xbf16>, %v: tensor<1x1x4x32xbf16>,
                          %beta: tensor<1x1x4xbf16>, %s: tensor<1x4x64x32xf32>, %init: tensor<1x1x4x32xbf16>)
    -> (tensor<1x4x64x32xf32>, tensor<1x4x64x32xf32>, tensor<1x1x4x32xbf16>) {
  %new_s, %o = gdn.recurrent q(%q : tensor<1x1x2x64xbf16>) k(%k : tensor<1x1x2x64xbf16>) v(%v : tensor<1x1x4x32xbf16>)
      beta(%beta : tensor<1x1x4xbf16>)
      initial_state(%s : tensor<1x4x64x32xf32>) final_state(%s : tensor<1x4x64x32xf32>)
      o(%init : tensor<1x1x4x32xbf16>) {state_layout = #gdn.layout<kv>}
      -> tensor<1x4x64x32xf32>, tensor<1x1x4x32xbf16>
  return %s, %new_s, %o : tensor<1x4x64x32xf32>, tensor<1x4x64x32xf32>, tensor<1x1x4x32xbf16>
}

// -----

// An input used as the o init (o would overwrite v while the op reads it):
// o goes to a fresh buffer.
// CHECK-LABEL: func @o_init_is_input
// CHECK-SAME: %[[V:[^:]*]]: memref<1x2x2x16xf32>)
// CHECK: %[[O:.*]] = memref.alloc() {{.*}} : memref<1x2x2x16xf32>
// CHECK-NOT: memref.copy
// CHECK: gdn.recurrent {{.*}} v(%[[V]] : memref<1x2x2x16xf32>) o(%[[O]] : memref<1x2x2x16xf32>)
// CHECK: return %[[O]]
func.func @o_init_is_input(%q: tensor<1x2x1x32xf32>, %k: tensor<1x2x1x32xf32>, %v: tensor<1x2x2x16xf32>)
    -> tensor<1x2x2x16xf32> {
  %o = gdn.recurrent q(%q : tensor<1x2x1x32xf32>) k(%k : tensor<1x2x1x32xf32>) v(%v : tensor<1x2x2x16xf32>)
      o(%v : tensor<1x2x2x16xf32>) -> tensor<1x2x2x16xf32>
  return %o : tensor<1x2x2x16xf32>
}

// -----

// The state of slots 1 and 2 of a pool (a static subview once bufferized,
// a layout the state operands accept: OperandLayouts.h): updated in place,
// no allocation, no copy (the insert_slice's copy of the subview onto
// itself after the op is bufferization's own no-op).
// CHECK-LABEL: func @state_slice
// CHECK-SAME: %[[POOL:[^:]*]]: memref<4x2x32x16xf32>)
// CHECK-NOT: memref.alloc
// CHECK: %[[SUB:.*]] = memref.subview %[[POOL]][1, 0, 0, 0] [2, 2, 32, 16] [1, 1, 1, 1]
// CHECK-NOT: memref.copy
// CHECK: gdn.recurrent {{.*}} initial_state(%[[SUB]] : memref<2x2x32x16xf32, strided<[1024, 512, 16, 1], offset: 1024>>) final_state(%[[SUB]] :
// CHECK-NOT: memref.alloc
// CHECK: return %[[POOL]]
func.func @state_slice(%q: tensor<2x3x1x32xf32>, %k: tensor<2x3x1x32xf32>, %v: tensor<2x3x2x16xf32>,
                       %pool: tensor<4x2x32x16xf32>) -> tensor<4x2x32x16xf32> {
  %s = tensor.extract_slice %pool[1, 0, 0, 0] [2, 2, 32, 16] [1, 1, 1, 1]
      : tensor<4x2x32x16xf32> to tensor<2x2x32x16xf32>
  %init = tensor.empty() : tensor<2x3x2x16xf32>
  %new_s, %o = gdn.recurrent q(%q : tensor<2x3x1x32xf32>) k(%k : tensor<2x3x1x32xf32>) v(%v : tensor<2x3x2x16xf32>)
      initial_state(%s : tensor<2x2x32x16xf32>) final_state(%s : tensor<2x2x32x16xf32>)
      o(%init : tensor<2x3x2x16xf32>) -> tensor<2x2x32x16xf32>, tensor<2x3x2x16xf32>
  %r = tensor.insert_slice %new_s into %pool[1, 0, 0, 0] [2, 2, 32, 16] [1, 1, 1, 1]
      : tensor<2x2x32x16xf32> into tensor<4x2x32x16xf32>
  return %r : tensor<4x2x32x16xf32>
}

// -----

// The state as the first 16 of 32 columns of a record (a subview whose inner
// dimensions are not dense, a layout the state operands refuse): updated
// through a contiguous copy, written back into the subview, which is the
// slice the insert_slice then writes in place.
// CHECK-LABEL: func @state_columns
// CHECK-SAME: %[[REC:[^:]*]]: memref<2x2x32x32xf32>)
// CHECK: %[[SUB:.*]] = memref.subview %[[REC]][0, 0, 0, 0] [2, 2, 32, 16] [1, 1, 1, 1]
// CHECK: %[[C:.*]] = memref.alloc() {{.*}} : memref<2x2x32x16xf32>
// CHECK: memref.copy %[[SUB]], %[[C]]
// CHECK: gdn.recurrent {{.*}} initial_state(%[[C]] : memref<2x2x32x16xf32>) final_state(%[[C]] : memref<2x2x32x16xf32>)
// CHECK: memref.copy %[[C]], %[[SUB]]
// CHECK: return %[[REC]]
func.func @state_columns(%q: tensor<2x3x1x32xf32>, %k: tensor<2x3x1x32xf32>, %v: tensor<2x3x2x16xf32>,
                         %rec: tensor<2x2x32x32xf32>) -> tensor<2x2x32x32xf32> {
  %s = tensor.extract_slice %rec[0, 0, 0, 0] [2, 2, 32, 16] [1, 1, 1, 1]
      : tensor<2x2x32x32xf32> to tensor<2x2x32x16xf32>
  %init = tensor.empty() : tensor<2x3x2x16xf32>
  %new_s, %o = gdn.recurrent q(%q : tensor<2x3x1x32xf32>) k(%k : tensor<2x3x1x32xf32>) v(%v : tensor<2x3x2x16xf32>)
      initial_state(%s : tensor<2x2x32x16xf32>) final_state(%s : tensor<2x2x32x16xf32>)
      o(%init : tensor<2x3x2x16xf32>) -> tensor<2x2x32x16xf32>, tensor<2x3x2x16xf32>
  %r = tensor.insert_slice %new_s into %rec[0, 0, 0, 0] [2, 2, 32, 16] [1, 1, 1, 1]
      : tensor<2x2x32x16xf32> into tensor<2x2x32x32xf32>
  return %r : tensor<2x2x32x32xf32>
}

// -----

// q, k and v as slices of one fused projection [N, T, H + H + HV, 32]
// (static subviews, layouts the token operands accept: read in place, no
// copy).
// CHECK-LABEL: func @qkv_views
// CHECK-NOT: memref.copy
// CHECK: gdn.recurrent q(%{{.*}} : memref<2x3x1x32xf32, strided<[384, 128, 32, 1]>>) k(%{{.*}} : memref<2x3x1x32xf32, strided<[384, 128, 32, 1], offset: 32>>) v(%{{.*}} : memref<2x3x2x32xf32, strided<[384, 128, 32, 1], offset: 64>>)
// CHECK-NOT: memref.copy
func.func @qkv_views(%qkv: tensor<2x3x4x32xf32>) -> tensor<2x3x2x32xf32> {
  %q = tensor.extract_slice %qkv[0, 0, 0, 0] [2, 3, 1, 32] [1, 1, 1, 1]
      : tensor<2x3x4x32xf32> to tensor<2x3x1x32xf32>
  %k = tensor.extract_slice %qkv[0, 0, 1, 0] [2, 3, 1, 32] [1, 1, 1, 1]
      : tensor<2x3x4x32xf32> to tensor<2x3x1x32xf32>
  %v = tensor.extract_slice %qkv[0, 0, 2, 0] [2, 3, 2, 32] [1, 1, 1, 1]
      : tensor<2x3x4x32xf32> to tensor<2x3x2x32xf32>
  %init = tensor.empty() : tensor<2x3x2x32xf32>
  %o = gdn.recurrent q(%q : tensor<2x3x1x32xf32>) k(%k : tensor<2x3x1x32xf32>) v(%v : tensor<2x3x2x32xf32>)
      o(%init : tensor<2x3x2x32xf32>) -> tensor<2x3x2x32xf32>
  return %o : tensor<2x3x2x32xf32>
}

// -----

// The memref form is left alone.
// CHECK-LABEL: func @memref_form
// CHECK: gdn.recurrent q(%{{.*}} : memref<1x1x1x32xf32>) k(%{{.*}} : memref<1x1x1x32xf32>) v(%{{.*}} : memref<1x1x1x8xf32>) o(%{{.*}} : memref<1x1x1x8xf32>){{$}}
func.func @memref_form(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>)
  return
}

// -----

// A pool (state_indices) is written only in part: slots no sequence names
// keep their values. When the old pool is still read after the op, the new
// one is a copy of it (before, a fresh buffer whose unnamed slots were
// garbage). The o init, a tensor.empty, has no values to keep: a fresh
// buffer, not copied into.
// CHECK-LABEL: func @pool_out_of_place
// CHECK-SAME: %[[P:[^:]*]]: memref<4x1x16x8xf32>)
// CHECK: %[[NEW:.*]] = memref.alloc() {{.*}} : memref<4x1x16x8xf32>
// CHECK: memref.copy %[[P]], %[[NEW]]
// CHECK: gdn.recurrent {{.*}} state_indices(%{{.*}} : memref<2xi32>) initial_state(%[[P]] : memref<4x1x16x8xf32>) final_state(%[[NEW]] : memref<4x1x16x8xf32>)
// CHECK: return %[[P]], %[[NEW]]
func.func @pool_out_of_place(%q: tensor<2x1x1x16xf32>, %v: tensor<2x1x1x8xf32>,
                             %idx: tensor<2xi32>, %pool: tensor<4x1x16x8xf32>)
    -> (tensor<4x1x16x8xf32>, tensor<4x1x16x8xf32>) {
  %o0 = tensor.empty() : tensor<2x1x1x8xf32>
  %ns, %o = gdn.recurrent q(%q : tensor<2x1x1x16xf32>) k(%q : tensor<2x1x1x16xf32>) v(%v : tensor<2x1x1x8xf32>)
      state_indices(%idx : tensor<2xi32>)
      initial_state(%pool : tensor<4x1x16x8xf32>) final_state(%pool : tensor<4x1x16x8xf32>)
      o(%o0 : tensor<2x1x1x8xf32>) -> tensor<4x1x16x8xf32>, tensor<2x1x1x8xf32>
  return %pool, %ns : tensor<4x1x16x8xf32>, tensor<4x1x16x8xf32>
}

// -----

// Varlen: o's tokens past the sequences keep the init's values, so an o
// init that is read after the op is copied, not replaced by a fresh buffer.
// CHECK-LABEL: func @varlen_o_init
// CHECK-SAME: %[[OI:[^:]*]]: memref<1x6x1x8xf32>)
// CHECK: %[[O:.*]] = memref.alloc() {{.*}} : memref<1x6x1x8xf32>
// CHECK: memref.copy %[[OI]], %[[O]]
// CHECK: gdn.recurrent {{.*}} cu_seqlens(%{{.*}} : memref<3xi32>) o(%[[O]] : memref<1x6x1x8xf32>)
// CHECK: return %[[OI]], %[[O]]
func.func @varlen_o_init(%q: tensor<1x6x1x16xf32>, %v: tensor<1x6x1x8xf32>, %cu: tensor<3xi32>,
                         %oi: tensor<1x6x1x8xf32>)
    -> (tensor<1x6x1x8xf32>, tensor<1x6x1x8xf32>) {
  %o = gdn.recurrent q(%q : tensor<1x6x1x16xf32>) k(%q : tensor<1x6x1x16xf32>) v(%v : tensor<1x6x1x8xf32>)
      cu_seqlens(%cu : tensor<3xi32>) o(%oi : tensor<1x6x1x8xf32>) -> tensor<1x6x1x8xf32>
  return %oi, %o : tensor<1x6x1x8xf32>, tensor<1x6x1x8xf32>
}
