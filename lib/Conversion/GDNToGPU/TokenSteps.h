//===- TokenSteps.h - tokens of the recurrence in registers -----*- C++ -*-===//
//
// One token of the gated delta rule on the register tile (or two at once),
// its inputs from global memory or a staged chunk: the token loop's step,
// with the reductions side by side or in turn. Private to
// convert-gdn-to-gpu (KernelContext.h).
//
//===----------------------------------------------------------------------===//
#ifndef GDN_LIB_CONVERSION_GDNTOGPU_TOKENSTEPS_H
#define GDN_LIB_CONVERSION_GDNTOGPU_TOKENSTEPS_H

#include "Staging.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <optional>

namespace mlir {
namespace gdn {

class TokenSteps : public Staging {
public:
  using Staging::Staging;

protected:
  /// A token's L2-norm factors ik = 1 / |k| and iq = scale / |q| (1 and
  /// scale without qk_l2norm; eps 1e-6 inside the sqrt) and kq = k̂·q̂ = ik iq
  /// k·q. They do not depend on the state.
  struct TokenNorms {
    Value ik, iq, kq;
  };
  /// The norms from this lane's entries of k and q, with `sum` the
  /// reduction of a partial sum over the rest of the token's lanes.
  TokenNorms tokenNorms(ArrayRef<Value> kf, ArrayRef<Value> qf,
                        function_ref<Value(Value)> sum);

  /// This lane's KL entries of q or k for token t, widened to f32.
  SmallVector<Value> loadKeyChunk(Value src, Value t) {
    return extractAll(m.toF32(loadVector(src, {tokenRow, t, h, k0}, kPerLane)));
  }

  /// A token's inputs at token t (or staged at chunk row j), f32: this
  /// lane's entries of k and q, its V columns of v, the decay (this lane's
  /// keys with a per-key decay, else one value) and beta (its columns with a
  /// per-channel beta, else one value).
  struct TokenInputs {
    SmallVector<Value> kf, qf, vf, decay, beta;
  };
  TokenInputs loadToken(Value t, Value j);

  /// The norm factors of a token: staged by the producer (normStage) at row
  /// j, else from this warp's lanes (tokenNorms).
  TokenNorms normsAt(Value j, const TokenInputs &in);

  /// x and y (this lane's keys) times the token's per-key decay (themselves
  /// with one decay a head, which factors out of the sums instead).
  std::pair<SmallVector<Value>, SmallVector<Value>>
  decayed(const TokenInputs &in, ArrayRef<Value> x, ArrayRef<Value> y);

  /// For each x of `xs` (this lane's keys), Sᵀx per V column of the lane,
  /// summed over the token's lanes: all the shuffle trees side by side.
  SmallVector<SmallVector<Value>> stateSums(SmallVector<Value> &S,
                                            ArrayRef<SmallVector<Value>> xs);

  /// The factors of a token's state sums: ik and iq, times the decay when
  /// it is one value a head (which the sums then leave out).
  struct Factors {
    Value fk, fq;
  };
  Factors factors(const TokenInputs &in, const TokenNorms &norms);

  /// The side-by-side token given its state sums A = Sᵀ(D k), B = Sᵀ(D q)
  /// (D omitted for one decay a head): u = beta (v - ik A), S <- D S + k̂ uᵀ,
  /// o = iq B + (k̂·q̂) u, stored. Returns u per column. With `units` (one
  /// decay a head only), S's row r is in units of units[r] (rowUnits) and
  /// the update leaves it in absolute units: S <- (D units[r]) S + k̂ uᵀ.
  SmallVector<Value> advance(Value t, SmallVector<Value> &S,
                             const TokenInputs &in, const TokenNorms &norms,
                             const Factors &f, ArrayRef<Value> A,
                             ArrayRef<Value> B, ArrayRef<Value> units = {});

  /// Staged tokens t and t + 1 (rows j, j + 1) with every state sum of both
  /// on the state before t (tokenPairs()): one shuffle tree deep for the two.
  SmallVector<Value> tokenPair(Value t, Value j, ValueRange carried);

  /// One token: S <- exp(g) S; u = beta (v - Sᵀk); S <- S + k uᵀ; o = Sᵀq.
  /// Inputs come from global memory at token t, or staged at chunk row j;
  /// in the side-by-side form the norm factors (tokenNorms) too, where the
  /// producer warp staged them (normStage), else from this warp's lanes.
  SmallVector<Value> token(Value t, Value j, ValueRange carried);

  /// The same token with its steps in turn, as the math reads: normalize q
  /// and k, S <- exp(g) S, A = Sᵀk, S <- S + k uᵀ, o = Sᵀq. Three shuffle
  /// trees deep, but fewer live registers, which pays once the grid is
  /// bandwidth-bound. Per-head decay and beta only.
  SmallVector<Value> tokenInTurn(Value t, SmallVector<Value> S,
                                 SmallVector<Value> kf, SmallVector<Value> qf,
                                 Value decay, Value beta, ArrayRef<Value> vf,
                                 ArrayRef<Value> units = {});

  /// Tokens [c, c + count) from staging rows [rowBase, rowBase + count);
  /// returns the state after.
  SmallVector<Value> runChunk(Value c, Value count, Value rowBase,
                              ValueRange state);

  /// Unrolled tokens overlap the next token's shared-memory loads, norms and
  /// gates with this token's dependent chain, at the cost of code size.
  void unrollTokenLoops();

  SmallVector<scf::ForOp> tokenLoops; ///< staged token loops, to unroll
  /// The single token's inputs, loaded before a pool's state (build());
  /// token() takes them instead of loading.
  std::optional<TokenInputs> firstToken;
  bool tokenFirst = false; ///< a pool's single token loads before its state
  /// The next token()'s state, row r in units of rowUnits[r] (a quantized
  /// state's row scales, TileIO::loadState): the scales ride in the token's
  /// decay, one product a row instead of one an element. token() takes them
  /// (empty: absolute units); one decay a head only.
  SmallVector<Value> rowUnits;
};

} // namespace gdn
} // namespace mlir

#endif // GDN_LIB_CONVERSION_GDNTOGPU_TOKENSTEPS_H
