//===- GDN.cpp - C API of the gdn compiler and runtime --------------------===//
#include "gdn-c/GDN.h"

#include "gdn/Conversion/GDNToGPU/GPUTarget.h"
#include "gdn/Conversion/GDNToGPU/Schedule.h"
#include "gdn/InitAllGDN.h"
#include "gdn/JIT/Compiler.h"
#include "gdn/JIT/KernelCache.h"
#include "gdn/Runtime/CudaDriver.h"
#include "gdn/Support/ParseLimits.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <map>
#include <mutex>
#include <shared_mutex>

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

const char *dtypeName(gdnDType t) {
  switch (t) {
  case GDN_DTYPE_F32: return "f32";
  case GDN_DTYPE_BF16: return "bf16";
  case GDN_DTYPE_F16: return "f16";
  case GDN_DTYPE_I32: // index tables: not a dtype of the description
  case GDN_DTYPE_I64: return nullptr;
  }
  return nullptr;
}

/// "" if `dims` x `width` bytes is at most kMaxArgumentBytes, else the error
/// naming `what`.
std::string checkBytes(const char *what, std::initializer_list<int64_t> dims,
                       int64_t width) {
  int64_t bytes = width;
  std::string shape;
  bool over = false;
  for (int64_t x : dims) {
    shape += (shape.empty() ? "" : ", ") + std::to_string(x);
    over |= llvm::MulOverflow(bytes, x, bytes) || bytes > kMaxArgumentBytes;
  }
  if (!over)
    return "";
  return std::string(what) + " [" + shape + "] takes more than 2^40 bytes";
}

/// The sizes of `d`: each field in range (the error names it), and no
/// argument over kMaxArgumentBytes, before any of them reaches the MLIR text.
std::string checkSizes(const gdnRecurrentDesc &d) {
  auto field = [](const char *name, int64_t value, int64_t lo) -> std::string {
    if (value >= lo)
      return "";
    return std::string(name) + " must be >= " + std::to_string(lo) + ", got " +
           std::to_string(value);
  };
  for (std::string e :
       {field("N", d.N, d.cu_seqlens_bits ? 0 : 1), field("T", d.T, 1),
        field("H", d.H, 1), field("HV", d.HV, 1), field("K", d.K, 1),
        field("V", d.V, 1), field("num_slots", d.num_slots, 0),
        field("intermediate_rows", d.intermediate_rows, 0),
        field("intermediate_steps", d.intermediate_steps, 0)})
    if (!e.empty())
      return e;
  if (d.cu_seqlens_bits == 32 && (d.N > INT32_MAX - 1 || d.T > INT32_MAX))
    return "with 32-bit cu_seqlens, N + 1 and T must fit in int32 (N = " +
           std::to_string(d.N) + ", T = " + std::to_string(d.T) + ")";
  if (d.N == INT64_MAX)
    return "N must be < 2^63 - 1";
  int64_t batch = d.cu_seqlens_bits ? 1 : d.N;
  int64_t rows = d.num_slots > 0 ? d.num_slots : d.N;
  for (std::string e :
       {checkBytes("q", {batch, d.T, d.H, d.K}, 4),
        checkBytes("v", {batch, d.T, d.HV, d.V}, 4),
        checkBytes("a", {batch, d.T, d.HV, d.K}, 4),
        checkBytes("beta", {batch, d.T, d.HV, d.V}, 4),
        checkBytes("dt_bias", {d.HV, d.K}, 4),
        checkBytes("state", {rows, d.HV, d.K, d.V}, 4),
        checkBytes("intermediate_states",
                   {d.intermediate_rows, d.intermediate_steps, d.HV, d.K, d.V},
                   4),
        checkBytes("retrieve_parent_token", {d.N, d.intermediate_steps}, 8),
        checkBytes("cu_seqlens", {d.N + 1}, 8)})
    if (!e.empty())
      return e;
  return "";
}

/// The MLIR text of a function `@gdn_recurrent` whose body is the described
/// gdn.recurrent, with the argument order documented in gdn-c/GDN.h.
std::string describeToMLIR(const gdnRecurrentDesc &d, StringRef schedule,
                           std::string &error) {
  if (std::string e = checkSizes(d); !e.empty()) {
    error = e;
    return "";
  }
  const char *in = dtypeName(d.input_dtype), *gate = dtypeName(d.gate_dtype),
             *betaType = dtypeName(d.beta_dtype),
             *stateType = dtypeName(d.state_dtype);
  if (!in || !gate || !betaType || !stateType) {
    error = "unknown dtype in gdnRecurrentDesc";
    return "";
  }
  if (d.decay < GDN_DECAY_NONE || d.decay > GDN_DECAY_FUSED_GATING ||
      d.beta < GDN_BETA_ONE || d.beta > GDN_BETA_LOGITS ||
      d.layout < GDN_LAYOUT_KV || d.layout > GDN_LAYOUT_VK) {
    error = "unknown decay, beta or layout in gdnRecurrentDesc";
    return "";
  }
  if (d.num_slots < 0 || (d.num_slots > 0 && !d.has_initial_state &&
                          !d.has_final_state) ||
      (d.num_slots > 0 && d.state_index_bits != 32 && d.state_index_bits != 64)) {
    error = "a pool (num_slots > 0) needs a state and state_index_bits 32 or 64";
    return "";
  }
  if (d.per_key_decay && d.decay == GDN_DECAY_NONE) {
    error = "per_key_decay needs decay LOG_SPACE or FUSED_GATING";
    return "";
  }
  if (d.per_channel_beta && d.beta == GDN_BETA_ONE) {
    error = "per_channel_beta needs beta GIVEN or LOGITS";
    return "";
  }
  if (d.state_in_place && !(d.has_initial_state && d.has_final_state)) {
    error = "state_in_place needs has_initial_state and has_final_state";
    return "";
  }
  // A memref type; with `strides` (one per dimension, not all 0) a view:
  // strided<[...]>, whose legality the verifier checks. Its span (the bytes
  // a caller's buffer holds) must stay under kMaxArgumentBytes.
  std::string spanError;
  auto memref = [&](std::initializer_list<int64_t> shape, const char *type,
                    const int64_t *strides = nullptr) {
    std::string s = "memref<";
    for (int64_t x : shape)
      s += std::to_string(x) + "x";
    s += type;
    if (!strides || std::all_of(strides, strides + shape.size(),
                                [](int64_t x) { return x == 0; }))
      return s + ">";
    s += ", strided<[";
    int64_t last = 0, i = 0;
    for (int64_t x : shape) {
      int64_t step;
      if (llvm::MulOverflow(x - 1, strides[i] < 0 ? -strides[i] : strides[i],
                            step) ||
          llvm::AddOverflow(last, step, last) ||
          last >= kMaxArgumentBytes / 4)
        spanError = "the strides of a " + s.substr(7) +
                    " view span more than 2^40 bytes";
      s += (i ? ", " : "") + std::to_string(strides[i]);
      ++i;
    }
    return s + "]>>";
  };
  // Dense strides of `shape` with the leading one `pitch` (0: all dense).
  auto pitched = [](std::initializer_list<int64_t> shape, int64_t pitch) {
    std::array<int64_t, 5> strides{};
    if (pitch == 0)
      return strides;
    int64_t n = shape.size(), dense = 1;
    const int64_t *dims = shape.begin();
    for (int64_t i = n - 1; i > 0; --i) {
      strides[i] = dense;
      dense *= dims[i]; // bounded by checkSizes
    }
    strides[0] = pitch;
    return strides;
  };
  if (d.cu_seqlens_bits != 0 && d.cu_seqlens_bits != 32 && d.cu_seqlens_bits != 64) {
    error = "cu_seqlens_bits must be 0, 32 or 64";
    return "";
  }
  int64_t batch = d.cu_seqlens_bits ? 1 : d.N; // rows of the token tensors
  std::string qT = memref({batch, d.T, d.H, d.K}, in, d.q_strides);
  std::string kT = memref({batch, d.T, d.H, d.K}, in, d.k_strides);
  std::string vT = memref({batch, d.T, d.HV, d.V}, in, d.v_strides);
  // Gates per head, or per key channel (KDA) / per value channel.
  std::string gT =
      d.per_key_decay ? memref({batch, d.T, d.HV, d.K}, gate, d.gate_strides)
                      : memref({batch, d.T, d.HV}, gate, d.gate_strides);
  std::string bT =
      d.per_channel_beta
          ? memref({batch, d.T, d.HV, d.V}, betaType, d.beta_strides)
          : memref({batch, d.T, d.HV}, betaType, d.beta_strides);
  std::string hvT = memref({d.HV}, "f32");
  std::string biasT =
      d.per_key_decay ? memref({d.HV * d.K}, "f32") : hvT; // dt_bias
  int64_t rows = d.num_slots > 0 ? d.num_slots : d.N;
  std::string sT =
      d.layout == GDN_LAYOUT_VK
          ? memref({rows, d.HV, d.V, d.K}, stateType,
                   pitched({rows, d.HV, d.V, d.K}, d.state_slot_stride).data())
          : memref({rows, d.HV, d.K, d.V}, stateType,
                   pitched({rows, d.HV, d.K, d.V}, d.state_slot_stride).data());
  std::vector<std::pair<std::string, std::string>> args; // (name, type)
  std::string body = "  gdn.recurrent q(%q : " + qT + ") k(%k : " + kT +
                     ") v(%v : " + vT + ")";
  args = {{"q", qT}, {"k", kT}, {"v", vT}};
  auto operand = [&](const std::string &kw, const std::string &name,
                     const std::string &type) {
    body += " " + kw + "(%" + name + " : " + type + ")";
  };
  auto add = [&](const std::string &name, const std::string &type) {
    args.push_back({name, type});
    operand(name, name, type);
  };
  if (d.decay == GDN_DECAY_LOG_SPACE)
    add("g", gT);
  if (d.decay == GDN_DECAY_FUSED_GATING) {
    add("a", gT);
    add("A_log", hvT);
    add("dt_bias", biasT);
  }
  if (d.beta == GDN_BETA_GIVEN)
    add("beta", bT);
  if (d.beta == GDN_BETA_LOGITS)
    add("b", bT);
  if (d.num_slots > 0)
    add("state_indices", memref({d.N}, d.state_index_bits == 32 ? "i32" : "i64"));
  if (d.cu_seqlens_bits)
    add("cu_seqlens", memref({d.N + 1}, d.cu_seqlens_bits == 32 ? "i32" : "i64"));
  if (d.intermediate_rows < 0 || d.intermediate_steps < 0 ||
      (d.intermediate_rows > 0 && d.intermediate_steps < 1) ||
      (d.intermediate_index_bits != 0 && d.intermediate_index_bits != 32 &&
       d.intermediate_index_bits != 64)) {
    error = "intermediate_rows/steps must be >= 0 (steps >= 1 with rows) and "
            "intermediate_index_bits 0, 32 or 64";
    return "";
  }
  const char *interType = dtypeName(d.intermediate_dtype);
  if (d.intermediate_rows > 0 && !interType) {
    error = "unknown intermediate_dtype";
    return "";
  }
  if (d.intermediate_rows > 0 && d.intermediate_index_bits)
    add("intermediate_state_indices",
        memref({d.N}, d.intermediate_index_bits == 32 ? "i32" : "i64"));
  if (d.parent_index_bits != 0 &&
      ((d.parent_index_bits != 32 && d.parent_index_bits != 64) ||
       d.intermediate_rows < 1)) {
    error = "parent_index_bits must be 0, or 32 or 64 with intermediate_rows > 0";
    return "";
  }
  if (d.parent_index_bits)
    add("retrieve_parent_token", memref({d.N, d.intermediate_steps},
                                        d.parent_index_bits == 32 ? "i32" : "i64"));
  std::string iT;
  if (d.intermediate_rows > 0) {
    int64_t r = d.intermediate_rows, st = d.intermediate_steps;
    iT = d.layout == GDN_LAYOUT_VK
             ? memref({r, st, d.HV, d.V, d.K}, interType,
                      pitched({r, st, d.HV, d.V, d.K},
                              d.intermediate_row_stride)
                          .data())
             : memref({r, st, d.HV, d.K, d.V}, interType,
                      pitched({r, st, d.HV, d.K, d.V},
                              d.intermediate_row_stride)
                          .data());
  }
  if (!spanError.empty()) {
    error = spanError;
    return "";
  }
  if (d.state_in_place) {
    args.push_back({"state", sT});
    operand("initial_state", "state", sT);
    if (!iT.empty())
      add("intermediate_states", iT);
    operand("final_state", "state", sT);
  } else {
    if (d.has_initial_state)
      add("initial_state", sT);
    if (!iT.empty())
      add("intermediate_states", iT);
    if (d.has_final_state)
      add("final_state", sT);
  }
  add("o", memref({batch, d.T, d.HV, d.V}, in)); // dense, v's dtype
  std::string attrs;
  auto attr = [&](const std::string &a) { attrs += (attrs.empty() ? "" : ", ") + a; };
  if (d.qk_l2norm)
    attr("qk_l2norm");
  if (d.allow_neg_eigval)
    attr("allow_neg_eigval");
  if (d.has_scale) {
    std::string s;
    llvm::raw_string_ostream(s) << llvm::format("%.9e", d.scale);
    attr("scale = " + s + " : f32");
  }
  if (d.layout == GDN_LAYOUT_VK)
    attr("state_layout = #gdn.layout<vk>");
  if (!schedule.empty())
    attr("gdn.schedule = " + schedule.str());
  if (!attrs.empty())
    body += " {" + attrs + "}";
  std::string text = "func.func @gdn_recurrent(";
  for (size_t i = 0; i < args.size(); ++i)
    text += (i ? ", %" : "%") + args[i].first + ": " + args[i].second;
  return text + ") {\n" + body + "\n  return\n}\n";
}
} // namespace

struct gdnKernelImpl {
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
};

namespace {
/// The live compiler and kernel handles: every entry point checks its
/// handle here, so one used after gdnCompilerDestroy (or never created) is
/// an error, not a read of freed memory. Kernels are registered by their
/// compiler and leave with it.
class Handles {
public:
  static Handles &get() {
    static Handles *handles = new Handles(); // never destroyed: hosts may
    return *handles;                         // call us from atexit handlers
  }
  void add(const void *h) {
    std::unique_lock<std::shared_mutex> lock(mu);
    live.insert(h);
  }
  /// Removes `h`; false if it was not live.
  bool remove(const void *h) {
    std::unique_lock<std::shared_mutex> lock(mu);
    return live.erase(h);
  }
  bool contains(const void *h) {
    std::shared_lock<std::shared_mutex> lock(mu);
    return live.contains(h);
  }

private:
  std::shared_mutex mu;
  llvm::DenseSet<const void *> live;
};

bool isLive(const void *handle) {
  return handle && Handles::get().contains(handle);
}
} // namespace

extern "C" const char *gdnVersion(void) { return GDN_VERSION_STRING; }

extern "C" const char *gdnChipForDevice(int major, int minor) {
  const GPUTarget *target = chipForDevice(major, minor);
  return target ? target->chip.data() : nullptr;
}
extern "C" const char *gdnGetLastError(void) { return lastError.c_str(); }

extern "C" gdnStatus gdnCompilerCreate(gdnCompiler *compiler) {
  if (!compiler)
    return fail(GDN_ERROR_INVALID_ARGUMENT, "gdnCompilerCreate: compiler is NULL");
  *compiler = new gdnCompilerImpl();
  Handles::get().add(*compiler);
  return ok();
}

extern "C" void gdnCompilerDestroy(gdnCompiler compiler) {
  if (!compiler || !Handles::get().remove(compiler))
    return; // NULL, destroyed already or never created: nothing to free
  {
    std::lock_guard<std::mutex> lock(compiler->mu);
    for (auto &entry : compiler->kernels)
      Handles::get().remove(entry.second.get());
  }
  delete compiler;
}

/// Compiles under the compiler's lock; diagnostics become the error message.
static gdnStatus compile(gdnCompiler c, const std::string &text,
                         StringRef function, gdnTarget target,
                         const GPUOptions &options, const std::string &cacheKey,
                         gdnKernel *out) {
  auto it = c->kernels.find(cacheKey);
  if (it != c->kernels.end()) {
    *out = it->second.get();
    return ok();
  }
  std::string diagnostics;
  llvm::raw_string_ostream diagOS(diagnostics);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(text, "gdn-input",
                                       /*RequiresNullTerminator=*/false),
      llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(sourceMgr, &c->context, diagOS);
  OwningOpRef<ModuleOp> module = parseModule(sourceMgr, &c->context);
  if (!module)
    return fail(GDN_ERROR_COMPILE,
                "the MLIR did not parse or verify:\n" + diagnostics);
  FailureOr<Signature> sig = analyze(*module, function);
  if (failed(sig))
    return fail(GDN_ERROR_COMPILE, diagnostics);
  auto kernel = std::make_unique<gdnKernelImpl>();
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
  Handles::get().add(kernel.get());
  c->kernels[cacheKey] = std::move(kernel);
  return ok();
}

extern "C" gdnStatus gdnCompileText(gdnCompiler c, const char *mlir,
                                    const char *function, gdnTarget target,
                                    const char *chip, gdnKernel *kernel) {
  if (!c || !mlir || !kernel)
    return fail(GDN_ERROR_INVALID_ARGUMENT,
                "gdnCompileText: compiler, mlir and kernel must not be NULL");
  if (!isLive(c))
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
  return compile(c, mlir, fn, target, options, key, kernel);
}

extern "C" gdnStatus gdnCompileDesc(gdnCompiler c, const gdnRecurrentDesc *desc,
                                    gdnTarget target, const char *chip,
                                    gdnKernel *kernel) {
  if (!c || !desc || !kernel)
    return fail(GDN_ERROR_INVALID_ARGUMENT,
                "gdnCompileDesc: compiler, desc and kernel must not be NULL");
  if (!isLive(c))
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
  // The schedule alone first, so that its text cannot reach past the
  // attribute into the op's; the op gets it as printed.
  std::string schedule;
  if (!StringRef(scheduleText).trim().empty()) {
    std::string error;
    ScheduleAttr attr = ScheduleAttr::parseText(scheduleText, &c->context, error);
    if (!attr)
      return fail(GDN_ERROR_INVALID_ARGUMENT, "gdnCompileDesc: schedule " + error);
    llvm::raw_string_ostream(schedule) << attr;
  }
  std::string error;
  std::string text = describeToMLIR(*desc, schedule, error);
  if (!error.empty())
    return fail(GDN_ERROR_INVALID_ARGUMENT, "gdnCompileDesc: " + error);
  if (desc->sm_count < 0 || desc->sm_count > kMaxSMCount)
    return fail(GDN_ERROR_INVALID_ARGUMENT,
                "gdnCompileDesc: sm_count must be in [0, " +
                    llvm::Twine(kMaxSMCount) + "], got " +
                    llvm::Twine(desc->sm_count));
  GPUOptions options;
  options.chip = chipName;
  options.smCount = desc->sm_count;
  return compile(c, text, "gdn_recurrent", target, options, key, kernel);
}

extern "C" int gdnKernelNumArguments(gdnKernel k) {
  return isLive(k) ? static_cast<int>(k->names.size()) : -1;
}

extern "C" const char *gdnKernelArgumentName(gdnKernel k, int i) {
  if (!isLive(k) || i < 0 || i >= static_cast<int>(k->names.size()))
    return nullptr;
  return k->names[i].c_str();
}

extern "C" int64_t gdnKernelArgumentBytes(gdnKernel k, int i) {
  if (!isLive(k) || i < 0 || i >= static_cast<int>(k->names.size()))
    return -1;
  return k->signature.arguments[i].bytes();
}

extern "C" int gdnKernelArgumentDType(gdnKernel k, int i) {
  if (!isLive(k) || i < 0 || i >= static_cast<int>(k->names.size()))
    return -1;
  Type t = k->signature.arguments[i].elementType;
  return t.isF32()          ? GDN_DTYPE_F32
         : t.isBF16()       ? GDN_DTYPE_BF16
         : t.isF16()        ? GDN_DTYPE_F16
         : t.isInteger(32)  ? GDN_DTYPE_I32
         : t.isInteger(64)  ? GDN_DTYPE_I64
                            : -1;
}

extern "C" int gdnKernelArgumentRank(gdnKernel k, int i) {
  if (!isLive(k) || i < 0 || i >= static_cast<int>(k->names.size()))
    return -1;
  return static_cast<int>(k->signature.arguments[i].shape.size());
}

extern "C" int64_t gdnKernelArgumentDim(gdnKernel k, int i, int dim) {
  if (gdnKernelArgumentRank(k, i) <= dim || dim < 0)
    return -1;
  return k->signature.arguments[i].shape[dim];
}

extern "C" int64_t gdnKernelArgumentStride(gdnKernel k, int i, int dim) {
  if (gdnKernelArgumentRank(k, i) <= dim || dim < 0)
    return -1;
  return k->signature.arguments[i].strides[dim];
}

extern "C" int gdnKernelNumLaunches(gdnKernel k) {
  if (!isLive(k) || k->target != GDN_TARGET_CUDA)
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
  const GPULaunch *l = launchAt(k, i);
  return l ? l->kernel.c_str() : nullptr;
}

extern "C" const char *gdnKernelLaunchPTX(gdnKernel k, int i) {
  const GPULaunch *l = launchAt(k, i);
  return l ? k->gpu.modules[l->module].c_str() : nullptr;
}

extern "C" const char *gdnKernelPTX(gdnKernel k) {
  if (gdnKernelNumLaunches(k) == 0)
    return ""; // launches nothing
  return gdnKernelLaunchPTX(k, 0);
}

static gdnStatus checkArgs(gdnKernel k, void *const *args, int n,
                           const char *what) {
  if (!k || !args)
    return fail(GDN_ERROR_INVALID_ARGUMENT,
                llvm::Twine(what) + ": kernel and args must not be NULL");
  if (!isLive(k))
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
  if (gdnStatus s = checkArgs(k, args, numArgs, "gdnKernelLaunch"))
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
  constexpr size_t kMaxParams = 32;
  void *params[kMaxParams];
  for (size_t i = 0; i < launches.size(); ++i) {
    const GPULaunch &l = launches[i];
    size_t np = l.argumentIndices.size();
    if (np > kMaxParams)
      return fail(GDN_ERROR_UNSUPPORTED,
                  "gdnKernelLaunch: too many kernel parameters");
    for (size_t p = 0; p < np; ++p)
      params[p] = const_cast<void **>(&args[l.argumentIndices[p]]);
    if (rt::Status st = drv->launch((*functions)[i], l.grid, l.block,
                                    l.dynamicSharedMemoryBytes,
                                    static_cast<rt::CUstream>(stream), params,
                                    l.isProgrammatic());
        !st)
      return fail(GDN_ERROR_CUDA, "gdnKernelLaunch: launch " + llvm::Twine(i) +
                                      " of " + llvm::Twine(launches.size()) +
                                      " (" + l.kernel + "): " + st.message);
  }
  return ok();
}

extern "C" gdnStatus gdnKernelRunHost(gdnKernel k, void *const *args,
                                      int numArgs) {
  if (gdnStatus s = checkArgs(k, args, numArgs, "gdnKernelRunHost"))
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
