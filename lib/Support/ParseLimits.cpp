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

/// The end of the name after the sigil at `sigil` (`%x`, `#map`, `!t`,
/// `^bb0`, `@f`), read as MLIR's lexer reads it: a name that starts with a
/// digit is only digits (`%0-%1` is `%0`, `-`, `%1`), and a symbol name
/// (`@`) holds no `-`. Reading further would hide the operators that follow.
size_t nameEnd(StringRef text, size_t sigil) {
  size_t end = sigil + 1, e = text.size();
  if (end < e && llvm::isDigit(text[end])) {
    while (end < e && llvm::isDigit(text[end]))
      ++end;
    return end;
  }
  while (end < e && isIdChar(text[end]) &&
         (text[sigil] != '@' || text[end] != '-'))
    ++end;
  return end;
}

/// The end of the number literal that starts at `start`, read as MLIR's
/// lexer reads it: `0x` and hex digits, or decimal digits with an optional
/// fraction, and an exponent only after that fraction (`1.0e-3`). A `-` or
/// `+` anywhere else ends the literal: in `0x1e-0x1e` or `2e-1` it is an
/// operator of an affine expression, which the caller has to count.
size_t numberEnd(StringRef text, size_t start) {
  size_t e = text.size();
  auto digitAt = [&](size_t at) { return at < e && llvm::isDigit(text[at]); };
  auto skipDigits = [&](size_t at) {
    while (digitAt(at))
      ++at;
    return at;
  };
  if (text[start] == '0' && start + 2 < e && text[start + 1] == 'x' &&
      llvm::isHexDigit(text[start + 2])) {
    size_t end = start + 2;
    while (end < e && llvm::isHexDigit(text[end]))
      ++end;
    return end;
  }
  size_t end = skipDigits(start);
  if (end >= e || text[end] != '.')
    return end;
  end = skipDigits(end + 1);
  if (end < e && (text[end] == 'e' || text[end] == 'E')) {
    if (digitAt(end + 1))
      return skipDigits(end + 1);
    if (end + 1 < e && (text[end + 1] == '-' || text[end + 1] == '+') &&
        digitAt(end + 2))
      return skipDigits(end + 2);
  }
  return end;
}

/// The offset of the first character at or after `pos` that is neither
/// whitespace nor part of a `//` comment, or npos.
size_t skipSpaceAndComments(StringRef text, size_t pos) {
  while (pos < text.size()) {
    if (llvm::isSpace(text[pos]))
      ++pos;
    else if (text.substr(pos).starts_with("//"))
      pos = text.find('\n', pos);
    else
      return pos;
  }
  return StringRef::npos;
}
} // namespace

std::optional<size_t> gdn::findDeepNesting(StringRef text, unsigned maxDepth) {
  // The parser's recursion, counted: one level a bracket; one a binary
  // operator or unary minus of an affine expression (`d0 + 1 + 1 ...`,
  // `- - d0`: the affine parser recurses once each, until the expression
  // ends at a `,`, `:`, `=` or a bracket); and, at a use of an attribute or
  // type alias (`#a`, `!t`), the levels of its definition (an alias defined
  // as [#prev] nests one deeper than #prev, and printing it recurses as
  // deep). Names and numbers are read as MLIR's lexer reads them, so that no
  // operator hides inside one.
  unsigned depth = 0;
  SmallVector<unsigned> openOps; // operators of each enclosing bracket
  unsigned ops = 0;              // operators of the innermost expression
  unsigned enclosingOps = 0;     // sum of openOps
  llvm::StringMap<unsigned> aliasLevels;
  std::string defining; // the alias whose definition is being read
  unsigned definingPeak = 0;
  // The first character of the last token outside comments: `=` while a
  // definition's body has not begun, `:` or `-` (of `->`) where the body
  // goes on with a type.
  char last = 0;
  auto finishAlias = [&] {
    if (!defining.empty())
      aliasLevels[defining] = definingPeak;
    defining.clear();
  };
  // Where the definition being read goes on past the line break at `at`:
  // MLIR reads a definition as tokens, so its `=`, its body, the `: type` of
  // an attribute, a function type's `-> results` or a type's `<...>` may
  // each begin on a later line. The offset to read on from (`at` itself, or
  // the next token past blank lines and comments, so that a run of them is
  // read once), or npos where the definition ends. Nothing else at the top
  // level (an operation, the next definition, a resource block `{-#`) goes
  // on from where a body stopped, so going on too far only over-counts.
  auto definitionGoesOn = [&](size_t at) {
    if (last == '=' || last == ':' || last == '-')
      return at;
    size_t next = skipSpaceAndComments(text, at);
    if (next != StringRef::npos && StringRef(":-<([{").contains(text[next]))
      return next;
    return StringRef::npos;
  };
  auto over = [&](unsigned extra) {
    unsigned levels = depth + enclosingOps + ops + extra;
    if (!defining.empty())
      definingPeak = std::max(definingPeak, levels);
    return levels > maxDepth;
  };
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    bool comment = c == '/' && i + 1 < e && text[i + 1] == '/';
    char before = last; // the token before this one
    if (!llvm::isSpace(c) && !comment)
      last = c;
    switch (c) {
    case '"': // a string literal, with backslash escapes
      for (++i; i < e && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      break;
    case '/': // a comment to the end of the line, which ends it here
      if (comment)
        while (i + 1 < e && text[i + 1] != '\n')
          ++i;
      break;
    case '\n': // the end of a definition whose body is complete
      if (depth == 0 && !defining.empty()) {
        size_t next = definitionGoesOn(i + 1);
        if (next == StringRef::npos)
          finishAlias();
        else
          i = next - 1; // nothing in between counts
      }
      break;
    case '#':
    case '!':
    case '%':
    case '^':
    case '@': { // a name (SSA names may hold '-'), an alias use or definition
      size_t end = nameEnd(text, i);
      StringRef name = text.slice(i + 1, end);
      i = end - 1;
      if ((c != '#' && c != '!') || name.empty())
        break;
      // A definition is a name at the top level followed by `=` (not `==`),
      // on the same line or a later one, past comments.
      size_t next = skipSpaceAndComments(text, end);
      bool definition = depth == 0 && next != StringRef::npos &&
                        text[next] == '=' &&
                        (next + 1 >= e || text[next + 1] != '=');
      std::string key = std::string(1, c) + name.str();
      if (definition) {
        finishAlias();
        defining = key;
        definingPeak = 0;
        i = next - 1; // on to the `=`, which opens the body
        break;
      }
      // A function type's result written without parentheses (`() -> !f`)
      // nests in the function type with no bracket of its own: one level.
      auto it = aliasLevels.find(key);
      if (it != aliasLevels.end() && over(it->second + (before == '-')))
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
      ops = 0; // the end of an expression (`==` too)
      break;
    case '(':
    case '[':
    case '{':
    case '<':
      if (c == '<' && i + 1 < e && text[i + 1] == '=') { // an affine `<=`
        ++i;
        ops = 0;
        break;
      }
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
      if (llvm::isDigit(c)) { // a number: an exponent's sign is no operator
        i = numberEnd(text, i) - 1;
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
