//===- OperandLayouts.cpp - memref layouts the gdn ops accept -------------===//
//
// The rules are stated in OperandLayouts.h.
//
//===----------------------------------------------------------------------===//
#include "gdn/Dialect/GDN/IR/OperandLayouts.h"
#include "gdn/Dialect/GDN/IR/GDNOps.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::gdn;

OperandLayout gdn::getOperandLayout(OpOperand &operand) {
  Value v = operand.get();
  auto in = [&](std::initializer_list<Value> values) {
    return llvm::is_contained(values, v);
  };
  return llvm::TypeSwitch<Operation *, OperandLayout>(operand.getOwner())
      .Case([&](RecurrentOp op) {
        if (in({op.getQ(), op.getK(), op.getV(), op.getG(), op.getA(),
                op.getBeta(), op.getB()}))
          return OperandLayout::Tokens;
        if (in({op.getInitialState(), op.getFinalState(),
                op.getIntermediateStates()}))
          return OperandLayout::Slots;
        return OperandLayout::Dense;
      })
      .Case([&](CommitOp op) {
        return in({op.getIntermediateStates(), op.getState()})
                   ? OperandLayout::Slots
                   : OperandLayout::Dense;
      })
      .Default([](Operation *) { return OperandLayout::Dense; });
}

int64_t gdn::strideAlignment(MemRefType type) {
  // Element types without a bit width (index, vector, complex) are the
  // operand checks' error; a layout check before them must not ask.
  if (!type.getElementType().isIntOrFloat())
    return 1;
  int64_t bytes = std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
  int64_t vector = std::max<int64_t>(1, 16 / bytes);
  if (type.getRank() == 0)
    return 1;
  int64_t inner = type.getShape().back();
  if (inner <= 0 || ShapedType::isDynamic(inner))
    return 1;
  int64_t pow2 = inner & -inner; // the largest power of two dividing it
  return std::min(vector, pow2);
}

std::string gdn::checkOperandLayout(MemRefType type, OperandLayout kind) {
  if (type.getLayout().isIdentity())
    return "";
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return "its layout is not strided";
  int64_t align = strideAlignment(type);
  if (ShapedType::isDynamic(offset))
    return "its offset must be static";
  if (offset < 0 || offset % align != 0)
    return ("its offset " + Twine(offset) +
            " must be a non-negative multiple of " + Twine(align) + " elements")
        .str();
  ArrayRef<int64_t> shape = type.getShape();
  int64_t rank = type.getRank();
  // Dense strides, innermost first; dimension i of a dense layout steps by
  // dense[i] elements.
  SmallVector<int64_t> dense(rank, 1);
  for (int64_t i = rank - 2; i >= 0; --i)
    if (llvm::MulOverflow(dense[i + 1], shape[i + 1], dense[i]))
      return "its dense strides overflow int64 (more than 2^63 elements)";
  auto at = [](int64_t i, int64_t stride) {
    return ("stride " + Twine(stride) + " of dimension " + Twine(i)).str();
  };
  for (int64_t i = 0; i < rank; ++i) {
    if (shape[i] == 1)
      continue; // never stepped
    int64_t stride = strides[i];
    if (ShapedType::isDynamic(stride))
      return ("stride of dimension " + Twine(i) + " must be static").str();
    bool mayDiffer = (kind == OperandLayout::Tokens && i != rank - 1) ||
                     (kind == OperandLayout::Slots && i == 0);
    if (!mayDiffer) {
      if (stride != dense[i])
        return at(i, stride) + " must be " + std::to_string(dense[i]) +
               (kind == OperandLayout::Tokens
                    ? " (the innermost dimension is contiguous)"
                    : kind == OperandLayout::Slots
                          ? " (only the leading dimension, the slot or row, "
                            "may have a pitch)"
                          : " (this operand must be dense)");
      continue;
    }
    if (stride < 0)
      return at(i, stride) + " must not be negative";
    if (stride % align != 0)
      return at(i, stride) + " is not a multiple of " + std::to_string(align) +
             " elements (16 bytes, or the innermost dimension's width when "
             "narrower)";
    if (kind == OperandLayout::Slots && stride < dense[0])
      return at(i, stride) + " is smaller than a slot (" +
             std::to_string(dense[0]) + " elements): slots would overlap";
  }
  return "";
}
