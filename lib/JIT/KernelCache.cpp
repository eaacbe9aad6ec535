//===- KernelCache.cpp - on-disk cache of compiled GPU kernels ------------===//
#include "gdn/JIT/KernelCache.h"

#include "llvm/Config/llvm-config.h"
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
using namespace mlir::gdn;
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
  // LLVM's version too: with a shared libLLVM an upgrade changes the PTX
  // that the same gdn sources compile to.
  os << "gdn-mlir " << GDN_VERSION_STRING << '\0' << GDN_BUILD_ID << '\0'
     << "llvm " << LLVM_VERSION_STRING << '\0'
     << kFormat << '\0'
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

/// The checksum of the entry of `key`: xxh3 over the key and every field,
/// in a fixed order.
std::string checksum(StringRef key, const GPUProgram &p) {
  std::string blob;
  llvm::raw_string_ostream os(blob);
  os << KernelCache::kFormat << '\0' << key << '\0';
  for (const std::string &ptx : p.modules)
    os << ptx.size() << ':' << ptx << '\0';
  for (const GPULaunch &l : p.launches) {
    os << l.kernel << '\0' << l.module << ',';
    for (int i = 0; i < 3; ++i)
      os << l.grid[i] << ',' << l.block[i] << ',';
    os << l.dynamicSharedMemoryBytes << ',' << stringifyLaunchMode(l.mode)
       << ':';
    for (unsigned a : l.argumentIndices)
      os << a << ',';
    os << '\0';
  }
  // Absent from entries without workspaces, whose checksums stay as they were.
  for (int64_t w : p.workspaceBytes)
    os << "workspace:" << w << '\0';
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

/// Whether the JSON `text` nests at most `maxDepth` arrays and objects
/// (strings skipped): llvm::json::parse recurses once a level, so a garbled
/// or hostile entry of "[[[[..." would overflow the caller's stack. Entries
/// nest 4 deep.
bool nestsAtMost(StringRef text, unsigned maxDepth) {
  unsigned depth = 0;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    if (c == '"') {
      for (++i; i < e && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
    } else if (c == '[' || c == '{') {
      if (++depth > maxDepth)
        return false;
    } else if ((c == ']' || c == '}') && depth) {
      --depth;
    }
  }
  return true;
}

/// Every field of a loaded launch in range for a program of `numModules`
/// modules and a function of `numArguments` arguments and workspaces (the
/// CUDA limits of grid and block).
bool inRange(const GPULaunch &l, size_t numModules, size_t numArguments) {
  if (!isIdentifier(l.kernel) || l.module >= numModules ||
      l.dynamicSharedMemoryBytes > kMaxDynamicSharedMemoryBytes ||
      l.mode == LaunchMode::programmatic) // a schedule pin, never a launch's
    return false;
  const uint64_t gridMax[3] = {(1ull << 31) - 1, 65535, 65535};
  const uint64_t blockMax[3] = {1024, 1024, 64};
  uint64_t threads = 1;
  for (int i = 0; i < 3; ++i) {
    if (l.grid[i] < 1 || l.grid[i] > gridMax[i] || l.block[i] < 1 ||
        l.block[i] > blockMax[i])
      return false;
    threads *= l.block[i];
  }
  // An argument may repeat (a state updated in place is the initial and the
  // final state): the count is bounded by the runners', each index by the
  // function's.
  if (threads > 1024 || l.argumentIndices.empty() ||
      l.argumentIndices.size() > kMaxKernelParameters)
    return false;
  return llvm::all_of(l.argumentIndices,
                      [&](unsigned a) { return a < numArguments; });
}

/// `v` as an unsigned 32-bit integer, or nothing.
std::optional<unsigned> u32(const llvm::json::Value &v) {
  std::optional<int64_t> x = v.getAsInteger();
  if (!x || *x < 0 || *x > int64_t(UINT32_MAX))
    return std::nullopt;
  return unsigned(*x);
}

/// `v` as three unsigned 32-bit integers into `out`; false if it is not.
bool dim3(const llvm::json::Value *v, unsigned out[3]) {
  const llvm::json::Array *a = v ? v->getAsArray() : nullptr;
  if (!a || a->size() != 3)
    return false;
  for (int i = 0; i < 3; ++i) {
    std::optional<unsigned> x = u32((*a)[i]);
    if (!x)
      return false;
    out[i] = *x;
  }
  return true;
}

/// One element of the entry's "launches", or nothing.
std::optional<GPULaunch> parseLaunch(const llvm::json::Value &v) {
  const llvm::json::Object *obj = v.getAsObject();
  if (!obj)
    return std::nullopt;
  GPULaunch l;
  auto kernel = obj->getString("kernel");
  auto mode = obj->getString("launch");
  const llvm::json::Value *module = obj->get("module");
  const llvm::json::Value *shared = obj->get("dynamic_shared_memory");
  const llvm::json::Array *args = obj->getArray("args");
  if (!kernel || !mode || !module || !shared || !args ||
      !dim3(obj->get("grid"), l.grid) || !dim3(obj->get("block"), l.block))
    return std::nullopt;
  std::optional<LaunchMode> launchMode = symbolizeLaunchMode(*mode);
  std::optional<unsigned> moduleIndex = u32(*module), sharedBytes = u32(*shared);
  if (!launchMode || !moduleIndex || !sharedBytes)
    return std::nullopt;
  l.kernel = kernel->str();
  l.mode = *launchMode;
  l.module = *moduleIndex;
  l.dynamicSharedMemoryBytes = *sharedBytes;
  for (const llvm::json::Value &a : *args) {
    std::optional<unsigned> idx = u32(a);
    if (!idx)
      return std::nullopt;
    l.argumentIndices.push_back(*idx);
  }
  return l;
}
} // namespace

std::optional<GPUProgram> KernelCache::load(StringRef key,
                                            size_t numArguments) const {
  if (!enabled())
    return std::nullopt;
  llvm::SmallString<256> path(directory);
  llvm::sys::path::append(path, key + ".json");
  std::optional<std::string> text = readRegularFile(path);
  if (!text || !nestsAtMost(*text, /*maxDepth=*/8))
    return std::nullopt;
  auto parsed = llvm::json::parse(*text);
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    return std::nullopt;
  }
  const llvm::json::Object *obj = parsed->getAsObject();
  if (!obj)
    return std::nullopt;
  // An entry of another format (an older build's single kernel): a miss.
  std::optional<int64_t> format = obj->getInteger("format");
  auto sum = obj->getString("checksum");
  // An entry holds its own key: one copied or renamed to another key's
  // name (a valid program of another kernel) misses.
  auto storedKey = obj->getString("key");
  const llvm::json::Array *modules = obj->getArray("modules");
  const llvm::json::Array *launches = obj->getArray("launches");
  if (!format || *format != kFormat || !sum || !storedKey ||
      *storedKey != key || !modules || !launches || modules->empty() ||
      launches->empty())
    return std::nullopt;
  GPUProgram p;
  for (const llvm::json::Value &m : *modules) {
    std::optional<StringRef> ptx = m.getAsString();
    if (!ptx || ptx->empty())
      return std::nullopt;
    p.modules.push_back(ptx->str());
  }
  for (const llvm::json::Value &v : *launches) {
    std::optional<GPULaunch> l = parseLaunch(v);
    if (!l)
      return std::nullopt;
    p.launches.push_back(std::move(*l));
  }
  if (const llvm::json::Array *workspaces = obj->getArray("workspaces"))
    for (const llvm::json::Value &w : *workspaces) {
      std::optional<int64_t> bytes = w.getAsInteger();
      if (!bytes || *bytes < 0 || *bytes > kMaxArgumentBytes)
        return std::nullopt;
      p.workspaceBytes.push_back(*bytes);
    }
  for (const GPULaunch &l : p.launches)
    if (!inRange(l, p.modules.size(), numArguments + p.workspaceBytes.size()))
      return std::nullopt;
  if (*sum != checksum(key, p))
    return std::nullopt;
  return p;
}

void KernelCache::store(StringRef key, const GPUProgram &program) const {
  if (!enabled() || program.launches.empty() ||
      llvm::sys::fs::create_directories(directory))
    return;
  llvm::json::Array modules, launches;
  for (const std::string &ptx : program.modules)
    modules.push_back(ptx);
  for (const GPULaunch &l : program.launches) {
    llvm::json::Array args;
    for (unsigned i : l.argumentIndices)
      args.push_back(i);
    launches.push_back(llvm::json::Object{
        {"kernel", l.kernel},
        {"module", l.module},
        {"grid", llvm::json::Array{l.grid[0], l.grid[1], l.grid[2]}},
        {"block", llvm::json::Array{l.block[0], l.block[1], l.block[2]}},
        {"dynamic_shared_memory", l.dynamicSharedMemoryBytes},
        {"args", std::move(args)},
        {"launch", stringifyLaunchMode(l.mode)}});
  }
  llvm::json::Object obj{{"format", kFormat},
                         {"key", key},
                         {"modules", std::move(modules)},
                         {"launches", std::move(launches)},
                         {"checksum", checksum(key, program)}};
  if (!program.workspaceBytes.empty())
    obj["workspaces"] = llvm::json::Array(program.workspaceBytes);
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
