//===- Compiler.cpp - compile gdn modules for the CPU or the GPU ----------===//
#include "gdn/JIT/Compiler.h"
#include "gdn/Dialect/GDN/IR/GDNOps.h"
#include "gdn/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/TargetSelect.h"

#include <limits>

using namespace mlir;
using namespace mlir::gdn;
using namespace mlir::gdn::jit;


StringRef jit::roleName(Role role) {
  switch (role) {
  case Role::Q: return "q";
  case Role::K: return "k";
  case Role::V: return "v";
  case Role::G: return "g";
  case Role::A: return "a";
  case Role::ALog: return "A_log";
  case Role::DtBias: return "dt_bias";
  case Role::Beta: return "beta";
  case Role::BLogits: return "b";
  case Role::StateIndices: return "state_indices";
  case Role::CuSeqlens: return "cu_seqlens";
  case Role::IntermediateStateIndices: return "intermediate_state_indices";
  case Role::ParentTokens: return "retrieve_parent_token";
  case Role::IntermediateStates: return "intermediate_states";
  case Role::InitialState: return "initial_state";
  case Role::FinalState: return "final_state";
  case Role::State: return "state";
  case Role::O: return "o";
  case Role::Accepted: return "accepted";
  case Role::KWindow: return "k_window";
  case Role::VWindow: return "v_window";
  case Role::GWindow: return "g_window";
  case Role::BetaWindow: return "beta_window";
  case Role::StateScale: return "state_scale";
  case Role::IntermediateStateScale:
    return "intermediate_state_scale";
  case Role::CheckpointOffsets:
    return "checkpoint_offsets";
  case Role::StateCheckpoints:
    return "state_checkpoints";
  case Role::CheckpointScale:
    return "checkpoint_scale";
  }
  return "?";
}

bool jit::isOutput(Role role) {
  return role == Role::O || role == Role::FinalState || role == Role::State ||
         role == Role::IntermediateStates || role == Role::KWindow ||
         role == Role::VWindow || role == Role::GWindow ||
         role == Role::BetaWindow || role == Role::StateScale ||
         role == Role::IntermediateStateScale ||
         role == Role::StateCheckpoints || role == Role::CheckpointScale;
}

int64_t Argument::numElements() const {
  // analyze() bounds the span, not the elements: zero strides (expand())
  // give a small span many elements, so the product saturates.
  uint64_t n = 1;
  for (int64_t d : shape)
    n = llvm::SaturatingMultiply(n, static_cast<uint64_t>(d));
  return static_cast<int64_t>(
      std::min<uint64_t>(n, std::numeric_limits<int64_t>::max()));
}

bool Argument::isDense() const {
  if (offset != 0)
    return false;
  int64_t dense = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && strides[i] != dense)
      return false;
    dense *= shape[i];
  }
  return true;
}

int64_t Argument::spanElements() const {
  int64_t last = offset;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0)
      return 0;
    last += (shape[i] - 1) * strides[i]; // bounded by analyze()
  }
  return last + 1;
}

int64_t Argument::bytes() const {
  return spanElements() * elementType.getIntOrFloatBitWidth() / 8;
}

/// Records `type`'s shape, strides and element type in `a`; fails (with a
/// diagnostic at `op`) when the buffer it spans is over the runner's limit.
static LogicalResult describeArgument(Operation *op, MemRefType type, Role role,
                                      Argument &a) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) ||
      llvm::any_of(strides, ShapedType::isDynamic) ||
      ShapedType::isDynamic(offset))
    return op->emitError() << "operand '" << roleName(role)
                           << "' needs static strides and offset";
  // The span in bytes (Argument::bytes) must not overflow: the runner
  // allocates it. An empty operand spans nothing.
  if (!llvm::is_contained(type.getShape(), 0)) {
    int64_t last = offset, bytes = type.getElementTypeBitWidth() / 8, step;
    for (auto [d, stride] : llvm::zip(type.getShape(), strides))
      if (llvm::MulOverflow(d - 1, stride, step) ||
          llvm::AddOverflow(last, step, last) || last >= kMaxArgumentBytes)
        return op->emitError() << "operand '" << roleName(role)
                               << "' is larger than the runner's limit of 2^40 bytes";
    if (llvm::MulOverflow(last + 1, bytes, bytes) || bytes > kMaxArgumentBytes)
      return op->emitError() << "operand '" << roleName(role)
                             << "' is larger than the runner's limit of 2^40 bytes";
  }
  a.role = role;
  a.shape.assign(type.getShape().begin(), type.getShape().end());
  a.strides.assign(strides.begin(), strides.end());
  a.offset = offset;
  a.elementType = type.getElementType();
  return success();
}

/// Records the memref type of `value`, an argument of `func`, as argument
/// `role` of `sig`; `assigned` marks the arguments seen so far. Fails on an
/// operand that is no argument, an argument used twice, or a size past the
/// runner's limit.
static LogicalResult assignArgument(Operation *op, func::FuncOp func,
                                    Value value, Role role, Signature &sig,
                                    SmallVectorImpl<bool> &assigned) {
  auto arg = dyn_cast<BlockArgument>(value);
  if (!arg || arg.getOwner() != &func.getBody().front())
    return op->emitError() << "operand '" << roleName(role)
                           << "' must be an argument of @" << func.getName();
  unsigned i = arg.getArgNumber();
  Argument &a = sig.arguments[i];
  if (assigned[i])
    return op->emitError() << "argument #" << i << " is used as both '"
                           << roleName(a.role) << "' and '" << roleName(role)
                           << "'; give each operand its own argument";
  if (failed(describeArgument(op, cast<MemRefType>(value.getType()), role, a)))
    return failure();
  assigned[i] = true;
  return success();
}

/// The operands of a gdn.commit and of a gdn.replay_commit with their roles.
static SmallVector<std::pair<Value, Role>> operandRoles(CommitOp op) {
  return {{op.getIntermediateStates(), Role::IntermediateStates},
          {op.getAccepted(), Role::Accepted},
          {op.getStateIndices(), Role::StateIndices},
          {op.getIntermediateStateIndices(), Role::IntermediateStateIndices},
          {op.getIntermediateStateScale(), Role::IntermediateStateScale},
          {op.getStateScale(), Role::StateScale},
          {op.getState(), Role::State}};
}
static SmallVector<std::pair<Value, Role>> operandRoles(ReplayCommitOp op) {
  return {{op.getKWindow(), Role::KWindow},
          {op.getVWindow(), Role::VWindow},
          {op.getGWindow(), Role::GWindow},
          {op.getBetaWindow(), Role::BetaWindow},
          {op.getAccepted(), Role::Accepted},
          {op.getStateIndices(), Role::StateIndices},
          {op.getRetrieveParentToken(), Role::ParentTokens},
          {op.getStateScale(), Role::StateScale},
          {op.getState(), Role::State}};
}

/// The Signature of `func`, whose body must be one `CommitLike` (gdn.commit
/// or gdn.replay_commit) and a return.
template <typename CommitLike>
static FailureOr<Signature> analyzeCommit(func::FuncOp func, OpKind kind) {
  StringRef name = CommitLike::getOperationName();
  SmallVector<CommitLike> ops;
  func.walk([&](CommitLike op) { ops.push_back(op); });
  if (ops.size() != 1 || !llvm::hasSingleElement(func.getBody()) ||
      func.getBody().front().getOperations().size() != 2 ||
      ops.front()->getBlock() != &func.getBody().front())
    return func.emitError() << "the body of @" << func.getName()
                            << " must be exactly one " << name
                            << " and a return";
  CommitLike op = ops.front();
  if (failed(op.requireMemRefForm("the gdn JIT")))
    return failure();
  if (func.getNumResults() != 0)
    return func.emitError() << "@" << func.getName()
                            << " must have a body and no results";
  Signature sig;
  sig.function = func.getName().str();
  sig.op = kind;
  sig.arguments.resize(func.getNumArguments());
  SmallVector<bool> assigned(func.getNumArguments(), false);
  for (auto [value, role] : operandRoles(op))
    if (value &&
        failed(assignArgument(op, func, value, role, sig, assigned)))
      return failure();
  for (unsigned i = 0; i < assigned.size(); ++i)
    if (!assigned[i])
      return func.emitError() << "argument #" << i << " is not an operand of the "
                              << name;
  sig.N = op.getDims().N;
  return sig;
}

FailureOr<Signature> jit::analyze(ModuleOp module, StringRef function) {
  func::FuncOp func;
  auto holdsGDNOp = [](func::FuncOp f) {
    bool has = false;
    f.walk([&](Operation *op) {
      has |= isa<RecurrentOp, CommitOp, ReplayCommitOp>(op);
    });
    return has;
  };
  if (!function.empty()) {
    func = module.lookupSymbol<func::FuncOp>(function);
    if (!func)
      return module.emitError() << "no function named '" << function << "'";
  } else {
    for (auto f : module.getOps<func::FuncOp>()) {
      if (!holdsGDNOp(f))
        continue;
      if (func)
        return f.emitError() << "several functions hold a gdn.recurrent, "
                                "gdn.commit or gdn.replay_commit; name the one "
                                "to run (--function)";
      func = f;
    }
    if (!func)
      return module.emitError()
             << "no function holds a gdn.recurrent, a gdn.commit or a "
                "gdn.replay_commit";
  }
  bool hasCommit = false, hasReplay = false;
  func.walk([&](CommitOp) { hasCommit = true; });
  func.walk([&](ReplayCommitOp) { hasReplay = true; });
  if (hasCommit && !func.isExternal())
    return analyzeCommit<CommitOp>(func, OpKind::Commit);
  if (hasReplay && !func.isExternal())
    return analyzeCommit<ReplayCommitOp>(func, OpKind::ReplayCommit);
  SmallVector<RecurrentOp> ops;
  func.walk([&](RecurrentOp op) { ops.push_back(op); });
  if (ops.size() != 1)
    return func.emitError() << "expected exactly one gdn.recurrent in @"
                            << func.getName() << ", found " << ops.size();
  // The CPU runs the whole function but the GPU path only its kernel launch:
  // accept exactly {gdn.recurrent, func.return} so both run the same program.
  if (!func.isExternal() &&
      (!llvm::hasSingleElement(func.getBody()) ||
       func.getBody().front().getOperations().size() != 2 ||
       ops.front()->getBlock() != &func.getBody().front()))
    return func.emitError() << "the body of @" << func.getName()
                            << " must be exactly one gdn.recurrent and a "
                               "return";
  if (failed(ops.front().requireMemRefForm("the gdn JIT")))
    return failure();
  if (func.getNumResults() != 0 || func.isExternal())
    return func.emitError() << "@" << func.getName()
                            << " must have a body and no results";
  RecurrentOp op = ops.front();

  Signature sig;
  sig.function = func.getName().str();
  sig.arguments.resize(func.getNumArguments());
  SmallVector<bool> assigned(func.getNumArguments(), false);
  std::pair<Value, Role> roles[] = {
      {op.getQ(), Role::Q},
      {op.getK(), Role::K},
      {op.getV(), Role::V},
      {op.getG(), Role::G},
      {op.getA(), Role::A},
      {op.getALog(), Role::ALog},
      {op.getDtBias(), Role::DtBias},
      {op.getBeta(), Role::Beta},
      {op.getB(), Role::BLogits},
      {op.getStateIndices(), Role::StateIndices},
      {op.getCuSeqlens(), Role::CuSeqlens},
      {op.getIntermediateStateIndices(), Role::IntermediateStateIndices},
      {op.getRetrieveParentToken(), Role::ParentTokens},
      {op.getCheckpointOffsets(), Role::CheckpointOffsets},
      {op.getInitialState(), Role::InitialState},
      {op.getIntermediateStates(), Role::IntermediateStates},
      {op.getIntermediateStateScale(), Role::IntermediateStateScale},
      {op.getKWindow(), Role::KWindow},
      {op.getVWindow(), Role::VWindow},
      {op.getGWindow(), Role::GWindow},
      {op.getBetaWindow(), Role::BetaWindow},
      {op.getStateCheckpoints(), Role::StateCheckpoints},
      {op.getCheckpointScale(), Role::CheckpointScale},
      {op.getStateScale(), Role::StateScale},
      {op.getFinalState(), Role::FinalState},
      {op.getO(), Role::O}};
  for (auto [value, role] : roles) {
    if (!value)
      continue;
    auto arg = dyn_cast<BlockArgument>(value);
    if (!arg || arg.getOwner() != &func.getBody().front())
      return op.emitError() << "operand '" << roleName(role)
                            << "' must be an argument of @" << func.getName();
    unsigned i = arg.getArgNumber();
    Argument &a = sig.arguments[i];
    if (assigned[i]) {
      if (a.role == Role::InitialState && role == Role::FinalState) {
        a.role = Role::State;
        continue;
      }
      return op.emitError() << "argument #" << i << " is used as both '"
                            << roleName(a.role) << "' and '" << roleName(role)
                            << "'; give each operand its own argument";
    }
    if (failed(describeArgument(op, cast<MemRefType>(value.getType()), role,
                                a)))
      return failure();
    assigned[i] = true;
  }
  for (unsigned i = 0; i < assigned.size(); ++i)
    if (!assigned[i])
      return func.emitError() << "argument #" << i
                              << " is not an operand of the gdn.recurrent";

  sig.N = op.getDims().N;
  return sig;
}

CPUProgram::CPUProgram(std::unique_ptr<ExecutionEngine> engine,
                       std::string function)
    : engine(std::move(engine)), function(std::move(function)) {}
CPUProgram::~CPUProgram() = default;

LogicalResult CPUProgram::run(ArrayRef<void *> buffers) {
  // The packed wrapper takes one pointer per argument, pointing at the value.
  SmallVector<void *> values(buffers.begin(), buffers.end());
  SmallVector<void *> args;
  for (void *&v : values)
    args.push_back(&v);
  if (llvm::Error err = engine->invokePacked(function, args)) {
    llvm::consumeError(std::move(err));
    return failure();
  }
  return success();
}

/// A module holding only a clone of `sig.function` (analyze checked that its
/// body is the op and a return: it references no other symbol). The rest of
/// the caller's module is not compiled: its llvm.mlir.global_ctors would run
/// in the host process at the first gdnKernelRunHost, and its other
/// functions would go through the lowering.
static OwningOpRef<ModuleOp> onlyFunction(ModuleOp module,
                                          const Signature &sig) {
  OwningOpRef<ModuleOp> copy = ModuleOp::create(module.getLoc());
  auto func = module.lookupSymbol<func::FuncOp>(sig.function);
  copy->getBody()->push_back(func->clone());
  return copy;
}

/// The symbol the CPU JIT compiles the caller's function under: C reserves
/// names that begin with an underscore and a capital, so no libm or C
/// runtime function the lowered kernel calls (expf, logf, ...) has it.
static constexpr llvm::StringLiteral kCPUEntry = "_Gdn_entry";

/// A module holding `sig.function`'s body in a fresh function named
/// kCPUEntry with the same type and no attributes: neither the caller's
/// name (a function named @expf would take the kernel's libm calls) nor its
/// function and argument attributes (llvm.byval, llvm.noalias,
/// instrument_function_entry, target_cpu, ...; they would reach LLVM and
/// change or break the code) get into the JIT-compiled module.
static OwningOpRef<ModuleOp> cpuEntryModule(ModuleOp module,
                                            const Signature &sig) {
  auto func = module.lookupSymbol<func::FuncOp>(sig.function);
  OpBuilder b(module.getContext());
  OwningOpRef<ModuleOp> copy = ModuleOp::create(module.getLoc());
  b.setInsertionPointToEnd(copy->getBody());
  auto entry =
      func::FuncOp::create(b, func.getLoc(), kCPUEntry, func.getFunctionType());
  IRMapping mapping;
  func.getBody().cloneInto(&entry.getBody(), mapping);
  return copy;
}

FailureOr<std::unique_ptr<CPUProgram>>
jit::compileForCPU(ModuleOp module, const Signature &sig) {
  OwningOpRef<ModuleOp> copy = cpuEntryModule(module, sig);
  PassManager pm(module.getContext());
  buildLowerToCPUPipeline(pm);
  if (failed(pm.run(*copy)))
    return failure();
  static bool initialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)initialized;
  // `transformer` is a function_ref: the function it names must outlive create.
  std::function<llvm::Error(llvm::Module *)> optimize =
      makeOptimizingTransformer(/*optLevel=*/2, /*sizeLevel=*/0, nullptr);
  ExecutionEngineOptions options;
  options.transformer = optimize;
  auto engine = ExecutionEngine::create(*copy, options);
  if (!engine) {
    std::string message = llvm::toString(engine.takeError());
    return module.emitError() << "CPU JIT failed: " << message;
  }
  return std::make_unique<CPUProgram>(std::move(*engine), kCPUEntry.str());
}

FailureOr<GPUProgram> jit::compileForGPU(ModuleOp module, const Signature &sig,
                                         const GPUOptions &options) {
  OwningOpRef<ModuleOp> copy = onlyFunction(module, sig);
  PassManager pm(module.getContext());
  // The pipeline verifies the IR where it must be valid (gdn-verify after
  // gdn's lowering and before LLVM translation); the pass manager's
  // verification after every upstream conversion cost a sixth of a cold
  // compile (docs/compile-time.md).
  pm.enableVerifier(false);
  LowerToPTXOptions ptxOptions;
  ptxOptions.chip = options.chip;
  ptxOptions.smCount = options.smCount;
  ptxOptions.schedule = options.schedule;
  buildLowerToPTXPipeline(pm, ptxOptions);
  if (failed(pm.run(*copy)))
    return failure();
  return collectGPULaunches(*copy, sig);
}

/// The PTX of the gpu.binary `name` in `module`, or a diagnostic at `launch`.
static FailureOr<std::string> binaryPTX(ModuleOp module, StringAttr name,
                                        gpu::LaunchFuncOp launch) {
  auto binary = module.lookupSymbol<gpu::BinaryOp>(name);
  if (!binary || binary.getObjects().empty())
    return launch.emitError() << "no gpu.binary @" << name.getValue()
                              << " holding the kernel's PTX";
  auto object = cast<gpu::ObjectAttr>(binary.getObjects()[0]);
  std::string ptx = object.getObject().getValue().str();
  // The serializer NUL-terminates the PTX; keep it a plain string.
  while (!ptx.empty() && ptx.back() == '\0')
    ptx.pop_back();
  return ptx;
}

FailureOr<GPUProgram> jit::collectGPULaunches(ModuleOp lowered,
                                              const Signature &sig) {
  auto func = lowered.lookupSymbol<func::FuncOp>(sig.function);
  if (!func || func.isExternal())
    return lowered.emitError() << "no function @" << sig.function
                               << " with a body after lowering";
  if (func.getNumArguments() != sig.arguments.size())
    return func.emitError() << "@" << sig.function << " has "
                            << func.getNumArguments()
                            << " arguments, its signature "
                            << sig.arguments.size();
  SmallVector<gpu::LaunchFuncOp> launches;
  func.walk([&](gpu::LaunchFuncOp l) { launches.push_back(l); });
  if (launches.empty() && sig.N != 0)
    return func.emitError() << "expected a kernel launch in @" << sig.function
                            << ", found none";
  GPUProgram program;
  llvm::StringMap<unsigned> moduleIndex; // gpu.binary name -> modules index
  llvm::DenseMap<Operation *, unsigned> workspaceIndex; // gpu.alloc -> index
  for (gpu::LaunchFuncOp op : launches) {
    if (op->getBlock() != &func.getBody().front())
      return op.emitError() << "a kernel launch of @" << sig.function
                            << " must be in its entry block: the launches "
                               "run as one list, unconditionally";
    // What a list of plain launches cannot replay is refused, not dropped.
    if (op.hasClusterSize() || !op.getAsyncDependencies().empty() ||
        op.getAsyncToken())
      return op.emitError() << "a kernel launch of @" << sig.function
                            << " with a cluster size or async dependencies "
                               "is not supported";
    GPULaunch launch;
    launch.kernel = op.getKernelName().str();
    Value dims[6] = {op.getGridSizeX(),  op.getGridSizeY(),
                     op.getGridSizeZ(),  op.getBlockSizeX(),
                     op.getBlockSizeY(), op.getBlockSizeZ()};
    for (int i = 0; i < 6; ++i) {
      APInt value;
      if (!matchPattern(dims[i], m_ConstantInt(&value)) ||
          value.getActiveBits() > 32 || value.isZero())
        return op.emitError() << "launch dimensions must be constants of at "
                                 "least 1 and at most 32 bits";
      (i < 3 ? launch.grid[i] : launch.block[i - 3]) = value.getZExtValue();
    }
    if (Value shared = op.getDynamicSharedMemorySize()) {
      APInt value;
      if (!matchPattern(shared, m_ConstantInt(&value)) ||
          value.getActiveBits() > 32 ||
          value.getZExtValue() > kMaxDynamicSharedMemoryBytes)
        return op.emitError() << "the dynamic shared memory of a launch must "
                                 "be a constant of at most "
                              << kMaxDynamicSharedMemoryBytes << " bytes";
      launch.dynamicSharedMemoryBytes = value.getZExtValue();
    }
    for (Value operand : op.getKernelOperands()) {
      if (auto arg = dyn_cast<BlockArgument>(operand);
          arg && arg.getOwner() == &func.getBody().front()) {
        launch.argumentIndices.push_back(arg.getArgNumber());
        continue;
      }
      // A workspace: a gpu.alloc of a static shape in the entry block.
      auto alloc = operand.getDefiningOp<gpu::AllocOp>();
      auto type = alloc ? dyn_cast<MemRefType>(alloc.getType()) : MemRefType();
      if (!alloc || alloc->getBlock() != &func.getBody().front() ||
          !type.hasStaticShape() || !alloc.getAsyncDependencies().empty() ||
          alloc.getAsyncToken() || !type.getElementType().isIntOrFloat())
        return op.emitError() << "a kernel operand of @" << sig.function
                              << " must be one of its arguments or a "
                                 "synchronous gpu.alloc of a static shape";
      auto [it, inserted] =
          workspaceIndex.try_emplace(alloc, program.workspaceBytes.size());
      if (inserted) {
        int64_t bytes = 0;
        if (llvm::MulOverflow(
                type.getNumElements(),
                int64_t(llvm::divideCeil(type.getElementTypeBitWidth(), 8)),
                bytes) ||
            bytes > kMaxArgumentBytes)
          return alloc.emitError() << "a workspace of more than "
                                   << kMaxArgumentBytes << " bytes";
        program.workspaceBytes.push_back(bytes);
      }
      launch.argumentIndices.push_back(sig.arguments.size() + it->second);
    }
    if (launch.argumentIndices.size() > kMaxKernelParameters)
      return op.emitError() << "a kernel launch of @" << sig.function
                            << " passes " << launch.argumentIndices.size()
                            << " parameters, more than "
                            << kMaxKernelParameters;
    // By name: the context need not have the gdn dialect loaded (a host's
    // lowered module without the attribute is an ordinary launch).
    if (auto mode = op->getAttrOfType<LaunchModeAttr>(
            GDNDialect::LaunchAttrHelper::getNameStr()))
      launch.mode = mode.getValue();
    StringAttr binary = op.getKernelModuleName();
    auto [it, inserted] =
        moduleIndex.try_emplace(binary.getValue(), program.modules.size());
    if (inserted) {
      FailureOr<std::string> ptx = binaryPTX(lowered, binary, op);
      if (failed(ptx))
        return failure();
      program.modules.push_back(std::move(*ptx));
    }
    launch.module = it->second;
    program.launches.push_back(std::move(launch));
  }
  return program;
}
