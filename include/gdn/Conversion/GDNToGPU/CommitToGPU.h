//===- CommitToGPU.h - gdn.commit to a GPU copy kernel ----------*- C++ -*-===//
#ifndef GDN_CONVERSION_GDNTOGPU_COMMITTOGPU_H
#define GDN_CONVERSION_GDNTOGPU_COMMITTOGPU_H

#include "mlir/Support/LLVM.h"
#include "llvm/Support/LogicalResult.h"

namespace mlir {
class SymbolTable;
namespace gpu {
class GPUModuleOp;
} // namespace gpu
namespace gdn {
class CommitOp;
struct GPUTarget;

/// Outlines the memref-form `op` into a copy kernel named `name` (made unique
/// by `symbols`, the table of `kernels`) and replaces `op` by its
/// gpu.launch_func (convert-gdn-to-gpu). Shapes the grid cannot take, and an
/// f8E4M3FN pool `target` cannot convert or in layout kv, are reported on
/// the op.
LogicalResult lowerCommitToGPU(CommitOp op, const GPUTarget &target,
                               gpu::GPUModuleOp kernels, SymbolTable &symbols,
                               StringRef name);

} // namespace gdn
} // namespace mlir

#endif // GDN_CONVERSION_GDNTOGPU_COMMITTOGPU_H
