//===- ProblemOf.h - a gdn.recurrent as the fp64 reference's problem -*- C++ -*-===//
//
// gdn-run checks a kernel against the fp64 reference (lib/Reference), which
// knows nothing of MLIR: this is the one place that reads an op into the
// reference's description, so neither the compiler nor the oracle depends on
// the other.
//
//===----------------------------------------------------------------------===//
#ifndef GDN_TOOLS_GDN_RUN_PROBLEMOF_H
#define GDN_TOOLS_GDN_RUN_PROBLEMOF_H

#include "gdn/Reference/Reference.h"
#include "llvm/ADT/StringRef.h"

namespace mlir {
class ModuleOp;
namespace gdn {
class RecurrentOp;

/// The reference's problem of `op` (shapes, gating, beta, norm, scale, layout,
/// states, pool, varlen, intermediate states, tree).
::gdn::reference::Problem problemOf(RecurrentOp op);

/// The gdn.recurrent of function `function` in `module`, or null (a function
/// holding a gdn.commit).
RecurrentOp recurrentOpOf(ModuleOp module, llvm::StringRef function);

} // namespace gdn
} // namespace mlir

#endif // GDN_TOOLS_GDN_RUN_PROBLEMOF_H
