//===- RecurrentToGPU.cpp - gdn.recurrent to a kernel of its form ---------===//
//
// One rewrite pattern a kernel form (KernelForms.h): it matches a
// gdn.recurrent whose schedule selects the form, creates the kernel (a
// gpu.func whose arguments are the op's operands), lets the form build its
// body, and replaces the op by the gpu.launch_func over (V blocks, HV, N).
//
//===----------------------------------------------------------------------===//
#include "KernelForms.h"
#include "gdn/Conversion/GDNToGPU/GPUTarget.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
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

namespace {
/// Register cap of tensor-core kernels of 4 or more warps.
constexpr int32_t kTensorCoreRegisters = 128;

} // namespace

gpu::GPUFuncOp gdn::createKernelFunc(Operation *op, ScheduleAttr s,
                                     const KernelModuleOf &kernelModuleOf,
                                     StringRef suffix) {
  auto [kernels, symbols] = kernelModuleOf(op);
  Location loc = op->getLoc();
  // Kernel signature: the op's operands, in order.
  SmallVector<Type> argTypes(op->getOperandTypes());
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
  // Tensor-core CTAs of 4 or 8 warps: at most 128 registers a thread, so
  // 16 warps (4 or 2 CTAs) fit an SM as the schedule assumes
  // (docs/cost-model.md#tensor-core-register-cap).
  if (s.tensorCores() && *s.getWarps() >= 4 && *s.getConsumerRegisters() == 0)
    kernel->setAttr(NVVM::NVVMDialect::getMaxnregAttrName(),
                    b.getI32IntegerAttr(kTensorCoreRegisters));
  return kernel;
}

gpu::GPUFuncOp gdn::createRecurrentKernel(
    RecurrentOp op, ScheduleAttr s, const KernelModuleOf &kernelModuleOf,
    function_ref<void(OpBuilder &, RecurrentOp, gpu::GPUFuncOp)> build) {
  gpu::GPUFuncOp kernel = createKernelFunc(op, s, kernelModuleOf, "recurrent");
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
/// Lowers a gdn.recurrent whose schedule selects form `Kernel`.
template <typename Kernel>
struct RecurrentToKernel : OpRewritePattern<RecurrentOp> {
  RecurrentToKernel(MLIRContext *context, const GPUTarget &target,
                    KernelModuleOf kernelModuleOf)
      : OpRewritePattern(context), target(target),
        kernelModuleOf(std::move(kernelModuleOf)) {
    setDebugName(Kernel::kName);
  }

  LogicalResult matchAndRewrite(RecurrentOp op,
                                PatternRewriter &rewriter) const override {
    // The schedule the pass checked (convert-gdn-to-gpu): the op's pinned
    // one, the cost model's for any parameter it leaves out.
    FailureOr<ScheduleAttr> s =
        checkGPUSchedule(op, pinnedSchedule(op), target);
    if (failed(s) || !Kernel::matches(*s))
      return rewriter.notifyMatchFailure(op, "not this kernel form");
    gpu::GPUFuncOp kernel = createRecurrentKernel(
        op, *s, kernelModuleOf,
        [&](OpBuilder &b, RecurrentOp kop, gpu::GPUFuncOp func) {
          Kernel(b, op.getLoc(), kop, *s, func).build();
        });
    auto d = op.getDims();
    Location loc = op.getLoc();
    auto idx = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(rewriter, loc, v);
    };
    gpu::KernelDim3 grid{idx(d.V / s->blockColumns()), idx(d.HV), idx(d.N)};
    gpu::KernelDim3 block{idx(s->threads()), idx(1), idx(1)};
    auto launch = gpu::LaunchFuncOp::create(
        rewriter, loc, kernel, grid, block,
        /*dynamicSharedMemorySize=*/Value(), op->getOperands());
    // gdn.launch, read by the JIT (GPULaunch)
    if (s->launchMode() != LaunchMode::ordinary) {
      MLIRContext *context = rewriter.getContext();
      context->getLoadedDialect<GDNDialect>()->getLaunchAttrHelper().setAttr(
          launch, s->getLaunch());
    }
    rewriter.eraseOp(op);
    return success();
  }

  const GPUTarget &target;
  KernelModuleOf kernelModuleOf;
};
} // namespace

void gdn::populateRecurrentToGPUPatterns(RewritePatternSet &patterns,
                                         const GPUTarget &target,
                                         KernelModuleOf kernelModuleOf) {
  patterns.add<RecurrentToKernel<TokenLoopKernel>,
               RecurrentToKernel<WarpSpecializedKernel>,
               RecurrentToKernel<CudaCoreSolveKernel>,
               RecurrentToKernel<TensorCoreSolveKernel>>(
      patterns.getContext(), target, kernelModuleOf);
}
