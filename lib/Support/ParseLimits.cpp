//===- ParseLimits.cpp - bounds on the input the tools parse --------------===//
#include "gdn/Support/ParseLimits.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

std::optional<size_t> gdn::findDeepNesting(StringRef text, unsigned maxDepth) {
  unsigned depth = 0;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    switch (c) {
    case '"': // a string literal, with backslash escapes
      for (++i; i < e && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      break;
    case '/': // a comment to the end of the line
      if (i + 1 < e && text[i + 1] == '/')
        while (i < e && text[i] != '\n')
          ++i;
      break;
    case '-': // the arrow of a function type or an affine map
      if (i + 1 < e && text[i + 1] == '>')
        ++i;
      break;
    case '(':
    case '[':
    case '{':
    case '<':
      if (++depth > maxDepth)
        return i;
      break;
    case ')':
    case ']':
    case '}':
    case '>':
      depth = depth ? depth - 1 : 0;
      break;
    default:
      break;
    }
  }
  return std::nullopt;
}

LogicalResult gdn::checkNestingDepth(llvm::SourceMgr &sourceMgr,
                                     MLIRContext *context) {
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  std::optional<size_t> at = findDeepNesting(buffer->getBuffer());
  if (!at)
    return success();
  llvm::SMLoc loc = llvm::SMLoc::getFromPointer(buffer->getBufferStart() + *at);
  auto [line, column] = sourceMgr.getLineAndColumn(loc);
  return emitError(FileLineColLoc::get(context, buffer->getBufferIdentifier(),
                                       line, column))
         << "brackets nested deeper than " << kMaxNestingDepth
         << " levels; gdn does not parse such input";
}

OwningOpRef<ModuleOp> gdn::parseModule(llvm::SourceMgr &sourceMgr,
                                       MLIRContext *context) {
  if (failed(checkNestingDepth(sourceMgr, context)))
    return nullptr;
  return parseSourceFile<ModuleOp>(sourceMgr, context);
}
