//===- GPUModuleToPTX.cpp - serialize kernel modules to PTX ---------------===//
//
// gdn-gpu-module-to-ptx: gpu-module-to-binary{format=isa} with the LLVM pass
// pipeline chosen for gdn's kernels. Where the time of a cold compile goes
// and why this pipeline: docs/compile-time.md.
//
//===----------------------------------------------------------------------===//
#include "gdn/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Threading.h"
#include "mlir/Target/LLVM/ModuleToObject.h"
#include "mlir/Target/LLVM/NVVM/Utils.h"

#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Target/TargetMachine.h"

namespace mlir {
namespace gdn {
#define GEN_PASS_DEF_GDNGPUMODULETOPTXPASS
#include "gdn/Conversion/Passes.h.inc"
} // namespace gdn
} // namespace mlir

using namespace mlir;

namespace {

/// The tuning of MLIR's makeOptimizingTransformer, which
/// gpu-module-to-binary runs.
llvm::PipelineTuningOptions tuning() {
  llvm::PipelineTuningOptions options;
  options.LoopUnrolling = true;
  options.LoopInterleaving = true;
  options.LoopVectorization = true;
  options.SLPVectorization = true;
  return options;
}

/// The kernels' LLVM pipeline at O2, as text: LLVM's own O2 module pipeline
/// (what `opt -O2 -print-pipeline-passes` prints) with GVN's memory
/// dependence analysis off, `gvn<>` made `gvn<no-memdep>`. On the
/// tensor-core kernels that analysis took a sixth of O2's time, and without
/// it every kernel's PTX is byte-identical to O2's (docs/compile-time.md).
/// Printed by a PassBuilder without a target machine, so that it holds no
/// target pass: NVPTX's (nvvm-reflect with the chip's SM version) would
/// print without its parameter. Empty when LLVM prints no `gvn<>` (a later
/// LLVM): the caller then runs LLVM's O2 itself. Built once a process.
const std::string &kernelPipelineO2() {
  static const std::string text = [] {
    llvm::PassInstrumentationCallbacks callbacks;
    llvm::PassBuilder plain(/*TM=*/nullptr, tuning(), std::nullopt,
                            &callbacks);
    std::string o2;
    llvm::raw_string_ostream os(o2);
    plain.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2)
        .printPipeline(os, [&](StringRef className) {
          StringRef name = callbacks.getPassNameForClassName(className);
          return name.empty() ? className : name;
        });
    size_t gvn = o2.find("gvn<>");
    return gvn == std::string::npos ? std::string()
                                    : o2.replace(gvn, 5, "gvn<no-memdep>");
  }();
  return text;
}

/// NVVM serialization to PTX (NVVM's NVPTXSerializer for format isa) running
/// `pipeline` (empty: kernelPipelineO2 at O2, else LLVM's O-level) where
/// gpu-module-to-binary runs LLVM's O-level pipeline. The back end runs at
/// the target's O (CodeGenOptLevel), as there.
class PTXSerializer : public LLVM::ModuleToObject {
public:
  PTXSerializer(gpu::GPUModuleOp module, NVVM::NVVMTargetAttr target,
                StringRef pipeline, bool printPipeline)
      : ModuleToObject(*module, target.getTriple(), target.getChip(),
                       target.getFeatures(), target.getO()),
        target(target), pipeline(pipeline), printPipeline(printPipeline) {}

protected:
  /// libdevice (and the target's `link` files) only where a kernel calls a
  /// `__nv_` function. NVVM's SerializeGPUModuleBase looks libdevice up in
  /// the CUDA toolkit as it is made, and a CUDA_HOME naming no directory is
  /// then an error even for a module that needs nothing from it; gdn's
  /// kernels call none today.
  std::optional<SmallVector<std::unique_ptr<llvm::Module>>>
  loadBitcodeFiles(llvm::Module &module) override {
    bool callsLibdevice = llvm::any_of(module.functions(), [](auto &f) {
      return f.isDeclaration() && f.getName().starts_with("__nv_");
    });
    if (!callsLibdevice && !target.getLink())
      return SmallVector<std::unique_ptr<llvm::Module>>();
    NVVM::SerializeGPUModuleBase libraries(getOperation(), target);
    if (callsLibdevice &&
        libraries.getLibrariesToLink().size() ==
            (target.getLink() ? target.getLink().size() : 0)) {
      getOperation().emitError()
          << "a kernel calls libdevice and no CUDA toolkit with "
             "nvvm/libdevice/libdevice.10.bc was found (set CUDA_HOME)";
      return std::nullopt;
    }
    return libraries.loadBitcodeFiles(module);
  }

  LogicalResult optimizeModule(llvm::Module &module, int optLevel) override {
    if (optLevel < 0 || optLevel > 3)
      return getOperation().emitError()
             << "invalid optimization level " << optLevel;
    FailureOr<llvm::TargetMachine *> machine = getOrCreateTargetMachine();
    if (failed(machine))
      return getOperation().emitError()
             << "no LLVM target machine for triple '" << triple << "'";
    (*machine)->setOptLevel(static_cast<llvm::CodeGenOptLevel>(optLevel));

    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassInstrumentationCallbacks callbacks;
    llvm::PassBuilder builder(*machine, tuning(), std::nullopt, &callbacks);
    builder.registerModuleAnalyses(mam);
    builder.registerCGSCCAnalyses(cgam);
    builder.registerFunctionAnalyses(fam);
    builder.registerLoopAnalyses(lam);
    builder.crossRegisterProxies(lam, fam, cgam, mam);
    const llvm::OptimizationLevel levels[] = {
        llvm::OptimizationLevel::O0, llvm::OptimizationLevel::O1,
        llvm::OptimizationLevel::O2, llvm::OptimizationLevel::O3};
    llvm::OptimizationLevel level = levels[optLevel];

    llvm::ModulePassManager passes;
    std::string text;
    if (!pipeline.empty()) {
      if (llvm::Error error = builder.parsePassPipeline(passes, pipeline))
        return getOperation().emitError()
               << "llvm-pipeline: " << llvm::toString(std::move(error));
      text = pipeline;
    } else if (level == llvm::OptimizationLevel::O2 &&
               !kernelPipelineO2().empty()) {
      // The target's passes first (NVPTX: nvvm-reflect for the chip), as
      // LLVM's O2 runs them at its start, then the kernel pipeline; LLVM's
      // O2 should the text not parse back.
      builder.invokePipelineStartEPCallbacks(passes, level);
      if (llvm::Error error =
              builder.parsePassPipeline(passes, kernelPipelineO2()))
        llvm::consumeError(std::move(error));
      else
        text = kernelPipelineO2();
    }
    if (text.empty()) {
      passes = level == llvm::OptimizationLevel::O0
                   ? builder.buildO0DefaultPipeline(level)
                   : builder.buildPerModuleDefaultPipeline(level);
      text = "default<O" + std::to_string(optLevel) + ">";
    }
    if (printPipeline)
      getOperation().emitRemark() << "LLVM pipeline: " << text;
    passes.run(module, mam);
    return failed(llvmError) ? failure() : success();
  }

  /// LLVM reports some errors (e.g. of the back end) through its context's
  /// diagnostic handler, whose default prints and exits: the host process
  /// must not end. They become errors on the module.
  void handleModulePreLink(llvm::Module &module) override {
    module.getContext().setDiagnosticHandlerCallBack(
        [](const llvm::DiagnosticInfo *info, void *context) {
          auto *self = static_cast<PTXSerializer *>(context);
          if (info->getSeverity() != llvm::DS_Error)
            return;
          std::string message;
          llvm::raw_string_ostream os(message);
          llvm::DiagnosticPrinterRawOStream printer(os);
          info->print(printer);
          self->getOperation().emitError() << "LLVM: " << message;
          self->llvmError = failure();
        },
        this);
  }

  FailureOr<SmallVector<char, 0>>
  moduleToObject(llvm::Module &module) override {
    FailureOr<llvm::TargetMachine *> machine = getOrCreateTargetMachine();
    if (failed(machine))
      return getOperation().emitError()
             << "no LLVM target machine for triple '" << triple << "'";
    FailureOr<SmallString<0>> ptx = translateModuleToISA(
        module, **machine, [&] { return getOperation().emitError(); });
    if (failed(ptx) || failed(llvmError))
      return failure();
    return SmallVector<char, 0>(ptx->begin(), ptx->end());
  }

private:
  NVVM::NVVMTargetAttr target;
  std::string pipeline;
  bool printPipeline;
  LogicalResult llvmError = success(); // an error LLVM reported
};

struct GDNGPUModuleToPTXPass
    : gdn::impl::GDNGPUModuleToPTXPassBase<GDNGPUModuleToPTXPass> {
  using Base::Base;

  void runOnOperation() override {
    NVVM::SerializeGPUModuleBase::init();
    gpu::TargetOptions options(/*toolkitPath=*/{}, /*librariesToLink=*/{},
                               /*cmdOptions=*/{}, /*elfSection=*/{},
                               gpu::CompilationTarget::Assembly);
    ModuleOp top = getOperation();
    SmallVector<std::pair<gpu::GPUModuleOp, NVVM::NVVMTargetAttr>> modules;
    for (auto module : top.getOps<gpu::GPUModuleOp>()) {
      ArrayAttr targets = module.getTargetsAttr();
      auto nvvm = targets && targets.size() == 1
                      ? dyn_cast<NVVM::NVVMTargetAttr>(targets[0])
                      : NVVM::NVVMTargetAttr();
      if (!nvvm) {
        module.emitError("gdn-gpu-module-to-ptx: a gpu.module needs exactly "
                         "one #nvvm.target");
        return signalPassFailure();
      }
      modules.emplace_back(module, nvvm);
    }
    // Each module in its own LLVM context, in parallel where the context is
    // multithreaded (one module a kernel: gdn-split-kernel-modules); the
    // diagnostics come out in the modules' order.
    SmallVector<std::optional<SmallVector<char, 0>>> ptx(modules.size());
    if (failed(failableParallelForEach(
            &getContext(), llvm::seq<size_t>(0, modules.size()), [&](size_t i) {
              auto [module, nvvm] = modules[i];
              PTXSerializer serializer(module, nvvm, llvmPipeline,
                                       printLLVMPipeline);
              ptx[i] = serializer.run();
              if (ptx[i])
                return success();
              module.emitError("gdn-gpu-module-to-ptx: serialization failed");
              return failure();
            })))
      return signalPassFailure();
    for (auto [i, entry] : llvm::enumerate(modules)) {
      auto [module, nvvm] = entry;
      auto target = dyn_cast<gpu::TargetAttrInterface>(nvvm);
      Attribute object =
          target ? target.createObject(module, *ptx[i], options) : Attribute();
      if (!object) {
        module.emitError("gdn-gpu-module-to-ptx: no gpu.object for the PTX "
                         "(is the NVVM target interface registered?)");
        return signalPassFailure();
      }
      OpBuilder builder(module);
      gpu::BinaryOp::create(builder, module.getLoc(), module.getName(),
                            module.getOffloadingHandlerAttr(),
                            builder.getArrayAttr({object}));
      module.erase();
    }
  }
};

} // namespace
