// RUN: gdn-opt %s -split-input-file -verify-diagnostics

// Memref layouts the operands of gdn.recurrent refuse (OperandLayouts.h):
// one case per rule. The layouts they accept are in layouts.mlir.

func.func @innermost_stride(%q: memref<2x2x1x32xf32, strided<[128, 64, 64, 2]>>, %k: memref<2x2x1x32xf32>, %v: memref<2x2x2x8xf32>, %o: memref<2x2x2x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'q' has an unsupported layout strided<[128, 64, 64, 2]>: stride 2 of dimension 3 must be 1 (the innermost dimension is contiguous)}}
  gdn.recurrent q(%q : memref<2x2x1x32xf32, strided<[128, 64, 64, 2]>>) k(%k : memref<2x2x1x32xf32>) v(%v : memref<2x2x2x8xf32>) o(%o : memref<2x2x2x8xf32>)
  return
}

// -----

func.func @misaligned_stride(%q: memref<2x2x1x32xf32>, %k: memref<2x2x1x32xf32, strided<[130, 65, 32, 1]>>, %v: memref<2x2x2x8xf32>, %o: memref<2x2x2x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'k' has an unsupported layout strided<[130, 65, 32, 1]>: stride 130 of dimension 0 is not a multiple of 4 elements (16 bytes, or the innermost dimension's width when narrower)}}
  gdn.recurrent q(%q : memref<2x2x1x32xf32>) k(%k : memref<2x2x1x32xf32, strided<[130, 65, 32, 1]>>) v(%v : memref<2x2x2x8xf32>) o(%o : memref<2x2x2x8xf32>)
  return
}

// -----

func.func @offset(%q: memref<2x2x1x32xf32>, %k: memref<2x2x1x32xf32>, %v: memref<2x2x2x8xf32, strided<[32, 16, 8, 1], offset: 2>>, %o: memref<2x2x2x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'v' has an unsupported layout strided<[32, 16, 8, 1], offset: 2>: its offset 2 must be a non-negative multiple of 4 elements}}
  gdn.recurrent q(%q : memref<2x2x1x32xf32>) k(%k : memref<2x2x1x32xf32>) v(%v : memref<2x2x2x8xf32, strided<[32, 16, 8, 1], offset: 2>>) o(%o : memref<2x2x2x8xf32>)
  return
}

// -----

func.func @dynamic_stride(%q: memref<2x2x1x32xf32, strided<[?, 32, 32, 1]>>, %k: memref<2x2x1x32xf32>, %v: memref<2x2x2x8xf32>, %o: memref<2x2x2x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'q' has an unsupported layout strided<[?, 32, 32, 1]>: stride of dimension 0 must be static}}
  gdn.recurrent q(%q : memref<2x2x1x32xf32, strided<[?, 32, 32, 1]>>) k(%k : memref<2x2x1x32xf32>) v(%v : memref<2x2x2x8xf32>) o(%o : memref<2x2x2x8xf32>)
  return
}

// -----

func.func @not_strided(%q: memref<2x2x1x32xf32, affine_map<(a, b, c, d) -> (a, b, c, d mod 8)>>, %k: memref<2x2x1x32xf32>, %v: memref<2x2x2x8xf32>, %o: memref<2x2x2x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'q' has an unsupported layout affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3 mod 8)>: its layout is not strided}}
  gdn.recurrent q(%q : memref<2x2x1x32xf32, affine_map<(a, b, c, d) -> (a, b, c, d mod 8)>>) k(%k : memref<2x2x1x32xf32>) v(%v : memref<2x2x2x8xf32>) o(%o : memref<2x2x2x8xf32>)
  return
}

// -----

func.func @negative_stride(%q: memref<2x2x1x32xf32, strided<[-64, 32, 32, 1]>>, %k: memref<2x2x1x32xf32>, %v: memref<2x2x2x8xf32>, %o: memref<2x2x2x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'q' has an unsupported layout strided<[-64, 32, 32, 1]>: stride -64 of dimension 0 must not be negative}}
  gdn.recurrent q(%q : memref<2x2x1x32xf32, strided<[-64, 32, 32, 1]>>) k(%k : memref<2x2x1x32xf32>) v(%v : memref<2x2x2x8xf32>) o(%o : memref<2x2x2x8xf32>)
  return
}

// -----

func.func @strided_o(%q: memref<2x2x1x32xf32>, %k: memref<2x2x1x32xf32>, %v: memref<2x2x2x8xf32>, %o: memref<2x2x2x8xf32, strided<[64, 16, 8, 1]>>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'o' has an unsupported layout strided<[64, 16, 8, 1]>: stride 64 of dimension 0 must be 32 (this operand must be dense)}}
  gdn.recurrent q(%q : memref<2x2x1x32xf32>) k(%k : memref<2x2x1x32xf32>) v(%v : memref<2x2x2x8xf32>) o(%o : memref<2x2x2x8xf32, strided<[64, 16, 8, 1]>>)
  return
}

// -----

func.func @state_inner_pitch(%q: memref<2x2x1x32xf32>, %k: memref<2x2x1x32xf32>, %v: memref<2x2x2x8xf32>, %h0: memref<2x2x32x8xf32, strided<[1024, 512, 8, 1]>>, %o: memref<2x2x2x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'initial_state' has an unsupported layout strided<[1024, 512, 8, 1]>: stride 512 of dimension 1 must be 256 (only the leading dimension, the slot or row, may have a pitch)}}
  gdn.recurrent q(%q : memref<2x2x1x32xf32>) k(%k : memref<2x2x1x32xf32>) v(%v : memref<2x2x2x8xf32>) initial_state(%h0 : memref<2x2x32x8xf32, strided<[1024, 512, 8, 1]>>) o(%o : memref<2x2x2x8xf32>)
  return
}

// -----

func.func @state_overlap(%q: memref<2x2x1x32xf32>, %k: memref<2x2x1x32xf32>, %v: memref<2x2x2x8xf32>, %ht: memref<2x2x32x8xf32, strided<[256, 256, 8, 1]>>, %o: memref<2x2x2x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'final_state' has an unsupported layout strided<[256, 256, 8, 1]>: stride 256 of dimension 0 is smaller than a slot (512 elements): slots would overlap}}
  gdn.recurrent q(%q : memref<2x2x1x32xf32>) k(%k : memref<2x2x1x32xf32>) v(%v : memref<2x2x2x8xf32>) final_state(%ht : memref<2x2x32x8xf32, strided<[256, 256, 8, 1]>>) o(%o : memref<2x2x2x8xf32>)
  return
}

// -----

func.func @strided_A_log(%q: memref<2x2x1x32xf32>, %k: memref<2x2x1x32xf32>, %v: memref<2x2x2x8xf32>, %a: memref<2x2x2xf32>, %A_log: memref<2xf32, strided<[2]>>, %dt_bias: memref<2xf32>, %o: memref<2x2x2x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'A_log' has an unsupported layout strided<[2]>: stride 2 of dimension 0 must be 1 (this operand must be dense)}}
  gdn.recurrent q(%q : memref<2x2x1x32xf32>) k(%k : memref<2x2x1x32xf32>) v(%v : memref<2x2x2x8xf32>) a(%a : memref<2x2x2xf32>) A_log(%A_log : memref<2xf32, strided<[2]>>) dt_bias(%dt_bias : memref<2xf32>) o(%o : memref<2x2x2x8xf32>)
  return
}

// -----

// A shape whose dense strides overflow int64 (the check once multiplied
// them unchecked).
func.func @strides_overflow(%q: memref<2x4294967296x4294967296x8xf32, strided<[1, 1, 1, 1]>>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'q' has an unsupported layout strided<[1, 1, 1, 1]>: its dense strides overflow int64 (more than 2^63 elements)}}
  gdn.recurrent q(%q : memref<2x4294967296x4294967296x8xf32, strided<[1, 1, 1, 1]>>) k(%q : memref<2x4294967296x4294967296x8xf32, strided<[1, 1, 1, 1]>>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>)
  return
}

// -----

// Strided operands whose element type has no bit width: the layout check
// once asked for it and crashed; the element type check reports them.
func.func @strided_index(%q: memref<1x1x1x8xindex, strided<[16, 16, 16, 1]>>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'q' expects element type bf16, f16 or f32, got 'index'}}
  gdn.recurrent q(%q : memref<1x1x1x8xindex, strided<[16, 16, 16, 1]>>) k(%q : memref<1x1x1x8xindex, strided<[16, 16, 16, 1]>>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>)
  return
}

// -----

func.func @strided_vector(%q: memref<2x2x1x32xvector<4xf32>, strided<[128, 64, 32, 1]>>, %v: memref<2x2x2x8xf32>, %o: memref<2x2x2x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'q' expects element type bf16, f16 or f32, got 'vector<4xf32>'}}
  gdn.recurrent q(%q : memref<2x2x1x32xvector<4xf32>, strided<[128, 64, 32, 1]>>) k(%q : memref<2x2x1x32xvector<4xf32>, strided<[128, 64, 32, 1]>>) v(%v : memref<2x2x2x8xf32>) o(%o : memref<2x2x2x8xf32>)
  return
}

// -----

func.func @strided_complex(%q: memref<2x2x1x32xcomplex<f32>, strided<[128, 64, 32, 1]>>, %v: memref<2x2x2x8xf32>, %o: memref<2x2x2x8xf32>) {
  // expected-error @+1 {{'gdn.recurrent' op operand 'q' expects element type bf16, f16 or f32, got 'complex<f32>'}}
  gdn.recurrent q(%q : memref<2x2x1x32xcomplex<f32>, strided<[128, 64, 32, 1]>>) k(%q : memref<2x2x1x32xcomplex<f32>, strided<[128, 64, 32, 1]>>) v(%v : memref<2x2x2x8xf32>) o(%o : memref<2x2x2x8xf32>)
  return
}
