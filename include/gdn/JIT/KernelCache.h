//===- KernelCache.h - on-disk cache of compiled GPU kernels ----*- C++ -*-===//
//
// Compiled programs (the PTX of their modules and their launches in order)
// stored as one JSON file per key under a cache directory, so a new process
// skips the MLIR pipeline.
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
  /// The layout of an entry, stored as its "format" and hashed into every
  /// key: entries of another format miss (format 1 held a single kernel,
  /// format 2 did not hold its key).
  static constexpr int64_t kFormat = 3;

  /// $GDN_CACHE_DIR, else $XDG_CACHE_HOME/gdn-mlir, else ~/.cache/gdn-mlir;
  /// "" (disabled) when GDN_CACHE_DIR is "off" or no home is known.
  static std::string defaultDirectory();
  /// A 128-bit hex key (xxh3) over the inputs of a GPU compile.
  static std::string key(StringRef mlirText, StringRef function,
                         const GPUOptions &options);

  explicit KernelCache(std::string directory) : directory(std::move(directory)) {}
  bool enabled() const { return !directory.empty(); }
  /// The cached program of a function with `numArguments` arguments, or
  /// nothing: a missing entry, or one that is not a regular file (a FIFO, a
  /// device), is too large, does not parse, is of another format, fails
  /// its checksum or holds a field out of range (no module or launch, an
  /// empty PTX, an empty or non-identifier kernel name, a module index past
  /// the modules, a grid or block past the CUDA limits, dynamic shared
  /// memory past kMaxDynamicSharedMemoryBytes, the launch mode
  /// `programmatic`, no argument index, more than kMaxKernelParameters or
  /// one >= numArguments; an index may repeat). The caller
  /// then compiles; nothing here blocks, aborts or throws.
  std::optional<GPUProgram> load(StringRef key, size_t numArguments) const;
  /// Best effort: writes to a temporary file and renames it into place. Any
  /// I/O failure (a full disk, a read-only directory) leaves no entry and no
  /// temporary file behind. Programs that launch nothing are not stored.
  void store(StringRef key, const GPUProgram &program) const;

private:
  std::string directory;
};

} // namespace jit
} // namespace gdn
} // namespace mlir

#endif // GDN_JIT_KERNELCACHE_H
