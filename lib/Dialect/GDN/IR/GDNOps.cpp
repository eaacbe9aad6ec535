//===- GDNOps.cpp - gdn dialect operations --------------------------------===//
//
// The verifier of gdn.recurrent: every inconsistent shape, dtype or attribute
// combination gets a diagnostic naming the operand and the expected shape, so
// that no bad IR reaches the lowerings (and LLVM) below.
//
//===----------------------------------------------------------------------===//
#include "gdn/Dialect/GDN/IR/GDNOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace mlir::gdn;

#define GET_OP_CLASSES
#include "gdn/Dialect/GDN/IR/GDNOps.cpp.inc"

namespace {
std::string formatShape(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleaveComma(shape, os, [&](int64_t d) {
    if (ShapedType::isDynamic(d))
      os << "?";
    else
      os << d;
  });
  os << "]";
  return s;
}

bool isStorageFloat(Type t) { return t.isBF16() || t.isF16() || t.isF32(); }

/// Checks that `value` is a static, contiguous memref of `expected` shape
/// (described by `dimNames`, e.g. "N, T, H, K") and whose element type is
/// accepted by `dtypeOk` (described by `dtypeDesc`).
LogicalResult checkOperand(Operation *op, Value value, StringRef name,
                           ArrayRef<int64_t> expected, StringRef dimNames,
                           llvm::function_ref<bool(Type)> dtypeOk,
                           StringRef dtypeDesc) {
  auto type = cast<MemRefType>(value.getType());
  if (!type.hasStaticShape())
    return op->emitOpError() << "operand '" << name
                             << "' must have a static shape, got "
                             << formatShape(type.getShape());
  if (!type.getLayout().isIdentity())
    return op->emitOpError() << "operand '" << name
                             << "' must be a contiguous row-major memref";
  if (type.getShape() != expected)
    return op->emitOpError()
           << "operand '" << name << "' expects shape " << formatShape(expected)
           << " (" << dimNames << "), got " << formatShape(type.getShape());
  if (!dtypeOk(type.getElementType()))
    return op->emitOpError() << "operand '" << name << "' expects element type "
                             << dtypeDesc << ", got " << type.getElementType();
  return success();
}
} // namespace

RecurrentOp::Dims RecurrentOp::getDims() {
  auto q = cast<MemRefType>(getQ().getType()).getShape();
  auto v = cast<MemRefType>(getV().getType()).getShape();
  return Dims{q[0], q[1], q[2], v[2], q[3], v[3]};
}

float RecurrentOp::getScaleOrDefault() {
  if (auto s = getScaleAttr())
    return s.getValueAsDouble();
  return 1.0f / std::sqrt(static_cast<float>(getDims().K));
}

LogicalResult RecurrentOp::verify() {
  Operation *op = getOperation();
  auto qType = cast<MemRefType>(getQ().getType());
  auto vType = cast<MemRefType>(getV().getType());
  if (qType.getRank() != 4)
    return emitOpError() << "operand 'q' expects rank 4 [N, T, H, K], got rank "
                         << qType.getRank();
  if (vType.getRank() != 4)
    return emitOpError() << "operand 'v' expects rank 4 [N, T, HV, V], got rank "
                         << vType.getRank();
  Type inType = qType.getElementType();
  auto anyInput = [](Type t) { return isStorageFloat(t); };
  auto sameAsQ = [&](Type t) { return t == inType; };
  auto anyFloat = [](Type t) { return isStorageFloat(t); };
  auto f32Only = [](Type t) { return t.isF32(); };
  std::string qDtype;
  llvm::raw_string_ostream(qDtype) << inType << " (the dtype of 'q')";

  ArrayRef<int64_t> q = qType.getShape();
  if (failed(checkOperand(op, getQ(), "q", q, "N, T, H, K", anyInput,
                          "bf16, f16 or f32")))
    return failure();
  int64_t N = q[0], T = q[1], H = q[2], K = q[3];
  if (N < 1 || T < 1 || H < 1 || K < 1)
    return emitOpError() << "operand 'q' expects non-empty dimensions, got "
                         << formatShape(q);
  if (failed(checkOperand(op, getK(), "k", q, "N, T, H, K", sameAsQ, qDtype)))
    return failure();
  ArrayRef<int64_t> v = vType.getShape();
  int64_t HV = v.size() == 4 ? v[2] : 0, V = v.size() == 4 ? v[3] : 0;
  if (HV < 1 || V < 1)
    return emitOpError() << "operand 'v' expects non-empty dimensions, got "
                         << formatShape(v);
  if (failed(checkOperand(op, getV(), "v", {N, T, HV, V}, "N, T, HV, V",
                          sameAsQ, qDtype)))
    return failure();
  if (HV % H != 0)
    return emitOpError() << "the number of value heads HV = " << HV
                         << " must be a multiple of the number of q/k heads H = "
                         << H;
  if (failed(checkOperand(op, getO(), "o", {N, T, HV, V}, "N, T, HV, V",
                          [&](Type t) { return t == vType.getElementType(); },
                          "the dtype of 'v'")))
    return failure();

  // Decay: log-space g, or fused gating (a, A_log, dt_bias), or none.
  if (getG() && (getA() || getALog() || getDtBias()))
    return emitOpError() << "operand 'g' (log-space decay) excludes the fused "
                            "gating operands 'a', 'A_log' and 'dt_bias'";
  if (getG() && failed(checkOperand(op, getG(), "g", {N, T, HV}, "N, T, HV",
                                    anyFloat, "bf16, f16 or f32")))
    return failure();
  bool anyGating = getA() || getALog() || getDtBias();
  if (anyGating && !(getA() && getALog() && getDtBias()))
    return emitOpError() << "fused gating needs all of 'a' [N, T, HV], 'A_log' "
                            "[HV] and 'dt_bias' [HV]; missing '"
                         << (!getA() ? "a" : !getALog() ? "A_log" : "dt_bias")
                         << "'";
  if (anyGating) {
    if (failed(checkOperand(op, getA(), "a", {N, T, HV}, "N, T, HV", anyFloat,
                            "bf16, f16 or f32")) ||
        failed(checkOperand(op, getALog(), "A_log", {HV}, "HV", f32Only,
                            "f32")) ||
        failed(checkOperand(op, getDtBias(), "dt_bias", {HV}, "HV", f32Only,
                            "f32")))
      return failure();
  }

  // Write strength: beta, or logits b (sigmoid in the kernel), or 1.
  if (getBeta() && getB())
    return emitOpError() << "operands 'beta' and 'b' (beta logits) are "
                            "mutually exclusive";
  if (getBeta() && failed(checkOperand(op, getBeta(), "beta", {N, T, HV},
                                       "N, T, HV", anyFloat,
                                       "bf16, f16 or f32")))
    return failure();
  if (getB() && failed(checkOperand(op, getB(), "b", {N, T, HV}, "N, T, HV",
                                    anyFloat, "bf16, f16 or f32")))
    return failure();

  // State, in the layout the attribute names.
  SmallVector<int64_t> stateShape =
      isVKLayout() ? SmallVector<int64_t>{N, HV, V, K}
                   : SmallVector<int64_t>{N, HV, K, V};
  StringRef stateDims = isVKLayout() ? "N, HV, V, K for layout vk"
                                     : "N, HV, K, V for layout kv";
  for (auto [value, name] :
       {std::pair<Value, StringRef>{getInitialState(), "initial_state"},
        {getFinalState(), "final_state"}}) {
    if (value && failed(checkOperand(op, value, name, stateShape, stateDims,
                                     f32Only, "f32")))
      return failure();
  }

  if (auto s = getScaleAttr()) {
    double scale = s.getValueAsDouble();
    if (!std::isfinite(scale) || scale <= 0.0)
      return emitOpError() << "attribute 'scale' must be finite and positive, "
                              "got "
                           << scale;
  }
  return success();
}
