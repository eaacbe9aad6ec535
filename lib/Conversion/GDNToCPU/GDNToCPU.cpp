//===- GDNToCPU.cpp - gdn.recurrent to scf loops --------------------------===//
//
// The CPU lowering: the recurrence as plain loops over (n, hv, t), one head's
// [K, V] fp32 state in a heap buffer. Same semantics as the GPU kernel
// (docs/math.md §1), written for clarity rather than speed.
//
//===----------------------------------------------------------------------===//
#include "Loops.h"
#include "gdn/Conversion/GDNToCPU/CommitToCPU.h"
#include "gdn/Conversion/KernelMath.h"
#include "gdn/Conversion/Passes.h"
#include "gdn/Conversion/ReplayView.h"
#include "gdn/Dialect/GDN/IR/GDNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir {
namespace gdn {
#define GEN_PASS_DEF_CONVERTGDNTOCPUPASS
#include "gdn/Conversion/Passes.h.inc"
} // namespace gdn
} // namespace mlir

using namespace mlir;
using namespace mlir::gdn;

namespace {

/// `cond ? then() : otherwise`, where then() runs only when cond holds.
Value ifElse(OpBuilder &b, Location loc, Value cond,
             llvm::function_ref<Value()> then, Value otherwise) {
  auto ifOp = scf::IfOp::create(b, loc, otherwise.getType(), cond,
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  scf::YieldOp::create(b, loc, then());
  b.setInsertionPointToStart(&ifOp.getElseRegion().front());
  scf::YieldOp::create(b, loc, otherwise);
  return ifOp.getResult(0);
}

/// Emits sum_{i < ub} term(i) in f32.
Value sumRange(OpBuilder &b, Location loc, int64_t ub,
               llvm::function_ref<Value(Value)> term) {
  return reduceRange(
      b, loc, ub,
      [&](Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); },
      term);
}

void emitToken(RecurrentOp op, KernelMath &m, Value n, Value t, Value hv,
               Value h, Value S, Value kBuf, Value qBuf, Value uBuf,
               Type outType, Value valid, bool outputs);
void emitReplayWindows(RecurrentOp op, KernelMath &m, Value row, Value tokens,
                       Value t, Value step, Value hv, Value h, Value valid);
} // namespace

/// The loops of `op` at the rewriter's insertion point (the caller erases
/// it); with `replay`, those of a replay's rows (ReplayView.h).
static void lowerRecurrenceToLoops(RewriterBase &rewriter, RecurrentOp op,
                                   const ReplayRows *replay = nullptr) {
  Location loc = op.getLoc();
  auto d = op.getDims();
  KernelMath m(rewriter, loc, KernelMath::Flavor::CPU);
  Type f32 = rewriter.getF32Type();

  // Scratch on the heap (K x V can exceed the stack, and the op may sit in
  // a loop): the state S[K][V] of one head, the prepared k and q, and u.
  SmallVector<Value> scratch;
  SmallVector<SmallVector<int64_t, 2>> shapes = {
      {d.K, d.V}, {d.K}, {d.K}, {d.V}};
  for (ArrayRef<int64_t> shape : shapes)
    scratch.push_back(
        memref::AllocOp::create(rewriter, loc, MemRefType::get(shape, f32)));
  Value S = scratch[0], kBuf = scratch[1], qBuf = scratch[2], uBuf = scratch[3];
  bool vk = op.isVKLayout();
  // Index of S[k][v] inside a state operand of either layout, after the
  // leading indices `prefix` (a row, or a buffer row and step) and hv.
  auto indexAt = [&](ArrayRef<Value> prefix, Value hv, Value k, Value v) {
    SmallVector<Value> idx(prefix);
    idx.append(vk ? SmallVector<Value>{hv, v, k}
                  : SmallVector<Value>{hv, k, v});
    return idx;
  };
  // dst[prefix, hv, ...] <- S, rounded to dst's dtype (a final state, a
  // checkpoint row or a per-token state, in the state layout). With
  // `scales` (an f8E4M3FN dst) each row v is quantized: its scale from
  // max_k |S[k, v]| into scales[prefix, hv, v], then every element times
  // the inverse, rounded once (docs/math.md §6; stochastically with the
  // op's stochastic_rounding).
  auto storeS = [&](Value dst, ArrayRef<Value> prefix, Value hv,
                    Value scales = {}) {
    Type et = cast<MemRefType>(dst.getType()).getElementType();
    auto loadS = [&](Value k, Value v) -> Value {
      return memref::LoadOp::create(rewriter, loc, S, ValueRange{k, v});
    };
    if (!scales) {
      forRange(rewriter, loc, d.K, [&](Value k) {
        forRange(rewriter, loc, d.V, [&](Value v) {
          memref::StoreOp::create(rewriter, loc, m.fromF32(loadS(k, v), et),
                                  dst, indexAt(prefix, hv, k, v));
        });
      });
      return;
    }
    forRange(rewriter, loc, d.V, [&](Value v) {
      Value amax = reduceRange(
          rewriter, loc, d.K, [&](Value x, Value y) { return m.maxAbs(x, y); },
          [&](Value k) { return loadS(k, v); });
      // (Named values, not a structured binding: the lambda below takes
      // inv, which C++17 does not let it capture from a binding.)
      std::pair<Value, Value> quotients = m.e4m3Scale(amax);
      Value scale = quotients.first, inv = quotients.second;
      SmallVector<Value> at(prefix);
      at.append({hv, v});
      memref::StoreOp::create(rewriter, loc, scale, scales, at);
      forRange(rewriter, loc, d.K, [&](Value k) {
        SmallVector<Value> idx = indexAt(prefix, hv, k, v);
        Value y = m.mul(loadS(k, v), inv);
        if (op.getStochasticRounding())
          y = m.e4m3Stochastic(y, m.positionIn(dst, idx));
        memref::StoreOp::create(rewriter, loc, m.fromF32(y, et), dst, idx);
      });
    });
  };
  Value groups = m.index(d.HV / d.H);
  Type outType = cast<MemRefType>(op.getO().getType()).getElementType();

  forRange(rewriter, loc, replay ? replay->rows : d.N, [&](Value n) {
    // A replay reads its tokens from the slot's window row, its count (and
    // a tree's path) once a row, and touches no state without one
    // (ReplayView.h).
    Value count, path, some;
    if (replay) {
      count = emitReplayCount(m, *replay, n);
      path = emitReplayPath(m, *replay, n, count);
      some = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sgt,
                                   count, m.index(0));
    }
    forRange(rewriter, loc, d.HV, [&](Value hv) {
      Value h = arith::DivUIOp::create(rewriter, loc, hv, groups);
      // The state row: n, or its pool slot; padding rows (slot < 0) read
      // and write no state and output zeros.
      auto slot = m.emitStateSlot(op, n);
      Value row = slot.first, valid = slot.second;
      if (some)
        valid =
            valid ? arith::AndIOp::create(rewriter, loc, valid, some) : some;
      // S <- initial state (or 0).
      auto loadInitialState = [&]() {
        forRange(rewriter, loc, d.K, [&](Value k) {
          forRange(rewriter, loc, d.V, [&](Value v) {
            Value s0 = m.f32(0.0);
            if (Value init = op.getInitialState()) {
              auto read = [&]() -> Value {
                Value x = m.toF32(memref::LoadOp::create(
                    rewriter, loc, init, indexAt({row}, hv, k, v)));
                if (Value scale = op.getStateScale()) // e4m3 x the row's scale
                  x = m.mul(x, memref::LoadOp::create(rewriter, loc, scale,
                                                      ValueRange{row, hv, v}));
                return x;
              };
              s0 = valid ? ifElse(rewriter, loc, valid, read, s0) : read();
            }
            memref::StoreOp::create(rewriter, loc, s0, S, ValueRange{k, v});
          });
        });
      };
      loadInitialState();
      auto [tokenRow, lo, hi] = m.emitTokenRange(op, n);
      if (replay) {
        // A padding row (or one with nothing accepted) runs no token: its
        // slot is no window row (as KernelContext::enterKernel on the GPU).
        // (`valid` includes count > 0.)
        tokenRow =
            arith::SelectOp::create(rewriter, loc, valid, row, m.index(0));
        hi = arith::SelectOp::create(rewriter, loc, valid, count, m.index(0));
      }
      Value tokens = tokenRow, first = lo; // (bindings cannot be captured)
      auto inter = m.emitIntermediateRow(op, n, valid);
      std::pair<Value, Value> checkpoints;
      if (op.hasCheckpoints())
        checkpoints = m.emitCheckpointRange(op, n);
      forRange(rewriter, loc, lo, hi, [&](Value t) {
        Value step = arith::SubIOp::create(rewriter, loc, t, first);
        // EAGLE tree: S <- the parent's stored state, or the initial state
        // for a root, before the token's math (else S is carried).
        if (op.hasParentTable()) {
          Value source = m.emitParentSource(op, n, step, inter.second);
          auto i32 = [&](int64_t c) -> Value {
            return arith::ConstantIntOp::create(rewriter, loc,
                                                rewriter.getI32Type(), c);
          };
          Value fromBuffer = arith::CmpIOp::create(
              rewriter, loc, arith::CmpIPredicate::sge, source, i32(0));
          auto ifBuffer = scf::IfOp::create(rewriter, loc, fromBuffer,
                                            /*withElseRegion=*/true);
          OpBuilder::InsertionGuard g(rewriter);
          rewriter.setInsertionPointToStart(&ifBuffer.getThenRegion().front());
          Value buf = op.getIntermediateStates();
          Value p = arith::IndexCastOp::create(rewriter, loc,
                                               rewriter.getIndexType(), source);
          forRange(rewriter, loc, d.K, [&](Value k) {
            forRange(rewriter, loc, d.V, [&](Value v) {
              Value x = m.toF32(memref::LoadOp::create(
                  rewriter, loc, buf, indexAt({inter.first, p}, hv, k, v)));
              if (Value scales = op.getIntermediateStateScale())
                x = m.mul(x, memref::LoadOp::create(
                                 rewriter, loc, scales,
                                 ValueRange{inter.first, p, hv, v}));
              memref::StoreOp::create(rewriter, loc, x, S, ValueRange{k, v});
            });
          });
          rewriter.setInsertionPointToStart(&ifBuffer.getElseRegion().front());
          Value restart =
              arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                    source, i32(KernelMath::kRestart));
          auto ifRoot = scf::IfOp::create(rewriter, loc, restart,
                                          /*withElseRegion=*/false);
          rewriter.setInsertionPointToStart(&ifRoot.getThenRegion().front());
          loadInitialState();
        }
        // A tree's replay runs the steps on its path only.
        std::optional<OpBuilder::InsertionGuard> onPath;
        if (path) {
          onPath.emplace(rewriter);
          auto ifOp = scf::IfOp::create(rewriter, loc,
                                        emitReplayRuns(m, t, count, path),
                                        /*withElseRegion=*/false);
          rewriter.setInsertionPointToStart(&ifOp.getThenRegion().front());
        }
        emitToken(op, m, tokens, t, hv, h, S, kBuf, qBuf, uBuf, outType, valid,
                  /*outputs=*/!replay);
        if (op.hasReplayWindows())
          emitReplayWindows(op, m, row, tokens, t, step, hv, h, valid);
        // Prefix-cache checkpoints: the state after every interval tokens.
        if (Value ck = op.getStateCheckpoints()) {
          auto where = m.emitCheckpointRow(
              op, checkpoints.first, checkpoints.second,
              arith::AddIOp::create(rewriter, loc, step, m.index(1)), valid);
          OpBuilder::InsertionGuard g(rewriter);
          auto ifOp = scf::IfOp::create(rewriter, loc, where.second, false);
          rewriter.setInsertionPointToStart(&ifOp.getThenRegion().front());
          storeS(ck, {where.first}, hv, op.getCheckpointScale());
        }
        // Verify: the state after this token into intermediate_states.
        Value buf = op.getIntermediateStates();
        if (!buf)
          return;
        Value cond = inter.second;
        if (op.isVarlen()) {
          Value inRange = arith::CmpIOp::create(
              rewriter, loc, arith::CmpIPredicate::slt, step,
              m.index(cast<MemRefType>(buf.getType()).getDimSize(1)));
          cond =
              cond ? Value(arith::AndIOp::create(rewriter, loc, cond, inRange))
                   : inRange;
        }
        OpBuilder::InsertionGuard g(rewriter);
        if (cond) {
          auto ifOp = scf::IfOp::create(rewriter, loc, cond, false);
          rewriter.setInsertionPointToStart(&ifOp.getThenRegion().front());
        }
        storeS(buf, {inter.first, step}, hv, op.getIntermediateStateScale());
      });
      if (Value fin = op.getFinalState()) {
        OpBuilder::InsertionGuard g(rewriter);
        if (valid) {
          auto ifOp = scf::IfOp::create(rewriter, loc, valid, false);
          rewriter.setInsertionPointToStart(&ifOp.getThenRegion().front());
        }
        storeS(fin, {row}, hv, op.getStateScale());
      }
    });
  });
  for (Value buf : scratch)
    memref::DeallocOp::create(rewriter, loc, buf);
}

namespace {
/// One token: prepare k and q, decay, delta, rank-1 update, output (when
/// `outputs`).
void emitToken(RecurrentOp op, KernelMath &m, Value n, Value t, Value hv,
               Value h, Value S, Value kBuf, Value qBuf, Value uBuf,
               Type outType, Value valid, bool outputs) {
  OpBuilder &b = m.builder();
  Location loc = m.location();
  auto d = op.getDims();
  // k, q widened to f32; optional L2 norm (eps inside the sqrt); q * scale.
  auto load = [&](Value src, Value buf) {
    forRange(b, loc, d.K, [&](Value k) {
      Value x =
          m.toF32(memref::LoadOp::create(b, loc, src, ValueRange{n, t, h, k}));
      memref::StoreOp::create(b, loc, x, buf, ValueRange{k});
    });
  };
  load(op.getK(), kBuf);
  load(op.getQ(), qBuf);
  auto scaleBy = [&](Value buf, Value factor) {
    forRange(b, loc, d.K, [&](Value k) {
      Value x = memref::LoadOp::create(b, loc, buf, ValueRange{k});
      memref::StoreOp::create(b, loc, m.mul(x, factor), buf, ValueRange{k});
    });
  };
  auto invNorm = [&](Value buf) {
    Value ss = sumRange(b, loc, d.K, [&](Value k) {
      Value x = memref::LoadOp::create(b, loc, buf, ValueRange{k});
      return m.mul(x, x);
    });
    return m.rsqrt(m.add(ss, m.f32(1e-6)));
  };
  Value qFactor = m.f32(op.getScaleOrDefault());
  if (op.getQkL2norm()) {
    scaleBy(kBuf, invNorm(kBuf));
    qFactor = m.mul(invNorm(qBuf), qFactor);
  }
  scaleBy(qBuf, qFactor);

  // Per-head gates are loaded once a token; per-channel ones (KDA's
  // per-key decay, beta per value channel) inside their loops.
  bool perKey = op.hasPerKeyDecay(), perChannel = op.hasPerChannelBeta();
  Value decay = perKey ? Value() : m.emitDecay(op, n, t, hv);
  Value beta = perChannel ? Value() : m.emitBeta(op, n, t, hv);
  // S <- exp(g) S, or per key row S[k, :] <- exp(g[k]) S[k, :].
  forRange(b, loc, d.K, [&](Value k) {
    Value rowDecay = perKey ? m.emitDecay(op, n, t, hv, k) : decay;
    forRange(b, loc, d.V, [&](Value v) {
      Value s = memref::LoadOp::create(b, loc, S, ValueRange{k, v});
      memref::StoreOp::create(b, loc, m.mul(s, rowDecay), S, ValueRange{k, v});
    });
  });
  // u = beta (v - S^T k), or per column u[v] = beta[v] (v[v] - (S^T k)[v]).
  forRange(b, loc, d.V, [&](Value v) {
    Value sk = sumRange(b, loc, d.K, [&](Value k) {
      Value s = memref::LoadOp::create(b, loc, S, ValueRange{k, v});
      return m.mul(s, memref::LoadOp::create(b, loc, kBuf, ValueRange{k}));
    });
    Value vv = m.toF32(
        memref::LoadOp::create(b, loc, op.getV(), ValueRange{n, t, hv, v}));
    Value colBeta = perChannel ? m.emitBeta(op, n, t, hv, v) : beta;
    memref::StoreOp::create(b, loc, m.mul(colBeta, m.sub(vv, sk)), uBuf,
                            ValueRange{v});
  });
  // S <- S + k u^T.
  forRange(b, loc, d.K, [&](Value k) {
    Value kk = memref::LoadOp::create(b, loc, kBuf, ValueRange{k});
    forRange(b, loc, d.V, [&](Value v) {
      Value s = memref::LoadOp::create(b, loc, S, ValueRange{k, v});
      Value u = memref::LoadOp::create(b, loc, uBuf, ValueRange{v});
      memref::StoreOp::create(b, loc, m.add(s, m.mul(kk, u)), S,
                              ValueRange{k, v});
    });
  });
  if (!outputs)
    return;
  // o = S^T q, stored in v's dtype.
  forRange(b, loc, d.V, [&](Value v) {
    Value o = sumRange(b, loc, d.K, [&](Value k) {
      Value s = memref::LoadOp::create(b, loc, S, ValueRange{k, v});
      return m.mul(s, memref::LoadOp::create(b, loc, qBuf, ValueRange{k}));
    });
    if (valid) // padding rows output zeros
      o = arith::SelectOp::create(b, loc, valid, o, m.f32(0.0));
    memref::StoreOp::create(b, loc, m.fromF32(o, outType), op.getO(),
                            ValueRange{n, t, hv, v});
  });
}

/// Replayed verify: token t (its `step` in the sequence) into the windows'
/// row `row` when step < L and the row is valid: raw k (from the group's
/// first value head), raw v, and its log decay and beta in f32.
void emitReplayWindows(RecurrentOp op, KernelMath &m, Value row, Value tokens,
                       Value t, Value step, Value hv, Value h, Value valid) {
  OpBuilder &b = m.builder();
  Location loc = m.location();
  auto d = op.getDims();
  int64_t L = cast<MemRefType>(op.getKWindow().getType()).getDimSize(2);
  Value cond = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, step,
                                     m.index(L));
  if (valid)
    cond = arith::AndIOp::create(b, loc, cond, valid);
  OpBuilder::InsertionGuard g(b);
  auto ifOp = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  Value firstOfGroup = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq,
      arith::RemUIOp::create(b, loc, hv, m.index(d.HV / d.H)), m.index(0));
  auto ifFirst = scf::IfOp::create(b, loc, firstOfGroup, false);
  {
    OpBuilder::InsertionGuard g2(b);
    b.setInsertionPointToStart(&ifFirst.getThenRegion().front());
    forRange(b, loc, d.K, [&](Value k) {
      Value x = memref::LoadOp::create(b, loc, op.getK(),
                                       ValueRange{tokens, t, h, k});
      memref::StoreOp::create(b, loc, x, op.getKWindow(),
                              ValueRange{row, h, step, k});
    });
  }
  forRange(b, loc, d.V, [&](Value v) {
    Value x =
        memref::LoadOp::create(b, loc, op.getV(), ValueRange{tokens, t, hv, v});
    memref::StoreOp::create(b, loc, x, op.getVWindow(),
                            ValueRange{row, hv, step, v});
  });
  memref::StoreOp::create(b, loc, m.emitLogDecay(op, tokens, t, hv),
                          op.getGWindow(), ValueRange{row, hv, step});
  memref::StoreOp::create(b, loc, m.emitBeta(op, tokens, t, hv),
                          op.getBetaWindow(), ValueRange{row, hv, step});
}

struct RecurrentToLoops : OpRewritePattern<RecurrentOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(RecurrentOp op,
                                PatternRewriter &rewriter) const override {
    lowerRecurrenceToLoops(rewriter, op);
    rewriter.eraseOp(op);
    return success();
  }
};

/// gdn.replay_commit: for each layer, its recurrence view (ReplayView.h)
/// lowered as a recurrence of the replay's rows.
struct ReplayCommitToLoops : OpRewritePattern<ReplayCommitOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ReplayCommitOp op,
                                PatternRewriter &rewriter) const override {
    SmallVector<Value> operands = replayOperands(op);
    ReplayRows replay =
        replayRows(op, op.getAccepted(), op.getRetrieveParentToken());
    forRange(rewriter, op.getLoc(), op.getDims().layers, [&](Value layer) {
      RecurrentOp view = buildReplayView(rewriter, op, operands, layer);
      lowerRecurrenceToLoops(rewriter, view, &replay);
      rewriter.eraseOp(view);
    });
    rewriter.eraseOp(op);
    return success();
  }
};

/// The most bytes of one head's scratch (S[K][V], k, q and u in f32, on the
/// heap) the CPU lowering allocates: the runner's limit on an argument.
constexpr int64_t kMaxCPUScratchBytes = int64_t(1) << 40;

/// Refuses an op whose scratch of `K` keys and `V` values would pass
/// kMaxCPUScratchBytes (or wrap int64, and with it the allocation's size).
static LogicalResult checkScratch(Operation *op, int64_t K, int64_t V) {
  int64_t elements = 0, bytes = 0;
  if (llvm::MulOverflow(K, V, elements) ||
      llvm::AddOverflow(elements, 2 * K + V, elements) ||
      llvm::MulOverflow(elements, int64_t(4), bytes) ||
      bytes > kMaxCPUScratchBytes)
    return op->emitOpError()
           << "cannot be lowered to the CPU: one head's f32 scratch (a K x V "
              "state with K = "
           << K << ", V = " << V << ") takes more than 2^40 bytes";
  return success();
}

/// The loops allocate their scratch on the host's heap, so the op must sit
/// in host code: not inside an op of the gpu dialect (a gpu.module, a
/// gpu.func, the body of a gpu.launch).
static LogicalResult requireHostCode(Operation *op) {
  for (Operation *p = op->getParentOp(); p; p = p->getParentOp())
    if (p->getName().getDialectNamespace() == "gpu")
      return op->emitOpError()
             << "cannot be lowered to the CPU: it must be in host code, not "
                "inside '"
             << p->getName() << "'";
  return success();
}

/// The checks before any rewrite: a gdn op the pass can lower (host code,
/// memref form, a scratch within bounds), else a diagnostic on it.
static LogicalResult checkLowerable(Operation *op) {
  constexpr StringLiteral pass = "convert-gdn-to-cpu";
  if (!isa<RecurrentOp, CommitOp, ReplayCommitOp>(op))
    return success();
  if (failed(requireHostCode(op)))
    return failure();
  if (auto recurrent = dyn_cast<RecurrentOp>(op))
    return failure(
        failed(recurrent.requireMemRefForm(pass)) ||
        failed(checkScratch(op, recurrent.getDims().K, recurrent.getDims().V)));
  if (auto replay = dyn_cast<ReplayCommitOp>(op))
    return failure(
        failed(replay.requireMemRefForm(pass)) ||
        failed(checkScratch(op, replay.getDims().K, replay.getDims().V)));
  return cast<CommitOp>(op).requireMemRefForm(pass);
}

struct ConvertGDNToCPUPass
    : gdn::impl::ConvertGDNToCPUPassBase<ConvertGDNToCPUPass> {
  void runOnOperation() override {
    WalkResult form = getOperation().walk([](Operation *op) {
      return failed(checkLowerable(op)) ? WalkResult::interrupt()
                                        : WalkResult::advance();
    });
    if (form.wasInterrupted())
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    patterns.add<RecurrentToLoops, ReplayCommitToLoops>(&getContext());
    populateCommitToCPUPatterns(patterns);
    ConversionTarget target(getContext());
    target.addIllegalDialect<GDNDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
