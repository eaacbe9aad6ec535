// Bad input: a diagnostic with a location and a non-zero exit, never a crash.
// RUN: split-file %s %t
// RUN: not gdn-run --target=cpu %t/garbage.mlir 2>&1 | FileCheck %s --check-prefix=GARBAGE
// RUN: not gdn-run --target=cpu %t/no-op.mlir 2>&1 | FileCheck %s --check-prefix=NOOP
// RUN: not gdn-run --target=cpu %t/two-ops.mlir 2>&1 | FileCheck %s --check-prefix=TWO
// RUN: not gdn-run --target=cpu %t/shape.mlir 2>&1 | FileCheck %s --check-prefix=SHAPE
// RUN: not gdn-run --target=cpu %t/aliased.mlir 2>&1 | FileCheck %s --check-prefix=ALIAS
// RUN: not gdn-run --target=cpu %t/missing-file.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not gdn-run --target=tpu %t/no-op.mlir 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not gdn-run --emit=llvm %t/two-ops.mlir 2>&1 | FileCheck %s --check-prefix=EMIT
// RUN: not gdn-run --emit=ptx %t/k48.mlir 2>&1 | FileCheck %s --check-prefix=K48

// GARBAGE: garbage.mlir:1:1: error: custom op 'this' is unknown
// NOOP: error: no function holds a gdn.recurrent
// TWO: two-ops.mlir:1:1: error: expected exactly one gdn.recurrent in @f, found 2
// SHAPE: shape.mlir:2:3: error: 'gdn.recurrent' op operand 'k' expects shape [1, 1, 1, 32] (N, T, H, K), got [1, 1, 1, 64]
// ALIAS: aliased.mlir:2:3: error: argument #0 is used as both 'q' and 'k'; give each operand its own argument
// MISSING: gdn-run: error: {{.*}}missing-file.mlir
// TARGET: gdn-run: error: unknown --target='tpu' (expected auto, cuda or cpu)
// EMIT: gdn-run: error: unknown --emit='llvm' (expected: ptx)
// K48: k48.mlir:2:3: error: 'gdn.recurrent' op cannot be lowered to the GPU: K = 48 must be a multiple of 32 and at most 256

//--- garbage.mlir
this is not MLIR
//--- no-op.mlir
func.func @f() {
  return
}
//--- two-ops.mlir
func.func @f(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>)
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>)
  return
}
//--- shape.mlir
func.func @f(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x64xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x64xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>)
  return
}
//--- aliased.mlir
func.func @f(%q: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%q : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>)
  return
}
//--- k48.mlir
func.func @f(%q: memref<1x1x1x48xf32>, %k: memref<1x1x1x48xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  gdn.recurrent q(%q : memref<1x1x1x48xf32>) k(%k : memref<1x1x1x48xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>)
  return
}
