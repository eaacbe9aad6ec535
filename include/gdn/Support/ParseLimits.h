//===- ParseLimits.h - bounds on the input the tools parse -------*- C++
//-*-===//
//
// MLIR's parser recurses once per nested bracket, per operator of an
// affine expression and, through an alias, per level of its definition, so
// a deeply nested input (an attribute or a `tuple<` thousands deep, an
// affine expression of thousands of terms) overflows the stack of gdn-opt,
// gdn-run or any host process calling gdnCompileText. Every entry point
// that parses text (files, gdnCompileText, schedule texts) checks its
// nesting first and answers with a diagnostic at the offending place
// instead.
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

/// The offset in `text` of the first bracket, affine operator or alias use
/// past `maxDepth` levels of the parser's recursion, or nothing: a level is a
/// bracket, an operator of an affine expression (binary, or a unary minus),
/// or a level of an alias's definition where the alias is used. Brackets
/// inside string literals and `//` comments do not count, nor the `>` of
/// `->` and `>=` or the `<` of `<=`. Names and number literals are read as
/// MLIR's lexer reads them (`0x1e-1` is a literal, `-` and `1`), and an alias
/// definition may span lines (`#map\n  = affine_map<...>`).
std::optional<size_t> findDeepNesting(StringRef text,
                                      unsigned maxDepth = kMaxNestingDepth);

/// The diagnostic for such input: "nested deeper than 256 levels ...".
std::string deepNestingMessage();

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
