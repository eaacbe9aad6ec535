//===- KernelCacheTest.cpp - the on-disk kernel cache under bad entries ---===//
//
// The cache is read by every process that compiles a kernel, so an entry
// that is corrupt, out of range or not a file at all must read as "not
// cached" (the caller compiles), and a failed write must leave nothing
// behind and never abort.
//
//===----------------------------------------------------------------------===//
#include "gdn/JIT/KernelCache.h"

#include "gtest/gtest.h"

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

using mlir::gdn::LaunchMode;
using mlir::gdn::jit::GPULaunch;
using mlir::gdn::jit::GPUProgram;
using mlir::gdn::jit::KernelCache;
using mlir::gdn::jit::kMaxKernelParameters;
namespace fs = std::filesystem;

namespace {
/// A fresh cache directory, removed afterwards.
struct TempDir {
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "gdn-cache-XXXXXX").string();
    path = ::mkdtemp(tmpl.data());
  }
  ~TempDir() { fs::remove_all(path); }
  std::string entry(const std::string &key) const {
    return (fs::path(path) / (key + ".json")).string();
  }
  size_t files() const {
    return std::distance(fs::directory_iterator(path), fs::directory_iterator());
  }
  std::string path;
};

/// A program of two launches from two modules, every field set apart from
/// its default, as a lowering with several kernels per op makes.
GPUProgram goodProgram() {
  GPUProgram p;
  p.modules = {".version 8.0\n.target sm_90a\n.visible .entry f_recurrent() { ret; }\n",
               ".version 8.0\n.target sm_90a\n.visible .entry f_reduce() { ret; }\n"};
  GPULaunch first;
  first.kernel = "f_recurrent";
  first.module = 0;
  first.grid[0] = 64, first.grid[1] = 1, first.grid[2] = 1;
  first.block[0] = 128, first.block[1] = 1, first.block[2] = 1;
  first.argumentIndices = {0, 1, 2, 3};
  GPULaunch second;
  second.kernel = "f_reduce";
  second.module = 1;
  second.grid[0] = 8, second.grid[1] = 2, second.grid[2] = 3;
  second.block[0] = 32, second.block[1] = 4, second.block[2] = 1;
  second.dynamicSharedMemoryBytes = 1024;
  second.argumentIndices = {3, 0};
  second.mode = LaunchMode::programmatic_after_recurrence;
  p.launches = {first, second};
  return p;
}

std::string readFile(const std::string &path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(KernelCacheTest, StoredEntryLoadsBack) {
  TempDir dir;
  KernelCache cache(dir.path);
  const GPUProgram stored = goodProgram();
  cache.store("k", stored);
  std::optional<GPUProgram> p = cache.load("k", 4);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->modules, stored.modules);
  // Both launches, in order, every field.
  ASSERT_EQ(p->launches.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const GPULaunch &got = p->launches[i], &want = stored.launches[i];
    EXPECT_EQ(got.kernel, want.kernel) << "launch " << i;
    EXPECT_EQ(got.module, want.module) << "launch " << i;
    for (int d = 0; d < 3; ++d) {
      EXPECT_EQ(got.grid[d], want.grid[d]) << "launch " << i << " grid " << d;
      EXPECT_EQ(got.block[d], want.block[d]) << "launch " << i << " block " << d;
    }
    EXPECT_EQ(got.dynamicSharedMemoryBytes, want.dynamicSharedMemoryBytes);
    EXPECT_EQ(got.argumentIndices, want.argumentIndices) << "launch " << i;
    EXPECT_EQ(got.mode, want.mode) << "launch " << i;
  }
  EXPECT_EQ(p->launches[0].kernel, "f_recurrent");
  EXPECT_EQ(p->launches[1].kernel, "f_reduce");
  EXPECT_TRUE(p->launches[1].isProgrammatic());
  EXPECT_FALSE(p->launches[0].isProgrammatic());
  // Argument indices past the function's arguments: not this function's.
  EXPECT_FALSE(cache.load("k", 3).has_value());
}

// Workspaces load back, and a launch's indices may reach past the
// function's arguments into them (not further).
TEST(KernelCacheTest, WorkspacesLoadBack) {
  TempDir dir;
  KernelCache cache(dir.path);
  GPUProgram stored = goodProgram();
  stored.workspaceBytes = {4096, 16};
  stored.launches[0].argumentIndices = {0, 1, 4, 5};
  cache.store("k", stored);
  std::optional<GPUProgram> p = cache.load("k", 4);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->workspaceBytes, stored.workspaceBytes);
  EXPECT_EQ(p->launches[0].argumentIndices, stored.launches[0].argumentIndices);
  stored.launches[0].argumentIndices = {0, 6};
  cache.store("past", stored);
  EXPECT_FALSE(cache.load("past", 4).has_value());
}

// A state updated in place is passed twice (initial and final state): more
// kernel parameters than the function has arguments still loads back.
TEST(KernelCacheTest, RepeatedArgumentsLoadBack) {
  TempDir dir;
  KernelCache cache(dir.path);
  GPUProgram stored = goodProgram();
  stored.launches[0].argumentIndices = {0, 1, 2, 3, 3};
  cache.store("k", stored);
  std::optional<GPUProgram> p = cache.load("k", 4);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->launches[0].argumentIndices, stored.launches[0].argumentIndices);
  // More parameters than a runner passes: never loaded.
  stored.launches[0].argumentIndices.assign(kMaxKernelParameters + 1, 0);
  cache.store("many", stored);
  EXPECT_FALSE(cache.load("many", 4).has_value());
}

// Fields out of range, stored with a valid checksum: the loader's range
// checks, not the checksum, must refuse them, in any launch of the list.
TEST(KernelCacheTest, FieldsOutOfRangeAreNotLoaded) {
  TempDir dir;
  KernelCache cache(dir.path);
  auto refused = [&](auto mutate) {
    GPUProgram p = goodProgram();
    mutate(p);
    cache.store("k", p);
    return !cache.load("k", 4).has_value();
  };
  for (size_t i : {0u, 1u}) {
    SCOPED_TRACE("launch " + std::to_string(i));
    auto at = [i](GPUProgram &p) -> GPULaunch & { return p.launches[i]; };
    EXPECT_TRUE(refused([&](GPUProgram &p) { at(p).kernel = "1bad"; }));
    EXPECT_TRUE(refused([&](GPUProgram &p) { at(p).kernel = "a b"; }));
    EXPECT_TRUE(refused([&](GPUProgram &p) { at(p).kernel.clear(); }));
    EXPECT_TRUE(refused([&](GPUProgram &p) { at(p).module = 2; }));
    EXPECT_TRUE(refused([&](GPUProgram &p) {
      at(p).grid[0] = at(p).grid[1] = at(p).grid[2] = 0;
    }));
    EXPECT_TRUE(refused([&](GPUProgram &p) { at(p).grid[1] = 65536; }));
    EXPECT_TRUE(refused([&](GPUProgram &p) { at(p).grid[0] = 1u << 31; }));
    EXPECT_TRUE(refused([&](GPUProgram &p) { at(p).block[0] = 0; }));
    EXPECT_TRUE(refused([&](GPUProgram &p) { at(p).block[0] = 2048; }));
    EXPECT_TRUE(refused([&](GPUProgram &p) {
      at(p).block[1] = 2, at(p).block[0] = 1024;
    }));
    EXPECT_TRUE(refused([&](GPUProgram &p) {
      at(p).dynamicSharedMemoryBytes =
          mlir::gdn::jit::kMaxDynamicSharedMemoryBytes + 1;
    }));
    EXPECT_TRUE(refused([&](GPUProgram &p) { at(p).mode = LaunchMode::programmatic; }));
    EXPECT_TRUE(refused([&](GPUProgram &p) { at(p).argumentIndices = {0, 1, 2, 4}; }));
    EXPECT_TRUE(refused([&](GPUProgram &p) { at(p).argumentIndices.clear(); }));
  }
  EXPECT_TRUE(refused([](GPUProgram &p) { p.modules[1].clear(); }));
  EXPECT_TRUE(refused([](GPUProgram &p) { p.modules.pop_back(); }));
  EXPECT_FALSE(refused([](GPUProgram &) {}));
  // One launch of the two is a program too.
  EXPECT_FALSE(refused([](GPUProgram &p) { p.launches.pop_back(); }));
}

// Entries edited on disk: the checksum or the JSON no longer holds.
TEST(KernelCacheTest, EditedEntriesAreNotLoaded) {
  TempDir dir;
  KernelCache cache(dir.path);
  cache.store("k", goodProgram());
  const std::string good = readFile(dir.entry("k"));
  auto refusedAfter = [&](std::string text) {
    std::ofstream(dir.entry("k"), std::ios::trunc) << text;
    return !cache.load("k", 4).has_value();
  };
  auto edited = [&](const std::string &from, const std::string &to) {
    std::string text = good;
    size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos)
      text.replace(at, from.size(), to);
    return text;
  };
  EXPECT_TRUE(refusedAfter(edited("\"kernel\":\"f_recurrent\"", "\"kernel\":\"\"")));
  EXPECT_TRUE(refusedAfter(edited("\"grid\":[64,1,1]", "\"grid\":[1099511627776,1,1]")));
  // The first launch pointed at the second's kernel: the checksum.
  EXPECT_TRUE(refusedAfter(edited("\"kernel\":\"f_recurrent\"", "\"kernel\":\"f_reduce\"")));
  EXPECT_TRUE(refusedAfter(edited("\"launch\":\"programmatic_after_recurrence\"",
                                  "\"launch\":\"ordinary\"")));
  EXPECT_TRUE(refusedAfter(edited("\"launch\":\"ordinary\"", "\"launch\":\"sometimes\"")));
  EXPECT_TRUE(refusedAfter(edited("ret;", "Ret;")));
  EXPECT_TRUE(refusedAfter(good.substr(0, good.size() / 2)));
  EXPECT_TRUE(refusedAfter(""));
  EXPECT_TRUE(refusedAfter("[1, 2, 3]"));
  // Nested a million deep (2 MB): refused before the JSON parser, which
  // recurses once a level, would overflow the stack.
  EXPECT_TRUE(
      refusedAfter(std::string(1000000, '[') + std::string(1000000, ']')));
  EXPECT_FALSE(refusedAfter(good));
  // Brackets inside strings do not count.
  GPUProgram brackets = goodProgram();
  brackets.modules[0] += "// [[[[[[[[[[[[[[[[ \"[[[[\"\n";
  cache.store("b", brackets);
  EXPECT_TRUE(cache.load("b", 4).has_value());
}

// An entry of another format misses cleanly: format 1 (one kernel, the
// layout before launch lists) as an older build wrote it, and this
// format's entry relabelled.
TEST(KernelCacheTest, OtherFormatsMiss) {
  TempDir dir;
  KernelCache cache(dir.path);
  std::ofstream(dir.entry("old"))
      << R"({"args":[0,1,2,3],"block":[128,1,1],"checksum":"0123456789abcdef",)"
         R"("grid":[64,1,1],"name":"f_recurrent","programmatic_launch":false,)"
         R"("ptx":".version 8.0\n"})";
  EXPECT_FALSE(cache.load("old", 4).has_value());
  cache.store("k", goodProgram());
  std::string text = readFile(dir.entry("k"));
  std::string format = "\"format\":" + std::to_string(KernelCache::kFormat);
  ASSERT_NE(text.find(format), std::string::npos);
  text.replace(text.find(format), format.size(), "\"format\":1");
  std::ofstream(dir.entry("k"), std::ios::trunc) << text;
  EXPECT_FALSE(cache.load("k", 4).has_value());
}

// A valid entry under another key's name (copied or renamed: nothing on
// disk ties a file name to its program but the key the entry holds) is
// another kernel's program: a miss, as is an entry whose key was edited.
TEST(KernelCacheTest, AnEntryUnderAnotherKeyMisses) {
  TempDir dir;
  KernelCache cache(dir.path);
  cache.store("k", goodProgram());
  ASSERT_TRUE(cache.load("k", 4).has_value());
  fs::copy_file(dir.entry("k"), dir.entry("other"));
  EXPECT_FALSE(cache.load("other", 4).has_value());
  std::string text = readFile(dir.entry("k"));
  const std::string field = "\"key\":\"k\"";
  ASSERT_NE(text.find(field), std::string::npos);
  text.replace(text.find(field), field.size(), "\"key\":\"j\"");
  std::ofstream(dir.entry("j"), std::ios::trunc) << text;
  EXPECT_FALSE(cache.load("j", 4).has_value()); // the checksum holds the key
  EXPECT_TRUE(cache.load("k", 4).has_value());
}

// Not a regular file at the entry's path: a FIFO (which once hung the
// compile), /dev/zero behind a symlink, a directory.
TEST(KernelCacheTest, NonRegularFilesAreIgnored) {
  TempDir dir;
  KernelCache cache(dir.path);
  ASSERT_EQ(::mkfifo(dir.entry("fifo").c_str(), 0600), 0);
  EXPECT_FALSE(cache.load("fifo", 4).has_value());
  fs::create_symlink("/dev/zero", dir.entry("zero"));
  EXPECT_FALSE(cache.load("zero", 4).has_value());
  fs::create_directory(dir.entry("dir"));
  EXPECT_FALSE(cache.load("dir", 4).has_value());
  // A store replaces the FIFO with a real entry.
  cache.store("fifo", goodProgram());
  EXPECT_TRUE(cache.load("fifo", 4).has_value());
}

TEST(KernelCacheTest, EmptyKernelsAreNotStored) {
  TempDir dir;
  KernelCache cache(dir.path);
  cache.store("k", GPUProgram{});
  EXPECT_EQ(dir.files(), 0u);
}

// A write that fails (here: past RLIMIT_FSIZE, as on a full disk) leaves no
// entry and no temporary file, and the process goes on (it once died with
// "LLVM ERROR: IO failure on output stream").
TEST(KernelCacheTest, FailedWriteLeavesNothingAndDoesNotAbort) {
  TempDir dir;
  auto storeUnderLimit = [&] {
    std::signal(SIGXFSZ, SIG_IGN);
    rlimit limit;
    limit.rlim_cur = limit.rlim_max = 512;
    ::setrlimit(RLIMIT_FSIZE, &limit);
    GPUProgram p = goodProgram();
    p.modules[0].append(1 << 16, ' ');
    KernelCache(dir.path).store("k", p);
    std::exit(42);
  };
  EXPECT_EXIT(storeUnderLimit(), ::testing::ExitedWithCode(42), "");
  EXPECT_EQ(dir.files(), 0u);
}
} // namespace
