//===- MmaSync.h - one mma.sync tile as nvvm.mma.sync -----------*- C++ -*-===//
//
// The warp-wide matrix multiply-accumulate the tensor-core forms share
// (TensorCoreSolve.cpp, MmaDecode.cpp): D = A B + C on one tile, its operand
// registers as the PTX ISA's fragments hold them ("Matrix Fragments for
// mma.m16n8k8 / mma.m16n8k16"), four f32 accumulators. Private to
// convert-gdn-to-gpu.
//
//===----------------------------------------------------------------------===//
#ifndef GDN_LIB_CONVERSION_GDNTOGPU_MMASYNC_H
#define GDN_LIB_CONVERSION_GDNTOGPU_MMASYNC_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Builders.h"

#include <array>

namespace mlir {
namespace gdn {

/// Four f32 values: an accumulator fragment (c0..c3).
using Fragment = std::array<Value, 4>;

/// The four f32 accumulators of an nvvm.mma.sync result.
inline Fragment accumulators(OpBuilder &b, Location loc, Value d) {
  Fragment out;
  for (int64_t i = 0; i < 4; ++i)
    out[i] = LLVM::ExtractValueOp::create(b, loc, d, ArrayRef<int64_t>{i});
  return out;
}

/// D = A B + C for one mma.sync tile of `shape` on `type` operands (A row-
/// major, B column-major), `a` and `bb` the operand registers (i32 for tf32
/// and bf16, vector<2xf16> for f16), `c` the four f32 accumulators.
/// nvvm.mma.sync is built directly, not through nvgpu.mma.sync, whose
/// vector operands lower to a few thousand insert/extractelement ops a
/// kernel (and compile time) that LLVM folds.
inline Fragment mmaSync(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                        NVVM::MMATypes type, ArrayRef<Value> a,
                        ArrayRef<Value> bb, const Fragment &c) {
  Type result = LLVM::LLVMStructType::getLiteral(
      b.getContext(), SmallVector<Type>(4, b.getF32Type()));
  Value d = NVVM::MmaOp::create(
      b, loc, result, a, bb, ValueRange(c), shape, std::nullopt, std::nullopt,
      std::array<NVVM::MMATypes, 2>{type, type},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  return accumulators(b, loc, d);
}

} // namespace gdn
} // namespace mlir

#endif // GDN_LIB_CONVERSION_GDNTOGPU_MMASYNC_H
