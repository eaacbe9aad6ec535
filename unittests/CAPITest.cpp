//===- CAPITest.cpp - tests of the C API (gdn-c/GDN.h) --------------------===//
#include "gdn-c/GDN.h"
#include "gdn/Reference/Reference.h"
#include "gdn/Runtime/CudaDriver.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace {
namespace ref = ::gdn::reference;

gdnRecurrentDesc smallDesc(int64_t T = 3, int64_t V = 8) {
  gdnRecurrentDesc d;
  gdnRecurrentDescInit(&d);
  d.N = 2, d.T = T, d.H = 1, d.HV = 2, d.K = 32, d.V = V;
  d.input_dtype = GDN_DTYPE_F32;
  d.gate_dtype = GDN_DTYPE_F32;
  d.beta_dtype = GDN_DTYPE_F32;
  d.decay = GDN_DECAY_FUSED_GATING;
  d.beta = GDN_BETA_LOGITS;
  d.qk_l2norm = 1;
  d.layout = GDN_LAYOUT_VK;
  d.has_initial_state = d.has_final_state = d.state_in_place = 1;
  return d;
}

struct Compiler {
  Compiler() { EXPECT_EQ(gdnCompilerCreate(&c), GDN_OK); }
  ~Compiler() { gdnCompilerDestroy(c); }
  gdnCompiler c = nullptr;
};

/// Random inputs for smallDesc(T, V) (argument order of the kernel) and the
/// fp64 reference outputs for them.
struct SmallProblem {
  std::vector<std::vector<float>> bufs;
  ref::Outputs out;
  std::vector<double> wide(int i) const {
    return std::vector<double>(bufs[i].begin(), bufs[i].end());
  }
  /// perKey / perChannel: KDA's per-key decay and a per-channel beta (the
  /// desc's per_key_decay / per_channel_beta).
  explicit SmallProblem(gdnKernel k, bool perKey = false,
                        bool perChannel = false, int64_t T = 3, int64_t V = 8) {
    std::mt19937 rng(1);
    std::normal_distribution<float> normal;
    bufs.resize(9);
    for (int i = 0; i < 9; ++i) {
      bufs[i].resize(gdnKernelArgumentBytes(k, i) / 4);
      for (float &x : bufs[i])
        x = normal(rng);
    }
    for (float &x : bufs[4]) // A_log = log U(1, 16)
      x = std::log(1.0f + 15.0f * std::abs(normal(rng)) / 3.0f);
    for (float &x : bufs[8]) // o: poisoned
      x = std::nanf("");
    ref::Problem p;
    p.N = 2, p.T = T, p.H = 1, p.HV = 2, p.K = 32, p.V = V;
    p.decay = ref::Decay::FusedGating;
    p.beta = ref::Beta::Logits;
    p.perKeyDecay = perKey;
    p.perChannelBeta = perChannel;
    p.qkL2Norm = true;
    p.scale = 1.0 / std::sqrt(32.0);
    p.layout = ref::StateLayout::VK;
    p.hasInitialState = true;
    ref::Inputs in;
    in.q = wide(0), in.k = wide(1), in.v = wide(2), in.a = wide(3);
    in.A_log = wide(4), in.dt_bias = wide(5), in.beta = wide(6);
    in.initialState = wide(7);
    EXPECT_EQ(ref::run(p, in, out), "");
  }
};

/// The f32 o and final state within `tolerance` of the fp64 reference
/// (RMS-relative, docs/math.md §3).
void expectMatchesReference(SmallProblem &prob, double tolerance = 1e-5) {
  EXPECT_LT(ref::rmsRelativeError(prob.wide(8), prob.out.o), tolerance);
  EXPECT_LT(ref::rmsRelativeError(prob.wide(7), prob.out.finalState),
            tolerance);
}

TEST(CAPITest, DescribedKernelRunsOnHostAndMatchesReference) {
  Compiler comp;
  gdnRecurrentDesc d = smallDesc();
  gdnKernel k = nullptr;
  ASSERT_EQ(gdnCompileDesc(comp.c, &d, GDN_TARGET_CPU, nullptr, &k), GDN_OK)
      << gdnGetLastError();
  const char *expected[] = {"q", "k", "v", "a", "A_log", "dt_bias", "b", "state", "o"};
  ASSERT_EQ(gdnKernelNumArguments(k), 9);
  for (int i = 0; i < 9; ++i)
    EXPECT_STREQ(gdnKernelArgumentName(k, i), expected[i]);
  EXPECT_EQ(gdnKernelArgumentBytes(k, 0), 2 * 3 * 1 * 32 * 4);
  EXPECT_EQ(gdnKernelArgumentBytes(k, 7), 2 * 2 * 8 * 32 * 4);
  EXPECT_EQ(gdnKernelArgumentName(k, 9), nullptr);
  EXPECT_EQ(gdnKernelPTX(k), nullptr);
  EXPECT_EQ(gdnKernelNumLaunches(k), -1); // a CPU kernel launches nothing
  EXPECT_EQ(gdnKernelLaunchName(k, 0), nullptr);
  // Element type and shape of each argument, as compiled.
  EXPECT_EQ(gdnKernelArgumentDType(k, 0), GDN_DTYPE_F32);
  ASSERT_EQ(gdnKernelArgumentRank(k, 7), 4); // state [N, HV, V, K] (vk)
  const int64_t state[] = {2, 2, 8, 32};
  for (int dim = 0; dim < 4; ++dim)
    EXPECT_EQ(gdnKernelArgumentDim(k, 7, dim), state[dim]);
  EXPECT_EQ(gdnKernelArgumentDim(k, 7, 4), -1);
  EXPECT_EQ(gdnKernelArgumentDType(k, 9), -1);
  EXPECT_EQ(gdnKernelArgumentRank(k, -1), -1);

  SmallProblem prob(k);
  std::vector<void *> args;
  for (auto &b : prob.bufs)
    args.push_back(b.data());
  ASSERT_EQ(gdnKernelRunHost(k, args.data(), 9), GDN_OK) << gdnGetLastError();
  expectMatchesReference(prob);
}

// KDA through the desc: a [N, T, HV, K], dt_bias [HV * K], b [N, T, HV, V].
TEST(CAPITest, DescribedKDAKernelRunsOnHostAndMatchesReference) {
  ::setenv("GDN_CACHE_DIR", "off", 1); // the PTX below stays in memory
  Compiler comp;
  gdnRecurrentDesc d = smallDesc();
  d.per_key_decay = d.per_channel_beta = 1;
  gdnKernel k = nullptr;
  ASSERT_EQ(gdnCompileDesc(comp.c, &d, GDN_TARGET_CPU, nullptr, &k), GDN_OK)
      << gdnGetLastError();
  ASSERT_EQ(gdnKernelNumArguments(k), 9);
  EXPECT_STREQ(gdnKernelArgumentName(k, 3), "a");
  EXPECT_EQ(gdnKernelArgumentBytes(k, 3), 2 * 3 * 2 * 32 * 4);
  EXPECT_EQ(gdnKernelArgumentBytes(k, 4), 2 * 4);      // A_log [HV]
  EXPECT_EQ(gdnKernelArgumentBytes(k, 5), 2 * 32 * 4); // dt_bias [HV * K]
  EXPECT_EQ(gdnKernelArgumentBytes(k, 6), 2 * 3 * 2 * 8 * 4);

  SmallProblem prob(k, /*perKey=*/true, /*perChannel=*/true);
  std::vector<void *> args;
  for (auto &b : prob.bufs)
    args.push_back(b.data());
  ASSERT_EQ(gdnKernelRunHost(k, args.data(), 9), GDN_OK) << gdnGetLastError();
  expectMatchesReference(prob);

  // The same desc compiles for CUDA (PTX, no GPU needed).
  gdnKernel g = nullptr;
  ASSERT_EQ(gdnCompileDesc(comp.c, &d, GDN_TARGET_CUDA, "sm_90a", &g), GDN_OK)
      << gdnGetLastError();
  EXPECT_NE(std::string(gdnKernelPTX(g)).find(".entry"), std::string::npos);

  // Per-channel flags need the gate they describe.
  gdnRecurrentDesc bad = smallDesc();
  bad.decay = GDN_DECAY_NONE;
  bad.per_key_decay = 1;
  EXPECT_EQ(gdnCompileDesc(comp.c, &bad, GDN_TARGET_CPU, nullptr, &k),
            GDN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gdnGetLastError()).find("per_key_decay"),
            std::string::npos);
  bad = smallDesc();
  bad.beta = GDN_BETA_ONE;
  bad.per_channel_beta = 1;
  EXPECT_EQ(gdnCompileDesc(comp.c, &bad, GDN_TARGET_CPU, nullptr, &k),
            GDN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gdnGetLastError()).find("per_channel_beta"),
            std::string::npos);
  ::unsetenv("GDN_CACHE_DIR");
}

TEST(CAPITest, WarmCompileReturnsTheCachedKernel) {
  Compiler comp;
  gdnRecurrentDesc d = smallDesc();
  gdnKernel a = nullptr, b = nullptr;
  ASSERT_EQ(gdnCompileDesc(comp.c, &d, GDN_TARGET_CPU, nullptr, &a), GDN_OK);
  ASSERT_EQ(gdnCompileDesc(comp.c, &d, GDN_TARGET_CPU, nullptr, &b), GDN_OK);
  EXPECT_EQ(a, b);
  d.K = 64;
  ASSERT_EQ(gdnCompileDesc(comp.c, &d, GDN_TARGET_CPU, nullptr, &b), GDN_OK);
  EXPECT_NE(a, b);
}

TEST(CAPITest, CudaKernelCompilesToPTXWithoutAGPUAndUsesTheDiskCache) {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("gdn-capi-test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  ::setenv("GDN_CACHE_DIR", dir.c_str(), 1);
  std::string ptx;
  {
    Compiler comp;
    gdnRecurrentDesc d = smallDesc();
    gdnKernel k = nullptr;
    ASSERT_EQ(gdnCompileDesc(comp.c, &d, GDN_TARGET_CUDA, "sm_90a", &k), GDN_OK)
        << gdnGetLastError();
    ASSERT_NE(gdnKernelPTX(k), nullptr);
    ptx = gdnKernelPTX(k);
    EXPECT_NE(ptx.find(".target sm_90a"), std::string::npos);
    // One launch; its entry is in its module's PTX, which gdnKernelPTX is.
    ASSERT_EQ(gdnKernelNumLaunches(k), 1);
    ASSERT_NE(gdnKernelLaunchName(k, 0), nullptr);
    EXPECT_NE(ptx.find(std::string(".entry ") + gdnKernelLaunchName(k, 0)),
              std::string::npos);
    EXPECT_STREQ(gdnKernelLaunchPTX(k, 0), gdnKernelPTX(k));
    EXPECT_EQ(gdnKernelLaunchName(k, 1), nullptr);
    EXPECT_EQ(gdnKernelLaunchPTX(k, -1), nullptr);
    // Host runs of a CUDA kernel are refused with a message.
    void *none[9] = {};
    for (void *&p : none)
      p = &ptx;
    EXPECT_EQ(gdnKernelRunHost(k, none, 9), GDN_ERROR_UNSUPPORTED);
    EXPECT_NE(std::string(gdnGetLastError()).find("gdnKernelLaunch"), std::string::npos);
  }
  int files = 0;
  for (auto &e : std::filesystem::directory_iterator(dir))
    files += e.path().extension() == ".json";
  EXPECT_EQ(files, 1);
  {
    // A new compiler (a new process, as far as the cache knows) reads it back.
    Compiler comp;
    gdnRecurrentDesc d = smallDesc();
    gdnKernel k = nullptr;
    ASSERT_EQ(gdnCompileDesc(comp.c, &d, GDN_TARGET_CUDA, "sm_90a", &k), GDN_OK);
    EXPECT_EQ(ptx, gdnKernelPTX(k));
  }
  // A kernel for programmatic dependent launch is another entry, and the
  // entry records how to launch it.
  auto entries = [&](const char *text) {
    int n = 0;
    for (auto &e : std::filesystem::directory_iterator(dir)) {
      std::ifstream in(e.path());
      std::string json((std::istreambuf_iterator<char>(in)), {});
      n += json.find(text) != std::string::npos;
    }
    return n;
  };
  {
    Compiler comp;
    gdnRecurrentDesc d = smallDesc();
    d.schedule = "#gdn.schedule<launch = programmatic>";
    gdnKernel k = nullptr;
    ASSERT_EQ(gdnCompileDesc(comp.c, &d, GDN_TARGET_CUDA, "sm_90a", &k), GDN_OK)
        << gdnGetLastError();
    EXPECT_NE(std::string(gdnKernelPTX(k)).find("griddepcontrol.wait;"),
              std::string::npos);
    EXPECT_EQ(ptx.find("griddepcontrol"), std::string::npos);
  }
  // The pin `programmatic` is stored as the point the schedule chose.
  EXPECT_EQ(entries("\"launch\":\"programmatic_"), 1);
  EXPECT_EQ(entries("\"launch\":\"programmatic\""), 0);
  EXPECT_EQ(entries("\"launch\":\"ordinary\""), 1);
  ::unsetenv("GDN_CACHE_DIR");
  std::filesystem::remove_all(dir);
}

TEST(CAPITest, BadInputGivesAnErrorCodeAndAMessage) {
  Compiler comp;
  gdnKernel k = nullptr;
  EXPECT_EQ(gdnCompilerCreate(nullptr), GDN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gdnCompileText(comp.c, nullptr, nullptr, GDN_TARGET_CPU, nullptr, &k),
            GDN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gdnCompileText(comp.c, "this is not MLIR", nullptr, GDN_TARGET_CPU,
                           nullptr, &k),
            GDN_ERROR_COMPILE);
  EXPECT_NE(std::string(gdnGetLastError()).find("gdn-input:1:1"), std::string::npos)
      << gdnGetLastError();
  const char *badShape =
      "func.func @f(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x64xf32>, "
      "%v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {\n"
      "  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x64xf32>) "
      "v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>)\n  return\n}\n";
  EXPECT_EQ(gdnCompileText(comp.c, badShape, nullptr, GDN_TARGET_CPU, nullptr, &k),
            GDN_ERROR_COMPILE);
  EXPECT_NE(std::string(gdnGetLastError()).find("operand 'k' expects shape"),
            std::string::npos);
  gdnRecurrentDesc d = smallDesc();
  d.K = 34; // verifies, but no GPU mapping leaves whole keys a lane at V = 8
  EXPECT_EQ(gdnCompileDesc(comp.c, &d, GDN_TARGET_CUDA, nullptr, &k), GDN_ERROR_COMPILE);
  EXPECT_NE(std::string(gdnGetLastError()).find("K = 34"), std::string::npos);
  d = smallDesc();
  d.HV = 3; d.H = 2;
  EXPECT_EQ(gdnCompileDesc(comp.c, &d, GDN_TARGET_CPU, nullptr, &k), GDN_ERROR_COMPILE);
  d = smallDesc();
  d.input_dtype = static_cast<gdnDType>(7);
  EXPECT_EQ(gdnCompileDesc(comp.c, &d, GDN_TARGET_CPU, nullptr, &k),
            GDN_ERROR_INVALID_ARGUMENT);
  std::string deep = std::string(30000, '[') + std::string(30000, ']');
  // Schedules that are not one (out of range, an unknown parameter or enum
  // case, text past the attribute into the op's, nesting too deep to
  // parse), and a producer warp the
  // kernel cannot take (its bulk copies need staged tokens): errors with
  // messages, not kernels.
  for (const char *bad :
       {"#gdn.schedule<solve = three>", "#gdn.schedule<reductions = 3>",
        "#gdn.schedule<producer_stages = -2>",
        "#gdn.schedule<consumer_registers = -8>",
        "#gdn.schedule<rows_per_warp = 2>", "{rows_per_warp = 2 : i64}",
        "#gdn.schedule<warps = 2>} {x", "#gdn.layout<vk>",
        // nested past the parser's stack (ParseLimits.h)
        deep.c_str()}) {
    d = smallDesc();
    d.schedule = bad;
    EXPECT_EQ(gdnCompileDesc(comp.c, &d, GDN_TARGET_CUDA, nullptr, &k),
              GDN_ERROR_INVALID_ARGUMENT)
        << bad;
    EXPECT_NE(std::string(gdnGetLastError()).find("gdnCompileDesc: schedule"),
              std::string::npos)
        << gdnGetLastError();
  }
  d = smallDesc();
  d.schedule = "#gdn.schedule<producer_stages = 2, staged_tokens = 0>";
  EXPECT_EQ(gdnCompileDesc(comp.c, &d, GDN_TARGET_CUDA, nullptr, &k), GDN_ERROR_COMPILE);
  EXPECT_NE(std::string(gdnGetLastError()).find("needs staged tokens"),
            std::string::npos)
      << gdnGetLastError();
  // The error points into the module the description built, not at an
  // unknown location.
  EXPECT_NE(std::string(gdnGetLastError()).find("gdnCompileDesc:"),
            std::string::npos)
      << gdnGetLastError();
  EXPECT_EQ(std::string(gdnGetLastError()).find("<unknown>"), std::string::npos)
      << gdnGetLastError();
  d = smallDesc();
  ASSERT_EQ(gdnCompileDesc(comp.c, &d, GDN_TARGET_CPU, nullptr, &k), GDN_OK);
  std::vector<float> buf(4096);
  void *args[9];
  for (void *&p : args)
    p = buf.data();
  EXPECT_EQ(gdnKernelRunHost(k, args, 8), GDN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gdnGetLastError()).find("expected 9 arguments, got 8"),
            std::string::npos);
  args[3] = nullptr;
  EXPECT_EQ(gdnKernelRunHost(k, args, 9), GDN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gdnGetLastError()).find("('a') is NULL"), std::string::npos);
  args[3] = buf.data();
  EXPECT_EQ(gdnKernelLaunch(k, args, 9, nullptr), GDN_ERROR_UNSUPPORTED);
}

/// Runs `k` on device copies of `prob`'s inputs through gdnKernelLaunch and
/// compares o and the final state with the reference (within `tolerance`).
void runAndCompare(::gdn::runtime::CudaDriver &drv, gdnKernel k,
                   SmallProblem prob, double tolerance = 1e-5) {
  std::vector<::gdn::runtime::CUdeviceptr> dev(9);
  std::vector<void *> args(9);
  for (int i = 0; i < 9; ++i) {
    size_t bytes = prob.bufs[i].size() * 4;
    ASSERT_TRUE(drv.alloc(bytes, dev[i]).ok);
    ASSERT_TRUE(drv.copyToDevice(dev[i], prob.bufs[i].data(), bytes).ok);
    args[i] = reinterpret_cast<void *>(dev[i]);
  }
  ASSERT_EQ(gdnKernelLaunch(k, args.data(), 9, nullptr), GDN_OK)
      << gdnGetLastError();
  ASSERT_TRUE(drv.synchronize(nullptr).ok);
  for (int i : {7, 8})
    ASSERT_TRUE(
        drv.copyToHost(prob.bufs[i].data(), dev[i], prob.bufs[i].size() * 4)
            .ok);
  for (auto p : dev)
    drv.free(p);
  expectMatchesReference(prob, tolerance);
}

/// With a GPU, runAndCompare of `k` on `makeProblem()`; without one, the
/// launch fails cleanly with GDN_ERROR_NO_DEVICE naming CUDA (the pointers
/// are never used).
template <typename MakeProblem>
void runOnDeviceOrExpectNone(gdnKernel k, MakeProblem makeProblem,
                             double tolerance = 1e-5) {
  std::unique_ptr<::gdn::runtime::CudaDriver> drv;
  if (::gdn::runtime::CudaDriver::open(0, drv)) {
    runAndCompare(*drv, k, makeProblem(), tolerance);
    return;
  }
  alignas(16) static float buf[4096];
  void *args[9];
  for (void *&p : args)
    p = buf;
  EXPECT_EQ(gdnKernelLaunch(k, args, 9, nullptr), GDN_ERROR_NO_DEVICE);
  EXPECT_NE(std::string(gdnGetLastError()).find("CUDA"), std::string::npos);
}

class LaunchTest : public ::testing::TestWithParam<int> {};

// Plain launches (cuLaunchKernel) and programmatic dependent launches
// (cuLaunchKernelEx, griddepcontrol in the kernel) give the same results.
TEST_P(LaunchTest, OnTheGPUOrAClearErrorWithoutOne) {
  Compiler comp;
  gdnRecurrentDesc d = smallDesc();
  // 0: ordinary; 1, 2, 3: programmatic (the cost model's point, at the
  // start, after the recurrence).
  const char *launches[] = {"ordinary", "programmatic", "programmatic_at_start",
                            "programmatic_after_recurrence"};
  std::string schedule =
      std::string("#gdn.schedule<launch = ") + launches[GetParam()] + ">";
  d.schedule = schedule.c_str();
  gdnKernel k = nullptr;
  ASSERT_EQ(gdnCompileDesc(comp.c, &d, GDN_TARGET_CUDA, nullptr, &k), GDN_OK);
  runOnDeviceOrExpectNone(k, [&] { return SmallProblem(k); });
}
INSTANTIATE_TEST_SUITE_P(CAPITest, LaunchTest, ::testing::Values(0, 2, 3));

// solve = chunk_parallel: two launches over a workspace that
// gdnKernelLaunch allocates and frees on the stream; o and the state within
// 1e-5 of the reference with 3xTF32 products, 2.5e-3 with one tf32
// product, the cost model's precision here (docs/math.md §3; the H200
// measured 4.0e-4 for this o).
TEST(CAPITest, ChunkParallelLaunchesTwoKernelsOverAWorkspace) {
  for (auto [schedule, tolerance] :
       {std::pair{"#gdn.schedule<solve = chunk_parallel, precision = tf32x3>",
                  1e-5},
        std::pair{"#gdn.schedule<solve = chunk_parallel>", 2.5e-3}}) {
    SCOPED_TRACE(schedule);
    Compiler comp;
    gdnRecurrentDesc d = smallDesc(/*T=*/40, /*V=*/32);
    d.schedule = schedule;
    gdnKernel k = nullptr;
    ASSERT_EQ(gdnCompileDesc(comp.c, &d, GDN_TARGET_CUDA, nullptr, &k), GDN_OK)
        << gdnGetLastError();
    EXPECT_EQ(gdnKernelNumLaunches(k), 2);
    runOnDeviceOrExpectNone(
        k, [&] { return SmallProblem(k, false, false, /*T=*/40, /*V=*/32); },
        tolerance);
  }
}

} // namespace
