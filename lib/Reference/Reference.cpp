//===- Reference.cpp - fp64 reference recurrence --------------------------===//
//
// The Gated Delta Rule recurrence of docs/math.md §1, computed in double
// precision with nothing but the standard library. Per sequence n, value head
// hv and token t (q/k head h = hv / (HV / H)):
//
//   q, k <- x / sqrt(sum x^2 + 1e-6)        (only when qkL2Norm)
//   q    <- q * scale
//   S    <- exp(g) * S                      (decay first; KDA: per key row,
//                                            S[k, :] <- exp(g[k]) S[k, :])
//   u    <- beta * (v - S^T k)              (delta against the decayed state;
//                                            beta per head or per V column)
//   S    <- S + k u^T
//   o    <- S^T q                           (output from the updated state)
//
//===----------------------------------------------------------------------===//

#include "gdn/Reference/Reference.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace gdn {
namespace reference {

double softplus(double x) {
  if (x <= 20.0)
    return std::log1p(std::exp(x));
  // Above the threshold (and for +inf) softplus(x) == x to double precision;
  // NaN fails both comparisons and is returned unchanged.
  return x;
}

double fusedGate(double a, double aLog, double dtBias) {
  double sp = softplus(a + dtBias);
  if (std::isnan(sp))
    return sp;
  // softplus underflowed to 0: no decay, even if exp(aLog) overflows to inf.
  if (sp == 0.0)
    return 0.0;
  double rate = std::exp(aLog);
  // exp(aLog) underflowed to 0 (aLog = -inf): no decay, even if sp is inf.
  if (rate == 0.0)
    return 0.0;
  // sp > 0 and rate > 0: the product is in (-inf, 0), or -inf for a = +inf.
  return -rate * sp;
}

double sigmoid(double x) {
  // Only exp of a non-positive argument is taken, so nothing overflows:
  // sigmoid(+inf) = 1, sigmoid(-inf) = 0, NaN stays NaN.
  if (x >= 0.0)
    return 1.0 / (1.0 + std::exp(-x));
  if (x < 0.0) {
    double e = std::exp(x);
    return e / (1.0 + e);
  }
  return x; // NaN
}

double roundTo(Storage storage, double x) {
  if (storage == Storage::F32)
    return static_cast<float>(x);
  if (!std::isfinite(x) || x == 0.0)
    return x;
  // x = m 2^e with |m| in [0.5, 1): keep `bits` significant bits, and no
  // quantum below the subnormal one.
  bool e4m3 = storage == Storage::E4M3Rows;
  const int bits = storage == Storage::BF16 ? 8 : e4m3 ? 4 : 11;
  const int minQuantum = storage == Storage::BF16 ? -133 : e4m3 ? -9 : -24;
  const double maxFinite = storage == Storage::BF16 ? 0x1.fep127
                           : e4m3                   ? 448.0
                                                    : 65504.0;
  int e;
  std::frexp(x, &e);
  int q = std::max(e - bits, minQuantum);
  double r = std::ldexp(std::nearbyint(std::ldexp(x, -q)), q); // ties to even
  if (std::fabs(r) > maxFinite) // e4m3 saturates (satfinite), others overflow
    return std::copysign(e4m3 ? maxFinite : HUGE_VAL, x);
  return r;
}

namespace {

/// Returns "" if the problem is well formed and every input it uses has the
/// right size, else a message naming the first offender.
std::string validate(const Problem &p, const Inputs &in) {
  const struct {
    const char *name;
    int64_t value;
  } dims[] = {{"N", p.N},   {"T", p.T}, {"H", p.H},
              {"HV", p.HV}, {"K", p.K}, {"V", p.V}};
  for (const auto &d : dims) {
    if (d.value < 1 && !(p.varlen && d.name[0] == 'N' && d.value == 0))
      return std::string("reference: dimension ") + d.name + " = " +
             std::to_string(d.value) + " must be >= 1";
  }
  // Every size computed below divides one of these products; bounding them
  // (in double, which cannot overflow here) keeps all int64_t arithmetic safe.
  const double limit = 0x1p50;
  const double n = p.N, t = p.T, h = p.H, hv = p.HV, k = p.K, v = p.V;
  if (n * t * h * k > limit || n * t * hv * v > limit || n * hv * k * v > limit ||
      n * t * hv * k > limit)
    return "reference: problem too large";
  if (p.HV % p.H != 0)
    return "reference: HV = " + std::to_string(p.HV) +
           " is not a multiple of H = " + std::to_string(p.H);

  const int64_t batch = p.varlen ? 1 : p.N; // rows of the token tensors
  const int64_t qkSize = batch * p.T * p.H * p.K;
  const int64_t gateSize = batch * p.T * p.HV;
  const bool fused = p.decay == Decay::FusedGating;
  const int64_t gSize = gateSize * (p.perKeyDecay ? p.K : 1);
  const int64_t betaSize = gateSize * (p.perChannelBeta ? p.V : 1);
  const struct {
    const char *name;
    const std::vector<double> &vec;
    int64_t expected;
    bool used;
  } inputs[] = {
      {"q", in.q, qkSize, true},
      {"k", in.k, qkSize, true},
      {"v", in.v, gateSize * p.V, true},
      {"g", in.g, gSize, p.decay == Decay::LogSpace},
      {"a", in.a, gSize, fused},
      {"A_log", in.A_log, p.HV, fused},
      {"dt_bias", in.dt_bias, p.HV * (p.perKeyDecay ? p.K : 1), fused},
      {"beta", in.beta, betaSize, p.beta != Beta::One},
      {"initialState", in.initialState,
       (p.slots > 0 ? p.slots : p.N) * p.HV * p.K * p.V, p.hasInitialState},
  };
  if (p.slots < 0)
    return "reference: slots must be >= 0";
  if (p.checkpointInterval > 0 &&
      static_cast<int64_t>(in.checkpointOffsets.size()) != p.N + 1)
    return "reference: 'checkpointOffsets' has " +
           std::to_string(in.checkpointOffsets.size()) +
           " elements, expected N + 1 = " + std::to_string(p.N + 1);
  if (p.intermediateIndexed) {
    if (static_cast<int64_t>(in.intermediateIndices.size()) != p.N)
      return "reference: 'intermediateIndices' has " +
             std::to_string(in.intermediateIndices.size()) + " elements, expected " +
             std::to_string(p.N);
    for (int64_t idx : in.intermediateIndices)
      if (idx >= p.intermediateRows)
        return "reference: intermediate index out of range";
  }
  if (p.parentTable) {
    // (No rows at all only where there are no sequences: varlen N = 0.)
    if (p.intermediateRows < 1 && p.N > 0)
      return "reference: a parent table needs intermediate states";
    if (static_cast<int64_t>(in.parentTokens.size()) != p.N * p.intermediateSteps)
      return "reference: 'parentTokens' has " +
             std::to_string(in.parentTokens.size()) + " elements, expected " +
             std::to_string(p.N * p.intermediateSteps);
  }
  if (p.varlen) {
    if (static_cast<int64_t>(in.cuSeqlens.size()) != p.N + 1)
      return "reference: 'cuSeqlens' has " + std::to_string(in.cuSeqlens.size()) +
             " elements, expected " + std::to_string(p.N + 1);
    for (int64_t n = 0; n <= p.N; ++n)
      if (in.cuSeqlens[n] < (n ? in.cuSeqlens[n - 1] : 0) || in.cuSeqlens[n] > p.T)
        return "reference: cuSeqlens must rise from 0 and stay within T";
  }
  if (p.slots > 0) {
    if (static_cast<int64_t>(in.stateIndices.size()) != p.N)
      return "reference: 'stateIndices' has " +
             std::to_string(in.stateIndices.size()) + " elements, expected " +
             std::to_string(p.N);
    for (int64_t idx : in.stateIndices)
      if (idx >= p.slots)
        return "reference: state index " + std::to_string(idx) +
               " is out of range for " + std::to_string(p.slots) + " slots";
  }
  for (const auto &input : inputs) {
    if (input.used && static_cast<int64_t>(input.vec.size()) != input.expected)
      return std::string("reference: '") + input.name + "' has " +
             std::to_string(input.vec.size()) + " elements, expected " +
             std::to_string(input.expected);
  }
  return "";
}

/// Copies `src[0, size)` to `dst`: L2-normalised first when `l2Norm`
/// (eps inside the sqrt), then multiplied by `scale`.
void prepareVector(const double *src, int64_t size, bool l2Norm, double scale,
                   std::vector<double> &dst) {
  double norm = 1.0;
  if (l2Norm) {
    double sumSq = 0.0;
    for (int64_t i = 0; i < size; ++i)
      sumSq += src[i] * src[i];
    norm = std::sqrt(sumSq + 1e-6);
  }
  for (int64_t i = 0; i < size; ++i)
    dst[i] = (l2Norm ? src[i] / norm : src[i]) * scale;
}

} // namespace

std::string run(const Problem &p, const Inputs &in, Outputs &out) {
  std::string err = validate(p, in);
  if (!err.empty())
    return err;

  const int64_t N = p.N, T = p.T, H = p.H, HV = p.HV, K = p.K, V = p.V;
  const int64_t groupSize = HV / H;
  const bool vk = p.layout == StateLayout::VK;

  const int64_t batch = p.varlen ? 1 : N; // rows of the token tensors
  std::vector<double> o(static_cast<size_t>(batch * T * HV * V), 0.0);
  std::vector<double> intermediate(
      static_cast<size_t>(p.intermediateRows * p.intermediateSteps * HV * K * V),
      0.0);
  std::vector<double> checkpoints(
      static_cast<size_t>(p.checkpointRows * HV * K * V), 0.0);
  std::vector<bool> checkpointWritten(static_cast<size_t>(p.checkpointRows),
                                      false);
  const int64_t rows = p.slots > 0 ? p.slots : N;
  std::vector<double> finalState(static_cast<size_t>(rows * HV * K * V), 0.0);
  const int64_t L = p.windowSteps;
  std::vector<double> kWindow(static_cast<size_t>(rows * H * L * K), 0.0),
      vWindow(static_cast<size_t>(rows * HV * L * V), 0.0),
      gWindow(static_cast<size_t>(rows * HV * L), 0.0),
      betaWindow(static_cast<size_t>(rows * HV * L), 0.0);
  std::vector<bool> windowWritten(static_cast<size_t>(rows * L), false);
  if (p.slots > 0 && p.hasInitialState)
    finalState = in.initialState; // untouched slots keep their values
  std::vector<double> state(static_cast<size_t>(K * V)); // S[k * V + v]
  std::vector<double> q(static_cast<size_t>(K)), k(static_cast<size_t>(K));
  std::vector<double> u(static_cast<size_t>(V));
  // exp(g) of each key row (one value unless the decay is per key) and beta
  // of each V column (one value unless per value channel).
  std::vector<double> decay(static_cast<size_t>(p.perKeyDecay ? K : 1));
  std::vector<double> beta(static_cast<size_t>(p.perChannelBeta ? V : 1));

  // Offset of element (k, v) of head (n, hv) in a state stored in p.layout.
  auto stateOffset = [&](int64_t n, int64_t hv, int64_t ki, int64_t vi) {
    int64_t head = (n * HV + hv) * K * V;
    return head + (vk ? vi * K + ki : ki * V + vi);
  };

  for (int64_t n = 0; n < N; ++n) {
    // The state row: n, or the pool slot; padding rows keep o at zero.
    const int64_t row = p.slots > 0 ? in.stateIndices[n] : n;
    if (row < 0)
      continue;
    const int64_t irow = p.intermediateIndexed ? in.intermediateIndices[n] : n;
    const int64_t steps = p.intermediateSteps;
    for (int64_t hv = 0; hv < HV; ++hv) {
      const int64_t h = hv / groupSize;
      auto loadInitialState = [&]() {
        for (int64_t ki = 0; ki < K; ++ki)
          for (int64_t vi = 0; vi < V; ++vi)
            state[ki * V + vi] =
                p.hasInitialState ? in.initialState[stateOffset(row, hv, ki, vi)]
                                  : 0.0;
      };
      loadInitialState();
      // Offset of element (k, v) of step s of this row's buffer.
      auto interOffset = [&](int64_t s, int64_t ki, int64_t vi) {
        int64_t head = ((irow * steps + s) * HV + hv) * K * V;
        return head + (vk ? vi * K + ki : ki * V + vi);
      };

      // Tokens of sequence n: row n, [0, T); varlen: packed [cu[n], cu[n+1]).
      const int64_t lo = p.varlen ? in.cuSeqlens[n] : n * T;
      const int64_t hi = p.varlen ? in.cuSeqlens[n + 1] : (n + 1) * T;
      for (int64_t tok = lo; tok < hi; ++tok) {
        const int64_t step = tok - lo;
        // EAGLE tree: start from the parent's state (as stored) or, for a
        // root, from the initial state; a chain keeps the carried state.
        if (p.parentTable && irow >= 0 && step > 0 && step < steps) {
          const int64_t parent = in.parentTokens[n * steps + step];
          if (parent >= 0 && parent < step - 1) {
            auto stored = [&](int64_t ki, int64_t vi) {
              return intermediate[interOffset(parent, ki, vi)];
            };
            if (p.intermediateStorage != Storage::E4M3Rows) {
              for (int64_t ki = 0; ki < K; ++ki)
                for (int64_t vi = 0; vi < V; ++vi)
                  state[ki * V + vi] =
                      roundTo(p.intermediateStorage, stored(ki, vi));
            } else { // row v: e4m3 of S x 448 / amax, times amax / 448 (f32)
              for (int64_t vi = 0; vi < V; ++vi) {
                float amax = 0.0f;
                for (int64_t ki = 0; ki < K; ++ki)
                  amax = std::max(
                      amax, std::fabs(static_cast<float>(stored(ki, vi))));
                // (inverse 0 below 2^-119: KernelMath::kE4M3MinAmax)
                float scale = amax / 448.0f,
                      inv = amax >= 0x1p-119f ? 448.0f / amax : 0.0f;
                for (int64_t ki = 0; ki < K; ++ki)
                  state[ki * V + vi] =
                      roundTo(Storage::E4M3Rows,
                              static_cast<float>(stored(ki, vi)) * inv) *
                      scale;
              }
            }
          } else if (parent < 0 || parent >= step) {
            loadInitialState();
          }
        }
        const int64_t qkBase = (tok * H + h) * K;
        const int64_t gateIdx = tok * HV + hv;
        const int64_t vBase = gateIdx * V;

        prepareVector(&in.q[qkBase], K, p.qkL2Norm, p.scale, q);
        prepareVector(&in.k[qkBase], K, p.qkL2Norm, 1.0, k);

        // g (one per head, or per key channel ki: g[.., ki], or fused
        // from a[.., ki] and dt_bias[hv * K + ki]).
        double headG = 0.0; // g of the head (key channel 0 when per key)
        for (size_t ki = 0; ki < decay.size(); ++ki) {
          const int64_t gIdx = gateIdx * static_cast<int64_t>(decay.size()) + ki;
          double g = 0.0;
          if (p.decay == Decay::LogSpace)
            g = in.g[gIdx];
          else if (p.decay == Decay::FusedGating)
            g = fusedGate(in.a[gIdx], in.A_log[hv],
                          in.dt_bias[hv * static_cast<int64_t>(decay.size()) + ki]);
          decay[ki] = std::exp(g);
          if (ki == 0)
            headG = g;
        }

        for (size_t vi = 0; vi < beta.size(); ++vi) {
          const int64_t bIdx = gateIdx * static_cast<int64_t>(beta.size()) + vi;
          beta[vi] = 1.0;
          if (p.beta == Beta::Given)
            beta[vi] = in.beta[bIdx];
          else if (p.beta == Beta::Logits)
            beta[vi] = (p.allowNegEigval ? 2.0 : 1.0) * sigmoid(in.beta[bIdx]);
        }

        // Replay windows: the token's inputs as the recurrence takes them.
        if (step < L) {
          windowWritten[row * L + step] = true;
          if (hv % groupSize == 0)
            std::copy_n(&in.k[qkBase], K,
                        &kWindow[((row * H + h) * L + step) * K]);
          std::copy_n(&in.v[vBase], V,
                      &vWindow[((row * HV + hv) * L + step) * V]);
          gWindow[(row * HV + hv) * L + step] = headG;
          betaWindow[(row * HV + hv) * L + step] = beta[0];
        }

        // S <- exp(g) * S (row ki scaled by exp(g[ki]) when per key).
        if (p.decay != Decay::None)
          for (int64_t ki = 0; ki < K; ++ki)
            for (int64_t vi = 0; vi < V; ++vi)
              state[ki * V + vi] *= decay[p.perKeyDecay ? ki : 0];

        // u = beta * (v - S^T k), from the decayed state.
        for (int64_t vi = 0; vi < V; ++vi) {
          double sk = 0.0;
          for (int64_t ki = 0; ki < K; ++ki)
            sk += state[ki * V + vi] * k[ki];
          u[vi] = beta[p.perChannelBeta ? vi : 0] * (in.v[vBase + vi] - sk);
        }

        // S <- S + k u^T.
        for (int64_t ki = 0; ki < K; ++ki)
          for (int64_t vi = 0; vi < V; ++vi)
            state[ki * V + vi] += k[ki] * u[vi];

        // o = S^T q, from the updated state.
        for (int64_t vi = 0; vi < V; ++vi) {
          double acc = 0.0;
          for (int64_t ki = 0; ki < K; ++ki)
            acc += state[ki * V + vi] * q[ki];
          o[vBase + vi] = acc;
        }

        // Prefix-cache checkpoints: the state after every interval tokens.
        if (p.checkpointInterval > 0 &&
            (step + 1) % p.checkpointInterval == 0) {
          auto clamp = [](int64_t x, int64_t lo, int64_t hi) {
            return std::min(std::max(x, lo), hi);
          };
          int64_t cLo = clamp(in.checkpointOffsets[n], 0, p.checkpointRows);
          int64_t cHi =
              clamp(in.checkpointOffsets[n + 1], cLo, p.checkpointRows);
          int64_t crow = cLo + (step + 1) / p.checkpointInterval - 1;
          if (crow < cHi) {
            checkpointWritten[crow] = true;
            for (int64_t ki = 0; ki < K; ++ki)
              for (int64_t vi = 0; vi < V; ++vi)
                checkpoints[stateOffset(crow, hv, ki, vi)] = state[ki * V + vi];
          }
        }
        // Verify: the state after this token.
        if (p.intermediateRows > 0 && irow >= 0 && step < steps) {
          for (int64_t ki = 0; ki < K; ++ki)
            for (int64_t vi = 0; vi < V; ++vi)
              intermediate[interOffset(step, ki, vi)] = state[ki * V + vi];
        }
      }

      for (int64_t ki = 0; ki < K; ++ki)
        for (int64_t vi = 0; vi < V; ++vi)
          finalState[stateOffset(row, hv, ki, vi)] = state[ki * V + vi];

    }
  }

  out.o = std::move(o);
  out.intermediate = std::move(intermediate);
  out.checkpoints = std::move(checkpoints);
  out.checkpointWritten = std::move(checkpointWritten);
  out.finalState = std::move(finalState);
  out.kWindow = std::move(kWindow);
  out.vWindow = std::move(vWindow);
  out.gWindow = std::move(gWindow);
  out.betaWindow = std::move(betaWindow);
  out.windowWritten = std::move(windowWritten);
  return "";
}

double maxAbsError(const std::vector<double> &a, const std::vector<double> &b) {
  if (a.size() != b.size())
    return std::numeric_limits<double>::infinity();
  double maxErr = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    double d = std::fabs(a[i] - b[i]);
    // A NaN difference must never be dropped by a comparison.
    if (std::isnan(d))
      return std::numeric_limits<double>::quiet_NaN();
    if (d > maxErr)
      maxErr = d;
  }
  return maxErr;
}

double rmsRelativeError(const std::vector<double> &a,
                        const std::vector<double> &b) {
  if (a.size() != b.size())
    return std::numeric_limits<double>::infinity();
  double diffSq = 0.0, refSq = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    double d = a[i] - b[i];
    if (std::isnan(d))
      return std::numeric_limits<double>::quiet_NaN();
    diffSq += d * d;
    refSq += b[i] * b[i];
  }
  if (std::isnan(diffSq) || std::isnan(refSq))
    return std::numeric_limits<double>::quiet_NaN();
  if (diffSq == 0.0)
    return 0.0; // identical (this includes both being all zero)
  if (refSq == 0.0)
    return std::numeric_limits<double>::infinity();
  return std::sqrt(diffSq) / std::sqrt(refSq);
}

} // namespace reference
} // namespace gdn
