//===- RecurrentBuilder.h - gdnRecurrentDesc to a gdn.recurrent -*- C++ -*-===//
//
// The function a gdnRecurrentDesc describes, built with OpBuilder and the
// op's generated builders: `func.func @gdn_recurrent(<arguments>)` whose
// body is the gdn.recurrent and a return, the arguments in the order
// gdn-c/GDN.h documents. Internal to the C API (and its unit test).
//
//===----------------------------------------------------------------------===//
#ifndef GDN_CAPI_RECURRENTBUILDER_H
#define GDN_CAPI_RECURRENTBUILDER_H

#include "gdn-c/GDN.h"
#include "gdn/Dialect/GDN/IR/GDNDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>

namespace mlir {
namespace gdn {

/// The name of the function buildRecurrentModule builds.
constexpr StringLiteral kDescFunctionName = "gdn_recurrent";

/// A module holding the function `desc` describes, its gdn.recurrent
/// pinned to `schedule` (null: the cost model's schedule), in `context`
/// (which has the gdn, func and memref dialects loaded). Not verified: the
/// caller verifies it (the op's verifier checks shapes and strides). A
/// description out of range (a size < 1, a buffer past 2^40 bytes, an
/// unknown enum value, options that contradict each other) is a null
/// module and `error` says why, naming the field.
OwningOpRef<ModuleOp> buildRecurrentModule(const gdnRecurrentDesc &desc,
                                           ScheduleAttr schedule,
                                           MLIRContext *context,
                                           std::string &error);

} // namespace gdn
} // namespace mlir

#endif // GDN_CAPI_RECURRENTBUILDER_H
