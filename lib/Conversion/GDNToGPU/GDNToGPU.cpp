//===- GDNToGPU.cpp - gdn.recurrent to a register-tiled GPU kernel --------===//
//
// The pass: one gpu.func kernel and its gpu.launch_func per gdn.recurrent
// (gdn.commit: CommitToGPU.cpp), built by KernelBuilder (KernelBuilder.h).
//
//===----------------------------------------------------------------------===//
#include "KernelBuilder.h"
#include "gdn/Conversion/GDNToGPU/CommitToGPU.h"
#include "gdn/Conversion/GDNToGPU/GPUTarget.h"
#include "gdn/Conversion/GDNToGPU/Schedule.h"
#include "gdn/Conversion/KernelMath.h"
#include "gdn/Conversion/Passes.h"
#include "gdn/Dialect/GDN/IR/GDNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include "llvm/Support/MathExtras.h"
#include <algorithm>
#include <limits>
#include <tuple>

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
/// Register cap of tensor-core kernels of 4 or more warps (lower()).
constexpr int32_t kTensorCoreRegisters = 128;

using Schedule = GPUSchedule;

/// A PTX-safe identifier made from `name`: [A-Za-z_][A-Za-z0-9_]*.
std::string kernelName(StringRef name) {
  std::string out;
  for (char c : name)
    out += llvm::isAlnum(c) ? c : '_';
  if (out.empty() || llvm::isDigit(out.front()))
    out.insert(out.begin(), '_');
  return out;
}

/// Builds the body of one kernel. Method names follow the kernel's stages.
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
    if (ops.empty() && commits.empty())
      return;
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
      Operation *first = ops.empty() ? commits.front().getOperation()
                                     : ops.front().getOperation();
      first->emitOpError() << "cannot be lowered to the GPU: unsupported chip '"
                           << chip << "' (supported: " << supportedGPUChips()
                           << ")";
      return signalPassFailure();
    }
    // One kernel module per enclosing module (the op may sit in a nested one).
    llvm::MapVector<Operation *, std::pair<gpu::GPUModuleOp, SymbolTable *>>
        modules;
    std::vector<std::unique_ptr<SymbolTable>> tables;
    auto kernelModule = [&](Operation *op) {
      auto parent = op->getParentOfType<ModuleOp>();
      auto &entry = modules[parent];
      if (!entry.first) {
        entry.first = getOrCreateKernelModule(parent, *target);
        tables.push_back(std::make_unique<SymbolTable>(entry.first));
        entry.second = tables.back().get();
      }
      return entry;
    };
    for (RecurrentOp op : ops) {
      auto [kernels, symbols] = kernelModule(op);
      if (failed(lower(op, kernels, *symbols)))
        return signalPassFailure();
    }
    for (CommitOp op : commits) {
      auto [kernels, symbols] = kernelModule(op);
      std::string name = "gdn_commit";
      if (auto func = op->getParentOfType<FunctionOpInterface>())
        name = kernelName(func.getName()) + "_commit";
      if (failed(lowerCommitToGPU(op, kernels, *symbols, name)))
        return signalPassFailure();
    }
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

  LogicalResult lower(RecurrentOp op, gpu::GPUModuleOp kernels,
                      SymbolTable &symbols) {
    if (op.getDims().N == 0) { // varlen with no sequence: nothing to run
      op->erase();
      return success();
    }
    // The complete schedule gdn-select-schedule attached, checked for this
    // chip (no cost model here).
    FailureOr<Schedule> s = checkGPUSchedule(op, pinnedSchedule(op), *target);
    if (failed(s))
      return failure();
    auto d = op.getDims();
    Location loc = op.getLoc();
    std::string name = "gdn_recurrent";
    if (auto func = op->getParentOfType<FunctionOpInterface>())
      name = kernelName(func.getName()) + "_recurrent";

    // Kernel signature: the op's operands, in order.
    SmallVector<Type> argTypes(op->getOperandTypes());
    OpBuilder b = OpBuilder::atBlockEnd(&kernels.getBodyRegion().front());
    auto kernel =
        gpu::GPUFuncOp::create(b, loc, name, b.getFunctionType(argTypes, {}));
    symbols.insert(kernel); // uniquifies the name
    kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
    int32_t threads = s->threads();
    if (s->consumerRegisters > 0) {
      if (!target->setMaxNReg)
        return op.emitOpError() << "cannot be lowered to the GPU: "
                                   "consumer_registers (setmaxnreg) needs "
                                   "an arch-specific chip (sm_90a, sm_100a), "
                                   "not "
                                << chip;
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
    // Tensor-core CTAs of 4 or 8 warps: at most 128 registers a thread, so
    // 16 warps (4 or 2 CTAs) fit an SM as the schedule assumes. Left to
    // ptxas, the T = 12 vk kernel of 8 warps took 143 (one CTA an SM: N = 64
    // 161 vs 105 us), kv on 4 warps 135 (N = 8 18.81 -> 21.05 us), for a few
    // bytes of spill less (docs/cost-model.md#tensor-core-register-cap).
    if (s->tensorCores() && s->warps >= 4 && s->consumerRegisters == 0)
      kernel->setAttr(NVVM::NVVMDialect::getMaxnregAttrName(),
                      b.getI32IntegerAttr(kTensorCoreRegisters));

    Block &entry = kernel.getBody().front();
    b.setInsertionPointToStart(&entry);
    IRMapping mapping;
    mapping.map(op->getOperands(), entry.getArguments());
    auto kop = cast<RecurrentOp>(b.clone(*op, mapping));
    KernelBuilder(b, loc, kop, *s, kernel).build();
    kop->erase();
    gpu::ReturnOp::create(b, loc);

    // Host side: the launch over (V blocks, HV, N).
    OpBuilder hb(op);
    auto idx = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(hb, loc, v);
    };
    gpu::KernelDim3 grid{idx(d.V / s->blockRows()), idx(d.HV), idx(d.N)};
    gpu::KernelDim3 block{idx(threads), idx(1), idx(1)};
    auto launch = gpu::LaunchFuncOp::create(
        hb, loc, kernel, grid, block, /*dynamicSharedMemorySize=*/Value(),
        op->getOperands());
    if (s->programmaticLaunch) // read by the JIT (GPUKernel)
      launch->setAttr(kProgrammaticLaunchAttrName, hb.getUnitAttr());
    op->erase();
    return success();
  }
};
} // namespace
