//===- GDNOps.h - gdn dialect operations ------------------------*- C++ -*-===//
#ifndef GDN_DIALECT_GDN_IR_GDNOPS_H
#define GDN_DIALECT_GDN_IR_GDNOPS_H

#include "gdn/Dialect/GDN/IR/GDNDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

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
#define GET_OP_CLASSES
#include "gdn/Dialect/GDN/IR/GDNOps.h.inc"

#endif // GDN_DIALECT_GDN_IR_GDNOPS_H
