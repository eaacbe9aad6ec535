//===- GDNAttrs.cpp - gdn dialect attributes ------------------------------===//
//
// #gdn.schedule: its parse of host text and its checks; the verifier of the
// dialect's discardable attributes. The parser and printer are generated
// (GDNAttrs.td, `struct(params)`); what works over the storage's tuple of
// parameters (pinnedBy, with, zero, isComplete) is in GDNDialect.cpp, beside
// it.
//
//===----------------------------------------------------------------------===//
#include "gdn/Dialect/GDN/IR/GDNDialect.h"
#include "gdn/Dialect/GDN/IR/GDNOps.h"
#include "gdn/Support/ParseLimits.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <tuple>

using namespace mlir;
using namespace mlir::gdn;

FailureOr<std::optional<int64_t>> mlir::gdn::parseScheduleSize(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (succeeded(parser.parseOptionalKeyword(&keyword)))
    return parser.emitError(loc) << "expected an integer size, not '"
                                 << keyword << "'";
  int64_t value;
  if (parser.parseInteger(value))
    return failure();
  return std::optional<int64_t>(value);
}

ScheduleAttr ScheduleAttr::parseText(StringRef text, MLIRContext *context,
                                     std::string &error) {
  text = text.trim();
  // Host text (--schedule, a pass option, gdnRecurrentDesc::schedule): the
  // parser recurses once a bracket, so deep nesting would overflow the stack.
  if (std::optional<size_t> at = findDeepNesting(text)) {
    error = "the schedule text at offset " + std::to_string(*at) + " is " +
            deepNestingMessage();
    return {};
  }
  std::string first;
  ScopedDiagnosticHandler handler(context, [&](Diagnostic &d) {
    if (first.empty())
      first = d.str();
    return success();
  });
  size_t numRead = 0;
  Attribute attr = parseAttribute(text, context, Type(), &numRead);
  auto schedule = dyn_cast_or_null<ScheduleAttr>(attr);
  if (schedule && numRead == text.size())
    return schedule;
  llvm::raw_string_ostream os(error);
  os << "'";
  llvm::printEscapedString(text, os);
  os << "' is not a #gdn.schedule<...>: ";
  if (!first.empty())
    os << first;
  else if (!attr)
    os << "it does not parse";
  else if (!schedule)
    os << "it is another attribute, " << attr;
  else
    os << "text follows the attribute at offset " << numRead;
  return {};
}

LogicalResult ScheduleAttr::verify(
    function_ref<InFlightDiagnostic()> emitError,
    std::optional<int64_t> columnsPerLane, std::optional<int64_t> lanesAlongV,
    std::optional<int64_t> warps, std::optional<int64_t> stagedTokens,
    std::optional<int64_t> unrollTokens, ReductionsAttr, ChunkSolveAttr,
    PrecisionAttr, std::optional<int64_t> producerStages,
    std::optional<int64_t> consumerRegisters,
    std::optional<int64_t> statePrefetchDistance,
    std::optional<int64_t> inputPrefetchDistance,
    std::optional<int64_t> chunkPrefetchDistance,
    std::optional<int64_t> maxRegisters, LaunchModeAttr,
    std::optional<int64_t> segments,
    std::optional<int64_t> concurrentSolves) {
  // The smallest value of each size: 1 where a count of 0 means nothing,
  // 0 where 0 means none of it.
  for (auto [name, value, lo] :
       {std::tuple<StringRef, std::optional<int64_t>, int64_t>{
            "columns_per_lane", columnsPerLane, 1},
        {"lanes_along_v", lanesAlongV, 1},
        {"warps", warps, 1},
        {"staged_tokens", stagedTokens, 0},
        {"unroll_tokens", unrollTokens, 1},
        {"producer_stages", producerStages, 0},
        {"consumer_registers", consumerRegisters, 0},
        {"state_prefetch_distance", statePrefetchDistance, 0},
        {"input_prefetch_distance", inputPrefetchDistance, 0},
        {"chunk_prefetch_distance", chunkPrefetchDistance, 0},
        {"max_registers", maxRegisters, 0},
        {"segments", segments, 1},
        {"concurrent_solves", concurrentSolves, 0}})
    if (value && (*value < lo || *value > kMaxSize))
      return emitError() << "#gdn.schedule " << name << " = " << *value
                         << " must be in [" << lo << ", " << kMaxSize << "]";
  return success();
}

LogicalResult GDNDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attr) {
  if (attr.getName() == LaunchAttrHelper::getNameStr()) {
    // By name: the dialect does not link the GPU dialect (the header's
    // operation name is a constant).
    if (op->getName().getStringRef() != gpu::LaunchFuncOp::getOperationName())
      return op->emitError() << "'" << LaunchAttrHelper::getNameStr()
                             << "' is only meaningful on gpu.launch_func";
    auto mode = dyn_cast<LaunchModeAttr>(attr.getValue());
    if (!mode)
      return op->emitError() << "'" << LaunchAttrHelper::getNameStr()
                             << "' must be a #gdn.launch<...>, not "
                             << attr.getValue();
    if (mode.getValue() == LaunchMode::programmatic)
      return op->emitError()
             << "'" << LaunchAttrHelper::getNameStr()
             << "' must name the point the kernel lets the next one launch "
                "(programmatic_at_start or programmatic_after_recurrence): "
                "'programmatic' is a schedule pin only";
    return success();
  }
  if (attr.getName() != kScheduleAttrName)
    return success();
  if (!isa<RecurrentOp, ReplayCommitOp>(op))
    return op->emitError() << "'" << kScheduleAttrName
                           << "' is only meaningful on gdn.recurrent and "
                              "gdn.replay_commit";
  if (!isa<ScheduleAttr>(attr.getValue()))
    return op->emitError() << "'" << kScheduleAttrName
                           << "' must be a #gdn.schedule<...>, not "
                           << attr.getValue();
  return success();
}
