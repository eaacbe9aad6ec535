//===- GDN.cpp - C API of the gdn compiler and runtime --------------------===//
#include "gdn-c/GDN.h"

#include "gdn/Conversion/GDNToGPU/GPUTarget.h"
#include "gdn/Conversion/GDNToGPU/Schedule.h"
#include "gdn/Conversion/GDNToGPU/VerifyMode.h"
#include "gdn/InitAllGDN.h"
#include "gdn/JIT/Compiler.h"
#include "gdn/JIT/KernelCache.h"
#include "gdn/Runtime/CudaDriver.h"
#include "gdn/Support/ParseLimits.h"

#include "RecurrentBuilder.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstddef>
#include <cstring>
#include <map>
#include <condition_variable>
#include <mutex>
#include <shared_mutex>
#include <utility>

using namespace mlir;
using namespace mlir::gdn;
using namespace mlir::gdn::jit;
namespace rt = ::gdn::runtime;

#ifndef GDN_VERSION_STRING
#define GDN_VERSION_STRING "dev"
#endif

namespace {
thread_local std::string lastError;

gdnStatus fail(gdnStatus status, const llvm::Twine &message) {
  lastError = message.str();
  return status;
}
gdnStatus ok() {
  lastError.clear();
  return GDN_OK;
}

/// One process-wide driver per device, opened on first use and kept for the
/// life of the process (closing it would unbind the caller's context).
rt::Status driverFor(int device, rt::CudaDriver *&out) {
  static std::mutex mu;
  static std::map<int, rt::CudaDriver *> drivers;
  std::lock_guard<std::mutex> lock(mu);
  auto it = drivers.find(device);
  if (it != drivers.end()) {
    out = it->second;
    return rt::Status::success();
  }
  std::unique_ptr<rt::CudaDriver> drv;
  rt::Status st = rt::CudaDriver::open(device, drv);
  if (!st)
    return st;
  out = drivers[device] = drv.release();
  return st;
}

} // namespace

struct gdnCompilerImpl;

struct gdnKernelImpl {
  gdnCompilerImpl *owner; // its compiler, which frees it
  gdnTarget target;
  Signature signature;
  std::vector<std::string> names;
  std::unique_ptr<CPUProgram> cpu;
  GPUProgram gpu;
  std::mutex mu;
  /// Per device: the function of each launch of `gpu`, in order (the
  /// modules loaded once each).
  std::map<int, std::vector<rt::CUfunction>> functions;
};

struct gdnCompilerImpl {
  gdnCompilerImpl() : context(makeRegistry()), disk(KernelCache::defaultDirectory()) {
    context.loadAllAvailableDialects();
    // gdnGetLastError's text: the diagnostics, not the op's generic dump.
    context.printOpOnDiagnostic(false);
  }
  static DialectRegistry makeRegistry() {
    DialectRegistry registry;
    registerGDNDialect(registry);
    registerGDNDependentDialects(registry);
    return registry;
  }
  MLIRContext context;
  std::mutex mu;
  llvm::StringMap<std::unique_ptr<gdnKernelImpl>> kernels;
  KernelCache disk;
  /// Entry points in flight on this compiler or its kernels (Hold):
  /// gdnCompilerDestroy waits for them to return before it frees either.
  std::mutex callsMu;
  std::condition_variable callsDone;
  int calls = 0;
};

namespace {
/// An entry point's hold on a live compiler (directly or through one of its
/// kernels) for as long as it uses it; false for a handle that is not live.
/// Holds nest (a query calling another takes two).
class Hold {
public:
  Hold() = default;
  explicit Hold(gdnCompilerImpl *c) : c(c) {}
  Hold(Hold &&other) noexcept : c(std::exchange(other.c, nullptr)) {}
  Hold(const Hold &) = delete;
  Hold &operator=(const Hold &) = delete;
  ~Hold() {
    if (!c)
      return;
    std::lock_guard<std::mutex> lock(c->callsMu);
    if (--c->calls == 0)
      c->callsDone.notify_all();
  }
  explicit operator bool() const { return c != nullptr; }

private:
  gdnCompilerImpl *c = nullptr;
};

/// The live compiler and kernel handles, each with its kind: every entry
/// point checks its handle here, so one used after gdnCompilerDestroy (or
/// never created, or a kernel passed as a compiler and the reverse) is an
/// error, not a read of freed or foreign memory. Kernels are registered by
/// their compiler and leave with it.
class Handles {
public:
  enum class Kind { compiler, kernel };
  static Handles &get() {
    static Handles *handles = new Handles(); // never destroyed: hosts may
    return *handles;                         // call us from atexit handlers
  }
  void add(const void *h, Kind kind) {
    std::unique_lock<std::shared_mutex> lock(mu);
    live[h] = kind;
  }
  /// Removes `h`; false if it was not a live handle of `kind`.
  bool remove(const void *h, Kind kind) {
    std::unique_lock<std::shared_mutex> lock(mu);
    auto it = live.find(h);
    if (it == live.end() || it->second != kind)
      return false;
    live.erase(it);
    return true;
  }
  /// A hold on `h`'s compiler if `h` is a live handle of `kind`. Taken
  /// under the lock remove() takes, so once a compiler's handles are
  /// removed no hold on it begins.
  Hold hold(const void *h, Kind kind) {
    std::shared_lock<std::shared_mutex> lock(mu);
    auto it = live.find(h);
    if (it == live.end() || it->second != kind)
      return Hold();
    auto *c = kind == Kind::compiler
                  ? const_cast<gdnCompilerImpl *>(
                        static_cast<const gdnCompilerImpl *>(h))
                  : static_cast<const gdnKernelImpl *>(h)->owner;
    std::lock_guard<std::mutex> calls(c->callsMu);
    ++c->calls;
    return Hold(c);
  }

private:
  std::shared_mutex mu;
  llvm::DenseMap<const void *, Kind> live;
};

/// A hold on a live handle (false: NULL, destroyed, never created or of
/// the other kind); an entry point keeps it while it uses the handle.
Hold isLive(gdnCompiler c) {
  return c ? Handles::get().hold(c, Handles::Kind::compiler) : Hold();
}
Hold isLive(gdnKernel k) {
  return k ? Handles::get().hold(k, Handles::Kind::kernel) : Hold();
}
} // namespace

extern "C" const char *gdnVersion(void) { return GDN_VERSION_STRING; }

extern "C" const char *gdnChipForDevice(int major, int minor) {
  const GPUTarget *target = chipForDevice(major, minor);
  return target ? target->chip.data() : nullptr;
}
extern "C" const char *gdnGetLastError(void) { return lastError.c_str(); }

extern "C" gdnStatus gdnChooseVerifyMode(gdnDType state_dtype, int64_t T,
                                         int64_t N, int64_t layers,
                                         double expected_accepted, int tree,
                                         gdnVerifyMode *mode) {
  auto bad = [](const llvm::Twine &what) {
    return fail(GDN_ERROR_INVALID_ARGUMENT, "gdnChooseVerifyMode: " + what);
  };
  if (!mode)
    return bad("mode is NULL");
  if (state_dtype != GDN_DTYPE_F32 && state_dtype != GDN_DTYPE_BF16 &&
      state_dtype != GDN_DTYPE_F16)
    return bad("state_dtype must be GDN_DTYPE_F32, _BF16 or _F16, got " +
               llvm::Twine(int(state_dtype)));
  for (auto [value, name] : {std::pair{T, "T"}, {N, "N"}, {layers, "layers"}})
    if (value < 1)
      return bad(llvm::Twine(name) + " must be >= 1, got " + llvm::Twine(value));
  // (NaN fails both comparisons.)
  if (!(expected_accepted >= 0 && expected_accepted <= double(T)))
    return bad("expected_accepted must be in [0, T = " + llvm::Twine(T) +
               "], got " + llvm::formatv("{0}", expected_accepted));
  VerifyRound round{state_dtype == GDN_DTYPE_F32 ? 4 : 2, T, N, layers,
                    expected_accepted, tree != 0};
  *mode = chooseVerifyMode(round) == VerifyMode::Replay ? GDN_VERIFY_REPLAY
                                                        : GDN_VERIFY_SNAPSHOTS;
  return ok();
}

extern "C" gdnStatus gdnCompilerCreate(gdnCompiler *compiler) {
  if (!compiler)
    return fail(GDN_ERROR_INVALID_ARGUMENT, "gdnCompilerCreate: compiler is NULL");
  *compiler = new gdnCompilerImpl();
  Handles::get().add(*compiler, Handles::Kind::compiler);
  return ok();
}

extern "C" void gdnCompilerDestroy(gdnCompiler compiler) {
  if (!compiler ||
      !Handles::get().remove(compiler, Handles::Kind::compiler))
    return; // NULL, destroyed already or never created: nothing to free
  {
    std::lock_guard<std::mutex> lock(compiler->mu);
    for (auto &entry : compiler->kernels)
      Handles::get().remove(entry.second.get(), Handles::Kind::kernel);
  }
  // No hold begins now; wait for those in flight (a compile, a run in
  // another thread) to end before freeing what they use.
  {
    std::unique_lock<std::mutex> lock(compiler->callsMu);
    compiler->callsDone.wait(lock, [&] { return compiler->calls == 0; });
  }
  delete compiler;
}

/// Compiles the module `makeModule` returns (null after a diagnostic) under
/// the compiler's lock, with `keyText` (the module's text) in the disk
/// cache's key; diagnostics, with locations in `sourceMgr`'s buffers,
/// become the error message.
static gdnStatus
compile(gdnCompiler c, llvm::SourceMgr &sourceMgr,
        llvm::function_ref<OwningOpRef<ModuleOp>(std::string &keyText)>
            makeModule,
        StringRef function, gdnTarget target, const GPUOptions &options,
        const std::string &cacheKey, gdnKernel *out) {
  auto it = c->kernels.find(cacheKey);
  if (it != c->kernels.end()) {
    *out = it->second.get();
    return ok();
  }
  std::string diagnostics;
  llvm::raw_string_ostream diagOS(diagnostics);
  SourceMgrDiagnosticHandler handler(sourceMgr, &c->context, diagOS);
  std::string text;
  OwningOpRef<ModuleOp> module = makeModule(text);
  if (!module)
    return fail(GDN_ERROR_COMPILE,
                "the MLIR did not parse or verify:\n" + diagnostics);
  FailureOr<Signature> sig = analyze(*module, function);
  if (failed(sig))
    return fail(GDN_ERROR_COMPILE, diagnostics);
  auto kernel = std::make_unique<gdnKernelImpl>();
  kernel->owner = c;
  kernel->target = target;
  kernel->signature = *sig;
  for (const Argument &a : sig->arguments)
    kernel->names.push_back(roleName(a.role).str());
  if (target == GDN_TARGET_CPU) {
    auto program = compileForCPU(*module, *sig);
    if (failed(program))
      return fail(GDN_ERROR_COMPILE, diagnostics);
    kernel->cpu = std::move(*program);
  } else {
    std::string key = KernelCache::key(text, sig->function, options);
    if (std::optional<GPUProgram> cached =
            c->disk.load(key, sig->arguments.size())) {
      kernel->gpu = std::move(*cached);
    } else {
      FailureOr<GPUProgram> gpu = compileForGPU(*module, *sig, options);
      if (failed(gpu))
        return fail(GDN_ERROR_COMPILE, diagnostics);
      kernel->gpu = std::move(*gpu);
      c->disk.store(key, kernel->gpu);
    }
  }
  *out = kernel.get();
  Handles::get().add(kernel.get(), Handles::Kind::kernel);
  c->kernels[cacheKey] = std::move(kernel);
  return ok();
}

extern "C" gdnStatus gdnCompileText(gdnCompiler c, const char *mlir,
                                    const char *function, gdnTarget target,
                                    const char *chip, gdnKernel *kernel) {
  if (!c || !mlir || !kernel)
    return fail(GDN_ERROR_INVALID_ARGUMENT,
                "gdnCompileText: compiler, mlir and kernel must not be NULL");
  Hold use = isLive(c);
  if (!use)
    return fail(GDN_ERROR_INVALID_ARGUMENT,
                "gdnCompileText: compiler is not a live handle (destroyed?)");
  if (target != GDN_TARGET_CPU && target != GDN_TARGET_CUDA)
    return fail(GDN_ERROR_INVALID_ARGUMENT, "gdnCompileText: unknown target");
  std::string chipName = chip ? chip : "sm_90a";
  std::string fn = function ? function : "";
  std::string key = std::string(target == GDN_TARGET_CPU ? "cpu" : "cuda") +
                    '\0' + chipName + '\0' + fn + '\0' + mlir;
  std::lock_guard<std::mutex> lock(c->mu);
  GPUOptions options;
  options.chip = chipName;
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(mlir, "gdn-input",
                                       /*RequiresNullTerminator=*/false),
      llvm::SMLoc());
  auto parse = [&](std::string &keyText) {
    keyText = mlir;
    return parseModule(sourceMgr, &c->context);
  };
  return compile(c, sourceMgr, parse, fn, target, options, key, kernel);
}

extern "C" gdnStatus gdnCompileDesc(gdnCompiler c, const gdnRecurrentDesc *desc,
                                    gdnTarget target, const char *chip,
                                    gdnKernel *kernel) {
  if (!c || !desc || !kernel)
    return fail(GDN_ERROR_INVALID_ARGUMENT,
                "gdnCompileDesc: compiler, desc and kernel must not be NULL");
  Hold use = isLive(c);
  if (!use)
    return fail(GDN_ERROR_INVALID_ARGUMENT,
                "gdnCompileDesc: compiler is not a live handle (destroyed?)");
  // Read the header fields alone first: a caller built against another
  // header may have a shorter struct.
  uint32_t header[2];
  std::memcpy(header, desc, sizeof(header));
  if (header[0] != sizeof(gdnRecurrentDesc) || header[1] != GDN_ABI_VERSION)
    return fail(GDN_ERROR_INVALID_ARGUMENT,
                "gdnCompileDesc: desc has struct_size " + llvm::Twine(header[0]) +
                    " and abi_version " + llvm::Twine(header[1]) +
                    ", this library expects " +
                    llvm::Twine(unsigned(sizeof(gdnRecurrentDesc))) + " and " +
                    llvm::Twine(GDN_ABI_VERSION) +
                    " (initialise it with gdnRecurrentDescInit from the "
                    "header of this library)");
  if (desc->has_scale && !std::isfinite(desc->scale))
    return fail(GDN_ERROR_INVALID_ARGUMENT,
                "gdnCompileDesc: scale must be finite, got " +
                    std::to_string(desc->scale));
  if (target != GDN_TARGET_CPU && target != GDN_TARGET_CUDA)
    return fail(GDN_ERROR_INVALID_ARGUMENT, "gdnCompileDesc: unknown target");
  std::string chipName = chip ? chip : "sm_90a";
  // The warm path: a lookup keyed by the raw bytes of the description (its
  // schedule pointer zeroed) and the schedule's text.
  std::string scheduleText = desc->schedule ? desc->schedule : "";
  std::string bytes(reinterpret_cast<const char *>(desc), sizeof(*desc));
  std::memset(bytes.data() + offsetof(gdnRecurrentDesc, schedule), 0,
              sizeof(desc->schedule));
  std::string key = std::string(target == GDN_TARGET_CPU ? "desc-cpu" : "desc-cuda") +
                    '\0' + chipName + '\0' + bytes + '\0' + scheduleText;
  std::lock_guard<std::mutex> lock(c->mu);
  auto it = c->kernels.find(key);
  if (it != c->kernels.end()) {
    *kernel = it->second.get();
    return ok();
  }
  ScheduleAttr schedule;
  if (!StringRef(scheduleText).trim().empty()) {
    std::string error;
    schedule = ScheduleAttr::parseText(scheduleText, &c->context, error);
    if (!schedule)
      return fail(GDN_ERROR_INVALID_ARGUMENT, "gdnCompileDesc: schedule " + error);
  }
  std::string error;
  OwningOpRef<ModuleOp> built =
      buildRecurrentModule(*desc, schedule, &c->context, error);
  if (!built)
    return fail(GDN_ERROR_INVALID_ARGUMENT, "gdnCompileDesc: " + error);
  if (desc->sm_count < 0 || desc->sm_count > kMaxSMCount)
    return fail(GDN_ERROR_INVALID_ARGUMENT,
                "gdnCompileDesc: sm_count must be in [0, " +
                    llvm::Twine(kMaxSMCount) + "], got " +
                    llvm::Twine(desc->sm_count));
  GPUOptions options;
  options.chip = chipName;
  options.smCount = desc->sm_count;
  // The built module's ops have no source location; printed into a buffer
  // named after this call and parsed back (which verifies it), they do, so
  // a diagnostic reads `gdnCompileDesc:LINE:COL: error: ...` with the
  // offending line of the module below it, as from gdn-opt.
  llvm::SourceMgr sourceMgr;
  auto parseBuilt = [&](std::string &keyText) -> OwningOpRef<ModuleOp> {
    llvm::raw_string_ostream(keyText) << *built;
    sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(keyText, "gdnCompileDesc"),
        llvm::SMLoc());
    return parseModule(sourceMgr, &c->context);
  };
  return compile(c, sourceMgr, parseBuilt, kDescFunctionName, target, options,
                 key, kernel);
}

extern "C" int gdnKernelNumArguments(gdnKernel k) {
  return isLive(k) ? static_cast<int>(k->names.size()) : -1;
}

/// Whether `i` indexes an argument of `k` (which the caller holds).
static bool hasArgument(gdnKernel k, int i) {
  return i >= 0 && i < static_cast<int>(k->names.size());
}

extern "C" const char *gdnKernelArgumentName(gdnKernel k, int i) {
  Hold use = isLive(k);
  if (!use || !hasArgument(k, i))
    return nullptr;
  return k->names[i].c_str();
}

extern "C" int64_t gdnKernelArgumentBytes(gdnKernel k, int i) {
  Hold use = isLive(k);
  if (!use || !hasArgument(k, i))
    return -1;
  return k->signature.arguments[i].bytes();
}

extern "C" int gdnKernelArgumentDType(gdnKernel k, int i) {
  Hold use = isLive(k);
  if (!use || !hasArgument(k, i))
    return -1;
  Type t = k->signature.arguments[i].elementType;
  return t.isF32()          ? GDN_DTYPE_F32
         : t.isBF16()       ? GDN_DTYPE_BF16
         : t.isF16()        ? GDN_DTYPE_F16
         : isa<Float8E4M3FNType>(t) ? GDN_DTYPE_F8E4M3
         : t.isInteger(32)  ? GDN_DTYPE_I32
         : t.isInteger(64)  ? GDN_DTYPE_I64
                            : -1;
}

extern "C" int gdnKernelArgumentRank(gdnKernel k, int i) {
  Hold use = isLive(k);
  if (!use || !hasArgument(k, i))
    return -1;
  return static_cast<int>(k->signature.arguments[i].shape.size());
}

extern "C" int64_t gdnKernelArgumentDim(gdnKernel k, int i, int dim) {
  Hold use = isLive(k);
  if (!use || !hasArgument(k, i) || dim < 0 ||
      dim >= static_cast<int>(k->signature.arguments[i].shape.size()))
    return -1;
  return k->signature.arguments[i].shape[dim];
}

extern "C" int64_t gdnKernelArgumentStride(gdnKernel k, int i, int dim) {
  Hold use = isLive(k);
  if (!use || !hasArgument(k, i) || dim < 0 ||
      dim >= static_cast<int>(k->signature.arguments[i].shape.size()))
    return -1;
  return k->signature.arguments[i].strides[dim];
}

extern "C" int64_t gdnKernelArgumentOffset(gdnKernel k, int i) {
  Hold use = isLive(k);
  if (!use || !hasArgument(k, i))
    return -1;
  return k->signature.arguments[i].offset;
}

extern "C" int gdnKernelArgumentWritten(gdnKernel k, int i) {
  Hold use = isLive(k);
  if (!use || !hasArgument(k, i))
    return -1;
  return isOutput(k->signature.arguments[i].role) ? 1 : 0;
}

extern "C" int gdnKernelNumLaunches(gdnKernel k) {
  Hold use = isLive(k);
  if (!use || k->target != GDN_TARGET_CUDA)
    return -1;
  return static_cast<int>(k->gpu.launches.size());
}

/// Launch `i` of CUDA kernel `k`, or null for a bad handle or index.
static const GPULaunch *launchAt(gdnKernel k, int i) {
  if (i < 0 || i >= gdnKernelNumLaunches(k))
    return nullptr;
  return &k->gpu.launches[i];
}

extern "C" const char *gdnKernelLaunchName(gdnKernel k, int i) {
  Hold use = isLive(k);
  const GPULaunch *l = launchAt(k, i);
  return l ? l->kernel.c_str() : nullptr;
}

extern "C" const char *gdnKernelLaunchPTX(gdnKernel k, int i) {
  Hold use = isLive(k);
  const GPULaunch *l = launchAt(k, i);
  return l ? k->gpu.modules[l->module].c_str() : nullptr;
}

extern "C" const char *gdnKernelPTX(gdnKernel k) {
  if (gdnKernelNumLaunches(k) == 0)
    return ""; // launches nothing
  return gdnKernelLaunchPTX(k, 0);
}

/// The checks of a run or launch of `k`, which the caller holds (`use`).
static gdnStatus checkArgs(const Hold &use, gdnKernel k, void *const *args,
                           int n, const char *what) {
  if (!k || !args)
    return fail(GDN_ERROR_INVALID_ARGUMENT,
                llvm::Twine(what) + ": kernel and args must not be NULL");
  if (!use)
    return fail(GDN_ERROR_INVALID_ARGUMENT,
                llvm::Twine(what) +
                    ": kernel is not a live handle (its compiler destroyed?)");
  if (n != static_cast<int>(k->names.size()))
    return fail(GDN_ERROR_INVALID_ARGUMENT,
                llvm::Twine(what) + ": expected " + llvm::Twine(k->names.size()) +
                    " arguments, got " + llvm::Twine(n));
  // NULL is fine for an empty buffer (0 bytes: never addressed), as
  // allocators return for empty tensors (e.g. state_indices with N = 0).
  for (int i = 0; i < n; ++i)
    if (!args[i] && k->signature.arguments[i].bytes() != 0)
      return fail(GDN_ERROR_INVALID_ARGUMENT,
                  llvm::Twine(what) + ": argument " + llvm::Twine(i) + " ('" +
                      k->names[i] + "') is NULL");
  return GDN_OK;
}

extern "C" gdnStatus gdnKernelLaunch(gdnKernel k, void *const *args,
                                     int numArgs, void *stream) {
  Hold use = isLive(k);
  if (gdnStatus s = checkArgs(use, k, args, numArgs, "gdnKernelLaunch"))
    return s;
  if (k->target != GDN_TARGET_CUDA)
    return fail(GDN_ERROR_UNSUPPORTED,
                "gdnKernelLaunch: this kernel was compiled for the CPU; use "
                "gdnKernelRunHost");
  for (int i = 0; i < numArgs; ++i)
    if (reinterpret_cast<uintptr_t>(args[i]) % 16 != 0)
      return fail(GDN_ERROR_INVALID_ARGUMENT,
                  "gdnKernelLaunch: argument " + llvm::Twine(i) + " ('" +
                      k->names[i] + "') is not 16-byte aligned");
  if (k->gpu.launches.empty()) // no sequence (varlen with N = 0): nothing to do
    return ok();
  int device = 0;
  if (rt::Status st = rt::CudaDriver::currentDevice(device); !st)
    return fail(GDN_ERROR_NO_DEVICE, st.message);
  rt::CudaDriver *drv = nullptr;
  if (rt::Status st = driverFor(device, drv); !st)
    return fail(GDN_ERROR_NO_DEVICE, st.message);
  const std::vector<GPULaunch> &launches = k->gpu.launches;
  const std::vector<rt::CUfunction> *functions;
  {
    std::lock_guard<std::mutex> lock(k->mu);
    auto it = k->functions.find(device);
    if (it == k->functions.end()) {
      std::vector<rt::CUmodule> modules(k->gpu.modules.size(), nullptr);
      std::vector<rt::CUfunction> fns;
      for (const GPULaunch &l : launches) {
        rt::CUmodule &module = modules[l.module];
        if (!module)
          if (rt::Status st = drv->loadModule(k->gpu.modules[l.module], module);
              !st)
            return fail(GDN_ERROR_CUDA, st.message);
        rt::CUfunction fn;
        if (rt::Status st = drv->getFunction(module, l.kernel, fn); !st)
          return fail(GDN_ERROR_CUDA, st.message);
        fns.push_back(fn);
      }
      it = k->functions.emplace(device, std::move(fns)).first;
    }
    functions = &it->second; // never erased: stable outside the lock
  }
  // Kernel parameters point at the caller's argument values: no allocation.
  // The whole list is checked before any launch is issued (compileForGPU
  // and the kernel cache already refuse more parameters).
  for (const GPULaunch &l : launches)
    if (l.argumentIndices.size() > kMaxKernelParameters)
      return fail(GDN_ERROR_UNSUPPORTED,
                  "gdnKernelLaunch: too many kernel parameters");
  // Workspaces (scratch between the launches) are stream-ordered
  // allocations: allowed under CUDA graph capture, freed after the last
  // launch whatever happens.
  auto cuStream = static_cast<rt::CUstream>(stream);
  std::vector<void *> all(args, args + numArgs);
  std::vector<rt::CUdeviceptr> workspaces;
  auto freeWorkspaces = [&] {
    for (rt::CUdeviceptr w : workspaces)
      (void)drv->freeAsync(w, cuStream);
  };
  for (int64_t bytes : k->gpu.workspaceBytes) {
    rt::CUdeviceptr w = 0;
    if (rt::Status st = drv->allocAsync(bytes, cuStream, w); !st) {
      freeWorkspaces();
      return fail(GDN_ERROR_CUDA, "gdnKernelLaunch: workspace: " + st.message);
    }
    workspaces.push_back(w);
    all.push_back(reinterpret_cast<void *>(w));
  }
  void *params[kMaxKernelParameters];
  for (size_t i = 0; i < launches.size(); ++i) {
    const GPULaunch &l = launches[i];
    size_t np = l.argumentIndices.size();
    for (size_t p = 0; p < np; ++p)
      params[p] = &all[l.argumentIndices[p]];
    if (rt::Status st = drv->launch((*functions)[i], l.grid, l.block,
                                    l.dynamicSharedMemoryBytes, cuStream,
                                    params, l.isProgrammatic());
        !st) {
      freeWorkspaces();
      return fail(GDN_ERROR_CUDA, "gdnKernelLaunch: launch " + llvm::Twine(i) +
                                      " of " + llvm::Twine(launches.size()) +
                                      " (" + l.kernel + "): " + st.message);
    }
  }
  freeWorkspaces();
  return ok();
}

extern "C" gdnStatus gdnKernelRunHost(gdnKernel k, void *const *args,
                                      int numArgs) {
  Hold use = isLive(k);
  if (gdnStatus s = checkArgs(use, k, args, numArgs, "gdnKernelRunHost"))
    return s;
  if (k->target != GDN_TARGET_CPU)
    return fail(GDN_ERROR_UNSUPPORTED,
                "gdnKernelRunHost: this kernel was compiled for CUDA; use "
                "gdnKernelLaunch");
  std::vector<void *> buffers(args, args + numArgs);
  if (failed(k->cpu->run(buffers)))
    return fail(GDN_ERROR_INVALID_ARGUMENT, "gdnKernelRunHost: the CPU function failed");
  return ok();
}
