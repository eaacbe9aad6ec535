// A valid gdn.recurrent function in a module with other code: a global
// constructor that stores to a null pointer. The JIT lowers only the
// function it runs (lib/JIT/Compiler.cpp), so the constructor never runs in
// the host process (test/gdn-opt/faults.test).
llvm.mlir.global_ctors ctors = [@boom], priorities = [0 : i32], data = [#llvm.zero]
llvm.func @boom() {
  %0 = llvm.mlir.zero : !llvm.ptr
  %1 = llvm.mlir.constant(1 : i32) : i32
  llvm.store %1, %0 : i32, !llvm.ptr
  llvm.return
}
func.func @f(%q: memref<2x3x1x32xf32>, %k: memref<2x3x1x32xf32>, %v: memref<2x3x2x16xf32>, %o: memref<2x3x2x16xf32>) {
  gdn.recurrent q(%q : memref<2x3x1x32xf32>) k(%k : memref<2x3x1x32xf32>) v(%v : memref<2x3x2x16xf32>) o(%o : memref<2x3x2x16xf32>)
  return
}
