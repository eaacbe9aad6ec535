//===- DefaultScheduleTest.cpp - the cost model's schedules compile -------===//
//
// Every gdn.recurrent the op supports with the head sizes of real models
// (K, V in {64, 128, 256}) must lower for the GPU under the default schedule:
// a choice of the cost model that its own checks reject (a producer warp on
// a chip without bulk copies, a ring over 48 KiB, a state tile past the
// register budget) is a compile error a user cannot work around without
// knowing the schedule. A seeded sample of the space (shapes, layouts,
// dtypes, gates, pools, verify, trees, varlen, KDA) through the C API, for
// sm_90a and sm_80; compiling needs no GPU.
//
//===----------------------------------------------------------------------===//
#include "gdn-c/GDN.h"

#include "gtest/gtest.h"

#include <random>
#include <string>

namespace {

template <typename T, size_t N>
T pick(std::mt19937 &rng, const T (&xs)[N]) {
  return xs[std::uniform_int_distribution<size_t>(0, N - 1)(rng)];
}

/// A valid description drawn from the space above.
gdnRecurrentDesc randomDesc(std::mt19937 &rng) {
  gdnRecurrentDesc d;
  gdnRecurrentDescInit(&d);
  const int64_t ns[] = {1, 2, 8, 64, 256};
  const int64_t ts[] = {1, 2, 4, 12, 16, 17};
  const int64_t heads[][2] = {{1, 1}, {2, 8}, {16, 32}, {16, 64}};
  const int64_t sizes[] = {64, 128, 256};
  const gdnDType inputs[] = {GDN_DTYPE_F32, GDN_DTYPE_BF16, GDN_DTYPE_F16};
  const gdnDType states[] = {GDN_DTYPE_F32, GDN_DTYPE_BF16};
  d.N = pick(rng, ns);
  d.T = pick(rng, ts);
  const auto &hh = heads[std::uniform_int_distribution<int>(0, 3)(rng)];
  d.H = hh[0], d.HV = hh[1];
  d.K = pick(rng, sizes);
  d.V = pick(rng, sizes);
  d.input_dtype = pick(rng, inputs);
  d.gate_dtype = d.beta_dtype = pick(rng, inputs);
  d.state_dtype = pick(rng, states);
  d.layout = rng() % 2 ? GDN_LAYOUT_VK : GDN_LAYOUT_KV;
  d.decay = static_cast<gdnDecay>(rng() % 3);
  d.beta = static_cast<gdnBeta>(rng() % 3);
  d.qk_l2norm = rng() % 2;
  d.per_key_decay = d.decay != GDN_DECAY_NONE && rng() % 4 == 0;
  d.per_channel_beta = d.beta != GDN_BETA_ONE && rng() % 4 == 0;
  d.has_initial_state = 1;
  if (rng() % 3 == 0) { // a pool, as serving engines hold the states
    d.num_slots = d.N + 4;
    d.state_index_bits = 32;
  }
  if (rng() % 4 == 0) { // varlen: N sequences packed into T tokens
    d.cu_seqlens_bits = 32;
    d.T = std::max<int64_t>(d.T, d.N);
  }
  if (rng() % 2 == 0) { // verify: the state after every token
    d.intermediate_rows = d.N;
    d.intermediate_steps = d.cu_seqlens_bits ? 8 : d.T;
    d.intermediate_dtype = pick(rng, states);
    d.parent_index_bits = rng() % 3 == 0 ? 32 : 0;
  } else {
    d.has_final_state = 1;
    d.state_in_place = d.num_slots > 0 || rng() % 2;
  }
  return d;
}

std::string describe(const gdnRecurrentDesc &d) {
  return "N=" + std::to_string(d.N) + " T=" + std::to_string(d.T) +
         " H=" + std::to_string(d.H) + " HV=" + std::to_string(d.HV) +
         " K=" + std::to_string(d.K) + " V=" + std::to_string(d.V) +
         " layout=" + std::to_string(d.layout) +
         " input=" + std::to_string(d.input_dtype) +
         " state=" + std::to_string(d.state_dtype) +
         " decay=" + std::to_string(d.decay) + " beta=" + std::to_string(d.beta) +
         " per_key=" + std::to_string(d.per_key_decay) +
         " per_channel=" + std::to_string(d.per_channel_beta) +
         " pool=" + std::to_string(d.num_slots) +
         " varlen=" + std::to_string(d.cu_seqlens_bits) +
         " verify=" + std::to_string(d.intermediate_rows) +
         " tree=" + std::to_string(d.parent_index_bits);
}

TEST(DefaultSchedule, EverySampledOpCompilesForTheGPU) {
  gdnCompiler c = nullptr;
  ASSERT_EQ(gdnCompilerCreate(&c), GDN_OK);
  std::mt19937 rng(2026);
  for (int i = 0; i < 60; ++i) {
    gdnRecurrentDesc d = randomDesc(rng);
    for (const char *chip : {"sm_90a", "sm_80"}) {
      gdnKernel k = nullptr;
      ASSERT_EQ(gdnCompileDesc(c, &d, GDN_TARGET_CUDA, chip, &k), GDN_OK)
          << chip << " " << describe(d) << ": " << gdnGetLastError();
      // sm_80 has neither bulk async copies nor mbarrier transactions: the
      // driver would reject such PTX at load time, long after compiling.
      if (std::string(chip) == "sm_80") {
        std::string ptx = gdnKernelPTX(k);
        EXPECT_EQ(ptx.find("cp.async.bulk"), std::string::npos) << describe(d);
        EXPECT_EQ(ptx.find("mbarrier"), std::string::npos) << describe(d);
      }
    }
  }
  gdnCompilerDestroy(c);
}

} // namespace
