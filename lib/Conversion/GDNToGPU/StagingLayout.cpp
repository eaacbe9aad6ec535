//===- StagingLayout.cpp - the shared memory of a staged kernel -----------===//
//
// StagingLayout.h.
//
//===----------------------------------------------------------------------===//
#include "StagingLayout.h"
#include "gdn/Dialect/GDN/IR/GDNOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace mlir::gdn;

/// Sizes saturate at int64's maximum, which no shared memory holds: the cost
/// model sizes the buffers of pinned parameters (up to 2^20 each) and op
/// sizes (up to 2^40) before the legality checks refuse them.
static int64_t saturatingMul(int64_t a, int64_t b) {
  int64_t product;
  return llvm::MulOverflow(a, b, product) ? std::numeric_limits<int64_t>::max()
                                          : product;
}

static int64_t saturatingAdd(int64_t a, int64_t b) {
  int64_t sum;
  return llvm::AddOverflow(a, b, sum) ? std::numeric_limits<int64_t>::max()
                                      : sum;
}

/// `bytes` rounded up to a multiple of `alignment`, saturating.
static int64_t alignedTo(int64_t bytes, int64_t alignment) {
  return saturatingMul(bytes / alignment + (bytes % alignment != 0), alignment);
}

int64_t StagingBuffer::bytes() const {
  int64_t n = elementType.getIntOrFloatBitWidth() / 8;
  for (int64_t e : shape)
    n = saturatingMul(n, e);
  return n;
}

SmallVector<const StagingBuffer *> StagingLayout::buffers() const {
  SmallVector<const StagingBuffer *> all = {&q, &k, &v, &decay, &beta};
  for (const std::optional<StagingBuffer> *x :
       {&source, &norms, &gram, &maskedGram, &tokens, &solve, &factors,
        &tailKeys, &lastDecay})
    if (*x)
      all.push_back(&**x);
  return all;
}

int64_t StagingLayout::bytes() const { return alignedBytes(1); }

int64_t StagingLayout::alignedBytes(int64_t alignment) const {
  int64_t total = 0;
  for (const StagingBuffer *x : buffers())
    total = saturatingAdd(total, alignedTo(x->bytes(), alignment));
  return total;
}

int64_t StagingLayout::chunkSetBytes(int64_t alignment) const {
  int64_t total = 0;
  for (const std::optional<StagingBuffer> &x :
       {std::optional<StagingBuffer>(q), std::optional<StagingBuffer>(k),
        std::optional<StagingBuffer>(v), solve, factors, tokens})
    if (x)
      total = saturatingAdd(total, alignedTo(x->bytes(), alignment));
  return total;
}

int64_t StagingLayout::prefetchedBytes(int64_t alignment) const {
  return saturatingAdd(alignedBytes(alignment), chunkSetBytes(alignment));
}

StagingLayout gdn::stagingLayout(RecurrentOp op, ScheduleAttr s, int64_t chunk,
                                 int64_t slots) {
  auto d = op.getDims();
  Builder b(op.getContext());
  auto elementType = [](Value x) {
    return cast<ShapedType>(x.getType()).getElementType();
  };
  Type qk = elementType(op.getQ()), f32 = b.getF32Type();
  int64_t rows = chunk * slots;
  int64_t qkRow =
      d.K + (s.tensorCores() ? 16 * 8 / qk.getIntOrFloatBitWidth() : 0);
  StagingLayout layout;
  layout.q = {{rows, qkRow}, qk};
  layout.k = {{rows, qkRow}, qk};
  layout.v = {{rows, s.blockColumns()}, elementType(op.getV())};
  layout.decay = op.hasPerKeyDecay() ? StagingBuffer{{rows, d.K}, f32}
                                     : StagingBuffer{{rows}, f32};
  layout.beta = op.hasPerChannelBeta()
                    ? StagingBuffer{{rows, s.blockColumns()}, f32}
                    : StagingBuffer{{rows}, f32};
  if (op.hasParentTable())
    layout.source = StagingBuffer{{rows}, b.getI32Type()};
  if (producerNorms(op, s))
    layout.norms = StagingBuffer{{rows, 4}, f32};
  if (s.chunkedSolve()) {
    layout.gram = StagingBuffer{{2, chunk, chunk}, f32};
    layout.tokens = StagingBuffer{{3, chunk}, f32};
    if (sharedGram(op, s, chunk))
      layout.maskedGram = StagingBuffer{{2, chunk, chunk}, f32};
  }
  if (s.tensorCores()) {
    layout.solve = StagingBuffer{{2, chunk, chunk + 4}, f32};
    layout.factors = StagingBuffer{{5, chunk}, f32};
  }
  if (s.chunkParallel() && op.hasPerKeyDecay()) {
    layout.tailKeys = StagingBuffer{{rows, qkRow}, qk};
    layout.lastDecay = StagingBuffer{{d.K}, f32};
  }
  return layout;
}

bool gdn::sharedGram(RecurrentOp op, ScheduleAttr s, int64_t chunk) {
  auto d = op.getDims();
  return s.chunkParallel() && d.HV > d.H && !op.hasPerKeyDecay() &&
         chunk <= 32;
}
