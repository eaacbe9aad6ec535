//===- GDNDialect.h - gdn dialect -------------------------------*- C++ -*-===//
#ifndef GDN_DIALECT_GDN_IR_GDNDIALECT_H
#define GDN_DIALECT_GDN_IR_GDNDIALECT_H

#include "mlir/IR/Dialect.h"

#include "gdn/Dialect/GDN/IR/GDNOpsDialect.h.inc"

#endif // GDN_DIALECT_GDN_IR_GDNDIALECT_H
