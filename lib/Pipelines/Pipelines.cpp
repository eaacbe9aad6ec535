//===- Pipelines.cpp - registered gdn pass pipelines ----------------------===//
#include "gdn/Pipelines/Pipelines.h"
#include "gdn/Conversion/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::gdn;

namespace {
/// `gdn-verify`: mlir::verify of the op it runs on, a pass failure with the
/// verifier's diagnostics when it fails. The pipelines place it where the
/// IR must be valid (after gdn's own lowering, before LLVM translation) so
/// that a pass manager can run them with its verifier off.
struct VerifyPass : PassWrapper<VerifyPass, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(VerifyPass)
  StringRef getName() const override { return "GDNVerifyPass"; }
  StringRef getArgument() const override { return "gdn-verify"; }
  StringRef getDescription() const override {
    return "Verify the IR here (for pipelines run without the pass "
           "manager's verifier)";
  }
  void runOnOperation() override {
    if (failed(verify(getOperation())))
      signalPassFailure();
  }
};
} // namespace

void mlir::gdn::buildLowerToPTXPipeline(OpPassManager &pm,
                                        const LowerToPTXOptions &options) {
  GDNSelectSchedulePassOptions scheduleOptions;
  scheduleOptions.chip = options.chip;
  scheduleOptions.smCount = options.smCount;
  scheduleOptions.schedule = options.schedule;
  pm.addPass(createGDNSelectSchedulePass(scheduleOptions));
  ConvertGDNToGPUPassOptions gpuOptions;
  gpuOptions.chip = options.chip;
  pm.addPass(createConvertGDNToGPUPass(gpuOptions));
  // gdn's kernels are valid IR before the upstream conversions run, and the
  // converted modules before LLVM translation; verifying after every pass
  // in between cost a sixth of a cold compile (docs/compile-time.md).
  pm.addPass(std::make_unique<VerifyPass>());
  // One gpu.module a kernel: the modules' pipelines below run in parallel.
  pm.addPass(createGDNSplitKernelModulesPass());

  // The conversions keep pattern rollback: without it (experimental in
  // LLVM 22) a pattern that fails half-way is a fatal error, and this
  // pipeline runs inside the C API's host process (docs/compile-time.md).
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createSCFToControlFlowPass());
  kernels.addPass(createConvertNVGPUToNVVMPass()); // cp.async
  ConvertGpuOpsToNVVMOpsOptions nvvmOptions;
  nvvmOptions.useBarePtrCallConv = true;
  kernels.addPass(createConvertGpuOpsToNVVMOps(nvvmOptions));
  kernels.addPass(createConvertNVVMToLLVMPass());
  // CSE of the lowering's repeated index arithmetic before LLVM (without it
  // the PTX differs); no canonicalizer: LLVM's InstCombine folds the same and
  // the PTX of every kernel was byte-identical without it.
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  kernels.addPass(std::make_unique<VerifyPass>());

  // gpu-module-to-binary{format=isa} with the kernels' LLVM pipeline: the
  // same PTX as LLVM's O2, its time down a sixth (docs/compile-time.md).
  GDNGPUModuleToPTXPassOptions ptxOptions;
  ptxOptions.llvmPipeline = options.llvmPipeline;
  pm.addPass(createGDNGPUModuleToPTXPass(ptxOptions));
}

void mlir::gdn::buildLowerToCPUPipeline(OpPassManager &pm) {
  pm.addPass(createConvertGDNToCPUPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertMathToLLVMPass());
  // bf16 <-> f32 as integer arithmetic (round to nearest even), not the
  // __truncsfbf2 libcall LLVM emits on x86 without AVX512-BF16: the JIT
  // resolves symbols from the host process, and a libgcc older than GCC 13
  // (Debian 12's) has none, so the function failed to link.
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  ConvertFuncToLLVMPassOptions funcOptions;
  funcOptions.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(funcOptions));
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

void mlir::gdn::registerGDNPipelines() {
  PassRegistration<VerifyPass>();
  PassPipelineRegistration<LowerToPTXOptions>(
      "gdn-lower-to-ptx",
      "Lower gdn.recurrent to GPU kernels serialized to PTX (gpu.binary)",
      buildLowerToPTXPipeline);
  PassPipelineRegistration<>(
      "gdn-lower-to-cpu",
      "Lower gdn.recurrent to loops in the LLVM dialect for the CPU JIT",
      buildLowerToCPUPipeline);
}
