//===- TokenLoop.cpp - the token loop kernel form ------------------------===//
//
// One token after another on the register tile (KernelForms.h): decode and
// unstaged verify read each token from global memory; staged kernels
// (staged_tokens > 0) read chunks of tokens through shared memory.
//
//===----------------------------------------------------------------------===//
#include "KernelForms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::gdn;

void TokenLoopKernel::build() {
  enter();
  // Decode (one token) from a pool: the token's inputs are loaded before the
  // state, so their loads are in flight while the slot index arrives; the
  // state's loads wait on it, and in-order issue would otherwise hold the
  // token's loads behind them. (After a programmatic launch's wait they
  // must stay: the previous grid may write them.)
  // The state then loads without a branch (loadState), so ptxas may order
  // all the entry's loads before any math waits on one.
  tokenFirst = valid && !replay && *s.getStagedTokens() == 0 &&
               !op.isVarlen() && d.T == 1 && !op.hasParentTable() &&
               s.launchMode() == LaunchMode::ordinary;
  if (tokenFirst)
    firstToken = loadToken(tokenLo, Value());
  // A quantized state stays in units of its row scales until the first
  // token's decay (TokenSteps::rowUnits): where the token loop runs from
  // global memory at least once (a fixed T >= 1), tree and replay not, with
  // one decay a head.
  bool scalesInDecay = *s.getStagedTokens() == 0 && !replay &&
                       !op.hasParentTable() && !op.hasPerKeyDecay() &&
                       !op.isVarlen() && d.T >= 1;
  SmallVector<Value> units;
  SmallVector<Value> state =
      loadState(tokenFirst, scalesInDecay ? &units : nullptr);
  waitForPreviousGrid();
  writeReplayWindows();
  if (replay) {
    storeState(replayTokens(state));
    return;
  }
  if (*s.getStagedTokens() == 0) {
    prefetchLaterState();
    // The loop carries the row units too: the scales, then 1 after the
    // first token (which returns its state in absolute units).
    SmallVector<Value> init(state);
    init.append(units);
    size_t size = state.size();
    auto loop = scf::ForOp::create(
        b, loc, tokenLo, hi, m.index(1), init,
        [&](OpBuilder &nb, Location, Value t, ValueRange carried) {
          OpBuilder::InsertionGuard g(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          rowUnits.assign(carried.begin() + size, carried.end());
          SmallVector<Value> next = token(t, Value(), carried.take_front(size));
          storeIntermediate(t, next);
          storeCheckpoint(arith::SubIOp::create(b, loc, offset(t, 1), tokenLo),
                          next);
          next.append(units.size(), m.f32(1.0));
          scf::YieldOp::create(b, loc, next);
        });
    storeState(loop.getResults().take_front(size));
    return;
  }
  // Staged: the tokens' inputs come through shared memory, `chunk` tokens
  // at a time, all loaded at once before the chunk's recurrence starts, so
  // the loop pays one memory latency a chunk instead of one a token.
  runStagedForm(state, [&](Value c, Value count, ValueRange current) {
    return runChunk(c, count, m.index(0), current);
  });
  unrollTokenLoops();
}

SmallVector<Value> TokenLoopKernel::replayTokens(SmallVector<Value> state) {
  // A row that replays nothing (padding, count 0) loads no window: most
  // rows of a round that accepted little leave after their count.
  auto some = scf::IfOp::create(b, loc, ValueRange(state).getTypes(), valid,
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&some.getElseRegion().front());
  scf::YieldOp::create(b, loc, state);
  b.setInsertionPointToStart(&some.getThenRegion().front());
  // Every window step < L is in bounds whatever the row's count, so a group
  // of tokens is loaded at once (one memory latency a group, not a token),
  // then each runs while t < count (a tree's: when on its path); any other
  // leaves the state as it was (its inputs, NaN or not, are never used).
  constexpr int64_t kGroup = 4;
  for (int64_t first = 0; first < replay->steps; first += kGroup) {
    int64_t last = std::min(replay->steps, first + kGroup);
    std::vector<TokenInputs> group;
    for (int64_t t = first; t < last; ++t)
      group.push_back(loadToken(m.index(t), Value()));
    for (int64_t t = first; t < last; ++t) {
      Value runs = emitReplayRuns(m, m.index(t), hi, replayPath);
      auto ifOp = scf::IfOp::create(b, loc, ValueRange(state).getTypes(), runs,
                                    /*withElseRegion=*/true);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      firstToken = group[t - first];
      scf::YieldOp::create(b, loc, token(m.index(t), Value(), state));
      b.setInsertionPointToStart(&ifOp.getElseRegion().front());
      scf::YieldOp::create(b, loc, state);
      state.assign(ifOp.getResults().begin(), ifOp.getResults().end());
    }
  }
  scf::YieldOp::create(b, loc, state);
  return SmallVector<Value>(some.getResults());
}
