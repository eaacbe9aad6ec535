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
     << options.chip << '\0' << options.rowsPerWarp << '\0'
     << options.warpsPerBlock << '\0' << options.vLanes << '\0'
     << options.stageTokens << '\0' << options.unrollTokens << '\0'
     << options.smCount << '\0' << options.overlapReductions << '\0'
     << options.chunkedSolve << '\0' << options.pipelineStages << '\0'
     << options.consumerRegisters << '\0' << options.l2PrefetchDistance << '\0'
     << options.programmaticLaunch << '\0'
     << mlirText;
  llvm::XXH128_hash_t h = llvm::xxh3_128bits(llvm::arrayRefFromStringRef(blob));
  return llvm::utohexstr(h.high64, /*LowerCase=*/true, 16) +
         llvm::utohexstr(h.low64, /*LowerCase=*/true, 16);
}

std::optional<GPUKernel> KernelCache::load(StringRef key) const {
  if (!enabled())
    return std::nullopt;
  llvm::SmallString<256> path(directory);
  llvm::sys::path::append(path, key + ".json");
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return std::nullopt;
  auto parsed = llvm::json::parse((*buffer)->getBuffer());
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
  const llvm::json::Array *grid = obj->getArray("grid");
  const llvm::json::Array *block = obj->getArray("block");
  const llvm::json::Array *args = obj->getArray("args");
  if (!name || !ptx || !grid || !block || !args || grid->size() != 3 ||
      block->size() != 3)
    return std::nullopt;
  k.name = name->str();
  k.ptx = ptx->str();
  for (int i = 0; i < 3; ++i) {
    auto g = (*grid)[i].getAsInteger(), b = (*block)[i].getAsInteger();
    if (!g || !b)
      return std::nullopt;
    k.grid[i] = *g;
    k.block[i] = *b;
  }
  for (const llvm::json::Value &a : *args) {
    auto idx = a.getAsInteger();
    if (!idx)
      return std::nullopt;
    k.argumentIndices.push_back(*idx);
  }
  k.programmaticLaunch = obj->getBoolean("programmatic_launch").value_or(false);
  return k;
}

void KernelCache::store(StringRef key, const GPUKernel &kernel) const {
  if (!enabled() || llvm::sys::fs::create_directories(directory))
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
      {"programmatic_launch", kernel.programmaticLaunch}};
  llvm::SmallString<256> path(directory), tmp;
  llvm::sys::path::append(path, key + ".json");
  int fd;
  if (llvm::sys::fs::createUniqueFile(path + ".tmp-%%%%%%", fd, tmp))
    return;
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << llvm::json::Value(std::move(obj));
  }
  if (llvm::sys::fs::rename(tmp, path))
    llvm::sys::fs::remove(tmp);
}
