//===- ParseLimits.h - bounds on the input the tools parse -------*- C++ -*-===//
//
// MLIR's parser recurses once per nested bracket, so a deeply nested input
// (an attribute or a `tuple<` thousands deep) overflows the stack of
// gdn-opt, gdn-run or any host process calling gdnCompileText. Every entry
// point that parses text checks its nesting first and answers with a
// diagnostic at the offending bracket instead.
//
//===----------------------------------------------------------------------===//
#ifndef GDN_SUPPORT_PARSELIMITS_H
#define GDN_SUPPORT_PARSELIMITS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LLVM.h"

#include <optional>

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace mlir {
namespace gdn {

/// The deepest nesting of brackets ((, [, {, <) the entry points accept:
/// far above any gdn IR (lowered kernels nest about 20 deep), far below what
/// a thread's stack holds.
constexpr unsigned kMaxNestingDepth = 256;

/// The offset in `text` of the first bracket nested deeper than `maxDepth`,
/// or nothing. Brackets inside string literals and `//` comments do not
/// count, nor the `>` of `->`.
std::optional<size_t> findDeepNesting(StringRef text,
                                      unsigned maxDepth = kMaxNestingDepth);

/// Emits an error at that bracket of the main buffer of `sourceMgr`, through
/// `context`'s diagnostic handler, and fails; succeeds otherwise.
LogicalResult checkNestingDepth(llvm::SourceMgr &sourceMgr,
                                MLIRContext *context);

/// checkNestingDepth, then parseSourceFile: the module, or null after a
/// diagnostic.
OwningOpRef<ModuleOp> parseModule(llvm::SourceMgr &sourceMgr,
                                  MLIRContext *context);

} // namespace gdn
} // namespace mlir

#endif // GDN_SUPPORT_PARSELIMITS_H
