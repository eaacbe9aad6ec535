//===- Passes.h - gdn conversion passes -------------------------*- C++ -*-===//
#ifndef GDN_CONVERSION_PASSES_H
#define GDN_CONVERSION_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
namespace arith { class ArithDialect; }
namespace math { class MathDialect; }
namespace memref { class MemRefDialect; }
namespace scf { class SCFDialect; }
namespace gpu { class GPUDialect; }
namespace LLVM { class LLVMDialect; }
namespace NVVM { class NVVMDialect; }
namespace vector { class VectorDialect; }

namespace gdn {
#define GEN_PASS_DECL
#include "gdn/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "gdn/Conversion/Passes.h.inc"
} // namespace gdn
} // namespace mlir

#endif // GDN_CONVERSION_PASSES_H
