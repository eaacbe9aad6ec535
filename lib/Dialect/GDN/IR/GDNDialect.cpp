//===- GDNDialect.cpp - gdn dialect ---------------------------------------===//
#include "gdn/Dialect/GDN/IR/GDNDialect.h"
#include "gdn/Dialect/GDN/IR/GDNOps.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cassert>
#include <tuple>
#include <type_traits>
#include <utility>

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

// Here, beside the generated storage whose tuple of parameters they read:
// each works over that tuple, so a new parameter needs no line here (a
// parameter of a new type: an overload of `with` and of zeroOf).
namespace {
using ScheduleKey = gdn::detail::ScheduleAttrStorage::KeyTy;

/// The attribute of `key`, unverified: ScheduleAttr::get asserts the
/// verifier (assertion builds), and the cost model's draft (zero()) and the
/// probes of `with` hold values outside its ranges on purpose.
ScheduleAttr scheduleOf(MLIRContext *context, const ScheduleKey &key) {
  return std::apply(
      [&](const auto &...parameter) {
        return mlir::detail::AttributeUniquer::get<ScheduleAttr>(context,
                                                                 parameter...);
      },
      key);
}

/// The value of `get`'s parameter in `self` set to `value`: the element of
/// the storage's tuple of type T whose replacement by `value` makes `get`
/// return it (replacing any other element of type T leaves `get`'s value).
template <typename T>
ScheduleAttr withParameter(ScheduleAttr self, T (ScheduleAttr::*get)() const,
                           T value) {
  if ((self.*get)() == value)
    return self;
  ScheduleKey key = self.getImpl()->getAsKey();
  ScheduleAttr result;
  std::apply(
      [&](auto &...element) {
        auto probe = [&](auto &e) {
          if constexpr (std::is_same_v<std::decay_t<decltype(e)>, T>) {
            if (result)
              return;
            T old = e;
            e = value;
            ScheduleAttr candidate = scheduleOf(self.getContext(), key);
            if ((candidate.*get)() == value)
              result = candidate;
            else
              e = old;
          }
        };
        (probe(element), ...);
      },
      key);
  assert(result && "`get` is no getter of a #gdn.schedule parameter");
  return result;
}

/// Element by element, `pinned`'s where present.
template <size_t... I>
void pickPinned(ScheduleKey &own, const ScheduleKey &pinned,
                std::index_sequence<I...>) {
  ((std::get<I>(pinned) ? (void)(std::get<I>(own) = std::get<I>(pinned))
                        : (void)0),
   ...);
}

std::optional<int64_t> zeroOf(MLIRContext *, std::optional<int64_t>) {
  return 0;
}
template <typename EnumAttrT>
EnumAttrT zeroOf(MLIRContext *context, EnumAttrT) {
  return EnumAttrT::get(context,
                        decltype(std::declval<EnumAttrT>().getValue())(0));
}
} // namespace

ScheduleAttr ScheduleAttr::pinnedBy(ScheduleAttr pins) const {
  if (!pins)
    return *this;
  ScheduleKey own = getImpl()->getAsKey();
  ScheduleKey pinned = pins.getImpl()->getAsKey();
  pickPinned(own, pinned,
             std::make_index_sequence<std::tuple_size_v<ScheduleKey>>());
  return scheduleOf(getContext(), own);
}

ScheduleAttr ScheduleAttr::with(std::optional<int64_t> (ScheduleAttr::*get)()
                                    const,
                                std::optional<int64_t> value) const {
  return withParameter(*this, get, value);
}
ScheduleAttr ScheduleAttr::with(ReductionsAttr (ScheduleAttr::*get)() const,
                                Reductions value) const {
  return withParameter(*this, get, ReductionsAttr::get(getContext(), value));
}
ScheduleAttr ScheduleAttr::with(ChunkSolveAttr (ScheduleAttr::*get)() const,
                                ChunkSolve value) const {
  return withParameter(*this, get, ChunkSolveAttr::get(getContext(), value));
}
ScheduleAttr ScheduleAttr::with(PrecisionAttr (ScheduleAttr::*get)() const,
                                Precision value) const {
  return withParameter(*this, get, PrecisionAttr::get(getContext(), value));
}
ScheduleAttr ScheduleAttr::with(LaunchModeAttr (ScheduleAttr::*get)() const,
                                LaunchMode value) const {
  return withParameter(*this, get, LaunchModeAttr::get(getContext(), value));
}

ScheduleAttr ScheduleAttr::zero(MLIRContext *context) {
  ScheduleKey key;
  std::apply([&](auto &...e) { ((e = zeroOf(context, e)), ...); }, key);
  return scheduleOf(context, key);
}

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
