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
  PassOptions::Option<int64_t> overlapReductions{
      *this, "overlap-reductions",
      llvm::cl::desc("K-reductions side by side (1), also two staged tokens "
                     "a step (2), or in turn (-1); 0: chosen"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> chunkedSolve{
      *this, "chunked-solve",
      llvm::cl::desc("A staged chunk solved at once in the WY form on CUDA "
                     "cores (1) or tensor cores (2), or token by token (-1); "
                     "0: chosen"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> smCount{
      *this, "sm-count",
      llvm::cl::desc("Multiprocessors of the target device (0: the chip's "
                     "largest part)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> rowsPerWarp{
      *this, "rows-per-warp",
      llvm::cl::desc("V columns of the state a lane holds (a warp: rows-per-warp * "
                     "v-lanes; 0: chosen from the shapes)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> warpsPerBlock{
      *this, "warps-per-block",
      llvm::cl::desc("Warps per CTA (0: chosen from the shapes)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> vLanes{
      *this, "v-lanes",
      llvm::cl::desc("Lanes of a warp along V (0: chosen from the layout)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> stageTokens{
      *this, "stage-tokens",
      llvm::cl::desc("Tokens staged in shared memory at a time (0: chosen "
                     "from the shapes, -1: none)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> pipelineStages{
      *this, "pipeline-stages",
      llvm::cl::desc("Ring slots of a producer warp feeding staged chunks "
                     "through cp.async.bulk and mbarriers (0: chosen, -1: none)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> consumerRegisters{
      *this, "consumer-registers",
      llvm::cl::desc("setmaxnreg of the consumer warps under a producer "
                     "warpgroup (0: no setmaxnreg)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> programmaticLaunch{
      *this, "programmatic-launch",
      llvm::cl::desc("A kernel for programmatic dependent launch, reading "
                     "the initial state before waiting for the previous "
                     "kernel, the next one launched where the cost model "
                     "says (1), at its start (2) or after its recurrence "
                     "(3); 0 or -1: off"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> l2PrefetchDistance{
      *this, "l2-prefetch-distance",
      llvm::cl::desc("L2 prefetch distance in CTAs of a later CTA's state "
                     "tile (tensor-core solve of one chunk: its staged "
                     "inputs) (0: chosen, -1: none)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> unrollTokens{
      *this, "unroll-tokens",
      llvm::cl::desc("Unroll factor of the staged token loop (0: chosen, -1 "
                     "or 1: a loop)"),
      llvm::cl::init(0)};
};

/// gdn.recurrent -> gpu.launch_func + gpu.module of NVVM -> gpu.binary holding
/// PTX (format isa, serialized in-process; no CUDA toolkit needed).
void buildLowerToPTXPipeline(OpPassManager &pm, const LowerToPTXOptions &options);

/// gdn.recurrent -> scf loops -> LLVM dialect, functions with bare-pointer
/// memref arguments (one `!llvm.ptr` per memref), ready for the LLVM JIT.
void buildLowerToCPUPipeline(OpPassManager &pm);

/// Registers `gdn-lower-to-ptx` and `gdn-lower-to-cpu`.
void registerGDNPipelines();

} // namespace gdn
} // namespace mlir

#endif // GDN_PIPELINES_PIPELINES_H
