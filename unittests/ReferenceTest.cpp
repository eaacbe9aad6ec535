//===- ReferenceTest.cpp - Tests of the fp64 reference recurrence ---------===//
//
// Hand-computed cases for gdn::reference: every test asserts something that a
// wrong recurrence (step order, GQA map, layout, gating) would fail.
//
//===----------------------------------------------------------------------===//

#include "gdn/Reference/Reference.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

using namespace gdn::reference;

namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Deterministic pseudo-random values in [lo, hi) (64-bit LCG).
std::vector<double> pseudoRandom(size_t count, uint64_t seed, double lo,
                                 double hi) {
  std::vector<double> values(count);
  uint64_t x = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (double &value : values) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    double unit = static_cast<double>(x >> 11) * (1.0 / 9007199254740992.0);
    value = lo + (hi - lo) * unit;
  }
  return values;
}

/// Runs the recurrence and fails the test on a validation error.
Outputs runOk(const Problem &p, const Inputs &in) {
  Outputs out;
  std::string err = run(p, in, out);
  EXPECT_EQ(err, "");
  return out;
}

/// The single-step problem shared by tests 1 and 2: K = 3, V = 2, beta given.
Problem oneStepProblem() {
  Problem p;
  p.K = 3;
  p.V = 2;
  p.beta = Beta::Given;
  p.scale = 0.5;
  return p;
}

Inputs oneStepInputs() {
  Inputs in;
  in.q = {1.0, 2.0, 3.0};
  in.k = {0.5, -1.0, 2.0};
  in.v = {3.0, -2.0};
  in.beta = {0.5};
  return in;
}

// S = beta k v^T, stored [K][V]: rows k = 0.5, -1, 2 times 0.5 * (3, -2).
const std::vector<double> kOneStepState = {0.75, -0.5, -1.5, 1.0, 3.0, -2.0};
// o = S^T (q * 0.5) with q * 0.5 = (0.5, 1, 1.5).
const std::vector<double> kOneStepOutput = {3.375, -2.25};

} // namespace

// 1. One step from a zero state: S = beta k v^T exactly, o = S^T (q scale).
TEST(ReferenceTest, OneStepFromZeroState) {
  Outputs out = runOk(oneStepProblem(), oneStepInputs());
  // Every value is dyadic, so the results are exact.
  EXPECT_EQ(out.finalState, kOneStepState);
  EXPECT_EQ(out.o, kOneStepOutput);
}

// 2. g = -inf wipes the carried state before the delta update.
TEST(ReferenceTest, MinusInfDecayZeroesCarriedState) {
  Problem p = oneStepProblem();
  p.decay = Decay::LogSpace;
  p.hasInitialState = true;
  Inputs in = oneStepInputs();
  in.initialState = {1.0, 2.0, 3.0, 4.0, 5.0, 6.0};
  in.g = {-kInf};
  Outputs out = runOk(p, in);
  EXPECT_EQ(out.finalState, kOneStepState);
  EXPECT_EQ(out.o, kOneStepOutput);

  // Control: without the decay the initial state is carried and matters.
  in.g = {0.0};
  Outputs carried = runOk(p, in);
  EXPECT_GT(maxAbsError(carried.finalState, kOneStepState), 0.1);
}

// 3. beta = 0 leaves the decayed state: S_T = exp(g_2) exp(g_1) S0 and each
// o_t reads the state decayed up to t.
TEST(ReferenceTest, ZeroBetaOnlyDecays) {
  Problem p;
  p.T = 2;
  p.K = 3;
  p.V = 2;
  p.decay = Decay::LogSpace;
  p.beta = Beta::Given;
  p.scale = 0.25;
  p.hasInitialState = true;
  Inputs in;
  in.q = {1.0, -2.0, 0.5, /*t=1*/ 0.3, 0.7, -1.1};
  in.k = {0.2, 0.4, -0.6, /*t=1*/ -0.9, 0.1, 0.5};
  in.v = {5.0, -7.0, /*t=1*/ 2.0, 3.0};
  in.g = {-0.7, -0.3};
  in.beta = {0.0, 0.0};
  in.initialState = {1.0, -2.0, 3.0, 0.5, -1.5, 2.5};
  Outputs out = runOk(p, in);

  const double d1 = std::exp(-0.7), d2 = std::exp(-0.3);
  std::vector<double> s1(6), s2(6);
  for (int i = 0; i < 6; ++i) {
    s1[i] = d1 * in.initialState[i];
    s2[i] = d2 * s1[i];
  }
  std::vector<double> expectedO(4, 0.0);
  for (int v = 0; v < 2; ++v) {
    for (int k = 0; k < 3; ++k) {
      expectedO[v] += s1[k * 2 + v] * in.q[k] * p.scale;
      expectedO[2 + v] += s2[k * 2 + v] * in.q[3 + k] * p.scale;
    }
  }
  EXPECT_LE(maxAbsError(out.finalState, s2), 1e-15);
  EXPECT_LE(maxAbsError(out.o, expectedO), 1e-14);
  // Both tokens' decays were applied (not just the last one).
  EXPECT_GT(maxAbsError(out.finalState, s1), 0.1);
}

// The decay comes before the delta: u is computed from exp(g) S, not S.
TEST(ReferenceTest, DecayBeforeDelta) {
  Problem p;
  p.K = 2;
  p.V = 1;
  p.decay = Decay::LogSpace;
  p.hasInitialState = true;
  Inputs in;
  in.q = {1.0, 0.0};
  in.k = {1.0, 0.0};
  in.v = {1.0};
  in.g = {std::log(0.5)};
  in.initialState = {2.0, 0.0};
  Outputs out = runOk(p, in);
  // exp(g) S = (1, 0); u = 1 - 1 = 0; S stays (1, 0); o = 1.
  // (Delta first would give S = 0.5 * (2 - 1) = 0.5.)
  EXPECT_NEAR(out.finalState[0], 1.0, 1e-15);
  EXPECT_EQ(out.finalState[1], 0.0);
  EXPECT_NEAR(out.o[0], 1.0, 1e-15);
}

// 4. The VK layout stores the transpose of KV; the outputs are identical.
TEST(ReferenceTest, VKLayoutIsTransposeOfKV) {
  const int64_t N = 2, T = 3, H = 1, HV = 2, K = 3, V = 2;
  Problem p;
  p.N = N;
  p.T = T;
  p.H = H;
  p.HV = HV;
  p.K = K;
  p.V = V;
  p.decay = Decay::LogSpace;
  p.beta = Beta::Given;
  p.scale = 0.6;
  p.hasInitialState = true;
  Inputs in;
  in.q = pseudoRandom(N * T * H * K, 1, -1.0, 1.0);
  in.k = pseudoRandom(N * T * H * K, 2, -1.0, 1.0);
  in.v = pseudoRandom(N * T * HV * V, 3, -1.0, 1.0);
  in.g = pseudoRandom(N * T * HV, 4, -1.0, -0.05); // distinct per head
  in.beta = pseudoRandom(N * T * HV, 5, 0.1, 0.9);
  in.initialState = pseudoRandom(N * HV * K * V, 6, -1.0, 1.0);
  Outputs kv = runOk(p, in);

  auto transpose = [&](const std::vector<double> &src, int64_t rows,
                       int64_t cols) {
    std::vector<double> dst(src.size());
    for (int64_t head = 0; head < N * HV; ++head)
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c)
          dst[head * rows * cols + c * rows + r] =
              src[head * rows * cols + r * cols + c];
    return dst;
  };

  Problem pVK = p;
  pVK.layout = StateLayout::VK;
  Inputs inVK = in;
  inVK.initialState = transpose(in.initialState, K, V); // [N, HV, V, K]
  Outputs vk = runOk(pVK, inVK);

  EXPECT_EQ(vk.finalState, transpose(kv.finalState, K, V));
  EXPECT_EQ(vk.o, kv.o);

  // Control: feeding the KV buffer as if it were VK changes the result.
  Outputs wrong = runOk(pVK, in);
  EXPECT_GT(maxAbsError(wrong.o, kv.o), 1e-3);
}

// 5. GQA: with H = 2, HV = 4 value heads 2 and 3 use q/k head 1.
TEST(ReferenceTest, GQAHeadMapping) {
  const int64_t T = 2, H = 2, HV = 4, K = 3, V = 2;
  Problem p;
  p.T = T;
  p.H = H;
  p.HV = HV;
  p.K = K;
  p.V = V;
  p.decay = Decay::LogSpace;
  p.beta = Beta::Given;
  p.scale = 0.7;
  p.hasInitialState = true;
  Inputs in;
  in.q = pseudoRandom(T * H * K, 11, -1.0, 1.0);
  in.k = pseudoRandom(T * H * K, 12, -1.0, 1.0);
  in.v = pseudoRandom(T * HV * V, 13, -1.0, 1.0);
  in.g = pseudoRandom(T * HV, 14, -0.8, -0.1);
  in.beta = pseudoRandom(T * HV, 15, 0.2, 0.9);
  in.initialState = pseudoRandom(HV * K * V, 16, -1.0, 1.0);
  Outputs full = runOk(p, in);

  // Runs value head hv alone (H = HV = 1) with q/k taken from head h.
  auto runSingle = [&](int64_t hv, int64_t h) {
    Problem single = p;
    single.H = 1;
    single.HV = 1;
    Inputs sub;
    for (int64_t t = 0; t < T; ++t) {
      for (int64_t k = 0; k < K; ++k) {
        sub.q.push_back(in.q[(t * H + h) * K + k]);
        sub.k.push_back(in.k[(t * H + h) * K + k]);
      }
      for (int64_t v = 0; v < V; ++v)
        sub.v.push_back(in.v[(t * HV + hv) * V + v]);
      sub.g.push_back(in.g[t * HV + hv]);
      sub.beta.push_back(in.beta[t * HV + hv]);
    }
    for (int64_t i = 0; i < K * V; ++i)
      sub.initialState.push_back(in.initialState[hv * K * V + i]);
    return runOk(single, sub);
  };
  // Value head hv's slices of the full run.
  auto sliceO = [&](int64_t hv) {
    std::vector<double> o;
    for (int64_t t = 0; t < T; ++t)
      for (int64_t v = 0; v < V; ++v)
        o.push_back(full.o[(t * HV + hv) * V + v]);
    return o;
  };
  auto sliceState = [&](int64_t hv) {
    return std::vector<double>(full.finalState.begin() + hv * K * V,
                               full.finalState.begin() + (hv + 1) * K * V);
  };

  const int64_t expectedHead[HV] = {0, 0, 1, 1};
  for (int64_t hv = 0; hv < HV; ++hv) {
    Outputs single = runSingle(hv, expectedHead[hv]);
    EXPECT_EQ(sliceO(hv), single.o) << "value head " << hv;
    EXPECT_EQ(sliceState(hv), single.finalState) << "value head " << hv;
  }

  // Control: value head 3 with q/k head 0 (a wrong map) gives another result.
  Outputs wrongMap = runSingle(3, 0);
  EXPECT_GT(maxAbsError(sliceO(3), wrongMap.o), 1e-3);
}

// 6. With the q/k L2 norm, positive rescaling of q and k is invisible (up to
// the 1e-6 eps, negligible here because |q|^2, |k|^2 ~ 1e6).
TEST(ReferenceTest, L2NormIsScaleInvariant) {
  const int64_t T = 3, K = 4, V = 3;
  Problem p;
  p.T = T;
  p.K = K;
  p.V = V;
  p.decay = Decay::LogSpace;
  p.beta = Beta::Given;
  p.qkL2Norm = true;
  p.scale = 0.5;
  p.hasInitialState = true;
  Inputs in;
  in.q = pseudoRandom(T * K, 21, 500.0, 1000.0);
  in.k = pseudoRandom(T * K, 22, -1000.0, -500.0);
  in.v = pseudoRandom(T * V, 23, -1.0, 1.0);
  in.g = pseudoRandom(T, 24, -0.5, -0.1);
  in.beta = pseudoRandom(T, 25, 0.2, 0.9);
  in.initialState = pseudoRandom(K * V, 26, -1.0, 1.0);
  Outputs base = runOk(p, in);

  Inputs scaled = in;
  for (double &x : scaled.q)
    x *= 3.0;
  for (double &x : scaled.k)
    x *= 7.0;
  Outputs out = runOk(p, scaled);
  EXPECT_LE(maxAbsError(out.o, base.o), 1e-12);
  EXPECT_LE(maxAbsError(out.finalState, base.finalState), 1e-12);

  // Control: without the norm the same rescaling changes the result.
  Problem noNorm = p;
  noNorm.qkL2Norm = false;
  noNorm.scale = 1e-3;
  Outputs a = runOk(noNorm, in), b = runOk(noNorm, scaled);
  EXPECT_GT(maxAbsError(a.o, b.o), 1e-3);
}

// The eps of the L2 norm sits inside the sqrt: q = k = (3, 4), one step from
// zero with beta = 1 gives o = |k|^2 / (|k|^2 + 1e-6) * v * scale.
TEST(ReferenceTest, L2NormEpsInsideSqrt) {
  Problem p;
  p.K = 2;
  p.V = 1;
  p.qkL2Norm = true;
  p.scale = 2.0;
  Inputs in;
  in.q = {3.0, 4.0};
  in.k = {3.0, 4.0};
  in.v = {1.5};
  Outputs out = runOk(p, in);
  const double expected = 25.0 / (25.0 + 1e-6) * 1.5 * 2.0;
  EXPECT_NEAR(out.o[0], expected, 1e-14);
  // eps outside the sqrt would give 25 / (5 + 1e-6)^2 * 3: 1.2e-6 away.
  EXPECT_GT(std::fabs(out.o[0] - 25.0 / ((5.0 + 1e-6) * (5.0 + 1e-6)) * 3.0),
            1e-7);
  EXPECT_NEAR(out.finalState[0], 3.0 / std::sqrt(25.0 + 1e-6) * 1.5, 1e-15);
}

// 7. Scalar gating functions, including their extreme arguments.
TEST(ReferenceTest, GatingFunctions) {
  EXPECT_DOUBLE_EQ(softplus(20.0), std::log1p(std::exp(20.0)));
  EXPECT_EQ(softplus(21.0), 21.0);
  EXPECT_EQ(softplus(kInf), kInf);
  EXPECT_EQ(softplus(-kInf), 0.0);
  EXPECT_NEAR(softplus(0.0), std::log(2.0), 1e-16);

  double tiny = fusedGate(-200.0, 100.0, 0.0);
  EXPECT_TRUE(std::isfinite(tiny));
  EXPECT_LE(tiny, 0.0);
  EXPECT_GT(tiny, -1e-30);
  // softplus underflows to 0 while exp(A_log) overflows: 0, not NaN.
  EXPECT_EQ(fusedGate(-1000.0, 1000.0, 0.0), 0.0);
  EXPECT_EQ(fusedGate(kInf, 0.0, 0.0), -kInf);
  // Above the softplus threshold g = -exp(A_log) * (a + dt_bias).
  EXPECT_DOUBLE_EQ(fusedGate(1.0, std::log(2.0), 24.0), -50.0);
  EXPECT_NEAR(fusedGate(0.5, 0.3, -0.2),
              -std::exp(0.3) * std::log1p(std::exp(0.3)), 1e-15);

  EXPECT_EQ(sigmoid(kInf), 1.0);
  EXPECT_EQ(sigmoid(-kInf), 0.0);
  EXPECT_EQ(sigmoid(0.0), 0.5);
  EXPECT_EQ(sigmoid(-800.0), 0.0);
  EXPECT_EQ(sigmoid(800.0), 1.0);
  EXPECT_NEAR(sigmoid(1.0), 1.0 / (1.0 + std::exp(-1.0)), 1e-16);
  EXPECT_NEAR(sigmoid(-1.0) + sigmoid(1.0), 1.0, 1e-16);
}

// Fused gating and beta logits equal log-space g = fusedGate(a, A_log[hv],
// dt_bias[hv]) with beta = sigmoid(b), per value head.
TEST(ReferenceTest, FusedGatingMatchesLogSpace) {
  const int64_t T = 2, HV = 2, K = 3, V = 2;
  Problem p;
  p.T = T;
  p.HV = HV;
  p.K = K;
  p.V = V;
  p.decay = Decay::FusedGating;
  p.beta = Beta::Logits;
  p.hasInitialState = true;
  Inputs in;
  in.q = pseudoRandom(T * K, 31, -1.0, 1.0);
  in.k = pseudoRandom(T * K, 32, -1.0, 1.0);
  in.v = pseudoRandom(T * HV * V, 33, -1.0, 1.0);
  in.a = pseudoRandom(T * HV, 34, -2.0, 2.0);
  in.A_log = {-0.5, 0.8};
  in.dt_bias = {0.3, -1.2};
  in.beta = pseudoRandom(T * HV, 35, -3.0, 3.0);
  in.initialState = pseudoRandom(HV * K * V, 36, -1.0, 1.0);
  Outputs fused = runOk(p, in);

  Problem logSpace = p;
  logSpace.decay = Decay::LogSpace;
  logSpace.beta = Beta::Given;
  Inputs explicitIn = in;
  explicitIn.a.clear();
  explicitIn.A_log.clear();
  explicitIn.dt_bias.clear();
  explicitIn.g.resize(T * HV);
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t hv = 0; hv < HV; ++hv) {
      int64_t i = t * HV + hv;
      explicitIn.g[i] = fusedGate(in.a[i], in.A_log[hv], in.dt_bias[hv]);
      explicitIn.beta[i] = sigmoid(in.beta[i]);
    }
  }
  Outputs expected = runOk(logSpace, explicitIn);
  EXPECT_EQ(fused.o, expected.o);
  EXPECT_EQ(fused.finalState, expected.finalState);

  // Control: swapping the per-head A_log changes the result.
  Inputs swapped = in;
  swapped.A_log = {0.8, -0.5};
  Outputs other = runOk(p, swapped);
  EXPECT_GT(maxAbsError(other.finalState, fused.finalState), 1e-3);
}

// 8. Size and shape validation names the offending input and leaves out alone.
TEST(ReferenceTest, SizeValidation) {
  Problem p;
  p.N = 2;
  p.T = 4;
  p.H = 2;
  p.HV = 4;
  p.K = 128;
  p.V = 32;
  p.decay = Decay::LogSpace;
  p.beta = Beta::Given;
  Inputs in;
  in.q.assign(2048, 0.1);
  in.k.assign(100, 0.1);
  in.v.assign(2 * 4 * 4 * 32, 0.1);
  in.g.assign(2 * 4 * 4, -0.1);
  in.beta.assign(2 * 4 * 4, 0.5);

  Outputs out;
  out.o = {42.0};
  out.finalState = {43.0};
  std::string err = run(p, in, out);
  EXPECT_EQ(err, "reference: 'k' has 100 elements, expected 2048");
  EXPECT_NE(err.find("'k'"), std::string::npos);
  EXPECT_EQ(out.o, std::vector<double>{42.0});
  EXPECT_EQ(out.finalState, std::vector<double>{43.0});

  in.k.assign(2048, 0.1);
  in.g.clear(); // LogSpace needs g
  err = run(p, in, out);
  EXPECT_NE(err.find("'g'"), std::string::npos) << err;

  in.g.assign(2 * 4 * 4, -0.1);
  p.hasInitialState = true; // ... and now initialState
  err = run(p, in, out);
  EXPECT_NE(err.find("'initialState'"), std::string::npos) << err;
  EXPECT_EQ(out.o, std::vector<double>{42.0});

  p.hasInitialState = false;
  p.decay = Decay::FusedGating;
  in.a.assign(2 * 4 * 4, 0.0);
  in.A_log.assign(4, 0.0);
  in.dt_bias.assign(3, 0.0);
  err = run(p, in, out);
  EXPECT_NE(err.find("'dt_bias'"), std::string::npos) << err;

  in.dt_bias.assign(4, 0.0);
  p.HV = 3;
  p.H = 2;
  EXPECT_NE(run(p, in, out), "");
  p.HV = 4;
  p.K = 0;
  EXPECT_NE(run(p, in, out), "");
  p.K = int64_t(1) << 62; // products would overflow int64_t
  EXPECT_NE(run(p, in, out), "");
  p.K = 128;

  EXPECT_EQ(run(p, in, out), "");
  EXPECT_EQ(out.o.size(), size_t(2 * 4 * 4 * 32));
  EXPECT_EQ(out.finalState.size(), size_t(2 * 4 * 128 * 32));
}

// 9. Error metrics: known values, size mismatch, NaN never passes.
TEST(ReferenceTest, ErrorMetrics) {
  std::vector<double> ref = {1.0, 2.0, 5.0};
  std::vector<double> got = {1.0, 2.0, 3.0};
  EXPECT_EQ(maxAbsError(got, ref), 2.0);
  EXPECT_DOUBLE_EQ(rmsRelativeError(got, ref), 2.0 / std::sqrt(30.0));
  EXPECT_EQ(maxAbsError(ref, ref), 0.0);
  EXPECT_EQ(rmsRelativeError(ref, ref), 0.0);
  std::vector<double> zeros(3, 0.0);
  EXPECT_EQ(rmsRelativeError(zeros, zeros), 0.0);
  EXPECT_EQ(rmsRelativeError(ref, zeros), kInf);
  EXPECT_EQ(maxAbsError({}, {}), 0.0);

  EXPECT_EQ(maxAbsError(ref, {1.0, 2.0}), kInf);
  EXPECT_EQ(rmsRelativeError(ref, {1.0, 2.0}), kInf);

  // NaN first, last, in either argument.
  for (size_t pos : {size_t(0), size_t(2)}) {
    std::vector<double> nanGot = got;
    nanGot[pos] = kNaN;
    EXPECT_FALSE(std::isfinite(maxAbsError(nanGot, ref))) << pos;
    EXPECT_FALSE(std::isfinite(rmsRelativeError(nanGot, ref))) << pos;
    EXPECT_FALSE(std::isfinite(maxAbsError(ref, nanGot))) << pos;
    EXPECT_FALSE(std::isfinite(rmsRelativeError(ref, nanGot))) << pos;
  }
  std::vector<double> infGot = got;
  infGot[1] = kInf;
  EXPECT_FALSE(std::isfinite(maxAbsError(infGot, ref)));
  EXPECT_FALSE(std::isfinite(rmsRelativeError(infGot, ref)));

  // A NaN input of the recurrence reaches the error.
  Problem p = oneStepProblem();
  Inputs in = oneStepInputs();
  in.v[1] = kNaN;
  Outputs out = runOk(p, in);
  EXPECT_FALSE(std::isfinite(maxAbsError(out.o, kOneStepOutput)));
  EXPECT_FALSE(std::isfinite(rmsRelativeError(out.o, kOneStepOutput)));
  EXPECT_FALSE(std::isfinite(maxAbsError(out.finalState, kOneStepState)));
}

namespace {
// A pool of 6 slots for 4 sequences with indices [3, -1, 0, -1]: slots 0 and
// 3 are the states of rows 2 and 0, the other slots keep their values, and
// the padding rows output zeros (SGLang's contract, docs/math.md §2).
TEST(ReferenceTest, PoolAddressingAndPadding) {
  using namespace gdn::reference;
  Problem pool;
  pool.N = 4, pool.T = 2, pool.H = 1, pool.HV = 2, pool.K = 3, pool.V = 2;
  pool.decay = Decay::LogSpace;
  pool.beta = Beta::Given;
  pool.scale = 0.5;
  pool.layout = StateLayout::VK;
  pool.hasInitialState = true;
  pool.slots = 6;
  Inputs in;
  auto fill = [](size_t n, double base) {
    std::vector<double> x(n);
    for (size_t i = 0; i < n; ++i)
      x[i] = base + 0.1 * double(i % 7) - 0.05 * double(i % 3);
    return x;
  };
  in.q = fill(4 * 2 * 3, 0.3), in.k = fill(4 * 2 * 3, -0.2);
  in.v = fill(4 * 2 * 2 * 2, 0.1), in.g = fill(4 * 2 * 2, -0.4);
  in.beta = fill(4 * 2 * 2, 0.2);
  in.initialState = fill(6 * 2 * 3 * 2, 0.7);
  in.stateIndices = {3, -1, 0, -1};
  Outputs out;
  ASSERT_EQ(run(pool, in, out), "");
  const int64_t slot = 2 * 3 * 2; // elements of one slot
  ASSERT_EQ(out.finalState.size(), size_t(6 * slot));
  for (int64_t s : {1, 2, 4, 5})
    for (int64_t i = 0; i < slot; ++i)
      EXPECT_EQ(out.finalState[s * slot + i], in.initialState[s * slot + i]);
  for (int64_t n : {1, 3})
    for (int64_t i = 0; i < 2 * 2 * 2; ++i)
      EXPECT_EQ(out.o[n * 8 + i], 0.0);

  // Row 0 equals a one-sequence problem started from slot 3.
  Problem one = pool;
  one.N = 1, one.slots = 0;
  Inputs in0;
  in0.q.assign(in.q.begin(), in.q.begin() + 6);
  in0.k.assign(in.k.begin(), in.k.begin() + 6);
  in0.v.assign(in.v.begin(), in.v.begin() + 8);
  in0.g.assign(in.g.begin(), in.g.begin() + 4);
  in0.beta.assign(in.beta.begin(), in.beta.begin() + 4);
  in0.initialState.assign(in.initialState.begin() + 3 * slot,
                          in.initialState.begin() + 4 * slot);
  Outputs out0;
  ASSERT_EQ(run(one, in0, out0), "");
  for (int64_t i = 0; i < slot; ++i)
    EXPECT_DOUBLE_EQ(out.finalState[3 * slot + i], out0.finalState[i]);
  for (int64_t i = 0; i < 8; ++i)
    EXPECT_DOUBLE_EQ(out.o[i], out0.o[i]);
  // A wrong slot makes it differ (negative control).
  EXPECT_NE(out.finalState[3 * slot], out.finalState[0]);

  in.stateIndices = {3, -1, 6, -1};
  EXPECT_NE(run(pool, in, out).find("out of range"), std::string::npos);
}
} // namespace

namespace {
// allow_neg_eigval doubles sigmoid(b): the same as given beta = 2 sigmoid(b).
TEST(ReferenceTest, NegativeEigenvaluesDoubleBeta) {
  using namespace gdn::reference;
  Problem p;
  p.N = 1, p.T = 2, p.H = 1, p.HV = 1, p.K = 2, p.V = 2;
  p.beta = Beta::Logits;
  p.allowNegEigval = true;
  p.scale = 1.0;
  Inputs in;
  in.q = {0.3, -0.1, 0.2, 0.5}, in.k = {0.6, 0.8, -0.8, 0.6};
  in.v = {1.0, -2.0, 0.5, 0.25}, in.beta = {0.4, -1.2};
  Outputs neg, given;
  ASSERT_EQ(run(p, in, neg), "");
  Problem q = p;
  q.beta = Beta::Given, q.allowNegEigval = false;
  Inputs in2 = in;
  for (double &b : in2.beta)
    b = 2.0 * sigmoid(b);
  ASSERT_EQ(run(q, in2, given), "");
  EXPECT_EQ(neg.o, given.o);
  EXPECT_EQ(neg.finalState, given.finalState);
  p.allowNegEigval = false; // negative control
  Outputs plain;
  ASSERT_EQ(run(p, in, plain), "");
  EXPECT_NE(plain.o, neg.o);
}
} // namespace

namespace {
// KDA: a per-key decay scales each key row of S by its own exp(g[k]) before
// the delta. K = 2, V = 1, S0 = (2, 4), k = (1, 0), v = 1, beta = 1:
// exp(g) S0 = (1, 1) with g = (log 1/2, log 1/4); u = 1 - 1 = 0, so S stays
// (1, 1) and o = S^T q = 1 + 1 with q = (1, 1).
TEST(ReferenceTest, PerKeyDecayScalesEachKeyRow) {
  Problem p;
  p.K = 2, p.V = 1, p.scale = 1.0;
  p.decay = Decay::LogSpace;
  p.perKeyDecay = true;
  p.hasInitialState = true;
  Inputs in;
  in.q = {1.0, 1.0}, in.k = {1.0, 0.0}, in.v = {1.0};
  in.g = {std::log(0.5), std::log(0.25)};
  in.initialState = {2.0, 4.0};
  Outputs out = runOk(p, in);
  EXPECT_NEAR(out.finalState[0], 1.0, 1e-15);
  EXPECT_NEAR(out.finalState[1], 1.0, 1e-15);
  EXPECT_NEAR(out.o[0], 2.0, 1e-15);
  // In the vk storage the same decay scales key columns: S0 [V=1][K=2] is
  // the same two numbers, and the result is too.
  p.layout = StateLayout::VK;
  Outputs vk = runOk(p, in);
  EXPECT_EQ(vk.finalState, out.finalState);
  // Negative control: one decay (the first) for both rows misses row 1.
  Problem head = p;
  head.perKeyDecay = false;
  Inputs in1 = in;
  in1.g = {std::log(0.5)};
  EXPECT_GT(maxAbsError(runOk(head, in1).finalState, out.finalState), 0.5);
}

// Per-key fused gating reads a[.., k] and dt_bias[hv * K + k]; with equal
// entries along K it equals the per-head gating, and per-key log-space g of
// the same fusedGate values equals it too.
TEST(ReferenceTest, PerKeyFusedGatingMatchesPerHeadAndLogSpace) {
  const int64_t N = 1, T = 3, H = 1, HV = 2, K = 4, V = 3;
  Problem p;
  p.N = N, p.T = T, p.H = H, p.HV = HV, p.K = K, p.V = V, p.scale = 0.5;
  p.decay = Decay::FusedGating;
  p.beta = Beta::Logits;
  p.hasInitialState = true;
  Inputs in;
  in.q = pseudoRandom(N * T * H * K, 1, -1, 1);
  in.k = pseudoRandom(N * T * H * K, 2, -1, 1);
  in.v = pseudoRandom(N * T * HV * V, 3, -1, 1);
  in.beta = pseudoRandom(N * T * HV, 4, -2, 2);
  in.A_log = {0.3, -0.2};
  in.initialState = pseudoRandom(N * HV * K * V, 5, -1, 1);
  std::vector<double> aHead = pseudoRandom(N * T * HV, 6, -3, 3);
  std::vector<double> biasHead = {0.4, -0.7};
  in.a = aHead, in.dt_bias = biasHead;
  Outputs head = runOk(p, in);

  Problem pk = p;
  pk.perKeyDecay = true;
  Inputs ink = in;
  ink.a.clear(), ink.dt_bias.clear();
  for (double x : aHead)
    ink.a.insert(ink.a.end(), K, x);
  for (double x : biasHead)
    ink.dt_bias.insert(ink.dt_bias.end(), K, x);
  Outputs perKey = runOk(pk, ink);
  EXPECT_EQ(perKey.o, head.o);
  EXPECT_EQ(perKey.finalState, head.finalState);

  // Distinct channels: per-key gating equals per-key log-space g computed
  // with fusedGate, element by element.
  ink.a = pseudoRandom(N * T * HV * K, 7, -3, 3);
  ink.dt_bias = pseudoRandom(HV * K, 8, -1, 1);
  Outputs fused = runOk(pk, ink);
  Problem pg = pk;
  pg.decay = Decay::LogSpace;
  Inputs ing = ink;
  ing.g.resize(ink.a.size());
  for (size_t i = 0; i < ink.a.size(); ++i) {
    int64_t hv = (i / K) % HV, kk = i % K;
    ing.g[i] = fusedGate(ink.a[i], in.A_log[hv], ink.dt_bias[hv * K + kk]);
  }
  EXPECT_EQ(runOk(pg, ing).o, fused.o);
  EXPECT_GT(maxAbsError(fused.o, head.o), 1e-3); // the channels matter

  // Sizes follow the flag: a per-head a is refused for a per-key problem.
  Outputs out;
  EXPECT_NE(run(pk, in, out).find("'a'"), std::string::npos);
  ink.dt_bias.resize(HV);
  EXPECT_NE(run(pk, ink, out).find("'dt_bias'"), std::string::npos);
}

// beta per value channel: u[v] = beta[v] (v[v] - (S^T k)[v]); from a zero
// state S = k (beta * v)^T column by column.
TEST(ReferenceTest, PerChannelBetaScalesEachValueColumn) {
  Problem p = oneStepProblem(); // K = 3, V = 2, scale 0.5
  p.perChannelBeta = true;
  Inputs in = oneStepInputs(); // k = (0.5, -1, 2), v = (3, -2)
  in.beta = {0.5, 0.25};
  Outputs out = runOk(p, in);
  // Column 0 as in kOneStepState (beta 0.5); column 1 half of it.
  std::vector<double> expected = {0.75, -0.25, -1.5, 0.5, 3.0, -1.0};
  EXPECT_EQ(out.finalState, expected);
  EXPECT_EQ(out.o[0], kOneStepOutput[0]);
  EXPECT_EQ(out.o[1], kOneStepOutput[1] / 2);
  // Logits per channel: sigmoid of each.
  p.beta = Beta::Logits;
  in.beta = {0.0, 100.0}; // beta = (0.5, 1)
  Outputs logits = runOk(p, in);
  EXPECT_EQ(logits.finalState[0], 0.75);
  EXPECT_NEAR(logits.finalState[1], -2.0 * 0.5, 1e-15);
  Outputs bad;
  in.beta = {0.5};
  EXPECT_NE(run(p, in, bad).find("'beta'"), std::string::npos);
}
} // namespace
