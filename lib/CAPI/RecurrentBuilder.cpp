//===- RecurrentBuilder.cpp - gdnRecurrentDesc to a gdn.recurrent ---------===//
#include "RecurrentBuilder.h"

#include "gdn/Dialect/GDN/IR/GDNOps.h"
#include "gdn/JIT/Compiler.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <array>

using namespace mlir;
using namespace mlir::gdn;

namespace {
/// The element type of a float dtype of the description, or null (the
/// index dtypes are not one).
Type floatType(Builder &b, gdnDType t) {
  switch (t) {
  case GDN_DTYPE_F32: return b.getF32Type();
  case GDN_DTYPE_BF16: return b.getBF16Type();
  case GDN_DTYPE_F16: return b.getF16Type();
  case GDN_DTYPE_F8E4M3: return b.getType<Float8E4M3FNType>();
  case GDN_DTYPE_I32: // index tables: not a dtype of the description
  case GDN_DTYPE_I64: return nullptr;
  }
  return nullptr;
}

/// "" if `dims` x `width` bytes is at most kMaxArgumentBytes, else the error
/// naming `what`.
std::string checkBytes(const char *what, std::initializer_list<int64_t> dims,
                       int64_t width) {
  int64_t bytes = width;
  std::string shape;
  bool over = false;
  for (int64_t x : dims) {
    shape += (shape.empty() ? "" : ", ") + std::to_string(x);
    over |= llvm::MulOverflow(bytes, x, bytes) ||
            bytes > jit::kMaxArgumentBytes;
  }
  if (!over)
    return "";
  return std::string(what) + " [" + shape + "] takes more than 2^40 bytes";
}

/// The sizes of `d`: each field in range (the error names it), and no
/// argument over kMaxArgumentBytes, before any of them reaches a type.
std::string checkSizes(const gdnRecurrentDesc &d) {
  auto field = [](const char *name, int64_t value, int64_t lo) -> std::string {
    if (value >= lo)
      return "";
    return std::string(name) + " must be >= " + std::to_string(lo) + ", got " +
           std::to_string(value);
  };
  for (std::string e :
       {field("N", d.N, d.cu_seqlens_bits ? 0 : 1), field("T", d.T, 1),
        field("H", d.H, 1), field("HV", d.HV, 1), field("K", d.K, 1),
        field("V", d.V, 1), field("num_slots", d.num_slots, 0),
        field("intermediate_rows", d.intermediate_rows, 0),
        field("intermediate_steps", d.intermediate_steps, 0),
        field("checkpoint_interval", d.checkpoint_interval, 0),
        field("checkpoint_rows", d.checkpoint_rows, 0)})
    if (!e.empty())
      return e;
  if (d.cu_seqlens_bits == 32 && (d.N > INT32_MAX - 1 || d.T > INT32_MAX))
    return "with 32-bit cu_seqlens, N + 1 and T must fit in int32 (N = " +
           std::to_string(d.N) + ", T = " + std::to_string(d.T) + ")";
  if (d.N == INT64_MAX)
    return "N must be < 2^63 - 1";
  int64_t batch = d.cu_seqlens_bits ? 1 : d.N;
  int64_t rows = d.num_slots > 0 ? d.num_slots : d.N;
  for (std::string e :
       {checkBytes("q", {batch, d.T, d.H, d.K}, 4),
        checkBytes("v", {batch, d.T, d.HV, d.V}, 4),
        checkBytes("a", {batch, d.T, d.HV, d.K}, 4),
        checkBytes("beta", {batch, d.T, d.HV, d.V}, 4),
        checkBytes("dt_bias", {d.HV, d.K}, 4),
        checkBytes("state", {rows, d.HV, d.K, d.V}, 4),
        checkBytes("intermediate_states",
                   {d.intermediate_rows, d.intermediate_steps, d.HV, d.K, d.V},
                   4),
        checkBytes("retrieve_parent_token", {d.N, d.intermediate_steps}, 8),
        checkBytes("cu_seqlens", {d.N + 1}, 8),
        checkBytes("state_checkpoints", {d.checkpoint_rows, d.HV, d.K, d.V},
                   4)})
    if (!e.empty())
      return e;
  return "";
}

/// The options of `d` that contradict each other or are out of range, in
/// the order they are reported; "" if none.
std::string checkOptions(const gdnRecurrentDesc &d, bool knownDTypes) {
  if (!knownDTypes)
    return "unknown dtype in gdnRecurrentDesc";
  if (d.input_dtype == GDN_DTYPE_F8E4M3 || d.gate_dtype == GDN_DTYPE_F8E4M3 ||
      d.beta_dtype == GDN_DTYPE_F8E4M3)
    return "GDN_DTYPE_F8E4M3 is a state_dtype or intermediate_dtype only";
  if (d.state_dtype == GDN_DTYPE_F8E4M3 &&
      !(d.has_initial_state || d.has_final_state))
    return "state_dtype F8E4M3 needs a state";
  if (d.state_dtype == GDN_DTYPE_F8E4M3 && d.has_initial_state &&
      d.has_final_state && !d.state_in_place)
    return "state_dtype F8E4M3 is updated in place (state_in_place)";
  if (d.decay < GDN_DECAY_NONE || d.decay > GDN_DECAY_FUSED_GATING ||
      d.beta < GDN_BETA_ONE || d.beta > GDN_BETA_LOGITS ||
      d.layout < GDN_LAYOUT_KV || d.layout > GDN_LAYOUT_VK)
    return "unknown decay, beta or layout in gdnRecurrentDesc";
  if (d.num_slots < 0 ||
      (d.num_slots > 0 && !d.has_initial_state && !d.has_final_state) ||
      (d.num_slots > 0 && d.state_index_bits != 32 && d.state_index_bits != 64))
    return "a pool (num_slots > 0) needs a state and state_index_bits 32 or 64";
  if (d.per_key_decay && d.decay == GDN_DECAY_NONE)
    return "per_key_decay needs decay LOG_SPACE or FUSED_GATING";
  if (d.per_channel_beta && d.beta == GDN_BETA_ONE)
    return "per_channel_beta needs beta GIVEN or LOGITS";
  if (d.state_in_place && !(d.has_initial_state && d.has_final_state))
    return "state_in_place needs has_initial_state and has_final_state";
  if (d.cu_seqlens_bits != 0 && d.cu_seqlens_bits != 32 &&
      d.cu_seqlens_bits != 64)
    return "cu_seqlens_bits must be 0, 32 or 64";
  if (d.intermediate_rows < 0 || d.intermediate_steps < 0 ||
      (d.intermediate_rows > 0 && d.intermediate_steps < 1) ||
      (d.intermediate_index_bits != 0 && d.intermediate_index_bits != 32 &&
       d.intermediate_index_bits != 64))
    return "intermediate_rows/steps must be >= 0 (steps >= 1 with rows) and "
           "intermediate_index_bits 0, 32 or 64";
  // A field that only matters with another, set without it, would be
  // ignored: refused, as gdn.Compiler.compile refuses it.
  bool rows = d.intermediate_rows > 0, state = d.has_initial_state ||
                                               d.has_final_state;
  if (!rows && (d.intermediate_steps != 0 || d.intermediate_index_bits != 0 ||
                d.intermediate_row_stride != 0))
    return "intermediate_steps, intermediate_index_bits and "
           "intermediate_row_stride need intermediate_rows > 0";
  if (!state && d.state_slot_stride != 0)
    return "state_slot_stride needs has_initial_state or has_final_state";
  if (d.checkpoint_interval == 0 && d.checkpoint_rows == 0 &&
      d.checkpoint_offset_bits != 0)
    return "checkpoint_offset_bits needs checkpoint_interval and "
           "checkpoint_rows";
  return "";
}

/// Dense strides of `shape` with the leading one `pitch` (all 0: dense).
std::array<int64_t, 5> pitched(ArrayRef<int64_t> shape, int64_t pitch) {
  std::array<int64_t, 5> strides{};
  if (pitch == 0)
    return strides;
  int64_t dense = 1;
  for (int64_t i = shape.size() - 1; i > 0; --i) {
    strides[i] = dense;
    dense *= shape[i]; // bounded by checkSizes
  }
  strides[0] = pitch;
  return strides;
}
} // namespace

OwningOpRef<ModuleOp> gdn::buildRecurrentModule(const gdnRecurrentDesc &d,
                                                ScheduleAttr schedule,
                                                MLIRContext *context,
                                                std::string &error) {
  error = checkSizes(d);
  if (!error.empty())
    return {};
  OpBuilder b(context);
  Type in = floatType(b, d.input_dtype), gate = floatType(b, d.gate_dtype),
       betaType = floatType(b, d.beta_dtype),
       stateType = floatType(b, d.state_dtype);
  error = checkOptions(d, in && gate && betaType && stateType);
  if (!error.empty())
    return {};

  // A memref type; with `strides` (one per dimension, not all 0) a view
  // whose legality the op's verifier checks. Its span (the bytes a caller's
  // buffer holds) must stay under kMaxArgumentBytes.
  std::string spanError;
  auto memref = [&](ArrayRef<int64_t> shape, Type type,
                    const int64_t *strides = nullptr) -> MemRefType {
    if (!strides || std::all_of(strides, strides + shape.size(),
                                [](int64_t x) { return x == 0; }))
      return MemRefType::get(shape, type);
    int64_t last = 0;
    for (size_t i = 0; i < shape.size(); ++i) {
      int64_t step;
      if (llvm::MulOverflow(shape[i] - 1,
                            strides[i] < 0 ? -strides[i] : strides[i], step) ||
          llvm::AddOverflow(last, step, last) ||
          last >= jit::kMaxArgumentBytes / 4) {
        std::string typeText;
        llvm::raw_string_ostream os(typeText);
        llvm::interleave(shape, os, "x");
        os << "x" << type;
        spanError = "the strides of a " + typeText +
                    " view span more than 2^40 bytes";
      }
    }
    return MemRefType::get(
        shape, type,
        StridedLayoutAttr::get(context, 0, ArrayRef(strides, shape.size())));
  };
  auto indexType = [&](int bits) { return b.getIntegerType(bits); };

  int64_t batch = d.cu_seqlens_bits ? 1 : d.N; // rows of the token tensors
  int64_t rows = d.num_slots > 0 ? d.num_slots : d.N;
  MemRefType qT = memref({batch, d.T, d.H, d.K}, in, d.q_strides);
  MemRefType kT = memref({batch, d.T, d.H, d.K}, in, d.k_strides);
  MemRefType vT = memref({batch, d.T, d.HV, d.V}, in, d.v_strides);
  // Gates per head, or per key channel (KDA); beta per head or per value
  // channel.
  MemRefType gT = d.per_key_decay
                      ? memref({batch, d.T, d.HV, d.K}, gate, d.gate_strides)
                      : memref({batch, d.T, d.HV}, gate, d.gate_strides);
  MemRefType bT =
      d.per_channel_beta
          ? memref({batch, d.T, d.HV, d.V}, betaType, d.beta_strides)
          : memref({batch, d.T, d.HV}, betaType, d.beta_strides);
  MemRefType hvT = memref({d.HV}, b.getF32Type());
  MemRefType biasT =
      d.per_key_decay ? memref({d.HV * d.K}, b.getF32Type()) : hvT;
  SmallVector<int64_t> stateShape =
      d.layout == GDN_LAYOUT_VK ? SmallVector<int64_t>{rows, d.HV, d.V, d.K}
                                : SmallVector<int64_t>{rows, d.HV, d.K, d.V};
  MemRefType sT = memref(stateShape, stateType,
                         pitched(stateShape, d.state_slot_stride).data());

  // The arguments in the order of gdn-c/GDN.h; `operands` the op's.
  SmallVector<Type> argTypes = {qT, kT, vT};
  enum Operand {
    G,
    A,
    ALog,
    DtBias,
    Beta,
    B,
    StateIndices,
    CuSeqlens,
    IntermediateStateIndices,
    ParentTokens,
    CheckpointOffsets,
    InitialState,
    IntermediateStates,
    IntermediateStateScale,
    KWindow,
    VWindow,
    GWindow,
    BetaWindow,
    StateCheckpoints,
    CheckpointScale,
    StateScale,
    FinalState,
    O,
    NumOperands
  };
  std::array<int, NumOperands> argOf; // argument index of each operand
  argOf.fill(-1);
  auto add = [&](Operand operand, Type type) {
    argOf[operand] = argTypes.size();
    argTypes.push_back(type);
  };
  if (d.decay == GDN_DECAY_LOG_SPACE)
    add(G, gT);
  if (d.decay == GDN_DECAY_FUSED_GATING) {
    add(A, gT);
    add(ALog, hvT);
    add(DtBias, biasT);
  }
  if (d.beta == GDN_BETA_GIVEN)
    add(Beta, bT);
  if (d.beta == GDN_BETA_LOGITS)
    add(B, bT);
  if (d.num_slots > 0)
    add(StateIndices, memref({d.N}, indexType(d.state_index_bits)));
  if (d.cu_seqlens_bits)
    add(CuSeqlens, memref({d.N + 1}, indexType(d.cu_seqlens_bits)));
  Type interType = floatType(b, d.intermediate_dtype);
  if (d.intermediate_rows > 0 && !interType) {
    error = "unknown intermediate_dtype";
    return {};
  }
  if (d.intermediate_rows > 0 && d.intermediate_index_bits)
    add(IntermediateStateIndices,
        memref({d.N}, indexType(d.intermediate_index_bits)));
  if (d.parent_index_bits != 0 &&
      ((d.parent_index_bits != 32 && d.parent_index_bits != 64) ||
       d.intermediate_rows < 1)) {
    error = "parent_index_bits must be 0, or 32 or 64 with intermediate_rows > 0";
    return {};
  }
  if (d.parent_index_bits)
    add(ParentTokens, memref({d.N, d.intermediate_steps},
                             indexType(d.parent_index_bits)));
  // Prefix-cache checkpoints: offsets after the index tables, the buffer
  // [checkpoint_rows, HV, ...] (dense, in checkpoint_dtype) after the windows.
  MemRefType cT;
  if (d.checkpoint_interval != 0 || d.checkpoint_rows != 0) {
    Type ckType = floatType(b, d.checkpoint_dtype);
    if (d.checkpoint_interval < 1 || d.checkpoint_rows < 1 ||
        (d.checkpoint_offset_bits != 32 && d.checkpoint_offset_bits != 64) ||
        !ckType) {
      error = "checkpoints need checkpoint_interval >= 1, checkpoint_rows >= "
              "1, checkpoint_offset_bits 32 or 64 and a float checkpoint_dtype";
      return {};
    }
    add(CheckpointOffsets,
        memref({d.N + 1}, indexType(d.checkpoint_offset_bits)));
    SmallVector<int64_t> shape(stateShape);
    shape[0] = d.checkpoint_rows;
    cT = memref(shape, ckType);
  }
  MemRefType iT;
  if (d.intermediate_rows > 0) {
    int64_t r = d.intermediate_rows, st = d.intermediate_steps;
    SmallVector<int64_t> shape =
        d.layout == GDN_LAYOUT_VK ? SmallVector<int64_t>{r, st, d.HV, d.V, d.K}
                                  : SmallVector<int64_t>{r, st, d.HV, d.K, d.V};
    iT = memref(shape, interType,
                pitched(shape, d.intermediate_row_stride).data());
  }
  if (!spanError.empty()) {
    error = spanError;
    return {};
  }
  if (d.replay_steps < 0) {
    error = "replay_steps must be >= 0";
    return {};
  }
  // Replayed verify: the windows follow intermediate_states, dense, one row
  // a slot (a sequence without a pool).
  auto addWindows = [&]() {
    if (d.replay_steps == 0)
      return;
    int64_t L = d.replay_steps;
    add(KWindow, memref({rows, d.H, L, d.K}, in));
    add(VWindow, memref({rows, d.HV, L, d.V}, in));
    add(GWindow, memref({rows, d.HV, L}, b.getF32Type()));
    add(BetaWindow, memref({rows, d.HV, L}, b.getF32Type()));
  };
  // f8E4M3FN per-token states: their scales, a stored row's, [r, steps,
  // HV, V] f32, dense, right after the buffer.
  auto addIntermediate = [&]() {
    if (!iT)
      return;
    add(IntermediateStates, iT);
    if (d.intermediate_dtype == GDN_DTYPE_F8E4M3)
      add(IntermediateStateScale,
          memref({d.intermediate_rows, d.intermediate_steps, d.HV, d.V},
                 b.getF32Type()));
  };
  // f8E4M3FN checkpoints: their scales, a stored row's, [checkpoint_rows,
  // HV, V] f32, dense, right after the buffer.
  auto addCheckpoints = [&]() {
    if (!cT)
      return;
    add(StateCheckpoints, cT);
    if (d.checkpoint_dtype == GDN_DTYPE_F8E4M3)
      add(CheckpointScale,
          memref({d.checkpoint_rows, d.HV, d.V}, b.getF32Type()));
  };
  // A quantized state's scales: a row's, [rows, HV, V] f32, dense.
  auto addScale = [&]() {
    if (d.state_dtype == GDN_DTYPE_F8E4M3)
      add(StateScale, memref({rows, d.HV, d.V}, b.getF32Type()));
  };
  if (d.state_in_place) {
    add(InitialState, sT); // one argument, both operands
    argOf[FinalState] = argOf[InitialState];
    addIntermediate();
    addWindows();
    addCheckpoints();
    addScale();
  } else {
    if (d.has_initial_state)
      add(InitialState, sT);
    addIntermediate();
    addWindows();
    addCheckpoints();
    addScale();
    if (d.has_final_state)
      add(FinalState, sT);
  }
  add(O, memref({batch, d.T, d.HV, d.V}, in)); // dense, v's dtype

  Location loc = UnknownLoc::get(context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(b, loc, kDescFunctionName,
                                   b.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  auto arg = [&](int operand) -> Value {
    return operand < 0 ? Value() : entry->getArgument(operand);
  };
  FloatAttr scale =
      d.has_scale ? b.getF32FloatAttr(d.scale) : FloatAttr();
  auto op = RecurrentOp::create(
      b, loc, /*result_tensors=*/TypeRange(), entry->getArgument(0),
      entry->getArgument(1), entry->getArgument(2), arg(argOf[G]),
      arg(argOf[A]), arg(argOf[ALog]), arg(argOf[DtBias]), arg(argOf[Beta]),
      arg(argOf[B]), arg(argOf[StateIndices]), arg(argOf[CuSeqlens]),
      arg(argOf[IntermediateStateIndices]), arg(argOf[ParentTokens]),
      arg(argOf[CheckpointOffsets]), arg(argOf[InitialState]),
      arg(argOf[IntermediateStates]), arg(argOf[IntermediateStateScale]),
      arg(argOf[KWindow]), arg(argOf[VWindow]), arg(argOf[GWindow]),
      arg(argOf[BetaWindow]), arg(argOf[StateCheckpoints]),
      arg(argOf[CheckpointScale]), arg(argOf[StateScale]), arg(argOf[FinalState]), arg(argOf[O]), scale,
      d.qk_l2norm != 0, d.allow_neg_eigval != 0,
      cT ? b.getI64IntegerAttr(d.checkpoint_interval) : IntegerAttr(),
      d.layout == GDN_LAYOUT_VK ? StateLayout::vk : StateLayout::kv,
      d.stochastic_rounding != 0);
  if (schedule)
    op->setAttr(GDNDialect::kScheduleAttrName, schedule);
  func::ReturnOp::create(b, loc);
  return module;
}
