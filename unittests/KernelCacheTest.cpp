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

using mlir::gdn::jit::GPUKernel;
using mlir::gdn::jit::KernelCache;
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

GPUKernel goodKernel() {
  GPUKernel k;
  k.name = "f_recurrent";
  k.ptx = ".version 8.0\n.target sm_90a\n.visible .entry f_recurrent() { ret; }\n";
  k.grid[0] = 64, k.grid[1] = 1, k.grid[2] = 1;
  k.block[0] = 128, k.block[1] = 1, k.block[2] = 1;
  k.argumentIndices = {0, 1, 2, 3};
  return k;
}

std::string readFile(const std::string &path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(KernelCacheTest, StoredEntryLoadsBack) {
  TempDir dir;
  KernelCache cache(dir.path);
  cache.store("k", goodKernel());
  std::optional<GPUKernel> k = cache.load("k", 4);
  ASSERT_TRUE(k.has_value());
  EXPECT_EQ(k->name, "f_recurrent");
  EXPECT_EQ(k->ptx, goodKernel().ptx);
  EXPECT_EQ(k->grid[0], 64u);
  EXPECT_EQ(k->argumentIndices.size(), 4u);
  // Argument indices past the function's arguments: not this function's.
  EXPECT_FALSE(cache.load("k", 3).has_value());
}

// Fields out of range, stored with a valid checksum: the loader's range
// checks, not the checksum, must refuse them.
TEST(KernelCacheTest, FieldsOutOfRangeAreNotLoaded) {
  TempDir dir;
  KernelCache cache(dir.path);
  auto refused = [&](auto mutate) {
    GPUKernel k = goodKernel();
    mutate(k);
    cache.store("k", k);
    return !cache.load("k", 4).has_value();
  };
  EXPECT_TRUE(refused([](GPUKernel &k) { k.name = "1bad"; }));
  EXPECT_TRUE(refused([](GPUKernel &k) { k.name = "a b"; }));
  EXPECT_TRUE(refused([](GPUKernel &k) { k.ptx.clear(); }));
  EXPECT_TRUE(refused([](GPUKernel &k) { k.grid[0] = k.grid[1] = k.grid[2] = 0; }));
  EXPECT_TRUE(refused([](GPUKernel &k) { k.grid[1] = 65536; }));
  EXPECT_TRUE(refused([](GPUKernel &k) { k.grid[0] = 1u << 31; }));
  EXPECT_TRUE(refused([](GPUKernel &k) { k.block[0] = 0; }));
  EXPECT_TRUE(refused([](GPUKernel &k) { k.block[0] = 2048; }));
  EXPECT_TRUE(refused([](GPUKernel &k) { k.block[1] = 2, k.block[0] = 1024; }));
  EXPECT_TRUE(refused([](GPUKernel &k) { k.argumentIndices = {0, 1, 2, 4}; }));
  EXPECT_TRUE(refused([](GPUKernel &k) { k.argumentIndices.clear(); }));
  EXPECT_FALSE(refused([](GPUKernel &) {}));
}

// Entries edited on disk: the checksum or the JSON no longer holds.
TEST(KernelCacheTest, EditedEntriesAreNotLoaded) {
  TempDir dir;
  KernelCache cache(dir.path);
  cache.store("k", goodKernel());
  const std::string good = readFile(dir.entry("k"));
  auto refusedAfter = [&](std::string text) {
    std::ofstream(dir.entry("k"), std::ios::trunc) << text;
    return !cache.load("k", 4).has_value();
  };
  std::string renamed = good;
  renamed.replace(renamed.find("\"name\":\"f_recurrent\""), 20, "\"name\":\"\"");
  EXPECT_TRUE(refusedAfter(renamed)); // the empty name that launched nothing
  std::string grid = good;
  grid.replace(grid.find("\"grid\":[64,1,1]"), 15, "\"grid\":[1099511627776,1,1]");
  EXPECT_TRUE(refusedAfter(grid));
  std::string ptx = good;
  ptx[ptx.find("ret;")] = 'R';
  EXPECT_TRUE(refusedAfter(ptx));
  EXPECT_TRUE(refusedAfter(good.substr(0, good.size() / 2)));
  EXPECT_TRUE(refusedAfter(""));
  EXPECT_TRUE(refusedAfter("[1, 2, 3]"));
  EXPECT_FALSE(refusedAfter(good));
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
  cache.store("fifo", goodKernel());
  EXPECT_TRUE(cache.load("fifo", 4).has_value());
}

TEST(KernelCacheTest, EmptyKernelsAreNotStored) {
  TempDir dir;
  KernelCache cache(dir.path);
  cache.store("k", GPUKernel{});
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
    GPUKernel k = goodKernel();
    k.ptx.append(1 << 16, ' ');
    KernelCache(dir.path).store("k", k);
    std::exit(42);
  };
  EXPECT_EXIT(storeUnderLimit(), ::testing::ExitedWithCode(42), "");
  EXPECT_EQ(dir.files(), 0u);
}
} // namespace
