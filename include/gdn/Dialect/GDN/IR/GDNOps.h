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

#define GET_OP_CLASSES
#include "gdn/Dialect/GDN/IR/GDNOps.h.inc"

#endif // GDN_DIALECT_GDN_IR_GDNOPS_H
