//===- KernelCache.cpp - on-disk cache of compiled GPU kernels ------------===//
#include "gdn/JIT/KernelCache.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace mlir;
using namespace mlir::gdn::jit;

#include "GDNBuildId.h" // GDN_BUILD_ID: a hash of the compiler's sources

#ifndef GDN_VERSION_STRING
#define GDN_VERSION_STRING "dev"
#endif

std::string KernelCache::defaultDirectory() {
  if (auto dir = llvm::sys::Process::GetEnv("GDN_CACHE_DIR"))
    return *dir == "off" ? std::string() : *dir;
  llvm::SmallString<256> path;
  if (auto xdg = llvm::sys::Process::GetEnv("XDG_CACHE_HOME"))
    path = *xdg;
  else if (llvm::sys::path::home_directory(path))
    llvm::sys::path::append(path, ".cache");
  else
    return "";
  llvm::sys::path::append(path, "gdn-mlir");
  return std::string(path);
}

std::string KernelCache::key(StringRef mlirText, StringRef function,
                             const GPUOptions &options) {
  std::string blob;
  llvm::raw_string_ostream os(blob);
  os << "gdn-mlir " << GDN_VERSION_STRING << '\0' << GDN_BUILD_ID << '\0'
     << function << '\0'
     << options.chip << '\0' << options.smCount << '\0' << options.schedule
     << '\0'
     << mlirText;
  llvm::XXH128_hash_t h = llvm::xxh3_128bits(llvm::arrayRefFromStringRef(blob));
  return llvm::utohexstr(h.high64, /*LowerCase=*/true, 16) +
         llvm::utohexstr(h.low64, /*LowerCase=*/true, 16);
}

namespace {
/// Entries past this size are not ours (a PTX is a few hundred KiB).
constexpr uint64_t kMaxEntryBytes = 64ull << 20;

/// The checksum of an entry: xxh3 over every field, in a fixed order.
std::string checksum(const GPUKernel &k) {
  std::string blob;
  llvm::raw_string_ostream os(blob);
  os << k.name << '\0' << k.ptx << '\0';
  for (int i = 0; i < 3; ++i)
    os << k.grid[i] << ',' << k.block[i] << ',';
  for (unsigned a : k.argumentIndices)
    os << a << ',';
  os << k.programmaticLaunch;
  return llvm::utohexstr(llvm::xxh3_64bits(llvm::arrayRefFromStringRef(blob)),
                         /*LowerCase=*/true, 16);
}

/// A PTX entry name: [A-Za-z_$][A-Za-z0-9_$]*.
bool isIdentifier(StringRef name) {
  if (name.empty() || llvm::isDigit(name.front()))
    return false;
  return llvm::all_of(name, [](char c) {
    return llvm::isAlnum(c) || c == '_' || c == '$';
  });
}

/// The contents of the regular file at `path` (at most kMaxEntryBytes), or
/// nothing. Opened without blocking, so a FIFO never hangs the caller.
std::optional<std::string> readRegularFile(StringRef path) {
  llvm::SmallString<256> p(path);
  int fd = ::open(p.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return std::nullopt;
  struct stat st;
  std::optional<std::string> out;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
      uint64_t(st.st_size) <= kMaxEntryBytes) {
    std::string data(st.st_size, '\0');
    size_t done = 0;
    while (done < data.size()) {
      ssize_t r = ::read(fd, &data[done], data.size() - done);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        break;
      done += r;
    }
    if (done == data.size())
      out = std::move(data);
  }
  ::close(fd);
  return out;
}

/// Every field of a loaded entry in range for a launch of a function with
/// `numArguments` arguments (the CUDA limits of grid and block).
bool inRange(const GPUKernel &k, size_t numArguments) {
  if (!isIdentifier(k.name) || k.ptx.empty())
    return false;
  const uint64_t gridMax[3] = {(1ull << 31) - 1, 65535, 65535};
  const uint64_t blockMax[3] = {1024, 1024, 64};
  uint64_t threads = 1;
  for (int i = 0; i < 3; ++i) {
    if (k.grid[i] < 1 || k.grid[i] > gridMax[i] || k.block[i] < 1 ||
        k.block[i] > blockMax[i])
      return false;
    threads *= k.block[i];
  }
  if (threads > 1024 || k.argumentIndices.empty() ||
      k.argumentIndices.size() > numArguments)
    return false;
  return llvm::all_of(k.argumentIndices,
                      [&](unsigned a) { return a < numArguments; });
}
} // namespace

std::optional<GPUKernel> KernelCache::load(StringRef key,
                                           size_t numArguments) const {
  if (!enabled())
    return std::nullopt;
  llvm::SmallString<256> path(directory);
  llvm::sys::path::append(path, key + ".json");
  std::optional<std::string> text = readRegularFile(path);
  if (!text)
    return std::nullopt;
  auto parsed = llvm::json::parse(*text);
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    return std::nullopt;
  }
  const llvm::json::Object *obj = parsed->getAsObject();
  if (!obj)
    return std::nullopt;
  GPUKernel k;
  auto name = obj->getString("name");
  auto ptx = obj->getString("ptx");
  auto sum = obj->getString("checksum");
  auto programmatic = obj->getBoolean("programmatic_launch");
  const llvm::json::Array *grid = obj->getArray("grid");
  const llvm::json::Array *block = obj->getArray("block");
  const llvm::json::Array *args = obj->getArray("args");
  if (!name || !ptx || !sum || !programmatic || !grid || !block || !args ||
      grid->size() != 3 || block->size() != 3 || args->size() > numArguments)
    return std::nullopt;
  k.name = name->str();
  k.ptx = ptx->str();
  k.programmaticLaunch = *programmatic;
  auto u32 = [](const llvm::json::Value &v) -> std::optional<unsigned> {
    std::optional<int64_t> x = v.getAsInteger();
    if (!x || *x < 0 || *x > int64_t(UINT32_MAX))
      return std::nullopt;
    return unsigned(*x);
  };
  for (int i = 0; i < 3; ++i) {
    auto g = u32((*grid)[i]), b = u32((*block)[i]);
    if (!g || !b)
      return std::nullopt;
    k.grid[i] = *g;
    k.block[i] = *b;
  }
  for (const llvm::json::Value &a : *args) {
    auto idx = u32(a);
    if (!idx)
      return std::nullopt;
    k.argumentIndices.push_back(*idx);
  }
  if (*sum != checksum(k) || !inRange(k, numArguments))
    return std::nullopt;
  return k;
}

void KernelCache::store(StringRef key, const GPUKernel &kernel) const {
  if (!enabled() || kernel.name.empty() ||
      llvm::sys::fs::create_directories(directory))
    return;
  llvm::json::Array args;
  for (unsigned i : kernel.argumentIndices)
    args.push_back(i);
  llvm::json::Object obj{
      {"name", kernel.name},
      {"ptx", kernel.ptx},
      {"grid", llvm::json::Array{kernel.grid[0], kernel.grid[1], kernel.grid[2]}},
      {"block", llvm::json::Array{kernel.block[0], kernel.block[1], kernel.block[2]}},
      {"args", std::move(args)},
      {"programmatic_launch", kernel.programmaticLaunch},
      {"checksum", checksum(kernel)}};
  llvm::SmallString<256> path(directory), tmp;
  llvm::sys::path::append(path, key + ".json");
  int fd;
  if (llvm::sys::fs::createUniqueFile(path + ".tmp-%%%%%%", fd, tmp))
    return;
  bool written;
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << llvm::json::Value(std::move(obj));
    os.close();
    // A failed write (ENOSPC, EIO) must not reach the stream's destructor,
    // which would abort the host process: clear it and drop the entry.
    written = !os.has_error();
    os.clear_error();
  }
  if (!written || llvm::sys::fs::rename(tmp, path))
    llvm::sys::fs::remove(tmp);
}
