//===- KernelCache.h - on-disk cache of compiled GPU kernels ----*- C++ -*-===//
//
// Compiled kernels (PTX plus launch configuration) stored as one JSON file per
// key under a cache directory, so a new process skips the MLIR pipeline.
// The key hashes everything that changes the PTX: the MLIR text, the function,
// the chip, the schedule options, the compiler's version and its build id (a
// hash of its sources, cmake/GDNBuildId.cmake), so no build is ever served a
// kernel another build generated.
//
//===----------------------------------------------------------------------===//
#ifndef GDN_JIT_KERNELCACHE_H
#define GDN_JIT_KERNELCACHE_H

#include "gdn/JIT/Compiler.h"

#include <optional>
#include <string>

namespace mlir {
namespace gdn {
namespace jit {

class KernelCache {
public:
  /// $GDN_CACHE_DIR, else $XDG_CACHE_HOME/gdn-mlir, else ~/.cache/gdn-mlir;
  /// "" (disabled) when GDN_CACHE_DIR is "off" or no home is known.
  static std::string defaultDirectory();
  /// A 128-bit hex key (xxh3) over the inputs of a GPU compile.
  static std::string key(StringRef mlirText, StringRef function,
                         const GPUOptions &options);

  explicit KernelCache(std::string directory) : directory(std::move(directory)) {}
  bool enabled() const { return !directory.empty(); }
  /// The cached kernel of a function with `numArguments` arguments, or
  /// nothing: a missing entry, or one that is not a regular file (a FIFO, a
  /// device), is too large, does not parse, fails its checksum or holds a
  /// field out of range (an empty or non-identifier name, a grid or block
  /// past the CUDA limits, an argument index >= numArguments). The caller
  /// then compiles; nothing here blocks, aborts or throws.
  std::optional<GPUKernel> load(StringRef key, size_t numArguments) const;
  /// Best effort: writes to a temporary file and renames it into place. Any
  /// I/O failure (a full disk, a read-only directory) leaves no entry and no
  /// temporary file behind. Kernels that launch nothing are not stored.
  void store(StringRef key, const GPUKernel &kernel) const;

private:
  std::string directory;
};

} // namespace jit
} // namespace gdn
} // namespace mlir

#endif // GDN_JIT_KERNELCACHE_H
