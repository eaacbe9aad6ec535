//===- CAPIFaultsTest.cpp - the C API under bad input ---------------------===//
//
// An embedded library never kills its host: every bad handle, description,
// text or index table below is an error code with a message naming what is
// wrong, or (cu_seqlens) a run that stays inside the caller's buffers.
//
//===----------------------------------------------------------------------===//
#include "gdn-c/GDN.h"

#include "gtest/gtest.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <thread>
#include <vector>

namespace {

gdnRecurrentDesc tinyDesc() {
  gdnRecurrentDesc d;
  gdnRecurrentDescInit(&d);
  d.N = 1, d.T = 2, d.H = 1, d.HV = 1, d.K = 32, d.V = 8;
  d.input_dtype = d.gate_dtype = d.beta_dtype = GDN_DTYPE_F32;
  d.has_initial_state = d.has_final_state = 1;
  return d;
}

struct Compiler {
  Compiler() {
    ::setenv("GDN_CACHE_DIR", "off", 1);
    EXPECT_EQ(gdnCompilerCreate(&c), GDN_OK);
  }
  ~Compiler() { gdnCompilerDestroy(c); }
  gdnCompiler c = nullptr;
};

/// A compiler the test destroys itself (not a Compiler) and a CPU kernel of
/// `d` on it.
void compilerWithKernel(gdnRecurrentDesc d, gdnCompiler &c, gdnKernel &k) {
  ASSERT_EQ(gdnCompilerCreate(&c), GDN_OK);
  ASSERT_EQ(gdnCompileDesc(c, &d, GDN_TARGET_CPU, nullptr, &k), GDN_OK)
      << gdnGetLastError();
}

bool errorMentions(const char *what) {
  return std::string(gdnGetLastError()).find(what) != std::string::npos;
}

TEST(CAPIFaultsTest, DescriptionFromAnotherHeaderIsRefused) {
  Compiler comp;
  gdnKernel k = nullptr;
  gdnRecurrentDesc d = tinyDesc();
  d.struct_size = sizeof(d) - 8; // an older, shorter struct
  EXPECT_EQ(gdnCompileDesc(comp.c, &d, GDN_TARGET_CPU, nullptr, &k),
            GDN_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(errorMentions("struct_size")) << gdnGetLastError();
  d = tinyDesc();
  d.abi_version = GDN_ABI_VERSION + 1;
  EXPECT_EQ(gdnCompileDesc(comp.c, &d, GDN_TARGET_CPU, nullptr, &k),
            GDN_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(errorMentions("abi_version")) << gdnGetLastError();
  d = tinyDesc();
  EXPECT_EQ(gdnCompileDesc(comp.c, &d, GDN_TARGET_CPU, nullptr, &k), GDN_OK)
      << gdnGetLastError();
}

TEST(CAPIFaultsTest, BadSizesNameTheField) {
  Compiler comp;
  gdnKernel k = nullptr;
  struct Case {
    void (*set)(gdnRecurrentDesc &);
    const char *message;
  } cases[] = {
      {[](gdnRecurrentDesc &d) { d.N = -1; }, "N must be >= 1, got -1"},
      {[](gdnRecurrentDesc &d) { d.K = -32; }, "K must be >= 1, got -32"},
      {[](gdnRecurrentDesc &d) { d.T = 0; }, "T must be >= 1, got 0"},
      {[](gdnRecurrentDesc &d) { d.HV = 0; }, "HV must be >= 1, got 0"},
      {[](gdnRecurrentDesc &d) { d.num_slots = -4; }, "num_slots must be >= 0"},
      {[](gdnRecurrentDesc &d) { d.intermediate_rows = -1; },
       "intermediate_rows must be >= 0"},
      {[](gdnRecurrentDesc &d) {
         d.N = INT64_MAX, d.cu_seqlens_bits = 32;
       },
       "with 32-bit cu_seqlens, N + 1 and T must fit in int32"},
      {[](gdnRecurrentDesc &d) { d.N = INT64_MAX, d.cu_seqlens_bits = 64; },
       "N must be < 2^63 - 1"},
      {[](gdnRecurrentDesc &d) { d.N = INT64_MAX / 2; },
       "takes more than 2^40 bytes"},
      {[](gdnRecurrentDesc &d) { d.K = int64_t(1) << 40; },
       "q [1, 2, 1, 1099511627776] takes more than 2^40 bytes"},
      {[](gdnRecurrentDesc &d) { d.checkpoint_interval = -64; },
       "checkpoint_interval must be >= 0, got -64"},
      {[](gdnRecurrentDesc &d) { d.checkpoint_interval = 64; },
       "checkpoints need checkpoint_interval >= 1, checkpoint_rows >= 1"},
      // Fields that only matter with another, set without it (ignored
      // before, where gdn.Compiler.compile refused them).
      {[](gdnRecurrentDesc &d) { d.intermediate_steps = 4; },
       "intermediate_steps, intermediate_index_bits and "
       "intermediate_row_stride need intermediate_rows > 0"},
      {[](gdnRecurrentDesc &d) { d.intermediate_row_stride = 4096; },
       "need intermediate_rows > 0"},
      {[](gdnRecurrentDesc &d) {
         d.has_initial_state = d.has_final_state = 0;
         d.state_slot_stride = 1024;
       },
       "state_slot_stride needs has_initial_state or has_final_state"},
      {[](gdnRecurrentDesc &d) { d.checkpoint_offset_bits = 32; },
       "checkpoint_offset_bits needs checkpoint_interval and checkpoint_rows"},
      {[](gdnRecurrentDesc &d) {
         d.checkpoint_interval = 64, d.checkpoint_rows = 2;
         d.checkpoint_offset_bits = 16;
       },
       "checkpoint_offset_bits 32 or 64"},
  };
  for (const Case &c : cases) {
    gdnRecurrentDesc d = tinyDesc();
    c.set(d);
    EXPECT_EQ(gdnCompileDesc(comp.c, &d, GDN_TARGET_CPU, nullptr, &k),
              GDN_ERROR_INVALID_ARGUMENT)
        << c.message;
    EXPECT_TRUE(errorMentions(c.message)) << gdnGetLastError();
  }
}

TEST(CAPIFaultsTest, CheckpointsAddTheirArguments) {
  Compiler comp;
  gdnKernel k = nullptr;
  gdnRecurrentDesc d = tinyDesc();
  d.checkpoint_interval = 1, d.checkpoint_rows = 3;
  d.checkpoint_offset_bits = 32, d.checkpoint_dtype = GDN_DTYPE_BF16;
  ASSERT_EQ(gdnCompileDesc(comp.c, &d, GDN_TARGET_CPU, nullptr, &k), GDN_OK)
      << gdnGetLastError();
  std::vector<std::string> names;
  for (int i = 0; i < gdnKernelNumArguments(k); ++i)
    names.push_back(gdnKernelArgumentName(k, i));
  EXPECT_EQ(names, (std::vector<std::string>{
                       "q", "k", "v", "checkpoint_offsets", "initial_state",
                       "state_checkpoints", "final_state", "o"}));
  EXPECT_EQ(gdnKernelArgumentDim(k, 5, 0), 3);
  // What a host must hand over writable: the state checkpoints too.
  std::vector<int> written;
  for (int i = 0; i < gdnKernelNumArguments(k); ++i) {
    written.push_back(gdnKernelArgumentWritten(k, i));
    EXPECT_EQ(gdnKernelArgumentOffset(k, i), 0);
  }
  EXPECT_EQ(written, (std::vector<int>{0, 0, 0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(gdnKernelArgumentWritten(k, 8), -1);
  EXPECT_EQ(gdnKernelArgumentOffset(k, -1), -1);
}

TEST(CAPIFaultsTest, NonFiniteScaleIsRefusedAndZeroIsUsed) {
  Compiler comp;
  gdnKernel k = nullptr;
  for (float bad : {std::numeric_limits<float>::quiet_NaN(),
                    std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity()}) {
    gdnRecurrentDesc d = tinyDesc();
    d.has_scale = 1, d.scale = bad;
    EXPECT_EQ(gdnCompileDesc(comp.c, &d, GDN_TARGET_CPU, nullptr, &k),
              GDN_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(errorMentions("scale must be finite")) << gdnGetLastError();
  }
  // scale = 0 is used as given: o = S^T (0 q) = 0 while the state moves.
  gdnRecurrentDesc d = tinyDesc();
  d.has_scale = 1, d.scale = 0.0f;
  ASSERT_EQ(gdnCompileDesc(comp.c, &d, GDN_TARGET_CPU, nullptr, &k), GDN_OK)
      << gdnGetLastError();
  ASSERT_EQ(gdnKernelNumArguments(k), 6); // q, k, v, initial, final, o
  std::vector<std::vector<float>> bufs(6);
  for (int i = 0; i < 6; ++i) {
    bufs[i].resize(gdnKernelArgumentBytes(k, i) / 4);
    for (size_t j = 0; j < bufs[i].size(); ++j)
      bufs[i][j] = std::sin(1.0f + i + 0.37f * j);
  }
  std::vector<void *> args;
  for (auto &b : bufs)
    args.push_back(b.data());
  ASSERT_EQ(gdnKernelRunHost(k, args.data(), 6), GDN_OK) << gdnGetLastError();
  for (float x : bufs[5])
    EXPECT_EQ(x, 0.0f);
  EXPECT_NE(bufs[4], bufs[3]); // the final state is not the initial one
}

/// The argument and PTX queries of `k`, not a live kernel handle, answer
/// their "none" values.
static void expectQueriesRefused(gdnKernel k) {
  EXPECT_EQ(gdnKernelNumArguments(k), -1);
  EXPECT_EQ(gdnKernelArgumentName(k, 0), nullptr);
  EXPECT_EQ(gdnKernelArgumentBytes(k, 0), -1);
  EXPECT_EQ(gdnKernelArgumentOffset(k, 0), -1);
  EXPECT_EQ(gdnKernelArgumentWritten(k, 0), -1);
  EXPECT_EQ(gdnKernelPTX(k), nullptr);
}

TEST(CAPIFaultsTest, HandlesAfterDestroyAreRefused) {
  gdnCompiler c = nullptr;
  gdnKernel k = nullptr;
  gdnRecurrentDesc d = tinyDesc();
  ASSERT_NO_FATAL_FAILURE(compilerWithKernel(d, c, k));
  gdnCompilerDestroy(c);
  EXPECT_EQ(gdnCompileDesc(c, &d, GDN_TARGET_CPU, nullptr, &k),
            GDN_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(errorMentions("not a live handle")) << gdnGetLastError();
  EXPECT_EQ(gdnCompileText(c, "module {}", nullptr, GDN_TARGET_CPU, nullptr, &k),
            GDN_ERROR_INVALID_ARGUMENT);
  expectQueriesRefused(k);
  alignas(16) static float buf[64];
  void *args[6] = {buf, buf, buf, buf, buf, buf};
  EXPECT_EQ(gdnKernelRunHost(k, args, 6), GDN_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(errorMentions("not a live handle")) << gdnGetLastError();
  EXPECT_EQ(gdnKernelLaunch(k, args, 6, nullptr), GDN_ERROR_INVALID_ARGUMENT);
  gdnCompilerDestroy(c); // twice: ignored
  gdnCompilerDestroy(reinterpret_cast<gdnCompiler>(buf)); // never created
}

// gdnCompilerDestroy while another thread runs one of its kernels waits for
// the run to return (it freed the JIT code under the run before: a
// segfault of the host process).
TEST(CAPIFaultsTest, DestroyWaitsForARunInAnotherThread) {
  ::setenv("GDN_CACHE_DIR", "off", 1);
  gdnCompiler c = nullptr;
  gdnKernel k = nullptr;
  gdnRecurrentDesc d = tinyDesc();
  d.N = 4, d.T = 1024, d.K = 128, d.V = 128;
  ASSERT_NO_FATAL_FAILURE(compilerWithKernel(d, c, k));
  int n = gdnKernelNumArguments(k);
  std::vector<std::vector<float>> buffers;
  std::vector<void *> args;
  for (int i = 0; i < n; ++i) {
    buffers.emplace_back(gdnKernelArgumentBytes(k, i) / sizeof(float), 0.01f);
    args.push_back(buffers.back().data());
  }
  std::atomic<int> status{-1};
  std::atomic<bool> started{false};
  std::thread run([&] {
    started = true;
    status = gdnKernelRunHost(k, args.data(), n);
  });
  while (!started)
    std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  gdnCompilerDestroy(c); // waits for the run, then frees the kernel
  run.join();
  // The run either finished (GDN_OK) or, had destroy come first, found the
  // handle dead; never a crash.
  EXPECT_TRUE(status == GDN_OK || status == GDN_ERROR_INVALID_ARGUMENT)
      << status;
  EXPECT_EQ(gdnKernelNumArguments(k), -1);
}

// A kernel passed where a compiler is expected, and the reverse, is not a
// live handle of that kind: refused, never used as the other kind (it
// aborted the host in gdnCompilerDestroy and gdnCompileText).
TEST(CAPIFaultsTest, HandlesOfTheOtherKindAreRefused) {
  gdnCompiler c = nullptr;
  gdnKernel k = nullptr;
  gdnRecurrentDesc d = tinyDesc();
  ASSERT_NO_FATAL_FAILURE(compilerWithKernel(d, c, k));
  auto asCompiler = reinterpret_cast<gdnCompiler>(k);
  auto asKernel = reinterpret_cast<gdnKernel>(c);
  gdnKernel other = nullptr;
  EXPECT_EQ(gdnCompileDesc(asCompiler, &d, GDN_TARGET_CPU, nullptr, &other),
            GDN_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(errorMentions("not a live handle")) << gdnGetLastError();
  EXPECT_EQ(gdnCompileText(asCompiler, "module {}", nullptr, GDN_TARGET_CPU,
                           nullptr, &other),
            GDN_ERROR_INVALID_ARGUMENT);
  gdnCompilerDestroy(asCompiler); // not a compiler: ignored
  expectQueriesRefused(asKernel);
  alignas(16) static float buf[64];
  void *args[6] = {buf, buf, buf, buf, buf, buf};
  EXPECT_EQ(gdnKernelRunHost(asKernel, args, 6), GDN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gdnKernelLaunch(asKernel, args, 6, nullptr),
            GDN_ERROR_INVALID_ARGUMENT);
  // Both still work as what they are.
  EXPECT_EQ(gdnKernelNumArguments(k), 6);
  EXPECT_EQ(gdnCompileDesc(c, &d, GDN_TARGET_CPU, nullptr, &other), GDN_OK);
  gdnCompilerDestroy(c);
}

TEST(CAPIFaultsTest, DeeplyNestedTextIsADiagnostic) {
  Compiler comp;
  gdnKernel k = nullptr;
  std::string attr = "func.func @f() attributes {a = " + std::string(8000, '[') +
                     std::string(8000, ']') + "} { return }";
  EXPECT_EQ(gdnCompileText(comp.c, attr.c_str(), nullptr, GDN_TARGET_CPU,
                           nullptr, &k),
            GDN_ERROR_COMPILE);
  EXPECT_TRUE(errorMentions("gdn-input:1:")) << gdnGetLastError();
  EXPECT_TRUE(errorMentions("nested deeper than 256 levels"))
      << gdnGetLastError();
  std::string tuple = "func.func @f(%x: ";
  for (int i = 0; i < 20000; ++i)
    tuple += "tuple<";
  tuple += "f32" + std::string(20000, '>') + ") { return }";
  EXPECT_EQ(gdnCompileText(comp.c, tuple.c_str(), nullptr, GDN_TARGET_CUDA,
                           nullptr, &k),
            GDN_ERROR_COMPILE);
  EXPECT_TRUE(errorMentions("nested deeper than 256 levels"))
      << gdnGetLastError();
  // No deep brackets, but the affine parser recurses once an operator.
  std::string terms = "func.func @f() attributes {a = affine_map<(d0) -> (d0";
  for (int i = 0; i < 100000; ++i)
    terms += " + 1";
  terms += ")>} { return }";
  EXPECT_EQ(gdnCompileText(comp.c, terms.c_str(), nullptr, GDN_TARGET_CPU,
                           nullptr, &k),
            GDN_ERROR_COMPILE);
  EXPECT_TRUE(errorMentions("nested deeper than 256 levels"))
      << gdnGetLastError();
}

// cu_seqlens that break the contract ([0] first, non-decreasing, last =
// packed tokens) once read and wrote past the packed tokens (heap
// corruption). Each range is now clamped into [0, T]: o rows past the
// tokens (a guard region after the caller's o) are never written.
TEST(CAPIFaultsTest, BadCuSeqlensStayInsideThePackedTokens) {
  Compiler comp;
  gdnRecurrentDesc d = tinyDesc();
  d.N = 2, d.T = 6, d.cu_seqlens_bits = 32;
  gdnKernel k = nullptr;
  ASSERT_EQ(gdnCompileDesc(comp.c, &d, GDN_TARGET_CPU, nullptr, &k), GDN_OK)
      << gdnGetLastError();
  ASSERT_EQ(gdnKernelNumArguments(k), 7); // q k v cu_seqlens init final o
  const int32_t tables[][3] = {{0, 3, 7},  {0, 3, 9},       {0, -3, 6},
                               {0, 3, 1000000}, {-5, 2, 6}, {4, 1, 6},
                               {INT32_MIN, INT32_MAX, 3}};
  for (const auto &cu : tables) {
    std::vector<std::vector<float>> bufs(7);
    const size_t guard = 4096; // after every buffer: must stay NaN-free 7s
    for (int i = 0; i < 7; ++i) {
      if (i == 3)
        continue;
      bufs[i].assign(gdnKernelArgumentBytes(k, i) / 4 + guard, 7.0f);
      for (size_t j = 0; j + guard < bufs[i].size(); ++j)
        bufs[i][j] = 0.01f * float(j % 13);
    }
    std::vector<int32_t> table(cu, cu + 3);
    std::vector<void *> args;
    for (int i = 0; i < 7; ++i)
      args.push_back(i == 3 ? static_cast<void *>(table.data()) : bufs[i].data());
    ASSERT_EQ(gdnKernelRunHost(k, args.data(), 7), GDN_OK) << gdnGetLastError();
    for (int i : {5, 6}) { // final state, o: nothing written past their end
      size_t n = gdnKernelArgumentBytes(k, i) / 4;
      for (size_t j = n; j < bufs[i].size(); ++j)
        ASSERT_EQ(bufs[i][j], 7.0f) << "cu = [" << cu[0] << ", " << cu[1]
                                    << ", " << cu[2] << "], argument " << i;
    }
    for (float x : bufs[6])
      ASSERT_TRUE(std::isfinite(x));
  }
}
} // namespace
