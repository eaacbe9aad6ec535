//===- OperandLayouts.h - memref layouts the gdn ops accept -----*- C++ -*-===//
//
// Which strided memref layouts an operand of gdn.recurrent or gdn.commit may
// have, in one place for the verifier, bufferization (a legal layout is used
// in place, another one is copied) and the lowerings. The rules, as the ops'
// descriptions state them (docs/DESIGN.md, "Strided operands"):
//
// - Every layout is strided with static strides and a static offset that is
//   a multiple of strideAlignment(type): the kernels take one bare pointer
//   per operand (the buffer's base; element [0, ...] is `offset` elements
//   past it) and fold offset and strides into their address arithmetic (a
//   static subview of a larger buffer is read in place). Strides of
//   dimensions of size 1 are never used and are not checked.
// - `Tokens` (q, k, v, g, a, beta, b: read only): any strides >= 0 with the
//   innermost one 1 (e.g. views of a fused qkv projection or of SGLang's
//   mixed_qkv), each a multiple of strideAlignment(type) elements, so that a
//   row starts where an identity layout's row would be aligned for the
//   kernels' vector loads (16 bytes, or the row's own width when narrower).
// - `Slots` (initial_state, final_state, intermediate_states: pools and
//   verify buffers): the leading dimension (slot or row) has any pitch that
//   is a multiple of strideAlignment(type) and no smaller than a slot (slots
//   are written: they must not overlap); the other dimensions are dense, so a
//   slot is a [slots, HV, ...] view of a larger per-slot record.
// - `Dense` (o, A_log, dt_bias, the index tables): an identity layout (or a
//   strided one equal to it).
//
//===----------------------------------------------------------------------===//
#ifndef GDN_DIALECT_GDN_IR_OPERANDLAYOUTS_H
#define GDN_DIALECT_GDN_IR_OPERANDLAYOUTS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

#include <string>

namespace mlir {
namespace gdn {

enum class OperandLayout { Dense, Tokens, Slots };

/// The class of `operand`, an operand of a gdn.recurrent or gdn.commit
/// (`Dense` for any other op).
OperandLayout getOperandLayout(OpOperand &operand);

/// The elements every checked stride of a `Tokens` or `Slots` operand is a
/// multiple of: min(16 bytes / element size, the largest power of two that
/// divides the innermost dimension), at least 1.
int64_t strideAlignment(MemRefType type);

/// Empty when `type`'s layout is legal for `kind`; else why not, as a
/// sentence fragment for a diagnostic (e.g. "stride 3 of dimension 1 is not
/// a multiple of 8 elements").
std::string checkOperandLayout(MemRefType type, OperandLayout kind);

} // namespace gdn
} // namespace mlir

#endif // GDN_DIALECT_GDN_IR_OPERANDLAYOUTS_H
