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
#include "mlir/Target/LLVM/NVVM/Utils.h"

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

/// The LLVM pipeline a kernel module gets by default: LLVM's own O<optLevel>
/// module pipeline (what `opt -O2 -print-pipeline-passes` prints) with GVN's
/// memory dependence analysis off, `gvn<>` made `gvn<no-memdep>`. On the
/// tensor-core kernels that analysis took a sixth of O2's time, and without
/// it every kernel's PTX is byte-identical to O2's (docs/compile-time.md).
/// Should a later LLVM print GVN otherwise, the pipeline is LLVM's O-level
/// unchanged: slower to compile, the same code.
std::string kernelPipeline(llvm::PassBuilder &builder,
                           llvm::PassInstrumentationCallbacks &callbacks,
                           llvm::OptimizationLevel level) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::ModulePassManager o2 =
      level == llvm::OptimizationLevel::O0
          ? builder.buildO0DefaultPipeline(level)
          : builder.buildPerModuleDefaultPipeline(level);
  o2.printPipeline(os, [&](StringRef className) {
    StringRef name = callbacks.getPassNameForClassName(className);
    return name.empty() ? className : name;
  });
  size_t gvn = text.find("gvn<>");
  if (gvn != std::string::npos)
    text.replace(gvn, 5, "gvn<no-memdep>");
  return text;
}

/// NVVM serialization to PTX running `pipeline` (empty: kernelPipeline of
/// the target's O) where gpu-module-to-binary runs LLVM's O-level pipeline.
/// The back end runs at the target's O (CodeGenOptLevel), as there.
class PTXSerializer : public NVVM::SerializeGPUModuleBase {
public:
  PTXSerializer(gpu::GPUModuleOp module, NVVM::NVVMTargetAttr target,
                StringRef pipeline)
      : SerializeGPUModuleBase(*module, target), pipeline(pipeline) {}

protected:
  /// libdevice only where a kernel calls it (a `__nv_` declaration): loading
  /// it lazily still reads its 500 kB, and gdn's kernels call none today.
  std::optional<SmallVector<std::unique_ptr<llvm::Module>>>
  loadBitcodeFiles(llvm::Module &module) override {
    bool callsLibdevice = llvm::any_of(module.functions(), [](auto &f) {
      return f.isDeclaration() && f.getName().starts_with("__nv_");
    });
    if (!callsLibdevice)
      return SmallVector<std::unique_ptr<llvm::Module>>();
    return SerializeGPUModuleBase::loadBitcodeFiles(module);
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
    // The tuning of MLIR's makeOptimizingTransformer, which
    // gpu-module-to-binary runs.
    llvm::PipelineTuningOptions tuning;
    tuning.LoopUnrolling = true;
    tuning.LoopInterleaving = true;
    tuning.LoopVectorization = true;
    tuning.SLPVectorization = true;
    llvm::PassInstrumentationCallbacks callbacks;
    llvm::PassBuilder builder(*machine, tuning, std::nullopt, &callbacks);
    builder.registerModuleAnalyses(mam);
    builder.registerCGSCCAnalyses(cgam);
    builder.registerFunctionAnalyses(fam);
    builder.registerLoopAnalyses(lam);
    builder.crossRegisterProxies(lam, fam, cgam, mam);
    const llvm::OptimizationLevel levels[] = {
        llvm::OptimizationLevel::O0, llvm::OptimizationLevel::O1,
        llvm::OptimizationLevel::O2, llvm::OptimizationLevel::O3};
    std::string text =
        pipeline.empty() ? kernelPipeline(builder, callbacks, levels[optLevel])
                         : pipeline;
    llvm::ModulePassManager passes;
    if (llvm::Error error = builder.parsePassPipeline(passes, text))
      return getOperation().emitError()
             << "llvm-pipeline: " << llvm::toString(std::move(error));
    passes.run(module, mam);
    return success();
  }

  FailureOr<SmallVector<char, 0>>
  moduleToObject(llvm::Module &module) override {
    FailureOr<llvm::TargetMachine *> machine = getOrCreateTargetMachine();
    if (failed(machine))
      return getOperation().emitError()
             << "no LLVM target machine for triple '" << triple << "'";
    FailureOr<SmallString<0>> ptx = translateModuleToISA(
        module, **machine, [&] { return getOperation().emitError(); });
    if (failed(ptx))
      return failure();
    return SmallVector<char, 0>(ptx->begin(), ptx->end());
  }

private:
  std::string pipeline;
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
    for (auto module :
         llvm::make_early_inc_range(top.getOps<gpu::GPUModuleOp>())) {
      ArrayAttr targets = module.getTargetsAttr();
      auto nvvm = targets && targets.size() == 1
                      ? dyn_cast<NVVM::NVVMTargetAttr>(targets[0])
                      : NVVM::NVVMTargetAttr();
      if (!nvvm) {
        module.emitError("gdn-gpu-module-to-ptx: a gpu.module needs exactly "
                         "one #nvvm.target");
        return signalPassFailure();
      }
      PTXSerializer serializer(module, nvvm, llvmPipeline);
      std::optional<SmallVector<char, 0>> ptx = serializer.run();
      if (!ptx) {
        module.emitError("gdn-gpu-module-to-ptx: serialization failed");
        return signalPassFailure();
      }
      auto target = cast<gpu::TargetAttrInterface>(nvvm);
      Attribute object = target.createObject(module, *ptx, options);
      OpBuilder builder(module);
      gpu::BinaryOp::create(builder, module.getLoc(), module.getName(),
                            /*offloadingHandler=*/nullptr,
                            builder.getArrayAttr({object}));
      module.erase();
    }
  }
};

} // namespace
