//===- GDNDialect.h - gdn dialect -------------------------------*- C++ -*-===//
//
// The dialect, with its enums and attributes (the dialect's discardable
// attribute helpers return them).
//
//===----------------------------------------------------------------------===//
#ifndef GDN_DIALECT_GDN_IR_GDNDIALECT_H
#define GDN_DIALECT_GDN_IR_GDNDIALECT_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/Operation.h"

#include "gdn/Dialect/GDN/IR/GDNEnums.h.inc"
#define GET_ATTRDEF_CLASSES
namespace mlir {
class AsmParser;
namespace gdn {
/// Parses a size parameter of #gdn.schedule (GDNAttrs.td, GDN_SizeParameter):
/// an integer literal, not a keyword such as `true`.
FailureOr<std::optional<int64_t>> parseScheduleSize(AsmParser &parser);
} // namespace gdn
} // namespace mlir

#include "gdn/Dialect/GDN/IR/GDNAttrs.h.inc"

#include "gdn/Dialect/GDN/IR/GDNOpsDialect.h.inc"

#endif // GDN_DIALECT_GDN_IR_GDNDIALECT_H
