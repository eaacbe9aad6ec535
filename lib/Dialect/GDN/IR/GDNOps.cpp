//===- GDNOps.cpp - gdn dialect operations --------------------------------===//
//
// The verifier of gdn.recurrent: every inconsistent shape, dtype or attribute
// combination gets a diagnostic naming the operand and the expected shape, so
// that no bad IR reaches the lowerings (and LLVM) below. It checks the tensor
// form and the memref form alike (through ShapedType); memrefs must also have
// a layout their operand accepts (OperandLayouts.h), and only the tensor form
// has results (one per init).
//
//===----------------------------------------------------------------------===//
#include "gdn/Dialect/GDN/IR/GDNOps.h"
#include "gdn/Dialect/GDN/IR/OperandLayouts.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <functional>
#include <limits>

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

/// Checks that `value` (a tensor or a memref) has a static shape.
LogicalResult checkStatic(Operation *op, Value value, StringRef name) {
  auto type = cast<ShapedType>(value.getType());
  if (!type.hasStaticShape())
    return op->emitOpError() << "operand '" << name
                             << "' must have a static shape, got "
                             << formatShape(type.getShape());
  return success();
}

/// Checks that `value` is a static tensor without encoding or a static memref
/// with a layout of class `layout` (OperandLayouts.h), of `expected` shape
/// (described by `dimNames`, e.g. "N, T, H, K") and whose element type is
/// accepted by `dtypeOk` (described by `dtypeDesc`).
LogicalResult checkOperand(Operation *op, Value value, StringRef name,
                           ArrayRef<int64_t> expected, StringRef dimNames,
                           llvm::function_ref<bool(Type)> dtypeOk,
                           StringRef dtypeDesc,
                           OperandLayout layout = OperandLayout::Dense) {
  auto type = cast<ShapedType>(value.getType());
  if (failed(checkStatic(op, value, name)))
    return failure();
  if (auto memref = dyn_cast<MemRefType>(type)) {
    std::string why = checkOperandLayout(memref, layout);
    if (!why.empty())
      return op->emitOpError()
             << "operand '" << name << "' has an unsupported layout "
             << memref.getLayout() << ": " << why;
  }
  // Kernels take plain global pointers: another address space (e.g. GPU
  // shared memory, 3) would make them read and write the wrong memory.
  if (auto memref = dyn_cast<MemRefType>(type);
      memref && memref.getMemorySpace())
    return op->emitOpError() << "operand '" << name
                             << "' must be in the default memory space, got "
                             << memref.getMemorySpace();
  if (auto tensor = dyn_cast<RankedTensorType>(type);
      tensor && tensor.getEncoding())
    return op->emitOpError()
           << "operand '" << name << "' must be a tensor without encoding, got "
           << tensor.getEncoding();
  if (type.getShape() != expected)
    return op->emitOpError()
           << "operand '" << name << "' expects shape " << formatShape(expected)
           << " (" << dimNames << "), got " << formatShape(type.getShape());
  if (!dtypeOk(type.getElementType()))
    return op->emitOpError() << "operand '" << name << "' expects element type "
                             << dtypeDesc << ", got " << type.getElementType();
  return success();
}

/// Succeeds on a gdn op in memref form; on its tensor form, reports that
/// `consumer` (a pass name) needs the memref form and fails.
template <typename GDNOp>
LogicalResult requireMemRefFormOf(GDNOp op, StringRef consumer) {
  if (!op.hasPureTensorSemantics())
    return success();
  return op.emitOpError() << "is in tensor form; " << consumer
                          << " needs the memref form: run --one-shot-bufferize "
                             "first";
}

/// The operands of `op` that are present, with their keywords.
SmallVector<std::pair<Value, StringRef>> namedOperands(RecurrentOp op) {
  std::pair<Value, StringRef> all[] = {
      {op.getQ(), "q"},
      {op.getK(), "k"},
      {op.getV(), "v"},
      {op.getG(), "g"},
      {op.getA(), "a"},
      {op.getALog(), "A_log"},
      {op.getDtBias(), "dt_bias"},
      {op.getBeta(), "beta"},
      {op.getB(), "b"},
      {op.getStateIndices(), "state_indices"},
      {op.getCuSeqlens(), "cu_seqlens"},
      {op.getIntermediateStateIndices(), "intermediate_state_indices"},
      {op.getRetrieveParentToken(), "retrieve_parent_token"},
      {op.getCheckpointOffsets(), "checkpoint_offsets"},
      {op.getInitialState(), "initial_state"},
      {op.getIntermediateStates(), "intermediate_states"},
      {op.getIntermediateStateScale(), "intermediate_state_scale"},
      {op.getKWindow(), "k_window"},
      {op.getVWindow(), "v_window"},
      {op.getGWindow(), "g_window"},
      {op.getBetaWindow(), "beta_window"},
      {op.getStateCheckpoints(), "state_checkpoints"},
      {op.getCheckpointScale(), "checkpoint_scale"},
      {op.getStateScale(), "state_scale"},
      {op.getFinalState(), "final_state"},
      {op.getO(), "o"}};
  SmallVector<std::pair<Value, StringRef>> present;
  for (auto &operand : all)
    if (operand.first)
      present.push_back(operand);
  return present;
}
} // namespace

RecurrentOp::Dims RecurrentOp::getDims() {
  auto q = cast<ShapedType>(getQ().getType()).getShape();
  auto v = cast<ShapedType>(getV().getType()).getShape();
  int64_t N = q[0];
  if (Value cu = getCuSeqlens())
    N = cast<ShapedType>(cu.getType()).getDimSize(0) - 1;
  return Dims{N, q[1], q[2], v[2], q[3], v[3]};
}

bool RecurrentOp::hasPerKeyDecay() {
  Value gate = getG() ? getG() : getA();
  return gate && cast<ShapedType>(gate.getType()).getRank() == 4;
}

bool RecurrentOp::hasPerChannelBeta() {
  Value beta = getBeta() ? getBeta() : getB();
  return beta && cast<ShapedType>(beta.getType()).getRank() == 4;
}

float RecurrentOp::getScaleOrDefault() {
  if (auto s = getScaleAttr())
    return s.getValueAsDouble();
  return 1.0f / std::sqrt(static_cast<float>(getDims().K));
}

MutableOperandRange RecurrentOp::getDpsInitsMutable() {
  // `final_state` (optional) and `o` are the last two operand segments.
  unsigned numInits = getFinalState() ? 2 : 1;
  return MutableOperandRange(getOperation(), getNumOperands() - numInits,
                             numInits);
}

Value RecurrentOp::getOResult() {
  return getNumResults() ? getResult(getNumResults() - 1) : Value();
}

Value RecurrentOp::getFinalStateResult() {
  return getNumResults() == 2 ? getResult(0) : Value();
}

LogicalResult RecurrentOp::requireMemRefForm(StringRef consumer) {
  return requireMemRefFormOf(*this, consumer);
}

void RecurrentOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  // Memref form: every input is read and every init written in full. The
  // tensor form has no memory effects (value semantics).
  for (OpOperand &operand : getOperation()->getOpOperands()) {
    if (!isa<MemRefType>(operand.get().getType()))
      continue;
    // Pools, varlen and intermediate buffers are written only in part.
    bool window =
        operand.get() == getKWindow() || operand.get() == getVWindow() ||
        operand.get() == getGWindow() || operand.get() == getBetaWindow();
    window = window || operand.get() == getStateCheckpoints() ||
             operand.get() == getCheckpointScale();
    bool perToken = operand.get() == getIntermediateStates() ||
                    operand.get() == getIntermediateStateScale();
    bool partial = writesInitsInPart() || perToken || window;
    // A quantized state's scales go with it: read with initial_state,
    // written with final_state.
    if (operand.get() == getStateScale()) {
      if (getInitialState())
        effects.emplace_back(MemoryEffects::Read::get(), &operand, /*stage=*/0,
                             /*effectOnFullRegion=*/!partial,
                             SideEffects::DefaultResource::get());
      if (getFinalState())
        effects.emplace_back(MemoryEffects::Write::get(), &operand,
                             /*stage=*/0, /*effectOnFullRegion=*/!partial,
                             SideEffects::DefaultResource::get());
      continue;
    }
    if (isDpsInit(&operand) || perToken || window) {
      // A tree reads parent states back from the buffer it writes.
      if (perToken && hasParentTable())
        effects.emplace_back(MemoryEffects::Read::get(), &operand, /*stage=*/0,
                             /*effectOnFullRegion=*/false,
                             SideEffects::DefaultResource::get());
      effects.emplace_back(MemoryEffects::Write::get(), &operand, /*stage=*/0,
                           /*effectOnFullRegion=*/!partial,
                           SideEffects::DefaultResource::get());
    } else
      effects.emplace_back(MemoryEffects::Read::get(), &operand, /*stage=*/0,
                           /*effectOnFullRegion=*/true,
                           SideEffects::DefaultResource::get());
  }
}

/// Memref form: no operand the op writes is the same value as another of
/// its operands, for the kernels read and write each operand through its
/// own pointer and such an alias gives undefined results; but
/// initial_state may be final_state, a state updated in place. `named`:
/// every operand slot in operand order with its keyword, null where an
/// optional one is absent. (gdn-run and the C API refuse any argument used
/// twice.)
static LogicalResult
verifyWrittenAliases(Operation *op,
                     ArrayRef<std::pair<Value, StringRef>> named) {
  SmallVector<MemoryEffects::EffectInstance> effects;
  cast<MemoryEffectOpInterface>(op).getEffects(effects);
  llvm::SmallDenseSet<unsigned> written; // operand numbers
  for (MemoryEffects::EffectInstance &effect : effects)
    if (isa<MemoryEffects::Write>(effect.getEffect()))
      if (auto *operand = effect.getEffectValue<OpOperand *>())
        written.insert(operand->getOperandNumber());
  // The present operands, numbered as the op's operands are.
  SmallVector<std::pair<Value, StringRef>> present;
  for (auto operand : named)
    if (operand.first)
      present.push_back(operand);
  if (present.size() != op->getNumOperands())
    return success(); // not this op's operand list: nothing to name
  for (auto [i, a] : llvm::enumerate(present))
    for (unsigned j = i + 1; j < present.size(); ++j) {
      auto b = present[j];
      if (a.first != b.first ||
          (!written.contains(i) && !written.contains(j)) ||
          (a.second == "initial_state" && b.second == "final_state"))
        continue;
      auto [w, r] = written.contains(j) ? std::pair(b.second, a.second)
                                        : std::pair(a.second, b.second);
      return op->emitOpError()
             << "operand '" << w << "' is written and is the same value as '"
             << r << "'; give it its own buffer (only initial_state and "
             << "final_state may share one: a state updated in place)";
    }
  return success();
}

/// All operands are tensors (tensor form) or all are memrefs (memref form).
static LogicalResult verifyForm(RecurrentOp op) {
  SmallVector<std::pair<Value, StringRef>> operands = namedOperands(op);
  auto [first, firstName] = operands.front();
  bool tensorForm = isa<RankedTensorType>(first.getType());
  for (auto [value, name] : operands) {
    if (isa<RankedTensorType>(value.getType()) == tensorForm)
      continue;
    return op.emitOpError()
           << "operands must be all tensors (tensor form) or all memrefs "
              "(memref form); '"
           << firstName << "' is a " << (tensorForm ? "tensor" : "memref")
           << " but '" << name << "' is a "
           << (tensorForm ? "memref" : "tensor");
  }
  return success();
}

/// Tensor form: one result per init (final_state if given, then o), of the
/// init's type. Memref form: no result.
static LogicalResult verifyResults(RecurrentOp op) {
  unsigned numResults = op.getNumResults();
  if (!op.hasPureTensorSemantics()) {
    if (numResults != 0)
      return op.emitOpError()
             << "has no results in memref form, got " << numResults;
    return success();
  }
  SmallVector<std::pair<Value, StringRef>> inits;
  if (op.getFinalState())
    inits.push_back({op.getFinalState(), "final_state"});
  inits.push_back({op.getO(), "o"});
  if (numResults != inits.size())
    return op.emitOpError()
           << "expects " << inits.size() << " result"
           << (inits.size() == 1 ? "" : "s") << " in tensor form ("
           << (inits.size() == 1 ? "the new 'o'"
                                 : "the new 'final_state' and 'o'")
           << "), got " << numResults;
  for (auto [i, init] : llvm::enumerate(inits)) {
    Type resultType = op.getResult(i).getType();
    if (resultType != init.first.getType())
      return op.emitOpError()
             << "result #" << i << " expects type " << init.first.getType()
             << " (the type of '" << init.second << "'), got " << resultType;
  }
  return success();
}

/// A required operand of an op with optional ones: its segment index and
/// name.
namespace {
struct RequiredOperand {
  unsigned index;
  StringLiteral name;
};
} // namespace

/// The generic form can give a required operand a segment of size 0 or 2;
/// every verifier checks this before its accessors read the operand list.
static LogicalResult checkRequiredSegments(Operation *op,
                                           ArrayRef<int32_t> segments,
                                           ArrayRef<RequiredOperand> required) {
  for (auto [index, name] : required)
    if (segments[index] != 1)
      return op->emitOpError() << "needs exactly one '" << name
                               << "' operand (operandSegmentSizes)";
  return success();
}

/// The scales of an f8E4M3FN state (a quantized state): memref form, f32
/// [rows, HV, V] dense with rows the state's, a state to scale, and one
/// buffer read and written when the state is updated (in place).
static LogicalResult verifyStateScale(RecurrentOp op, int64_t rows) {
  Value scale = op.getStateScale();
  if (!scale)
    return success();
  if (!isa<MemRefType>(scale.getType()))
    return op.emitOpError()
           << "operand 'state_scale' is supported in the memref form only";
  if (failed(checkStatic(op, scale, "state_scale")))
    return failure();
  if (!op.getInitialState() && !op.getFinalState())
    return op.emitOpError() << "operand 'state_scale' needs an "
                               "'initial_state' or a 'final_state' to scale";
  if (op.getInitialState() && op.getFinalState() &&
      op.getInitialState() != op.getFinalState())
    return op.emitOpError()
           << "an f8E4M3FN state is updated in place: 'initial_state' and "
              "'final_state' must be the same buffer (one 'state_scale')";
  RecurrentOp::Dims d = op.getDims();
  return checkOperand(
      op, scale, "state_scale", {rows, d.HV, d.V},
      op.hasStatePool() ? "slots, HV, V" : "N, HV, V",
      [](Type t) { return t.isF32(); }, "f32");
}

/// The element types per-token states may have: f8E4M3FN with their
/// scales; without, a storage float, or f8E4M3FN, which
/// verifyIntermediateScale then reports as missing its scales.
static std::function<bool(Type)> perTokenDtype(Value scale) {
  return [quantized = bool(scale)](Type t) {
    return isa<Float8E4M3FNType>(t) || (!quantized && isStorageFloat(t));
  };
}

/// Row scales of an f8E4M3FN buffer (per-token states, checkpoints): memref
/// form, f32 of `shape` (described by `dims`), dense.
static LogicalResult checkRowScales(Operation *op, Value scale, StringRef name,
                                    ArrayRef<int64_t> shape, StringRef dims) {
  if (!isa<MemRefType>(scale.getType()))
    return op->emitOpError()
           << "operand '" << name << "' is supported in the memref form only";
  return checkOperand(
      op, scale, name, shape, dims, [](Type t) { return t.isF32(); }, "f32");
}

/// The scales of f8E4M3FN per-token states `inter` [R, steps, HV, ...]:
/// memref form, f32 [R, steps, HV, V] dense (R and steps the buffer's), and
/// present exactly when the buffer is f8E4M3FN. Shared by gdn.recurrent,
/// which writes them, and gdn.commit, which reads them.
static LogicalResult verifyIntermediateScale(Operation *op, Value inter,
                                             Value scale, StringRef interName) {
  auto type = cast<ShapedType>(inter.getType());
  bool e4m3 = isa<Float8E4M3FNType>(type.getElementType());
  if (!scale) {
    if (e4m3)
      return op->emitOpError()
             << "f8E4M3FN '" << interName
             << "' need their scales, operand 'intermediate_state_scale' [R, "
                "steps, HV, V] f32";
    return success();
  }
  // The row (V column) dimension: dim 3 in vk, 4 in kv.
  bool vk = isa<RecurrentOp>(op) ? cast<RecurrentOp>(op).isVKLayout()
                                 : cast<CommitOp>(op).isVKLayout();
  ArrayRef<int64_t> buf = type.getShape();
  return checkRowScales(op, scale, "intermediate_state_scale",
                        {buf[0], buf[1], buf[2], vk ? buf[3] : buf[4]},
                        "R, steps, HV, V");
}

/// The replay windows (replayed verify): all four or none, memref form,
/// per-head gates; [slots, H, L, K], [slots, HV, L, V] in q's
/// dtype, [slots, HV, L] f32 twice, dense.
static LogicalResult verifyReplayWindows(RecurrentOp op, int64_t slots) {
  std::pair<Value, StringRef> windows[] = {{op.getKWindow(), "k_window"},
                                           {op.getVWindow(), "v_window"},
                                           {op.getGWindow(), "g_window"},
                                           {op.getBetaWindow(), "beta_window"}};
  int given = llvm::count_if(windows, [](auto w) { return bool(w.first); });
  if (given == 0)
    return success();
  for (auto [value, name] : windows)
    if (!value)
      return op.emitOpError() << "the replay windows go together: 'k_window', "
                                 "'v_window', 'g_window' and 'beta_window'; "
                                 "missing '"
                              << name << "'";
  for (auto [value, name] : windows) {
    if (!isa<MemRefType>(value.getType()))
      return op.emitOpError()
             << "operand '" << name << "' is supported in the memref form only";
    if (failed(checkStatic(op, value, name)))
      return failure();
  }
  if (op.hasPerKeyDecay() || op.hasPerChannelBeta())
    return op.emitOpError() << "the replay windows take a decay and a beta per "
                               "head; a per-key decay or per-channel beta "
                               "is not supported with them yet";
  RecurrentOp::Dims d = op.getDims();
  auto kType = cast<ShapedType>(op.getKWindow().getType());
  int64_t L = kType.getRank() == 4 ? kType.getDimSize(2) : 0;
  if (L < 1)
    return op.emitOpError() << "operand 'k_window' expects rank 4 [slots, H, "
                               "L, K] with L >= 1, got "
                            << formatShape(kType.getShape());
  Type inType = cast<ShapedType>(op.getQ().getType()).getElementType();
  std::string qDtype;
  llvm::raw_string_ostream(qDtype) << inType << " (the dtype of 'q')";
  auto sameAsQ = [&](Type t) { return t == inType; };
  auto f32Only = [](Type t) { return t.isF32(); };
  StringRef rowsName = op.hasStatePool() ? "slots" : "N";
  std::string kDims = (rowsName + ", H, L, K").str();
  std::string vDims = (rowsName + ", HV, L, V").str();
  std::string gDims = (rowsName + ", HV, L").str();
  if (failed(checkOperand(op, op.getKWindow(), "k_window", {slots, d.H, L, d.K},
                          kDims, sameAsQ, qDtype)) ||
      failed(checkOperand(op, op.getVWindow(), "v_window",
                          {slots, d.HV, L, d.V}, vDims, sameAsQ, qDtype)) ||
      failed(checkOperand(op, op.getGWindow(), "g_window", {slots, d.HV, L},
                          gDims, f32Only, "f32")) ||
      failed(checkOperand(op, op.getBetaWindow(), "beta_window",
                          {slots, d.HV, L}, gDims, f32Only, "f32")))
    return failure();
  return success();
}

/// Prefix-cache checkpoints: `state_checkpoints` [C, HV, ...] in the state
/// layout, `checkpoint_offsets` [N + 1] and `checkpoint_interval`, together.
static LogicalResult verifyCheckpoints(RecurrentOp op) {
  Value buf = op.getStateCheckpoints(), offsets = op.getCheckpointOffsets();
  std::optional<int64_t> interval = op.getCheckpointInterval();
  if (!buf && !offsets && !interval) {
    if (op.getCheckpointScale())
      return op.emitOpError() << "operand 'checkpoint_scale' needs "
                                 "'state_checkpoints' to scale";
    return success();
  }
  if (!buf || !offsets || !interval)
    return op.emitOpError()
           << "checkpoints go together: operands 'state_checkpoints', "
              "'checkpoint_offsets' and attribute 'checkpoint_interval'";
  if (*interval < 1)
    return op.emitOpError() << "attribute 'checkpoint_interval' must be at "
                               "least 1 token, got "
                            << *interval;
  if (!isa<MemRefType>(buf.getType()))
    return op.emitOpError() << "operand 'state_checkpoints' is supported in "
                               "the memref form only";
  if (op.hasParentTable() || op.hasReplayWindows())
    return op.emitOpError() << "operand 'state_checkpoints' cannot be "
                               "combined with an EAGLE tree or replay windows";
  auto d = op.getDims();
  if (failed(checkOperand(
          op, offsets, "checkpoint_offsets", {d.N + 1}, "N + 1",
          [](Type t) {
            return t.isSignlessInteger(32) || t.isSignlessInteger(64);
          },
          "i32 or i64")))
    return failure();
  if (failed(checkStatic(op, buf, "state_checkpoints")))
    return failure();
  auto type = cast<ShapedType>(buf.getType());
  bool vk = op.isVKLayout();
  StringRef dims =
      vk ? "C, HV, V, K for layout vk" : "C, HV, K, V for layout kv";
  if (type.getRank() != 4 || type.getDimSize(0) < 1)
    return op.emitOpError()
           << "operand 'state_checkpoints' expects [" << dims
           << "] with C >= 1, got " << formatShape(type.getShape());
  int64_t rows = type.getDimSize(0);
  SmallVector<int64_t> shape = vk ? SmallVector<int64_t>{rows, d.HV, d.V, d.K}
                                  : SmallVector<int64_t>{rows, d.HV, d.K, d.V};
  // f8E4M3FN rows with their scales [C, HV, V] (docs/math.md §6).
  Value scale = op.getCheckpointScale();
  bool e4m3 = isa<Float8E4M3FNType>(type.getElementType());
  if (e4m3 && !scale)
    return op.emitOpError() << "f8E4M3FN 'state_checkpoints' need their "
                               "scales, operand 'checkpoint_scale' [C, HV, "
                               "V] f32";
  if (failed(checkOperand(
          op, buf, "state_checkpoints", shape, dims,
          [&](Type t) {
            return scale ? isa<Float8E4M3FNType>(t) : isStorageFloat(t);
          },
          scale ? "f8E4M3FN (with 'checkpoint_scale')" : "f32, bf16 or f16")))
    return failure();
  if (!scale)
    return success();
  return checkRowScales(op, scale, "checkpoint_scale", {rows, d.HV, d.V},
                        "C, HV, V");
}

LogicalResult RecurrentOp::verify() {
  Operation *op = getOperation();
  // Before any accessor reads past the operand list.
  static constexpr RequiredOperand kRequired[] = {
      {0, "q"}, {1, "k"}, {2, "v"}, {25, "o"}};
  if (failed(checkRequiredSegments(op, getProperties().operandSegmentSizes,
                                   kRequired)))
    return failure();
  if (failed(verifyForm(*this)))
    return failure();
  auto qType = cast<ShapedType>(getQ().getType());
  auto vType = cast<ShapedType>(getV().getType());
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
                          "bf16, f16 or f32", OperandLayout::Tokens)))
    return failure();
  int64_t N = q[0], T = q[1], H = q[2], K = q[3];
  if (N < 1 || T < 1 || H < 1 || K < 1)
    return emitOpError() << "operand 'q' expects non-empty dimensions, got "
                         << formatShape(q);
  // Varlen: packed tokens [1, total, ...]; sequences come from cu_seqlens.
  int64_t numSeqs = N;
  if (Value cu = getCuSeqlens()) {
    if (N != 1)
      return emitOpError() << "with 'cu_seqlens' the token operands are packed "
                              "[1, total, ...]; 'q' has batch "
                           << N;
    if (failed(checkStatic(op, cu, "cu_seqlens")))
      return failure();
    auto cuType = cast<ShapedType>(cu.getType());
    if (cuType.getRank() != 1 || cuType.getDimSize(0) < 1)
      return emitOpError() << "operand 'cu_seqlens' expects shape [N + 1], got "
                           << formatShape(cuType.getShape());
    numSeqs = cuType.getDimSize(0) - 1;
    if (failed(checkOperand(
            op, cu, "cu_seqlens", {numSeqs + 1}, "N + 1",
            [](Type t) { return t.isSignlessInteger(32) || t.isSignlessInteger(64); },
            "i32 or i64")))
      return failure();
  }
  if (failed(checkOperand(op, getK(), "k", q, "N, T, H, K", sameAsQ, qDtype,
                          OperandLayout::Tokens)))
    return failure();
  if (failed(checkStatic(op, getV(), "v")))
    return failure();
  ArrayRef<int64_t> v = vType.getShape();
  int64_t HV = v.size() == 4 ? v[2] : 0, V = v.size() == 4 ? v[3] : 0;
  if (HV < 1 || V < 1)
    return emitOpError() << "operand 'v' expects non-empty dimensions, got "
                         << formatShape(v);
  if (failed(checkOperand(op, getV(), "v", {N, T, HV, V}, "N, T, HV, V",
                          sameAsQ, qDtype, OperandLayout::Tokens)))
    return failure();
  if (HV % H != 0)
    return emitOpError() << "the number of value heads HV = " << HV
                         << " must be a multiple of the number of q/k heads H = "
                         << H;
  if (failed(checkOperand(op, getO(), "o", {N, T, HV, V}, "N, T, HV, V",
                          [&](Type t) { return t == vType.getElementType(); },
                          "the dtype of 'v'")))
    return failure();

  // Per-token gates: per head [N, T, HV], or per channel [N, T, HV, C]
  // (C = K for the decay, KDA; C = V for beta), told apart by the rank.
  auto checkGate = [&](Value value, StringRef name, int64_t C,
                       StringRef channel, StringRef what) -> LogicalResult {
    if (failed(checkStatic(op, value, name)))
      return failure();
    int64_t rank = cast<ShapedType>(value.getType()).getRank();
    if (rank != 3 && rank != 4)
      return emitOpError() << "operand '" << name
                           << "' expects rank 3 [N, T, HV] (per head) or rank 4 "
                              "[N, T, HV, "
                           << channel << "] (" << what << "), got rank " << rank;
    if (rank == 3)
      return checkOperand(op, value, name, {N, T, HV}, "N, T, HV", anyFloat,
                          "bf16, f16 or f32", OperandLayout::Tokens);
    std::string dims = ("N, T, HV, " + channel + ": " + what).str();
    return checkOperand(op, value, name, {N, T, HV, C}, dims, anyFloat,
                        "bf16, f16 or f32", OperandLayout::Tokens);
  };
  // Decay: log-space g, or fused gating (a, A_log, dt_bias), or none.
  if (getG() && (getA() || getALog() || getDtBias()))
    return emitOpError() << "operand 'g' (log-space decay) excludes the fused "
                            "gating operands 'a', 'A_log' and 'dt_bias'";
  if (getG() && failed(checkGate(getG(), "g", K, "K", "per key channel")))
    return failure();
  bool anyGating = getA() || getALog() || getDtBias();
  if (anyGating && !(getA() && getALog() && getDtBias()))
    return emitOpError() << "fused gating needs all of 'a' [N, T, HV] (or "
                            "[N, T, HV, K]), 'A_log' [HV] and 'dt_bias' [HV] "
                            "(or [HV * K]); missing '"
                         << (!getA() ? "a" : !getALog() ? "A_log" : "dt_bias")
                         << "'";
  if (anyGating) {
    if (failed(checkGate(getA(), "a", K, "K", "per key channel")) ||
        failed(checkOperand(op, getALog(), "A_log", {HV}, "HV", f32Only,
                            "f32")))
      return failure();
    // Per-key gating (KDA) takes a bias per key channel, flattened [HV * K]
    // as SGLang passes it.
    bool perKey = hasPerKeyDecay();
    int64_t biasSize = HV;
    if (perKey && llvm::MulOverflow(HV, K, biasSize))
      return emitOpError() << "operand 'dt_bias' would need HV * K = " << HV
                           << " * " << K << " entries, past int64";
    if (failed(checkOperand(op, getDtBias(), "dt_bias", {biasSize},
                            perKey ? "HV * K, per key channel with a per-key "
                                     "'a', flattened from [HV, K]"
                                   : "HV",
                            f32Only, "f32")))
      return failure();
  }

  // Write strength: beta, or logits b (sigmoid in the kernel), or 1.
  if (getAllowNegEigval() && !getB())
    return emitOpError() << "attribute 'allow_neg_eigval' (beta = 2 sigmoid(b)) "
                            "needs the beta logits operand 'b'";
  if (getBeta() && getB())
    return emitOpError() << "operands 'beta' and 'b' (beta logits) are "
                            "mutually exclusive";
  if (getBeta() &&
      failed(checkGate(getBeta(), "beta", V, "V", "per value channel")))
    return failure();
  if (getB() && failed(checkGate(getB(), "b", V, "V", "per value channel")))
    return failure();

  // State, in the layout the attribute names: [N, ...], or a pool
  // [S, ...] addressed through state_indices [N].
  int64_t slots = numSeqs;
  if (Value indices = getStateIndices()) {
    Value state = getInitialState() ? getInitialState() : getFinalState();
    if (!state)
      return emitOpError() << "operand 'state_indices' needs an "
                              "'initial_state' or a 'final_state' pool";
    if (failed(checkOperand(
            op, indices, "state_indices", {numSeqs}, "N",
            [](Type t) { return t.isSignlessInteger(32) || t.isSignlessInteger(64); },
            "i32 or i64")))
      return failure();
    if (failed(checkStatic(op, state, getInitialState() ? "initial_state"
                                                        : "final_state")))
      return failure();
    auto stateType = cast<ShapedType>(state.getType());
    slots = stateType.getRank() == 4 ? stateType.getDimSize(0) : 0;
    if (slots < 1)
      return emitOpError() << "a state pool needs at least one slot";
  }
  SmallVector<int64_t> stateShape =
      isVKLayout() ? SmallVector<int64_t>{slots, HV, V, K}
                   : SmallVector<int64_t>{slots, HV, K, V};
  StringRef stateDims =
      hasStatePool()
          ? (isVKLayout() ? "slots, HV, V, K for layout vk"
                          : "slots, HV, K, V for layout kv")
          : (isVKLayout() ? "N, HV, V, K for layout vk"
                          : "N, HV, K, V for layout kv");
  // States are stored in f32, bf16 or f16 (computed in f32, rounded once on
  // store), or in f8E4M3FN with state_scale; both states of one op share
  // the dtype.
  auto stateDtype = [&](Type t) {
    return getStateScale() ? isa<Float8E4M3FNType>(t) : anyFloat(t);
  };
  StringRef stateDtypes =
      getStateScale() ? "f8E4M3FN (with 'state_scale')" : "f32, bf16 or f16";
  Type stateType;
  for (auto [value, name] :
       {std::pair<Value, StringRef>{getInitialState(), "initial_state"},
        {getFinalState(), "final_state"}}) {
    if (!value)
      continue;
    if (!getStateScale() &&
        isa<Float8E4M3FNType>(
            cast<ShapedType>(value.getType()).getElementType()))
      return emitOpError() << "an f8E4M3FN state needs its scales, operand "
                              "'state_scale' [N or slots, HV, V] f32";
    if (failed(checkOperand(op, value, name, stateShape, stateDims, stateDtype,
                            stateDtypes, OperandLayout::Slots)))
      return failure();
    Type et = cast<ShapedType>(value.getType()).getElementType();
    if (stateType && et != stateType)
      return emitOpError() << "operand 'final_state' expects element type "
                           << stateType << " (the dtype of 'initial_state'), got "
                           << et;
    stateType = et;
  }
  if (failed(verifyStateScale(*this, slots)))
    return failure();

  // Per-token states (verify): [R, steps, HV, ...] in the state layout.
  auto indexType = [](Type t) {
    return t.isSignlessInteger(32) || t.isSignlessInteger(64);
  };
  if (Value idx = getIntermediateStateIndices()) {
    if (!getIntermediateStates())
      return emitOpError() << "operand 'intermediate_state_indices' needs "
                              "'intermediate_states'";
    if (failed(checkOperand(op, idx, "intermediate_state_indices", {numSeqs},
                            "N", indexType, "i32 or i64")))
      return failure();
  }
  if (Value inter = getIntermediateStates()) {
    if (!isa<MemRefType>(inter.getType()))
      return emitOpError() << "operand 'intermediate_states' is supported in "
                              "the memref form only";
    if (failed(checkStatic(op, inter, "intermediate_states")))
      return failure();
    auto type = cast<ShapedType>(inter.getType());
    StringRef dims = isVKLayout() ? "rows, steps, HV, V, K for layout vk"
                                  : "rows, steps, HV, K, V for layout kv";
    if (type.getRank() != 5)
      return emitOpError() << "operand 'intermediate_states' expects rank 5 ["
                           << dims << "], got rank " << type.getRank();
    int64_t rows = type.getDimSize(0), steps = type.getDimSize(1);
    // No row is needed where no sequence writes one (varlen, N = 0).
    if ((rows < 1 && numSeqs > 0) || steps < 1)
      return emitOpError() << "operand 'intermediate_states' expects at least "
                              "one row and one step ["
                           << dims << "], got " << formatShape(type.getShape());
    if (!getIntermediateStateIndices())
      rows = numSeqs; // batch-scoped: one row per sequence
    if (!isVarlen())
      steps = T;
    SmallVector<int64_t> shape =
        isVKLayout() ? SmallVector<int64_t>{rows, steps, HV, V, K}
                     : SmallVector<int64_t>{rows, steps, HV, K, V};
    Value scale = getIntermediateStateScale();
    if (failed(checkOperand(op, inter, "intermediate_states", shape, dims,
                            perTokenDtype(scale),
                            scale ? "f8E4M3FN (with 'intermediate_state_scale')"
                                  : "f32, bf16 or f16",
                            OperandLayout::Slots)) ||
        failed(
            verifyIntermediateScale(op, inter, scale, "intermediate_states")))
      return failure();
  } else if (getIntermediateStateScale()) {
    return emitOpError() << "operand 'intermediate_state_scale' needs "
                            "'intermediate_states' to scale";
  }

  // EAGLE tree: the parent step of each stored step, [N, steps].
  if (Value parents = getRetrieveParentToken()) {
    Value inter = getIntermediateStates();
    if (!inter)
      return emitOpError() << "operand 'retrieve_parent_token' needs "
                              "'intermediate_states' (parent states are "
                              "reloaded from it)";
    int64_t steps = cast<ShapedType>(inter.getType()).getDimSize(1);
    if (failed(checkOperand(op, parents, "retrieve_parent_token",
                            {numSeqs, steps}, "N, steps", indexType,
                            "i32 or i64")))
      return failure();
  }

  if (failed(verifyReplayWindows(*this, slots)) ||
      failed(verifyCheckpoints(*this)))
    return failure();

  // Stochastic rounding applies to e4m3 stores: a quantized final state or
  // quantized per-token states.
  if (getStochasticRounding() && !(getFinalState() && getStateScale()) &&
      !getIntermediateStateScale() && !getCheckpointScale())
    return emitOpError() << "attribute 'stochastic_rounding' needs an "
                            "f8E4M3FN 'final_state' (with 'state_scale'), "
                            "f8E4M3FN 'intermediate_states' or f8E4M3FN "
                            "'state_checkpoints': nothing else is rounded to "
                            "e4m3";
  // A tree reads its e4m3 parents back: their random rounding would reach
  // o, which no reference could then replay (the random bits hash the f32
  // value, docs/math.md §6).
  if (getStochasticRounding() && getRetrieveParentToken() &&
      getIntermediateStateScale())
    return emitOpError() << "attribute 'stochastic_rounding' is not "
                            "supported for f8E4M3FN 'intermediate_states' "
                            "with 'retrieve_parent_token' (an EAGLE tree "
                            "reads its rounded parents back)";

  if (auto s = getScaleAttr()) {
    double scale = s.getValueAsDouble();
    // Any finite value is used as given (FLA's scale = 0 gives o = 0), but
    // a subnormal f32 one: the GPU flushes subnormals to zero (o = 0).
    if (!std::isfinite(scale))
      return emitOpError() << "attribute 'scale' must be finite, got "
                           << (std::isnan(scale) ? "NaN"
                               : scale > 0       ? "inf"
                                                 : "-inf");
    if (scale != 0.0 && std::fabs(scale) < std::numeric_limits<float>::min())
      return emitOpError() << "attribute 'scale' must be 0 or a normal f32 "
                              "(|scale| >= 2^-126), got "
                           << scale;
  }
  if (failed(verifyWrittenAliases(op, namedOperands(*this))))
    return failure();
  return verifyResults(*this);
}

//===----------------------------------------------------------------------===//
// CommitOp
//===----------------------------------------------------------------------===//

CommitOp::Dims CommitOp::getDims() {
  auto inter = cast<ShapedType>(getIntermediateStates().getType()).getShape();
  int64_t N = cast<ShapedType>(getAccepted().getType()).getDimSize(0);
  int64_t slots = cast<ShapedType>(getState().getType()).getDimSize(0);
  int64_t K = isVKLayout() ? inter[4] : inter[3];
  int64_t V = isVKLayout() ? inter[3] : inter[4];
  return Dims{N, inter[1], inter[0], slots, inter[2], K, V};
}

LogicalResult CommitOp::requireMemRefForm(StringRef consumer) {
  return requireMemRefFormOf(*this, consumer);
}

void CommitOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  // Memref form: the indices and counts are read in full, the buffer in part
  // (one step of some rows), the pool written in part (the committed slots).
  // The tensor form has no memory effects.
  for (OpOperand &operand : getOperation()->getOpOperands()) {
    if (!isa<MemRefType>(operand.get().getType()))
      continue;
    if (isDpsInit(&operand) || operand.get() == getStateScale())
      effects.emplace_back(MemoryEffects::Write::get(), &operand, /*stage=*/0,
                           /*effectOnFullRegion=*/false,
                           SideEffects::DefaultResource::get());
    else
      effects.emplace_back(MemoryEffects::Read::get(), &operand, /*stage=*/0,
                           /*effectOnFullRegion=*/operand.get() !=
                                   getIntermediateStates() &&
                               operand.get() != getIntermediateStateScale(),
                           SideEffects::DefaultResource::get());
  }
}

/// The results of an op that updates one `state`: none in memref form, the
/// new state (of the state's type) in tensor form.
static LogicalResult verifyStateResult(Operation *op, bool tensorForm,
                                       Value state) {
  unsigned numResults = op->getNumResults();
  if (!tensorForm) {
    if (numResults != 0)
      return op->emitOpError()
             << "has no results in memref form, got " << numResults;
    return success();
  }
  if (numResults != 1)
    return op->emitOpError() << "expects 1 result in tensor form (the new "
                                "'state'), got "
                             << numResults;
  if (op->getResult(0).getType() != state.getType())
    return op->emitOpError()
           << "result #0 expects type " << state.getType()
           << " (the type of 'state'), got " << op->getResult(0).getType();
  return success();
}

LogicalResult CommitOp::verify() {
  Operation *op = getOperation();
  static constexpr RequiredOperand kRequired[] = {
      {0, "intermediate_states"}, {1, "accepted"}, {6, "state"}};
  if (failed(checkRequiredSegments(op, getProperties().operandSegmentSizes,
                                   kRequired)))
    return failure();

  // All operands tensors (tensor form) or all memrefs (memref form).
  std::pair<Value, StringRef> all[] = {
      {getIntermediateStates(), "intermediate_states"},
      {getAccepted(), "accepted"},
      {getStateIndices(), "state_indices"},
      {getIntermediateStateIndices(), "intermediate_state_indices"},
      {getIntermediateStateScale(), "intermediate_state_scale"},
      {getState(), "state"}};
  bool tensorForm = isa<RankedTensorType>(all[0].first.getType());
  for (auto [value, name] : all)
    if (value && isa<RankedTensorType>(value.getType()) != tensorForm)
      return emitOpError()
             << "operands must be all tensors (tensor form) or all memrefs "
                "(memref form); 'intermediate_states' is a "
             << (tensorForm ? "tensor" : "memref") << " but '" << name
             << "' is a " << (tensorForm ? "memref" : "tensor");

  bool vk = isVKLayout();
  StringRef layoutName = vk ? "vk" : "kv";
  auto anyFloat = [](Type t) { return isStorageFloat(t); };
  auto indexType = [](Type t) {
    return t.isSignlessInteger(32) || t.isSignlessInteger(64);
  };

  // The buffer [R, T, HV, V, K] (vk) or [R, T, HV, K, V] (kv).
  Value inter = getIntermediateStates();
  if (failed(checkStatic(op, inter, "intermediate_states")))
    return failure();
  auto interType = cast<ShapedType>(inter.getType());
  if (interType.getRank() != 5)
    return emitOpError() << "operand 'intermediate_states' expects rank 5 [R, "
                            "T, HV, "
                         << (vk ? "V, K" : "K, V") << "] for layout "
                         << layoutName << ", got rank " << interType.getRank();
  ArrayRef<int64_t> buf = interType.getShape();
  if (llvm::is_contained(buf, 0))
    return emitOpError()
           << "operand 'intermediate_states' expects non-empty dimensions, got "
           << formatShape(buf);

  // accepted [N] fixes N.
  Value accepted = getAccepted();
  if (failed(checkStatic(op, accepted, "accepted")))
    return failure();
  auto acceptedType = cast<ShapedType>(accepted.getType());
  if (acceptedType.getRank() != 1 || acceptedType.getDimSize(0) < 1)
    return emitOpError() << "operand 'accepted' expects shape [N] with N >= 1, "
                            "got "
                         << formatShape(acceptedType.getShape());
  int64_t N = acceptedType.getDimSize(0);
  if (failed(checkOperand(op, accepted, "accepted", {N}, "N", indexType,
                          "i32 or i64")))
    return failure();
  for (auto [value, name] :
       {std::pair<Value, StringRef>{getStateIndices(), "state_indices"},
        {getIntermediateStateIndices(), "intermediate_state_indices"}})
    if (value && failed(checkOperand(op, value, name, {N}, "N", indexType,
                                     "i32 or i64")))
      return failure();

  // Batch-scoped buffers have one row per row of `accepted`.
  int64_t rows = getIntermediateStateIndices() ? buf[0] : N;
  SmallVector<int64_t> interShape = {rows, buf[1], buf[2], buf[3], buf[4]};
  std::string interDims =
      (Twine(getIntermediateStateIndices() ? "R" : "N") + ", T, HV, " +
       (vk ? "V, K" : "K, V") + " for layout " + layoutName)
          .str();
  Value interScale = getIntermediateStateScale();
  if (failed(checkOperand(op, inter, "intermediate_states", interShape,
                          interDims, perTokenDtype(interScale),
                          interScale
                              ? "f8E4M3FN (with 'intermediate_state_scale')"
                              : "f32, bf16 or f16",
                          OperandLayout::Slots)) ||
      failed(verifyIntermediateScale(op, inter, interScale,
                                     "intermediate_states")))
    return failure();

  // The pool [slots, HV, ...] in the buffer's layout, or [N, HV, ...].
  Value state = getState();
  if (failed(checkStatic(op, state, "state")))
    return failure();
  auto stateType = cast<ShapedType>(state.getType());
  int64_t slots = N;
  if (hasStatePool()) {
    slots = stateType.getRank() == 4 ? stateType.getDimSize(0) : 0;
    if (slots < 1)
      return emitOpError() << "operand 'state' expects a pool [slots, HV, "
                           << (vk ? "V, K" : "K, V")
                           << "] with slots >= 1, got "
                           << formatShape(stateType.getShape());
  }
  std::string stateDims = (Twine(hasStatePool() ? "slots" : "N") + ", HV, " +
                           (vk ? "V, K" : "K, V") + " for layout " + layoutName)
                              .str();
  // An f8E4M3FN pool comes with its row scales (docs/math.md §6).
  Value scale = getStateScale();
  if (!scale && isa<Float8E4M3FNType>(stateType.getElementType()))
    return emitOpError() << "an f8E4M3FN pool needs its scales, operand "
                            "'state_scale' ["
                         << (hasStatePool() ? "slots" : "N") << ", HV, V] f32";
  auto stateDtype = [&](Type t) {
    return scale ? isa<Float8E4M3FNType>(t) : anyFloat(t);
  };
  if (failed(checkOperand(op, state, "state", {slots, buf[2], buf[3], buf[4]},
                          stateDims, stateDtype,
                          scale ? "f8E4M3FN (with 'state_scale')"
                                : "f32, bf16 or f16",
                          OperandLayout::Slots)))
    return failure();
  if (scale) {
    if (tensorForm)
      return emitOpError()
             << "operand 'state_scale' is supported in the memref form only";
    Dims d = getDims();
    if (failed(checkStatic(op, scale, "state_scale")) ||
        failed(checkOperand(
            op, scale, "state_scale", {slots, d.HV, d.V},
            hasStatePool() ? "slots, HV, V" : "N, HV, V",
            [](Type t) { return t.isF32(); }, "f32")))
      return failure();
  }

  // Every operand in operand order: the form check's list (which leaves
  // state_scale to its own check) with state_scale before state.
  SmallVector<std::pair<Value, StringRef>> named(std::begin(all),
                                                 std::prev(std::end(all)));
  named.push_back({getStateScale(), "state_scale"});
  named.push_back(all[std::size(all) - 1]);
  if (failed(verifyWrittenAliases(op, named)))
    return failure();
  return verifyStateResult(op, tensorForm, state);
}

//===----------------------------------------------------------------------===//
// ReplayCommitOp
//===----------------------------------------------------------------------===//

ReplayCommitOp::Dims ReplayCommitOp::getDims() {
  auto k = cast<ShapedType>(getKWindow().getType()).getShape();
  auto v = cast<ShapedType>(getVWindow().getType()).getShape();
  int64_t N = cast<ShapedType>(getAccepted().getType()).getDimSize(0);
  return Dims{k[0], N, k[1], k[3], k[2], v[2], k[4], v[4]};
}

LogicalResult ReplayCommitOp::requireMemRefForm(StringRef consumer) {
  return requireMemRefFormOf(*this, consumer);
}

void ReplayCommitOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  // Memref form: the windows are read in part (the accepted prefixes), the
  // counts and indices in full; the state is read and written in part (the
  // committed slots). The tensor form has no memory effects.
  for (OpOperand &operand : getOperation()->getOpOperands()) {
    if (!isa<MemRefType>(operand.get().getType()))
      continue;
    bool table = operand.get() == getAccepted() ||
                 operand.get() == getStateIndices() ||
                 operand.get() == getRetrieveParentToken();
    effects.emplace_back(MemoryEffects::Read::get(), &operand, /*stage=*/0,
                         /*effectOnFullRegion=*/table,
                         SideEffects::DefaultResource::get());
    if (isDpsInit(&operand) || operand.get() == getStateScale())
      effects.emplace_back(MemoryEffects::Write::get(), &operand, /*stage=*/0,
                           /*effectOnFullRegion=*/false,
                           SideEffects::DefaultResource::get());
  }
}

LogicalResult ReplayCommitOp::verify() {
  Operation *op = getOperation();
  static constexpr RequiredOperand kRequired[] = {
      {0, "k_window"},    {1, "v_window"}, {2, "g_window"},
      {3, "beta_window"}, {4, "accepted"}, {8, "state"}};
  if (failed(checkRequiredSegments(op, getProperties().operandSegmentSizes,
                                   kRequired)))
    return failure();
  std::pair<Value, StringRef> all[] = {
      {getKWindow(), "k_window"},
      {getVWindow(), "v_window"},
      {getGWindow(), "g_window"},
      {getBetaWindow(), "beta_window"},
      {getAccepted(), "accepted"},
      {getStateIndices(), "state_indices"},
      {getRetrieveParentToken(), "retrieve_parent_token"},
      {getStateScale(), "state_scale"},
      {getState(), "state"}};
  bool tensorForm = isa<RankedTensorType>(all[0].first.getType());
  for (auto [value, name] : all) {
    if (!value)
      continue;
    if (isa<RankedTensorType>(value.getType()) != tensorForm)
      return emitOpError()
             << "operands must be all tensors (tensor form) or all memrefs "
                "(memref form); 'k_window' is a "
             << (tensorForm ? "tensor" : "memref") << " but '" << name
             << "' is a " << (tensorForm ? "memref" : "tensor");
    if (failed(checkStatic(op, value, name)))
      return failure();
  }

  // k_window [layers, slots, H, L, K] fixes layers, slots, H, L and K.
  auto kType = cast<ShapedType>(getKWindow().getType());
  auto vType = cast<ShapedType>(getVWindow().getType());
  if (kType.getRank() != 5 || llvm::is_contained(kType.getShape(), 0))
    return emitOpError() << "operand 'k_window' expects rank 5 [layers, slots, "
                            "H, L, K] with non-empty dimensions, got "
                         << formatShape(kType.getShape());
  if (vType.getRank() != 5 || llvm::is_contained(vType.getShape(), 0))
    return emitOpError() << "operand 'v_window' expects rank 5 [layers, slots, "
                            "HV, L, V] with non-empty dimensions, got "
                         << formatShape(vType.getShape());
  ArrayRef<int64_t> k = kType.getShape();
  int64_t layers = k[0], slots = k[1], H = k[2], L = k[3], K = k[4];
  int64_t HV = vType.getDimSize(2), V = vType.getDimSize(4);
  auto anyInput = [](Type t) { return isStorageFloat(t); };
  auto f32Only = [](Type t) { return t.isF32(); };
  auto anyFloat = [](Type t) { return isStorageFloat(t); };
  auto indexType = [](Type t) {
    return t.isSignlessInteger(32) || t.isSignlessInteger(64);
  };
  Type inType = kType.getElementType();
  std::string kDtype;
  llvm::raw_string_ostream(kDtype) << inType << " (the dtype of 'k_window')";
  if (failed(checkOperand(op, getKWindow(), "k_window", k,
                          "layers, slots, H, L, K", anyInput,
                          "bf16, f16 or f32")) ||
      failed(checkOperand(
          op, getVWindow(), "v_window", {layers, slots, HV, L, V},
          "layers, slots, HV, L, V", [&](Type t) { return t == inType; },
          kDtype)))
    return failure();
  if (HV % H != 0)
    return emitOpError() << "the number of value heads HV = " << HV
                         << " must be a multiple of the number of k heads H = "
                         << H;
  if (failed(checkOperand(op, getGWindow(), "g_window", {layers, slots, HV, L},
                          "layers, slots, HV, L", f32Only, "f32")) ||
      failed(checkOperand(op, getBetaWindow(), "beta_window",
                          {layers, slots, HV, L}, "layers, slots, HV, L",
                          f32Only, "f32")))
    return failure();

  // accepted [N] fixes N; without state_indices slots = N.
  auto acceptedType = cast<ShapedType>(getAccepted().getType());
  if (acceptedType.getRank() != 1 || acceptedType.getDimSize(0) < 1)
    return emitOpError() << "operand 'accepted' expects shape [N] with N >= 1, "
                            "got "
                         << formatShape(acceptedType.getShape());
  int64_t N = acceptedType.getDimSize(0);
  if (failed(checkOperand(op, getAccepted(), "accepted", {N}, "N", indexType,
                          "i32 or i64")))
    return failure();
  if (Value idx = getStateIndices()) {
    if (failed(checkOperand(op, idx, "state_indices", {N}, "N", indexType,
                            "i32 or i64")))
      return failure();
  } else if (slots != N) {
    return emitOpError() << "without 'state_indices' row n is slot n: the "
                            "windows and the state need slots = N = "
                         << N << ", got " << slots;
  }
  // EAGLE tree: [N, P], the parent of each of the first P window steps.
  if (Value parents = getRetrieveParentToken()) {
    auto type = cast<ShapedType>(parents.getType());
    int64_t P = type.getRank() == 2 ? type.getDimSize(1) : 0;
    int64_t maxP = std::min(L, kMaxTreeSteps);
    if (P < 1 || P > maxP)
      return emitOpError() << "operand 'retrieve_parent_token' expects shape "
                              "[N, P] with 1 <= P <= min(L, "
                           << kMaxTreeSteps << ") = " << maxP << ", got "
                           << formatShape(type.getShape());
    if (failed(checkOperand(op, parents, "retrieve_parent_token", {N, P},
                            "N, P", indexType, "i32 or i64")))
      return failure();
  }

  bool vk = isVKLayout();
  SmallVector<int64_t> stateShape =
      vk ? SmallVector<int64_t>{layers, slots, HV, V, K}
         : SmallVector<int64_t>{layers, slots, HV, K, V};
  // f8E4M3FN checkpoints come with their row scales (docs/math.md §6).
  Value scale = getStateScale();
  auto stateDtype = [&](Type t) {
    return scale ? isa<Float8E4M3FNType>(t) : anyFloat(t);
  };
  if (!scale && isa<Float8E4M3FNType>(
                    cast<ShapedType>(getState().getType()).getElementType()))
    return emitOpError() << "f8E4M3FN checkpoints need their scales, operand "
                            "'state_scale' [layers, slots, HV, V] f32";
  if (failed(checkOperand(op, getState(), "state", stateShape,
                          vk ? "layers, slots, HV, V, K for layout vk"
                             : "layers, slots, HV, K, V for layout kv",
                          stateDtype,
                          scale ? "f8E4M3FN (with 'state_scale')"
                                : "f32, bf16 or f16")))
    return failure();
  if (scale) {
    if (tensorForm)
      return emitOpError()
             << "operand 'state_scale' is supported in the memref form only";
    if (failed(checkOperand(
            op, scale, "state_scale", {layers, slots, HV, V},
            "layers, slots, HV, V", [](Type t) { return t.isF32(); }, "f32")))
      return failure();
  }

  if (failed(verifyWrittenAliases(op, all)))
    return failure();
  return verifyStateResult(op, tensorForm, getState());
}
