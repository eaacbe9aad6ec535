//===- SplitKernelModules.cpp - one gpu.module a kernel ------------------===//
//
// gdn-split-kernel-modules: a gpu.module of several kernels becomes one
// module a kernel, so that the nested gpu.module pipelines and the LLVM
// serialization of gdn-gpu-module-to-ptx run them in parallel.
//
//===----------------------------------------------------------------------===//
#include "gdn/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::gdn {
#define GEN_PASS_DEF_GDNSPLITKERNELMODULESPASS
#include "gdn/Conversion/Passes.h.inc"
} // namespace mlir::gdn

using namespace mlir;

namespace {
struct GDNSplitKernelModulesPass
    : gdn::impl::GDNSplitKernelModulesPassBase<GDNSplitKernelModulesPass> {
  void runOnOperation() override {
    ModuleOp top = getOperation();
    SymbolTable symbols(top);
    // (old module, kernel) -> the module it moved to.
    llvm::DenseMap<std::pair<StringAttr, StringAttr>, StringAttr> moved;
    for (auto module :
         llvm::make_early_inc_range(top.getOps<gpu::GPUModuleOp>())) {
      SmallVector<gpu::GPUFuncOp> kernels;
      bool onlyKernels = true;
      for (Operation &op : module.getBody()->getOperations()) {
        auto func = dyn_cast<gpu::GPUFuncOp>(op);
        if (func && func.isKernel())
          kernels.push_back(func);
        else
          onlyKernels = false;
      }
      if (!onlyKernels || kernels.size() < 2)
        continue;
      // The first kernel stays; each other one moves, in order, right after.
      OpBuilder b(module.getContext());
      b.setInsertionPointAfter(module);
      for (gpu::GPUFuncOp kernel : llvm::drop_begin(kernels)) {
        auto own = gpu::GPUModuleOp::create(
            b, module.getLoc(),
            (module.getName() + "_" + kernel.getName()).str(),
            module.getTargetsAttr(), module.getOffloadingHandlerAttr());
        own->setDiscardableAttrs(module->getDiscardableAttrDictionary());
        symbols.insert(own, b.getInsertionPoint()); // renames on a clash
        kernel->moveBefore(own.getBody(), own.getBody()->end());
        moved[{module.getNameAttr(), kernel.getNameAttr()}] = own.getNameAttr();
        b.setInsertionPointAfter(own);
      }
    }
    if (moved.empty())
      return;
    top.walk([&](gpu::LaunchFuncOp launch) {
      auto it =
          moved.find({launch.getKernelModuleName(), launch.getKernelName()});
      if (it != moved.end())
        launch.setKernelAttr(SymbolRefAttr::get(
            it->second, {FlatSymbolRefAttr::get(launch.getKernelName())}));
    });
  }
};
} // namespace
