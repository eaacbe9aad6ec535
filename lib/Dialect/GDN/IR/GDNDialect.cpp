//===- GDNDialect.cpp - gdn dialect ---------------------------------------===//
#include "gdn/Dialect/GDN/IR/GDNDialect.h"
#include "gdn/Dialect/GDN/IR/GDNOps.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

#include <tuple>

using namespace mlir;
using namespace mlir::gdn;

#include "gdn/Dialect/GDN/IR/GDNOpsDialect.cpp.inc"
#include "gdn/Dialect/GDN/IR/GDNEnums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "gdn/Dialect/GDN/IR/GDNAttrs.cpp.inc"

// Here, beside the generated storage whose tuple of parameters it reads.
bool ScheduleAttr::isComplete() const {
  // Over the storage's tuple of parameters, so a new parameter needs no
  // line here: each is a std::optional or an attribute, present when true.
  bool present = std::apply(
      [](const auto &...parameter) { return (bool(parameter) && ...); },
      getImpl()->getAsKey());
  return present && getLaunch().getValue() != LaunchMode::programmatic;
}

void GDNDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "gdn/Dialect/GDN/IR/GDNOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "gdn/Dialect/GDN/IR/GDNAttrs.cpp.inc"
      >();
  // The model lives in MLIRGDNTransforms, which registerGDNDialect attaches
  // (registerBufferizableOpInterfaceExternalModels).
  declarePromisedInterface<bufferization::BufferizableOpInterface,
                           RecurrentOp>();
  declarePromisedInterface<bufferization::BufferizableOpInterface,
                           CommitOp>();
}
