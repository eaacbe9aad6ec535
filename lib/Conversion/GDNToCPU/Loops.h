//===- Loops.h - scf loop helpers of the CPU lowering -----------*- C++ -*-===//
//
// The loops the CPU lowering of gdn.recurrent and gdn.commit is written in.
// Private to convert-gdn-to-cpu.
//
//===----------------------------------------------------------------------===//
#ifndef GDN_LIB_CONVERSION_GDNTOCPU_LOOPS_H
#define GDN_LIB_CONVERSION_GDNTOCPU_LOOPS_H

#include "mlir/IR/Builders.h"

namespace mlir {
namespace gdn {

/// Emits `for i in [lb, upper)` and calls `body(i)` inside.
void forRange(OpBuilder &b, Location loc, Value lb, Value upper,
              llvm::function_ref<void(Value)> body);

/// Emits `for i in [0, ub)` and calls `body(i)` inside.
void forRange(OpBuilder &b, Location loc, int64_t ub,
              llvm::function_ref<void(Value)> body);

/// Emits combine(... combine(combine(0, term(0)), term(1)) ..., term(ub - 1))
/// in f32.
Value reduceRange(OpBuilder &b, Location loc, int64_t ub,
                  llvm::function_ref<Value(Value, Value)> combine,
                  llvm::function_ref<Value(Value)> term);

} // namespace gdn
} // namespace mlir

#endif // GDN_LIB_CONVERSION_GDNTOCPU_LOOPS_H
