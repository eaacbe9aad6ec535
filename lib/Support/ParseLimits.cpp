//===- ParseLimits.cpp - bounds on the input the tools parse --------------===//
#include "gdn/Support/ParseLimits.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

namespace {
bool isIdChar(char c) {
  return llvm::isAlnum(c) || c == '_' || c == '$' || c == '.' || c == '-';
}
} // namespace

std::optional<size_t> gdn::findDeepNesting(StringRef text, unsigned maxDepth) {
  // The parser's recursion, counted: one level a bracket; one a binary
  // operator or unary minus of an affine expression (`d0 + 1 + 1 ...`,
  // `- - d0`: the affine parser recurses once each, until the expression
  // ends at a `,`, `:`, `=` or a bracket); and, at a use of an attribute or
  // type alias (`#a`, `!t`), the levels of its definition (an alias defined
  // as [#prev] nests one deeper than #prev, and printing it recurses as
  // deep).
  unsigned depth = 0;
  SmallVector<unsigned> openOps; // operators of each enclosing bracket
  unsigned ops = 0;              // operators of the innermost expression
  unsigned enclosingOps = 0;     // sum of openOps
  llvm::StringMap<unsigned> aliasLevels;
  std::string defining; // the alias whose definition is being read
  unsigned definingPeak = 0;
  auto finishAlias = [&] {
    if (!defining.empty())
      aliasLevels[defining] = definingPeak;
    defining.clear();
  };
  auto over = [&](unsigned extra) {
    unsigned levels = depth + enclosingOps + ops + extra;
    if (!defining.empty())
      definingPeak = std::max(definingPeak, levels);
    return levels > maxDepth;
  };
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
    case '\n':
      if (depth == 0)
        finishAlias();
      break;
    case '#':
    case '!':
    case '%':
    case '^':
    case '@': { // a name (SSA names may hold '-'), an alias use or definition
      size_t start = i + 1, end = start;
      while (end < e && isIdChar(text[end]))
        ++end;
      StringRef name = text.slice(start, end);
      i = end - 1;
      if ((c != '#' && c != '!') || name.empty())
        break;
      size_t next = text.find_first_not_of(" \t", end);
      bool definition = depth == 0 && next != StringRef::npos &&
                        text[next] == '=' &&
                        (next + 1 >= e || text[next + 1] != '=');
      std::string key = std::string(1, c) + name.str();
      if (definition) {
        finishAlias();
        defining = key;
        definingPeak = 0;
        break;
      }
      auto it = aliasLevels.find(key);
      if (it != aliasLevels.end() && over(it->second))
        return i;
      break;
    }
    case '-':
      if (i + 1 < e && text[i + 1] == '>') { // the arrow of a function type
        ++i;
        break;
      }
      [[fallthrough]];
    case '+':
    case '*':
      ++ops;
      if (over(0))
        return i;
      break;
    case ',':
    case ':':
    case '=':
      ops = 0; // the end of an expression (`==` and `>=` too)
      break;
    case '(':
    case '[':
    case '{':
    case '<':
      openOps.push_back(ops);
      enclosingOps += ops;
      ops = 0;
      ++depth;
      if (over(0))
        return i;
      break;
    case ')':
    case ']':
    case '}':
    case '>':
      if (c == '>' && i + 1 < e && text[i + 1] == '=') { // an affine `>=`
        ++i;
        ops = 0;
        break;
      }
      if (depth) {
        --depth;
        ops = openOps.pop_back_val();
        enclosingOps -= ops;
      }
      break;
    default:
      if (llvm::isDigit(c)) { // a number: its exponent's sign is no operator
        while (i + 1 < e && (llvm::isAlnum(text[i + 1]) || text[i + 1] == '.' ||
                             ((text[i + 1] == '-' || text[i + 1] == '+') &&
                              (text[i] == 'e' || text[i] == 'E'))))
          ++i;
      } else if (llvm::isAlpha(c) || c == '_') { // a keyword
        size_t end = i;
        while (end < e && (llvm::isAlnum(text[end]) || text[end] == '_' ||
                           text[end] == '$' || text[end] == '.'))
          ++end;
        StringRef word = text.slice(i, end);
        i = end - 1;
        if (word == "floordiv" || word == "ceildiv" || word == "mod") {
          ++ops;
          if (over(0))
            return i;
        }
      }
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
         << deepNestingMessage();
}

std::string gdn::deepNestingMessage() {
  return "nested deeper than " + std::to_string(kMaxNestingDepth) +
         " levels (brackets, affine-expression operators, alias "
         "definitions); gdn does not parse such input";
}

OwningOpRef<ModuleOp> gdn::parseModule(llvm::SourceMgr &sourceMgr,
                                       MLIRContext *context) {
  if (failed(checkNestingDepth(sourceMgr, context)))
    return nullptr;
  return parseSourceFile<ModuleOp>(sourceMgr, context);
}
