//===- GDNToGPU.cpp - gdn.recurrent to a register-tiled GPU kernel --------===//
//
// The pass: one gpu.func kernel and its gpu.launch_func per gdn.recurrent,
// by the pattern of its kernel form (KernelForms.h, RecurrentToGPU.cpp), and
// per gdn.commit (CommitToGPU.cpp) and per gdn.replay_commit (ReplayToGPU.cpp).
//
//===----------------------------------------------------------------------===//
#include "KernelForms.h"
#include "gdn/Conversion/GDNToGPU/CommitToGPU.h"
#include "gdn/Conversion/GDNToGPU/GPUTarget.h"
#include "gdn/Conversion/GDNToGPU/Schedule.h"
#include "gdn/Conversion/KernelMath.h"
#include "gdn/Conversion/Passes.h"
#include "gdn/Dialect/GDN/IR/GDNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Rewrite/PatternApplicator.h"
#include "llvm/ADT/MapVector.h"

#include <memory>
#include <vector>

namespace mlir {
namespace gdn {
#define GEN_PASS_DEF_CONVERTGDNTOGPUPASS
#include "gdn/Conversion/Passes.h.inc"
} // namespace gdn
} // namespace mlir

using namespace mlir;
using namespace mlir::gdn;

namespace {
constexpr StringLiteral kKernelModuleName = "gdn_kernels";
/// The kernel module of `module` for `chip`: `@gdn_kernels` when it exists
/// with exactly this target (an earlier run of the pass), else a new one whose
/// name the symbol table makes unique.
gpu::GPUModuleOp getOrCreateKernelModule(ModuleOp module,
                                         const GPUTarget &target) {
  MLIRContext *ctx = module.getContext();
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  UnitAttr::get(ctx));
  // O2, not O3: the same PTX for every kernel (examples/, bench/sweeps/),
  // while O3's codegen runs GVN twice where O2 runs EarlyCSE (and its opt
  // pipeline adds nothing these straight-line kernels use): -15% compile time.
  // Nor O1, 15-30 ms faster still: its PTX spills where O2's does not
  // (docs/compile-time.md).
  auto nvvm = NVVM::NVVMTargetAttr::get(
      ctx, /*optLevel=*/2, "nvptx64-nvidia-cuda", target.chip,
      target.ptxFeatures);
  ArrayAttr targets = ArrayAttr::get(ctx, {nvvm});
  if (auto existing = module.lookupSymbol<gpu::GPUModuleOp>(kKernelModuleName))
    if (existing.getTargetsAttr() == targets)
      return existing;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto kernels =
      gpu::GPUModuleOp::create(b, module.getLoc(), kKernelModuleName, targets);
  SymbolTable(module).insert(kernels); // renames on a clash
  return kernels;
}

struct ConvertGDNToGPUPass
    : gdn::impl::ConvertGDNToGPUPassBase<ConvertGDNToGPUPass> {
  using Base::Base;

  /// The row of the `chip` option, looked up once a run (runOnOperation).
  const GPUTarget *target = nullptr;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<RecurrentOp> ops;
    module.walk([&](RecurrentOp op) { ops.push_back(op); });
    SmallVector<CommitOp> commits; // lowered in CommitToGPU.cpp
    module.walk([&](CommitOp op) { commits.push_back(op); });
    SmallVector<ReplayCommitOp> replays; // lowered in ReplayToGPU.cpp
    module.walk([&](ReplayCommitOp op) { replays.push_back(op); });
    if (ops.empty() && commits.empty() && replays.empty())
      return;
    for (ReplayCommitOp op : replays)
      if (failed(op.requireMemRefForm("convert-gdn-to-gpu")) ||
          failed(requireHostCode(op)))
        return signalPassFailure();
    for (RecurrentOp op : ops)
      if (failed(op.requireMemRefForm("convert-gdn-to-gpu")) ||
          failed(requireHostCode(op)))
        return signalPassFailure();
    for (CommitOp op : commits)
      if (failed(op.requireMemRefForm("convert-gdn-to-gpu")) ||
          failed(requireHostCode(op)))
        return signalPassFailure();
    target = lookupGPUTarget(chip);
    if (!target) {
      Operation *first = !ops.empty()       ? ops.front().getOperation()
                         : !commits.empty() ? commits.front().getOperation()
                                            : replays.front().getOperation();
      first->emitOpError() << "cannot be lowered to the GPU: unsupported chip '"
                           << chip << "' (supported: " << supportedGPUChips()
                           << ")";
      return signalPassFailure();
    }
    // One kernel module per enclosing module (the op may sit in a nested one).
    llvm::MapVector<Operation *, std::pair<gpu::GPUModuleOp, SymbolTable *>>
        modules;
    std::vector<std::unique_ptr<SymbolTable>> tables;
    auto kernelModule = [&](Operation *op) -> std::pair<gpu::GPUModuleOp, SymbolTable *> {
      auto parent = op->getParentOfType<ModuleOp>();
      auto &entry = modules[parent];
      if (!entry.first) {
        entry.first = getOrCreateKernelModule(parent, *target);
        tables.push_back(std::make_unique<SymbolTable>(entry.first));
        entry.second = tables.back().get();
      }
      return entry;
    };
    RewritePatternSet patterns(&getContext());
    populateRecurrentToGPUPatterns(patterns, *target, kernelModule);
    FrozenRewritePatternSet frozen(std::move(patterns));
    PatternApplicator applicator(frozen);
    applicator.applyDefaultCostModel();
    PatternRewriter rewriter(&getContext());
    for (RecurrentOp op : ops) {
      kernelModule(op); // created even when nothing launches, as for commits
      if (failed(checkGPUOperandSizes(op)))
        return signalPassFailure();
      if (op.getDims().N == 0) { // varlen with no sequence: nothing to run
        op->erase();
        continue;
      }
      if (failed(checkSchedule(op)))
        return signalPassFailure();
      rewriter.setInsertionPoint(op);
      if (failed(applicator.matchAndRewrite(op, rewriter))) {
        op.emitOpError() << "cannot be lowered to the GPU: no kernel form "
                            "matches its schedule";
        return signalPassFailure();
      }
    }
    for (CommitOp op : commits) {
      auto [kernels, symbols] = kernelModule(op);
      if (failed(checkGPUOperandSizes(op)) ||
          failed(lowerCommitToGPU(op, *target, kernels, *symbols,
                                  kernelNameFor(op, "commit"))))
        return signalPassFailure();
    }
    for (ReplayCommitOp op : replays)
      if (failed(checkGPUOperandSizes(op)) ||
          failed(lowerReplayCommitToGPU(op, *target, kernelModule)))
        return signalPassFailure();
  }

  /// The op becomes a kernel launch, so it must sit in host code: not in a
  /// gpu.module, a gpu.func or the body of a gpu.launch.
  static LogicalResult requireHostCode(Operation *op) {
    for (Operation *p = op->getParentOp(); p; p = p->getParentOp())
      if (isa<gpu::GPUModuleOp, gpu::GPUFuncOp, gpu::LaunchOp>(p))
        return op->emitOpError()
               << "cannot be lowered to the GPU: it launches a kernel, so it "
                  "must be in host code, not inside '"
               << p->getName() << "'";
    return success();
  }

  /// The op's complete schedule (gdn-select-schedule's) is one the kernel
  /// and `target` can take (checkGPUSchedule: no cost model here); the
  /// form's pattern then reads it again.
  LogicalResult checkSchedule(RecurrentOp op) {
    return checkGPUSchedule(op, pinnedSchedule(op), *target);
  }
};
} // namespace
