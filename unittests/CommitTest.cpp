//===- CommitTest.cpp - gdn.commit through the C API ----------------------===//
//
// Compiles functions holding one gdn.commit from MLIR text (gdnCompileText),
// runs them on host memory (the CPU lowering) and, where there is a GPU, on
// device memory (the GPU lowering), and compares every byte of the pool with
// the contract of the op: committed slots get the buffer's step
// min(accepted, T) - 1 (converted through f32 and rounded once when the
// dtypes differ); padding rows, negative buffer rows and counts <= 0 touch
// nothing; every other slot and every input stays bit-identical.
//
//===----------------------------------------------------------------------===//
#include "gdn-c/GDN.h"
#include "gdn/Runtime/CudaDriver.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace {
namespace rt = ::gdn::runtime;

/// Bytes of one element of an MLIR element type name.
int64_t widthOf(const std::string &type) {
  return type == "f32" || type == "i32" ? 4 : type == "i64" ? 8 : 2;
}

float decodeFloat(const std::string &type, const uint8_t *p) {
  if (type == "f32") {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  uint16_t bits;
  std::memcpy(&bits, p, 2);
  if (type == "bf16") {
    uint32_t u = uint32_t(bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  _Float16 h;
  std::memcpy(&h, &bits, 2);
  return static_cast<float>(h);
}

/// Rounds `f` to `type` (round to nearest, ties to even) into `p`.
void encodeFloat(const std::string &type, float f, uint8_t *p) {
  if (type == "f32") {
    std::memcpy(p, &f, 4);
    return;
  }
  if (type == "bf16") {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    u += 0x7fff + ((u >> 16) & 1); // finite inputs only (the test's)
    uint16_t bits = static_cast<uint16_t>(u >> 16);
    std::memcpy(p, &bits, 2);
    return;
  }
  _Float16 h = static_cast<_Float16>(f);
  std::memcpy(p, &h, 2);
}

void encodeInt(const std::string &type, int64_t x, uint8_t *p) {
  if (type == "i64") {
    std::memcpy(p, &x, 8);
    return;
  }
  int32_t y = static_cast<int32_t>(x);
  std::memcpy(p, &y, 4);
}

std::string memref(const std::vector<int64_t> &shape, const std::string &type) {
  std::string s = "memref<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + type + ">";
}

/// One gdn.commit: shapes, dtypes and the per-row counts and indices (an
/// empty index type leaves the operand out).
struct Case {
  int64_t T, R, slots, HV, rows, cols; // head = [rows, cols] = [V, K] or [K, V]
  std::string bufferType, stateType;
  std::string acceptedType = "i32", slotType, rowType;
  bool vk = true;
  std::vector<int64_t> accepted, slotIndices, rowIndices;
  int64_t N() const { return accepted.size(); }
  int64_t headElements() const { return HV * rows * cols; } // one [HV, ...] row

  /// The function's arguments, in order: (name, memref type).
  std::vector<std::pair<std::string, std::string>> arguments() const {
    std::vector<std::pair<std::string, std::string>> args = {
        {"intermediate_states", memref({R, T, HV, rows, cols}, bufferType)},
        {"accepted", memref({N()}, acceptedType)}};
    if (!slotType.empty())
      args.push_back({"state_indices", memref({N()}, slotType)});
    if (!rowType.empty())
      args.push_back({"intermediate_state_indices", memref({N()}, rowType)});
    args.push_back({"state", memref({slots, HV, rows, cols}, stateType)});
    return args;
  }

  std::string mlir() const {
    std::string sig, body = "  gdn.commit";
    for (auto &[name, type] : arguments()) {
      sig += (sig.empty() ? "%" : ", %") + name + ": " + type;
      body += " " + name + "(%" + name + " : " + type + ")";
    }
    if (vk)
      body += " {state_layout = #gdn.layout<vk>}";
    return "func.func @commit(" + sig + ") {\n" + body + "\n  return\n}\n";
  }
};

/// The host buffers of a Case, seeded, and the pool the op must leave.
struct Buffers {
  std::vector<std::vector<uint8_t>> args; // in argument order
  std::vector<uint8_t> expectedPool;
  int64_t committedSlots = 0;

  explicit Buffers(const Case &c) {
    std::mt19937 rng(7);
    std::normal_distribution<float> normal;
    auto floats = [&](const std::string &type, int64_t n) {
      std::vector<uint8_t> b(n * widthOf(type));
      for (int64_t i = 0; i < n; ++i)
        encodeFloat(type, normal(rng), &b[i * widthOf(type)]);
      return b;
    };
    auto ints = [&](const std::string &type, const std::vector<int64_t> &v) {
      std::vector<uint8_t> b(v.size() * widthOf(type));
      for (size_t i = 0; i < v.size(); ++i)
        encodeInt(type, v[i], &b[i * widthOf(type)]);
      return b;
    };
    int64_t E = c.headElements();
    std::vector<uint8_t> buffer = floats(c.bufferType, c.R * c.T * E);
    if (c.bufferType == "f32") {
      // Halfway cases of the bf16 and f16 roundings at the start of every
      // step: 1 + 2^-8 (bf16: ties to 1), 1 + 3 * 2^-8 (bf16: to 1 + 2^-6),
      // 1 + 2^-11 (f16: ties to 1), 1 + 3 * 2^-11 (f16: to 1 + 2^-9).
      const float ties[] = {1.00390625f, 1.01171875f, 1.00048828125f,
                            1.00146484375f};
      for (int64_t s = 0; s < c.R * c.T; ++s)
        std::memcpy(&buffer[s * E * 4], ties, sizeof(ties));
    }
    args.push_back(buffer);
    args.push_back(ints(c.acceptedType, c.accepted));
    if (!c.slotType.empty())
      args.push_back(ints(c.slotType, c.slotIndices));
    if (!c.rowType.empty())
      args.push_back(ints(c.rowType, c.rowIndices));
    std::vector<uint8_t> pool = floats(c.stateType, c.slots * E);
    args.push_back(pool);

    // The contract, row by row.
    expectedPool = pool;
    int64_t from = widthOf(c.bufferType), to = widthOf(c.stateType);
    for (int64_t n = 0; n < c.N(); ++n) {
      int64_t a = std::min(c.accepted[n], c.T);
      int64_t slot = c.slotType.empty() ? n : c.slotIndices[n];
      int64_t row = c.rowType.empty() ? n : c.rowIndices[n];
      if (slot < 0 || row < 0 || a < 1)
        continue;
      ++committedSlots;
      const uint8_t *src = &buffer[(row * c.T + a - 1) * E * from];
      uint8_t *dst = &expectedPool[slot * E * to];
      for (int64_t e = 0; e < E; ++e) {
        if (c.bufferType == c.stateType)
          std::memcpy(dst + e * to, src + e * from, to);
        else
          encodeFloat(c.stateType, decodeFloat(c.bufferType, src + e * from),
                      dst + e * to);
      }
    }
  }
  std::vector<uint8_t> &pool() { return args.back(); }
};

struct Compiler {
  Compiler() { EXPECT_EQ(gdnCompilerCreate(&c), GDN_OK); }
  ~Compiler() { gdnCompilerDestroy(c); }
  gdnCompiler c = nullptr;
};

/// Compiles `c` for `target`; fails the test on an error.
gdnKernel compile(Compiler &comp, const Case &c, gdnTarget target) {
  gdnKernel k = nullptr;
  std::string text = c.mlir();
  EXPECT_EQ(gdnCompileText(comp.c, text.c_str(), nullptr, target, nullptr, &k),
            GDN_OK)
      << gdnGetLastError() << "\n"
      << text;
  return k;
}

/// Runs `c` on the CPU and checks every byte of every argument.
void checkOnHost(const Case &c) {
  Compiler comp;
  gdnKernel k = compile(comp, c, GDN_TARGET_CPU);
  ASSERT_NE(k, nullptr);
  Buffers bufs(c);
  std::vector<std::vector<uint8_t>> before = bufs.args;
  std::vector<void *> ptrs;
  for (auto &b : bufs.args)
    ptrs.push_back(b.data());
  ASSERT_EQ(gdnKernelRunHost(k, ptrs.data(), ptrs.size()), GDN_OK)
      << gdnGetLastError();
  // The oracle itself changes exactly the committed slots.
  int64_t slotBytes = c.headElements() * widthOf(c.stateType);
  int64_t changed = 0;
  for (int64_t s = 0; s < c.slots; ++s)
    changed += std::memcmp(&bufs.expectedPool[s * slotBytes],
                           &before.back()[s * slotBytes], slotBytes) != 0;
  EXPECT_EQ(changed, bufs.committedSlots);
  for (size_t i = 0; i + 1 < bufs.args.size(); ++i)
    EXPECT_EQ(bufs.args[i], before[i]) << "input " << i << " was written";
  for (int64_t s = 0; s < c.slots; ++s)
    EXPECT_EQ(std::memcmp(&bufs.pool()[s * slotBytes],
                          &bufs.expectedPool[s * slotBytes], slotBytes),
              0)
        << "slot " << s;
}

/// Runs `c` on the GPU (skips without one) and checks every byte of the pool.
void checkOnDevice(const Case &c) {
  std::unique_ptr<rt::CudaDriver> drv;
  if (!rt::CudaDriver::open(0, drv))
    GTEST_SKIP() << "no CUDA device";
  Compiler comp;
  gdnKernel k = compile(comp, c, GDN_TARGET_CUDA);
  ASSERT_NE(k, nullptr);
  Buffers bufs(c);
  std::vector<rt::CUdeviceptr> dev(bufs.args.size());
  std::vector<void *> ptrs;
  for (size_t i = 0; i < bufs.args.size(); ++i) {
    ASSERT_TRUE(drv->alloc(bufs.args[i].size(), dev[i]).ok);
    ASSERT_TRUE(
        drv->copyToDevice(dev[i], bufs.args[i].data(), bufs.args[i].size()).ok);
    ptrs.push_back(reinterpret_cast<void *>(dev[i]));
  }
  ASSERT_EQ(gdnKernelLaunch(k, ptrs.data(), ptrs.size(), nullptr), GDN_OK)
      << gdnGetLastError();
  ASSERT_TRUE(drv->synchronize(nullptr).ok);
  ASSERT_TRUE(
      drv->copyToHost(bufs.pool().data(), dev.back(), bufs.pool().size()).ok);
  for (auto p : dev)
    drv->free(p);
  int64_t slotBytes = c.headElements() * widthOf(c.stateType);
  for (int64_t s = 0; s < c.slots; ++s)
    EXPECT_EQ(std::memcmp(&bufs.pool()[s * slotBytes],
                          &bufs.expectedPool[s * slotBytes], slotBytes),
              0)
        << "slot " << s;
}

/// SGLang: a pool of 9 slots, a pool-scoped buffer of 6 rows, T = 4, vk.
/// Rows: a commit, a padding row, accepted = 0, a negative buffer row,
/// accepted = 9 > T (clamped to the last step), accepted < 0, accepted = T,
/// accepted = 1. Slots 0, 4, 6, 7 and 8 must stay as they were.
Case poolCase(const std::string &bufferType, const std::string &stateType,
              const std::string &indexType) {
  Case c;
  c.T = 4, c.R = 6, c.slots = 9, c.HV = 2, c.rows = 16, c.cols = 32;
  c.bufferType = bufferType, c.stateType = stateType;
  c.acceptedType = indexType, c.slotType = indexType, c.rowType = "i64";
  c.accepted = {2, 3, 0, 1, 9, -2, 4, 1};
  c.slotIndices = {3, -1, 0, 6, 1, 4, 2, 5};
  c.rowIndices = {5, 0, 2, -1, 1, 3, 4, 0};
  return c;
}

/// FlashInfer: a batch-scoped buffer (row n) into per-row states (no pool),
/// kv layout, head [K, V] = [32, 8] with V = 8 contiguous.
Case batchCase() {
  Case c;
  c.T = 3, c.R = 3, c.slots = 3, c.HV = 3, c.rows = 32, c.cols = 8;
  c.bufferType = c.stateType = "f32";
  c.vk = false;
  c.accepted = {2, 0, 5};
  return c;
}

TEST(CommitTest, PoolScopedCommitTouchesOnlyCommittedSlots) {
  checkOnHost(poolCase("f32", "f32", "i32"));
}

TEST(CommitTest, Int64IndicesGiveTheSameCommit) {
  checkOnHost(poolCase("bf16", "bf16", "i64"));
}

TEST(CommitTest, BatchScopedBufferWithoutPool) { checkOnHost(batchCase()); }

TEST(CommitTest, DtypesConvertThroughF32AndRoundOnce) {
  checkOnHost(poolCase("f32", "bf16", "i32")); // ties to even
  checkOnHost(poolCase("f32", "f16", "i32"));
  checkOnHost(poolCase("bf16", "f32", "i32")); // exact widening
  checkOnHost(poolCase("f16", "bf16", "i64")); // widen, then one rounding
}

TEST(CommitTest, RaggedHeadWithOddColumns) {
  Case c = batchCase();
  c.rows = 5, c.cols = 6; // 30 elements a head: vectors of 2, a partial warp
  c.bufferType = "f16", c.stateType = "f32";
  checkOnHost(c);
}

TEST(CommitTest, OnTheGPUSameBytesAsTheContract) {
  checkOnDevice(poolCase("f32", "f32", "i32"));
  checkOnDevice(poolCase("bf16", "bf16", "i64"));
  checkOnDevice(poolCase("f32", "bf16", "i32"));
  checkOnDevice(batchCase());
  Case ragged = batchCase();
  ragged.rows = 5, ragged.cols = 6;
  ragged.bufferType = "f16", ragged.stateType = "f32";
  checkOnDevice(ragged);
}

TEST(CommitTest, KernelDescribesItsArguments) {
  Compiler comp;
  Case c = poolCase("bf16", "f32", "i32");
  gdnKernel k = compile(comp, c, GDN_TARGET_CPU);
  ASSERT_NE(k, nullptr);
  const char *names[] = {"intermediate_states", "accepted", "state_indices",
                         "intermediate_state_indices", "state"};
  ASSERT_EQ(gdnKernelNumArguments(k), 5);
  for (int i = 0; i < 5; ++i)
    EXPECT_STREQ(gdnKernelArgumentName(k, i), names[i]);
  EXPECT_EQ(gdnKernelArgumentBytes(k, 0), 6 * 4 * 2 * 16 * 32 * 2);
  EXPECT_EQ(gdnKernelArgumentBytes(k, 1), 8 * 4);
  EXPECT_EQ(gdnKernelArgumentBytes(k, 3), 8 * 8);
  EXPECT_EQ(gdnKernelArgumentBytes(k, 4), 9 * 2 * 16 * 32 * 4);
  // The CUDA kernel compiles without a GPU.
  gdnKernel g = compile(comp, c, GDN_TARGET_CUDA);
  ASSERT_NE(g, nullptr);
  std::string ptx = gdnKernelPTX(g);
  EXPECT_NE(ptx.find(".entry commit_commit("), std::string::npos);
  EXPECT_NE(ptx.find(".maxntid 128, 1, 1"), std::string::npos);
}

TEST(CommitTest, BadFunctionsGiveAnErrorNotACrash) {
  Compiler comp;
  gdnKernel k = nullptr;
  // The tensor form needs bufferization first.
  const char *tensor =
      "func.func @f(%b: tensor<1x1x1x8x4xf32>, %a: tensor<1xi32>, "
      "%s: tensor<1x1x8x4xf32>) -> tensor<1x1x8x4xf32> {\n"
      "  %r = gdn.commit intermediate_states(%b : tensor<1x1x1x8x4xf32>) "
      "accepted(%a : tensor<1xi32>) state(%s : tensor<1x1x8x4xf32>) "
      "-> tensor<1x1x8x4xf32>\n  return %r : tensor<1x1x8x4xf32>\n}\n";
  EXPECT_EQ(
      gdnCompileText(comp.c, tensor, nullptr, GDN_TARGET_CPU, nullptr, &k),
      GDN_ERROR_COMPILE);
  EXPECT_NE(std::string(gdnGetLastError()).find("is in tensor form"),
            std::string::npos)
      << gdnGetLastError();
  // One argument as two operands.
  const char *shared =
      "func.func @f(%b: memref<1x1x1x8x4xf32>, %a: memref<1xi32>, "
      "%s: memref<1x1x8x4xf32>) {\n"
      "  gdn.commit intermediate_states(%b : memref<1x1x1x8x4xf32>) "
      "accepted(%a : memref<1xi32>) state_indices(%a : memref<1xi32>) "
      "state(%s : memref<1x1x8x4xf32>)\n  return\n}\n";
  EXPECT_EQ(
      gdnCompileText(comp.c, shared, nullptr, GDN_TARGET_CPU, nullptr, &k),
      GDN_ERROR_COMPILE);
  EXPECT_NE(std::string(gdnGetLastError())
                .find("is used as both 'accepted' and "
                      "'state_indices'"),
            std::string::npos)
      << gdnGetLastError();
  // More than the op in the body.
  const char *extra =
      "func.func @f(%b: memref<1x1x1x8x4xf32>, %a: memref<1xi32>, "
      "%s: memref<1x1x8x4xf32>) {\n"
      "  gdn.commit intermediate_states(%b : memref<1x1x1x8x4xf32>) "
      "accepted(%a : memref<1xi32>) state(%s : memref<1x1x8x4xf32>)\n"
      "  gdn.commit intermediate_states(%b : memref<1x1x1x8x4xf32>) "
      "accepted(%a : memref<1xi32>) state(%s : memref<1x1x8x4xf32>)\n"
      "  return\n}\n";
  EXPECT_EQ(gdnCompileText(comp.c, extra, nullptr, GDN_TARGET_CPU, nullptr, &k),
            GDN_ERROR_COMPILE);
  EXPECT_NE(std::string(gdnGetLastError())
                .find("must be exactly one gdn.commit and a return"),
            std::string::npos)
      << gdnGetLastError();
}
} // namespace
