// The CPU JIT compiles the body of the caller's function, not its name or
// attributes: a function named like the libm function the kernel calls, and
// function or argument attributes LLVM would act on, run and check (they
// once crashed the JIT, aborted the process or gave NaN).
// RUN: split-file %s %t
// RUN: gdn-run --target=cpu --check %t/named-expf.mlir | FileCheck %s
// RUN: gdn-run --target=cpu --check %t/function-attributes.mlir | FileCheck %s
// RUN: gdn-run --target=cpu --check %t/argument-attributes.mlir | FileCheck %s
// CHECK: ran on cpu
// CHECK: check o {{.*}} ok

//--- named-expf.mlir
func.func @expf(%q: memref<1x2x1x16xf32>, %k: memref<1x2x1x16xf32>, %v: memref<1x2x1x16xf32>,
                %g: memref<1x2x1xf32>, %o: memref<1x2x1x16xf32>) {
  gdn.recurrent q(%q : memref<1x2x1x16xf32>) k(%k : memref<1x2x1x16xf32>)
      v(%v : memref<1x2x1x16xf32>) g(%g : memref<1x2x1xf32>) o(%o : memref<1x2x1x16xf32>) {qk_l2norm}
  return
}

//--- function-attributes.mlir
func.func @f(%q: memref<1x2x1x16xf32>, %k: memref<1x2x1x16xf32>, %v: memref<1x2x1x16xf32>,
             %g: memref<1x2x1xf32>, %o: memref<1x2x1x16xf32>)
    attributes {instrument_function_entry = "no_such_hook", target_cpu = "no-such-cpu",
                llvm.emit_c_interface} {
  gdn.recurrent q(%q : memref<1x2x1x16xf32>) k(%k : memref<1x2x1x16xf32>)
      v(%v : memref<1x2x1x16xf32>) g(%g : memref<1x2x1xf32>) o(%o : memref<1x2x1x16xf32>) {qk_l2norm}
  return
}

//--- argument-attributes.mlir
func.func @f(%q: memref<1x2x1x16xf32> {llvm.byval = f32}, %k: memref<1x2x1x16xf32> {llvm.noalias},
             %v: memref<1x2x1x16xf32> {llvm.inalloca = f32}, %g: memref<1x2x1xf32> {llvm.preallocated = f32},
             %o: memref<1x2x1x16xf32> {llvm.noalias, llvm.readonly}) {
  gdn.recurrent q(%q : memref<1x2x1x16xf32>) k(%k : memref<1x2x1x16xf32>)
      v(%v : memref<1x2x1x16xf32>) g(%g : memref<1x2x1xf32>) o(%o : memref<1x2x1x16xf32>) {qk_l2norm}
  return
}
