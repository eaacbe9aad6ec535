//===- RecurrentToGPU.cpp - gdn.recurrent to a kernel of its form ---------===//
//
// One rewrite pattern a kernel form (KernelForms.h): it matches a
// gdn.recurrent whose schedule selects the form, creates the kernel (a
// gpu.func whose arguments are the op's operands), lets the form build its
// body, and replaces the op by the gpu.launch_func over (V blocks, HV, N).
//
//===----------------------------------------------------------------------===//
#include "KernelForms.h"
#include "ScheduleRules.h"
#include "StagingLayout.h"
#include "gdn/Conversion/GDNToGPU/GPUTarget.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::gdn;

std::string gdn::kernelNameFor(Operation *op, StringRef suffix) {
  std::string out;
  if (auto func = op->getParentOfType<FunctionOpInterface>())
    for (char c : func.getName())
      out += llvm::isAlnum(c) ? c : '_';
  else
    out = "gdn";
  if (out.empty() || llvm::isDigit(out.front()))
    out.insert(out.begin(), '_');
  return out + "_" + suffix.str();
}

gpu::GPUFuncOp gdn::createKernelFunc(Operation *op, ScheduleAttr s,
                                     const KernelModuleOf &kernelModuleOf,
                                     StringRef suffix, TypeRange workspaces) {
  auto [kernels, symbols] = kernelModuleOf(op);
  Location loc = op->getLoc();
  // Kernel signature: the op's operands, in order, then the workspaces.
  SmallVector<Type> argTypes(op->getOperandTypes());
  llvm::append_range(argTypes, workspaces);
  OpBuilder b = OpBuilder::atBlockEnd(&kernels.getBodyRegion().front());
  auto kernel = gpu::GPUFuncOp::create(b, loc, kernelNameFor(op, suffix),
                                       b.getFunctionType(argTypes, {}));
  symbols->insert(kernel); // uniquifies the name
  kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  int32_t threads = s.threads();
  if (*s.getConsumerRegisters() > 0) {
    // setmaxnreg needs a register count fixed at entry: the exact block
    // size and one CTA an SM guaranteed (known_block_size must then go:
    // ptxas rejects it together with reqntid), ptxas warning C7508.
    kernel->setAttr(NVVM::NVVMDialect::getReqntidAttrName(),
                    b.getDenseI32ArrayAttr({threads, 1, 1}));
    kernel->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                    b.getI32IntegerAttr(1));
  } else {
    kernel.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr({threads, 1, 1}));
  }
  // The schedule's register cap (.maxnreg), e.g. the cost model's 128 for
  // tensor-core CTAs sharing an SM
  // (docs/cost-model.md#tensor-core-register-cap).
  if (*s.getMaxRegisters() > 0)
    kernel->setAttr(NVVM::NVVMDialect::getMaxnregAttrName(),
                    b.getI32IntegerAttr(*s.getMaxRegisters()));
  return kernel;
}

gpu::GPUFuncOp gdn::createRecurrentKernel(
    RecurrentOp op, ScheduleAttr s, const KernelModuleOf &kernelModuleOf,
    function_ref<void(OpBuilder &, RecurrentOp, gpu::GPUFuncOp)> build,
    StringRef suffix, TypeRange workspaces) {
  gpu::GPUFuncOp kernel =
      createKernelFunc(op, s, kernelModuleOf, suffix, workspaces);
  Location loc = op.getLoc();
  Block &entry = kernel.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  IRMapping mapping;
  mapping.map(op->getOperands(), entry.getArguments());
  auto kop = cast<RecurrentOp>(b.clone(*op, mapping));
  build(b, kop, kernel);
  kop->erase();
  gpu::ReturnOp::create(b, loc);
  return kernel;
}

namespace {
/// A gpu.launch_func of `kernel` before `op` over `grid`, with `s`'s CTA
/// and launch mode (gdn.launch, read by the JIT's GPULaunch).
gpu::LaunchFuncOp launchKernel(PatternRewriter &rewriter, RecurrentOp op,
                               ScheduleAttr s, gpu::GPUFuncOp kernel,
                               std::array<int64_t, 3> grid,
                               ValueRange operands) {
  Location loc = op.getLoc();
  auto idx = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(rewriter, loc, v);
  };
  // Buffers past the static 48 KiB are in dynamic shared memory
  // (KernelContext::dynamicBuffer): the launch requests their bytes.
  Value dynamicShared;
  if (int64_t bytes = dynamicSharedBytes(kernel))
    dynamicShared = arith::ConstantIntOp::create(rewriter, loc, bytes, 32);
  auto launch = gpu::LaunchFuncOp::create(
      rewriter, loc, kernel, {idx(grid[0]), idx(grid[1]), idx(grid[2])},
      {idx(s.threads()), idx(1), idx(1)}, dynamicShared, operands);
  if (s.launchMode() != LaunchMode::ordinary)
    rewriter.getContext()
        ->getLoadedDialect<GDNDialect>()
        ->getLaunchAttrHelper()
        .setAttr(launch, s.getLaunch());
  return launch;
}

/// A pattern lowering gdn.recurrent to kernels for `target`, in the
/// modules `kernelModuleOf` gives, named `name` in debug output.
struct RecurrentToGPUPattern : OpRewritePattern<RecurrentOp> {
  RecurrentToGPUPattern(MLIRContext *context, const GPUTarget &target,
                        KernelModuleOf kernelModuleOf, StringRef name)
      : OpRewritePattern(context), target(target),
        kernelModuleOf(std::move(kernelModuleOf)) {
    setDebugName(name);
  }
  /// The schedule the pass checked (convert-gdn-to-gpu): the op's pinned
  /// one, the cost model's for any parameter it leaves out.
  FailureOr<ScheduleAttr> schedule(RecurrentOp op) const {
    return checkGPUSchedule(op, pinnedSchedule(op), target);
  }

  const GPUTarget &target;
  KernelModuleOf kernelModuleOf;
};

/// Lowers a gdn.recurrent whose schedule selects form `Kernel`.
template <typename Kernel> struct RecurrentToKernel : RecurrentToGPUPattern {
  RecurrentToKernel(MLIRContext *context, const GPUTarget &target,
                    KernelModuleOf kernelModuleOf)
      : RecurrentToGPUPattern(context, target, std::move(kernelModuleOf),
                              Kernel::kName) {}

  LogicalResult matchAndRewrite(RecurrentOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<ScheduleAttr> s = schedule(op);
    if (failed(s) || !Kernel::matches(*s))
      return rewriter.notifyMatchFailure(op, "not this kernel form");
    gpu::GPUFuncOp kernel = createRecurrentKernel(
        op, *s, kernelModuleOf,
        [&](OpBuilder &b, RecurrentOp kop, gpu::GPUFuncOp func) {
          Kernel(b, op.getLoc(), kop, *s, func).build();
        });
    auto d = op.getDims();
    launchKernel(rewriter, op, *s, kernel, {d.V / s->blockColumns(), d.HV, d.N},
                 op->getOperands());
    rewriter.eraseOp(op);
    return success();
  }
};
} // namespace

namespace {
/// Lowers a gdn.recurrent with solve = chunk_parallel to two launches
/// sharing a workspace (gpu.alloc, freed after them): ChunkSolvesKernel over
/// (record slots, HV or with sharedGram H, N or 1 varlen), every chunk's
/// record, then
/// TensorCoreSolveKernel's scan
/// over (V blocks, HV, N), which reads them. The first launch's CTAs have at
/// most 4 warps: its Gram products (K Kᵀ, Q Kᵀ and Q Qᵀ's diagonal, each a
/// job a 16-row tile) go to them in turn, its substitution to a thread a
/// token.
struct ChunkParallelToKernels : RecurrentToGPUPattern {
  ChunkParallelToKernels(MLIRContext *context, const GPUTarget &target,
                         KernelModuleOf kernelModuleOf)
      : RecurrentToGPUPattern(context, target, std::move(kernelModuleOf),
                              ChunkSolvesKernel::kName) {}

  LogicalResult matchAndRewrite(RecurrentOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<ScheduleAttr> s = schedule(op);
    if (failed(s) || !s->chunkParallel())
      return rewriter.notifyMatchFailure(op, "not chunk_parallel");
    auto d = op.getDims();
    int64_t C = *s->getStagedTokens();
    int64_t slots = TensorCoreSolveKernel::recordSlots(op, C);
    int64_t rows = op.isVarlen() ? 1 : d.N; // record rows of HV heads
    auto type = MemRefType::get(
        {rows * d.HV * slots * TensorCoreSolveKernel::recordFloats(C)},
        rewriter.getF32Type());
    Location loc = op.getLoc();
    Value workspace =
        gpu::AllocOp::create(rewriter, loc, type, /*asyncToken=*/Type(),
                             ValueRange{}, ValueRange{}, ValueRange{})
            .getMemref();
    SmallVector<Value> operands(op->getOperands());
    operands.push_back(workspace);
    SmallVector<Type> workspaces = {type};
    ScheduleAttr solves =
        s->with(&ScheduleAttr::getWarps, std::min<int64_t>(*s->getWarps(), 4));
    int64_t heads = sharedGram(op, solves, C) ? d.H : d.HV;
    // sharedGram: a CTA a key head, solving its HV / H value heads' chunks.
    std::array<int64_t, 3> solvesGrid = {slots, heads, rows};
    // concurrent_solves: the groups' counts, zeroed by a launch of their own
    // before the solves' persistent CTAs (ChunkParallel.cpp).
    Value counts;
    if (s->concurrentSolves()) {
      auto countsType = MemRefType::get(
          {rows * d.HV * TensorCoreSolveKernel::solveGroups(op, C)},
          rewriter.getI32Type());
      counts = gpu::AllocOp::create(rewriter, loc, countsType,
                                    /*asyncToken=*/Type(), ValueRange{},
                                    ValueRange{}, ValueRange{})
                   .getMemref();
      operands.push_back(counts);
      workspaces.push_back(countsType);
      solves = solves.with(&ScheduleAttr::getMaxRegisters,
                           kConcurrentSolveRegisters);
      launchZeroCounts(rewriter, op, solves, operands, workspaces);
      solvesGrid = {std::min(slots * heads * rows,
                             kConcurrentSolveCTAs * target.smCount),
                    1, 1};
    }
    gpu::GPUFuncOp first = createRecurrentKernel(
        op, solves, kernelModuleOf,
        [&](OpBuilder &b, RecurrentOp kop, gpu::GPUFuncOp func) {
          ChunkSolvesKernel(b, loc, kop, solves, func).build();
        },
        "chunk_solves", workspaces);
    launchKernel(rewriter, op, solves, first, solvesGrid, operands);
    if (s->segmented()) {
      lowerSegments(rewriter, op, *s, operands, type);
    } else {
      gpu::GPUFuncOp scan = createRecurrentKernel(
          op, *s, kernelModuleOf,
          [&](OpBuilder &b, RecurrentOp kop, gpu::GPUFuncOp func) {
            TensorCoreSolveKernel(b, loc, kop, *s, func).build();
          },
          "recurrent", workspaces);
      gpu::LaunchFuncOp launch =
          launchKernel(rewriter, op, *s, scan,
                       {d.V / s->blockColumns(), d.HV, d.N}, operands);
      // Beside the solves: a programmatic dependent launch, which may start
      // once every solves CTA has started (each signals it first thing);
      // the scan waits for their grid after its recurrence.
      if (counts)
        rewriter.getContext()
            ->getLoadedDialect<GDNDialect>()
            ->getLaunchAttrHelper()
            .setAttr(launch, LaunchModeAttr::get(
                                 rewriter.getContext(),
                                 LaunchMode::programmatic_after_recurrence));
    }
    gpu::DeallocOp::create(rewriter, loc, /*asyncToken=*/Type(), ValueRange{},
                           workspace);
    if (counts)
      gpu::DeallocOp::create(rewriter, loc, /*asyncToken=*/Type(),
                             ValueRange{}, counts);
    rewriter.eraseOp(op);
    return success();
  }

  /// concurrent_solves: a launch of `s`'s CTAs that zeroes the groups'
  /// counts (the last of `operands`, of the last of `workspaces`): the
  /// solves count from zero in a workspace a runner allocates unset.
  void launchZeroCounts(PatternRewriter &rewriter, RecurrentOp op,
                        ScheduleAttr s, ValueRange operands,
                        TypeRange workspaces) const {
    Location loc = op.getLoc();
    int64_t count = cast<MemRefType>(workspaces.back()).getNumElements();
    int64_t threads = s.threads();
    gpu::GPUFuncOp zero = createRecurrentKernel(
        op, s, kernelModuleOf,
        [&](OpBuilder &b, RecurrentOp, gpu::GPUFuncOp func) {
          Value i = arith::AddIOp::create(
              b, loc,
              arith::MulIOp::create(
                  b, loc, gpu::BlockIdOp::create(b, loc, gpu::Dimension::x),
                  arith::ConstantIndexOp::create(b, loc, threads)),
              gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
          Value inRange = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::ult, i,
              arith::ConstantIndexOp::create(b, loc, count));
          auto ifOp = scf::IfOp::create(b, loc, inRange, false);
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(&ifOp.getThenRegion().front());
          memref::StoreOp::create(b, loc,
                                  arith::ConstantIntOp::create(b, loc, 0, 32),
                                  func.getArguments().back(), i);
        },
        "zero_counts", workspaces);
    launchKernel(rewriter, op, s, zero,
                 {(count + threads - 1) / threads, 1, 1},
                 operands);
  }

  /// segments = P > 1: the segment maps, their join and the segments'
  /// scan (SegmentScan.cpp) after the records' launch, with a second
  /// workspace for the maps; `operands` ends with the records' workspace
  /// (of type `records`).
  void lowerSegments(PatternRewriter &rewriter, RecurrentOp op, ScheduleAttr s,
                     SmallVector<Value> operands, MemRefType records) const {
    auto d = op.getDims();
    Location loc = op.getLoc();
    MemRefType mapsType = TensorCoreSolveKernel::segmentMapsType(op, s);
    Value maps =
        gpu::AllocOp::create(rewriter, loc, mapsType, /*asyncToken=*/Type(),
                             ValueRange{}, ValueRange{}, ValueRange{})
            .getMemref();
    operands.push_back(maps);
    SmallVector<Type> workspaces = {records, mapsType};
    int64_t P = *s.getSegments(), blocks = d.V / s.blockColumns();
    auto part = [&](TensorCoreSolveKernel::SegmentPart which, StringRef name) {
      return createRecurrentKernel(
          op, s, kernelModuleOf,
          [&](OpBuilder &b, RecurrentOp kop, gpu::GPUFuncOp func) {
            TensorCoreSolveKernel kernel(b, loc, kop, s, func);
            kernel.setSegmentPart(which);
            kernel.build();
          },
          name, workspaces);
    };
    launchKernel(rewriter, op, s,
                 part(TensorCoreSolveKernel::SegmentPart::maps, "segment_maps"),
                 {blocks + d.K / s.blockColumns(), d.HV, d.N * (P - 1)},
                 operands);
    if (P > 2) { // X_1 = B_0: two segments join nothing
      // The join's CTA: kSegmentJoinThreads, no register cap.
      ScheduleAttr joins =
          s.with(&ScheduleAttr::getWarps,
                 kSegmentJoinThreads / ScheduleAttr::kWarpSize)
              .with(&ScheduleAttr::getMaxRegisters, 0);
      gpu::GPUFuncOp join = createRecurrentKernel(
          op, joins, kernelModuleOf,
          [&](OpBuilder &b, RecurrentOp kop, gpu::GPUFuncOp func) {
            SegmentJoinKernel(b, loc, kop, joins, func).build();
          },
          "segment_join", workspaces);
      launchKernel(rewriter, op, joins, join,
                   {d.V / kSegmentJoinRows, d.HV, d.N}, operands);
    }
    launchKernel(rewriter, op, s,
                 part(TensorCoreSolveKernel::SegmentPart::scan, "recurrent"),
                 {blocks, d.HV, d.N * P}, operands);
    gpu::DeallocOp::create(rewriter, loc, /*asyncToken=*/Type(), ValueRange{},
                           maps);
  }
};
} // namespace

void gdn::populateRecurrentToGPUPatterns(RewritePatternSet &patterns,
                                         const GPUTarget &target,
                                         KernelModuleOf kernelModuleOf) {
  patterns
      .add<RecurrentToKernel<TokenLoopKernel>,
           RecurrentToKernel<WarpSpecializedKernel>,
           RecurrentToKernel<WarpSpecializedSolveKernel>,
           RecurrentToKernel<CudaCoreSolveKernel>,
           RecurrentToKernel<TensorCoreSolveKernel>,
           RecurrentToKernel<MmaDecodeKernel>, ChunkParallelToKernels>(
          patterns.getContext(), target, kernelModuleOf);
}
