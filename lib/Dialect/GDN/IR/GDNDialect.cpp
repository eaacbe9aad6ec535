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

// The generated printer and parser (generatedAttributePrinter/Parser), with
// brackets around a standalone #gdn.launch, whose own format is the bare
// keyword of a #gdn.schedule parameter: #gdn.launch<programmatic_at_start>.
Attribute GDNDialect::parseAttribute(DialectAsmParser &parser,
                                     Type type) const {
  SMLoc loc = parser.getCurrentLocation();
  if (succeeded(parser.parseOptionalKeyword(LaunchModeAttr::getMnemonic()))) {
    Attribute attr;
    if (failed(parser.parseLess()) ||
        !(attr = LaunchModeAttr::parse(parser, type)) ||
        failed(parser.parseGreater()))
      return {};
    return attr;
  }
  StringRef mnemonic;
  Attribute attr;
  OptionalParseResult parsed =
      generatedAttributeParser(parser, &mnemonic, type, attr);
  if (parsed.has_value())
    return succeeded(*parsed) ? attr : Attribute();
  parser.emitError(loc) << "unknown attribute `" << mnemonic
                        << "` in dialect `" << getNamespace() << "`";
  return {};
}

void GDNDialect::printAttribute(Attribute attr,
                                DialectAsmPrinter &printer) const {
  if (auto launch = dyn_cast<LaunchModeAttr>(attr)) {
    printer << LaunchModeAttr::getMnemonic() << '<';
    launch.print(printer);
    printer << '>';
    return;
  }
  (void)generatedAttributePrinter(attr, printer);
}

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
  declarePromisedInterface<bufferization::BufferizableOpInterface,
                           ReplayCommitOp>();
}
