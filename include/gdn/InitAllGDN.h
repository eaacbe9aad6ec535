//===- InitAllGDN.h - register everything gdn provides ----------*- C++ -*-===//
//
// Entry points for tools that embed the gdn dialect and passes (gdn-opt,
// gdn-run, or another compiler's *-opt).
//
//===----------------------------------------------------------------------===//
#ifndef GDN_INITALLGDN_H
#define GDN_INITALLGDN_H

#include "gdn/Pipelines/Pipelines.h" // registerGDNPipelines()

namespace mlir {
class DialectRegistry;
namespace gdn {

/// Adds the gdn dialect to `registry`, with the one-shot bufferization models
/// of gdn.recurrent, gdn.commit and gdn.replay_commit (their tensor forms
/// bufferize to their memref forms).
void registerGDNDialect(DialectRegistry &registry);
/// Adds the dialects, interfaces and LLVM IR translations that the gdn
/// lowerings produce (arith, math, memref, scf, vector, gpu, nvvm, llvm, ...),
/// including the NVVM target attribute used for in-process PTX serialization,
/// and what one-shot bufferization of the tensor form needs around the op
/// (bufferization and tensor dialects; bufferization models of func, tensor,
/// arith and scf ops).
void registerGDNDependentDialects(DialectRegistry &registry);
/// Registers the gdn passes (gdn-select-schedule, convert-gdn-to-gpu,
/// convert-gdn-to-cpu) with the global pass registry.
void registerGDNPasses();
/// Registers the upstream passes that the gdn pipelines are made of, so a
/// tool can run (and print) each step on its own, and `one-shot-bufferize`,
/// which turns the tensor form of gdn.recurrent into the memref form that the
/// pipelines consume.
void registerGDNPipelineStepPasses();

} // namespace gdn
} // namespace mlir

#endif // GDN_INITALLGDN_H
