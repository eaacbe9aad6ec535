//===- Pipelines.h - registered gdn pass pipelines --------------*- C++ -*-===//
#ifndef GDN_PIPELINES_PIPELINES_H
#define GDN_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassManager.h"

namespace mlir {
namespace gdn {

/// Options of `gdn-lower-to-ptx`.
struct LowerToPTXOptions : public PassPipelineOptions<LowerToPTXOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("Target GPU architecture (e.g. sm_90a)"),
      llvm::cl::init("sm_90a")};
  PassOptions::Option<int64_t> smCount{
      *this, "sm-count",
      llvm::cl::desc("Multiprocessors of the target device (0: the chip's "
                     "largest part)"),
      llvm::cl::init(0)};
  PassOptions::Option<std::string> schedule{
      *this, "schedule",
      llvm::cl::desc("A #gdn.schedule<...> pinning parameters of every "
                     "gdn.recurrent's GPU schedule (the rest: the op's own, "
                     "else the cost model's)"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> llvmPipeline{
      *this, "llvm-pipeline",
      llvm::cl::desc("gdn-gpu-module-to-ptx's llvm-pipeline: the LLVM pass "
                     "pipeline of the kernels (empty: the kernel pipeline)"),
      llvm::cl::init("")};
};

/// gdn.recurrent -> gpu.launch_func + gpu.module of NVVM -> gpu.binary holding
/// PTX (format isa, serialized in-process by gdn-gpu-module-to-ptx; no CUDA
/// toolkit needed).
void buildLowerToPTXPipeline(OpPassManager &pm, const LowerToPTXOptions &options);

/// gdn.recurrent -> scf loops -> LLVM dialect, functions with bare-pointer
/// memref arguments (one `!llvm.ptr` per memref), ready for the LLVM JIT.
void buildLowerToCPUPipeline(OpPassManager &pm);

/// Registers `gdn-lower-to-ptx` and `gdn-lower-to-cpu`.
void registerGDNPipelines();

} // namespace gdn
} // namespace mlir

#endif // GDN_PIPELINES_PIPELINES_H
