//===- gdn-run.cpp - the gdn embedded JIT runner --------------------------===//
//
// Compiles a .mlir file holding a function with one gdn.recurrent, makes
// seeded inputs, runs it on the GPU (CUDA driver, PTX JIT) or on the CPU
// (LLVM JIT), checks it against the fp64 reference and times it.
//
//   gdn-run examples/qwen3_next_decode.mlir --check
//   gdn-run examples/qwen3_next_decode.mlir --target=cuda --check --bench
//   gdn-run examples/qwen3_next_decode.mlir --emit=ptx
//
//===----------------------------------------------------------------------===//
#include "ProblemOf.h"
#include "gdn/Conversion/GDNToGPU/GPUTarget.h"
#include "gdn/Conversion/GDNToGPU/Schedule.h"
#include "gdn/Dialect/GDN/IR/GDNOps.h"
#include "gdn/InitAllGDN.h"
#include "gdn/JIT/Compiler.h"
#include "gdn/Reference/Reference.h"
#include "gdn/Runtime/CudaDriver.h"
#include "gdn/Support/ParseLimits.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Parallel.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace mlir;
using namespace mlir::gdn;
using namespace mlir::gdn::jit;
namespace reference = ::gdn::reference;
namespace rt = ::gdn::runtime;
using rt::CudaDriver;
namespace cl = llvm::cl;

static cl::OptionCategory category("gdn-run options");
static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input .mlir>"),
                                      cl::Required, cl::cat(category));
static cl::opt<std::string> targetOpt(
    "target", cl::desc("Where to run: auto (the GPU if there is one, else the "
                       "CPU), cuda or cpu"),
    cl::init("auto"), cl::cat(category));
static cl::opt<bool> checkOpt("check",
                              cl::desc("Compare with the fp64 reference; exit "
                                       "1 past tolerance"),
                              cl::cat(category));
static cl::opt<bool> benchOpt(
    "bench", cl::desc("Time the kernel (GPU: median of CUDA-graph replays with "
                      "rotating input sets; CPU: median of runs)"),
    cl::cat(category));
static cl::opt<std::string> emitOpt(
    "emit",
    cl::desc("Print the compiled artefact instead of running: ptx (the PTX "
             "module of every launch in turn: one a kernel, each its own "
             "assembler input)"),
    cl::init(""), cl::cat(category));
static cl::opt<int> launchOpt(
    "launch",
    cl::desc("With --emit=ptx: print only the PTX module of launch I (from "
             "0), e.g. to assemble it"),
    cl::init(-1), cl::cat(category));
static cl::opt<std::string> functionOpt(
    "function", cl::desc("Function to run (default: the one holding the op)"),
    cl::init(""), cl::cat(category));
static cl::opt<std::string> chipOpt("chip", cl::desc("GPU architecture"),
                                    cl::init("sm_90a"), cl::cat(category));
static cl::opt<std::string> scheduleOpt(
    "schedule",
    cl::desc("A #gdn.schedule<...> pinning parameters of the GPU schedule "
             "(the rest: the op's own, else the cost model's), e.g. "
             "'#gdn.schedule<columns_per_lane = 2, warps = 4>'; with "
             "launch = programmatic*, --bench rotates input sets, so no two "
             "kernels in a row share a state"),
    cl::init(""), cl::cat(category));
static cl::opt<int64_t> smCountOpt(
    "sm-count",
    cl::desc("Multiprocessors of the target device, for the cost model (0: the chip's)"),
    cl::init(0), cl::cat(category));
static cl::opt<std::string> parentsOpt(
    "parents",
    cl::desc("EAGLE tree (retrieve_parent_token): random (a seeded random tree "
             "per row), chain (parent = step - 1), or a comma-separated list "
             "of steps entries for every row, or of N * steps entries"),
    cl::init("random"), cl::cat(category));
static cl::opt<uint64_t> seedOpt("seed", cl::desc("Seed of the random inputs"),
                                 cl::init(0), cl::cat(category));
static cl::opt<unsigned> itersOpt("iters", cl::desc("Timed repetitions"),
                                  cl::init(50), cl::cat(category));
static cl::opt<int> deviceOpt("device", cl::desc("CUDA device ordinal"),
                              cl::init(0), cl::cat(category));
static cl::opt<double> tolO(
    "tol-o",
    cl::desc("RMS-relative tolerance on o, against the reference rounded to "
             "o's dtype (default 2e-3; 3.7e-3 after bf16 products, precision "
             "= bf16, the chunked anchors' error: docs/math.md §5)"),
    cl::init(2e-3), cl::cat(category));
static cl::opt<double> tolState(
    "tol-state",
    cl::desc("RMS-relative tolerance on the final state (default 1e-5 for an "
             "f32 state, 2.5e-3 after tf32 or bf16 products (precision = "
             "tf32 or bf16), 1e-3 "
             "for f16, 4e-3 for bf16: one rounding on store; docs/math.md §3)"),
    cl::init(1e-5), cl::cat(category));
static cl::opt<bool> jsonOpt("json", cl::desc("Print one JSON object"),
                             cl::cat(category));
static cl::opt<unsigned> maxGiBOpt(
    "max-gib",
    cl::desc("Refuse problems whose host memory (the arguments, their fp64 "
             "values, the copies kept for --check and the reference's "
             "outputs) would exceed this many GiB"),
    cl::init(16), cl::cat(category));

/// A JSON number, or null where it is not finite (JSON has no NaN or inf).
static llvm::json::Value number(double x) {
  return std::isfinite(x) ? llvm::json::Value(x) : llvm::json::Value(nullptr);
}

namespace {
/// A host buffer in the storage dtype, with its values widened to double.
struct HostBuffer {
  std::vector<uint8_t> bytes;
  std::vector<double> values;
};

double decode(Type t, const uint8_t *p) {
  if (t.isInteger(32) || t.isInteger(64)) {
    int64_t x = 0;
    if (t.isInteger(32)) {
      int32_t y;
      std::memcpy(&y, p, 4);
      x = y;
    } else {
      std::memcpy(&x, p, 8);
    }
    return static_cast<double>(x);
  }
  if (t.isF32()) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  if (isa<Float8E4M3FNType>(t)) // a quantized state's element (unscaled)
    return llvm::APFloat(llvm::APFloat::Float8E4M3FN(), llvm::APInt(8, *p))
        .convertToFloat();
  uint16_t bits;
  std::memcpy(&bits, p, 2);
  if (t.isBF16()) {
    uint32_t u = uint32_t(bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  llvm::APFloat h(llvm::APFloat::IEEEhalf(), llvm::APInt(16, bits));
  bool lost;
  h.convert(llvm::APFloat::IEEEsingle(), llvm::APFloat::rmNearestTiesToEven,
            &lost);
  return h.convertToFloat();
}

/// Rounds `x` to the storage dtype (round to nearest even) into `p`.
void encode(Type t, double x, uint8_t *p) {
  if (t.isInteger(32)) {
    int32_t y = static_cast<int32_t>(x);
    std::memcpy(p, &y, 4);
    return;
  }
  if (t.isInteger(64)) {
    int64_t y = static_cast<int64_t>(x);
    std::memcpy(p, &y, 8);
    return;
  }
  llvm::APFloat f(static_cast<float>(x));
  bool lost;
  if (isa<Float8E4M3FNType>(t)) { // |x| <= 448 (the inputs are N(0, 1))
    f.convert(llvm::APFloat::Float8E4M3FN(), llvm::APFloat::rmNearestTiesToEven,
              &lost);
    *p = uint8_t(f.bitcastToAPInt().getZExtValue());
    return;
  }
  if (!t.isF32()) {
    f.convert(t.isBF16() ? llvm::APFloat::BFloat() : llvm::APFloat::IEEEhalf(),
              llvm::APFloat::rmNearestTiesToEven, &lost);
    uint16_t bits = f.bitcastToAPInt().getZExtValue();
    std::memcpy(p, &bits, 2);
    return;
  }
  float v = f.convertToFloat();
  std::memcpy(p, &v, 4);
}

/// An integer of --parents (validated in main).
int64_t parsed(llvm::StringRef item) {
  int64_t x = 0;
  (void)item.trim().getAsInteger(10, x);
  return x;
}

/// Elements of a float input drawn in turn from the run's one stream; a
/// larger input is drawn in blocks of this many, in parallel (makeInput).
constexpr int64_t kInputBlock = int64_t(1) << 20;

/// Seeded inputs with the distributions of real models: q, k, v, a, b,
/// dt_bias ~ N(0, 1); A_log = log U(1, 16); g = log U(0.5, 1) (≤ 0);
/// beta = sigmoid(N(0, 1)); initial state ~ N(0, 1). Outputs are poisoned
/// with NaN so that an unwritten element fails the check. Pool indices: a
/// random permutation of the slots, every fourth row from the second on a
/// padding row (-1), rows past the pool size padding as well.
HostBuffer makeInput(const Argument &arg, std::mt19937_64 &rng, int64_t slots,
                     int64_t seqTokens, int64_t interRows) {
  HostBuffer buf;
  int64_t n = arg.numElements();
  int64_t width = arg.elementType.getIntOrFloatBitWidth() / 8;
  buf.bytes.assign(n * width, 0xFF); // NaN in every float dtype
  if (arg.role == Role::O || arg.role == Role::FinalState ||
      arg.role == Role::IntermediateStates ||
      arg.role == Role::IntermediateStateScale ||
      arg.role == Role::StateCheckpoints || arg.role == Role::CheckpointScale)
    return buf;
  buf.values.resize(n);
  if (arg.role == Role::CuSeqlens) {
    // Random sequence lengths, some of them empty, covering all tokens but
    // the last (which no sequence owns: it must stay untouched).
    int64_t used = seqTokens > 1 ? seqTokens - 1 : seqTokens;
    std::vector<int64_t> cuts(n > 2 ? n - 2 : 0);
    std::uniform_int_distribution<int64_t> pick(0, used);
    for (int64_t &c : cuts)
      c = pick(rng);
    std::sort(cuts.begin(), cuts.end());
    for (int64_t i = 0; i < n; ++i) {
      int64_t x = i == 0 ? 0 : i == n - 1 ? used : cuts[i - 1];
      encode(arg.elementType, x, &buf.bytes[i * width]);
      buf.values[i] = x;
    }
    return buf;
  }
  if (arg.role == Role::ParentTokens) {
    // [N, steps]: a random tree per row (entry 0 = -1, the root; step s > 0
    // hangs off a uniformly drawn earlier step), a chain, or a given table.
    int64_t steps = arg.shape[1];
    std::vector<int64_t> table(n);
    if (parentsOpt == "random" || parentsOpt == "chain") {
      for (int64_t i = 0; i < n; ++i) {
        int64_t s = i % steps;
        table[i] = s == 0 ? -1
                   : parentsOpt == "chain"
                       ? s - 1
                       : std::uniform_int_distribution<int64_t>(0, s - 1)(rng);
      }
    } else {
      llvm::SmallVector<llvm::StringRef> items;
      llvm::StringRef(parentsOpt).split(items, ',');
      for (int64_t i = 0; i < n; ++i)
        table[i] = items.size() == size_t(n) ? parsed(items[i])
                                             : parsed(items[i % steps]);
    }
    for (int64_t i = 0; i < n; ++i) {
      encode(arg.elementType, table[i], &buf.bytes[i * width]);
      buf.values[i] = table[i];
    }
    return buf;
  }
  if (arg.role == Role::IntermediateStateIndices) {
    // Distinct rows; every third sequence without a row (-1).
    std::vector<int64_t> perm(interRows);
    for (int64_t i = 0; i < interRows; ++i)
      perm[i] = i;
    std::shuffle(perm.begin(), perm.end(), rng);
    for (int64_t i = 0; i < n; ++i) {
      int64_t idx = (i < interRows && i % 3 != 2) ? perm[i] : -1;
      encode(arg.elementType, idx, &buf.bytes[i * width]);
      buf.values[i] = idx;
    }
    return buf;
  }
  if (arg.role == Role::StateIndices) {
    std::vector<int64_t> perm(slots);
    for (int64_t i = 0; i < slots; ++i)
      perm[i] = i;
    std::shuffle(perm.begin(), perm.end(), rng);
    for (int64_t i = 0; i < n; ++i) {
      int64_t idx = (i < slots && (n == 1 || i % 4 != 1)) ? perm[i] : -1;
      encode(arg.elementType, idx, &buf.bytes[i * width]);
      buf.values[i] = idx;
    }
    return buf;
  }
  auto draw = [&](std::mt19937_64 &gen, int64_t begin, int64_t end) {
    std::normal_distribution<double> normal(0.0, 1.0);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    for (int64_t i = begin; i < end; ++i) {
      double x;
      switch (arg.role) {
      case Role::ALog: x = std::log(1.0 + 15.0 * uniform(gen)); break;
      case Role::G: x = std::log(0.5 + 0.5 * uniform(gen)); break;
      case Role::Beta: x = reference::sigmoid(normal(gen)); break;
      // A quantized state's row scales: the e4m3 elements are N(0, 1), so
      // the state ~ N(0, scale^2).
      case Role::StateScale: x = 0.5 + uniform(gen); break;
      default: x = normal(gen); break;
      }
      encode(arg.elementType, x, &buf.bytes[i * width]);
      buf.values[i] = decode(arg.elementType, &buf.bytes[i * width]);
    }
  };
  if (n <= kInputBlock) { // in turn from the one stream
    draw(rng, 0, n);
    return buf;
  }
  // A large argument: blocks of kInputBlock elements, each from a generator
  // of its own seeded by one draw of the stream and the block's index,
  // drawn on every core (a prefill's 10^9 input elements took minutes on
  // one). The same seed gives the same inputs on any number of cores.
  uint64_t base = rng();
  llvm::parallelFor(0, (n + kInputBlock - 1) / kInputBlock, [&](size_t block) {
    std::mt19937_64 gen(base ^ (0x9E3779B97F4A7C15ull * (block + 1)));
    int64_t begin = int64_t(block) * kInputBlock;
    draw(gen, begin, std::min(n, begin + kInputBlock));
  });
  return buf;
}

/// The byte that fills the gaps of a strided buffer: a kernel that writes
/// one is caught by the check.
constexpr uint8_t kGapByte = 0xA5;

/// Calls `f(denseIndex, stridedIndex)` for every element of `arg`.
template <typename F> void forEachElement(const Argument &arg, F f) {
  int64_t n = arg.numElements(), rank = arg.shape.size();
  std::vector<int64_t> idx(rank, 0);
  for (int64_t e = 0; e < n; ++e) {
    int64_t at = arg.offset;
    for (int64_t d = 0; d < rank; ++d)
      at += idx[d] * arg.strides[d];
    f(e, at);
    for (int64_t d = rank - 1; d >= 0 && ++idx[d] == arg.shape[d]; --d)
      idx[d] = 0;
  }
}

/// The buffer a kernel gets for a strided `arg`: the row-major bytes
/// `dense` placed at the argument's strides, the gaps filled with kGapByte.
std::vector<uint8_t> toStrided(const Argument &arg,
                               const std::vector<uint8_t> &dense) {
  int64_t width = arg.elementType.getIntOrFloatBitWidth() / 8;
  std::vector<uint8_t> out(arg.bytes(), kGapByte);
  forEachElement(arg, [&](int64_t e, int64_t at) {
    std::memcpy(&out[at * width], &dense[e * width], width);
  });
  return out;
}

/// The row-major bytes of the strided buffer `strided` of `arg`; adds to
/// `gapsChanged` the gap bytes that no longer hold kGapByte.
std::vector<uint8_t> fromStrided(const Argument &arg,
                                 const std::vector<uint8_t> &strided,
                                 int64_t &gapsChanged) {
  int64_t width = arg.elementType.getIntOrFloatBitWidth() / 8;
  std::vector<uint8_t> out(arg.numElements() * width);
  std::vector<bool> covered(strided.size(), false);
  forEachElement(arg, [&](int64_t e, int64_t at) {
    std::memcpy(&out[e * width], &strided[at * width], width);
    std::fill_n(covered.begin() + at * width, width, true);
  });
  for (size_t i = 0; i < strided.size(); ++i)
    gapsChanged += !covered[i] && strided[i] != kGapByte;
  return out;
}

/// Multiplies the decoded elements of an f8E4M3FN state `state` ([.., HV,
/// V, K] in vk, [.., HV, K, V] in kv) by the scale of their row, `scales`
/// [.., HV, V] (the op's state_scale or intermediate_state_scale).
void applyRowScales(const Argument &state, bool vk, std::vector<double> &values,
                    const std::vector<double> &scales) {
  size_t rank = state.shape.size(); // [.., HV, V, K] or [.., HV, K, V]
  int64_t inner = state.shape[rank - 2] * state.shape[rank - 1]; // K x V
  int64_t V = vk ? state.shape[rank - 2] : state.shape[rank - 1];
  int64_t K = inner / V;
  for (size_t i = 0; i < values.size(); ++i) {
    int64_t head = int64_t(i) / inner, at = int64_t(i) % inner;
    int64_t v = vk ? at / K : at % V;
    values[i] *= scales[head * V + v];
  }
}

std::vector<double> widen(const Argument &arg, const HostBuffer &buf) {
  int64_t width = arg.elementType.getIntOrFloatBitWidth() / 8;
  std::vector<double> out(arg.numElements());
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = decode(arg.elementType, &buf.bytes[i * width]);
  return out;
}

/// The host memory a run allocates, in bytes: per argument its storage, the
/// copy kept to compare untouched bytes, the CPU kernel's working copy and
/// (inputs) the fp64 values; with the check, per output element the
/// reference's fp64 value, the widened result and the gathered pair that is
/// compared (4 doubles).
int64_t hostMemoryBytes(const Signature &sig, bool cpu, bool check) {
  // Saturating: zero-stride arguments may have 2^63 elements in a small
  // span, and such a total must be refused, not wrap.
  uint64_t total = 0;
  auto add = [&](int64_t count, int64_t bytesEach) {
    total = llvm::SaturatingMultiplyAdd(static_cast<uint64_t>(count),
                                        static_cast<uint64_t>(bytesEach),
                                        total);
  };
  for (const Argument &arg : sig.arguments) {
    int64_t width = arg.elementType.getIntOrFloatBitWidth() / 8;
    int64_t perElement = width * (cpu ? 3 : 2);
    if (!isOutput(arg.role) || arg.role == Role::State ||
        arg.role == Role::StateScale)
      perElement += 8;
    if (check && isOutput(arg.role))
      perElement += 4 * 8;
    add(arg.numElements(), perElement);
    if (!arg.isDense()) // the strided copy the kernel runs on, and its map
      add(arg.bytes(), cpu ? 3 : 2);
  }
  return static_cast<int64_t>(
      std::min<uint64_t>(total, std::numeric_limits<int64_t>::max()));
}

/// `values` rounded to the storage dtype `t`, as a kernel stores them.
std::vector<double> roundedTo(Type t, std::vector<double> values) {
  uint8_t tmp[8];
  for (double &x : values) {
    encode(t, x, tmp);
    x = decode(t, tmp);
  }
  return values;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

int fail(const llvm::Twine &message) {
  llvm::errs() << "gdn-run: error: " << message << "\n";
  return 1;
}

struct BenchResult {
  double us = 0, copyUs = 0;
  int sets = 1;
};

/// Runs the program once on the GPU, its launches in order (inputs in,
/// outputs back), and optionally times it. Returns an error message, or ""
/// on success.
std::string runOnGPU(CudaDriver &drv, const GPUProgram &program,
                     const Signature &sig, std::vector<HostBuffer> &buffers,
                     int64_t bytesMoved, BenchResult *bench) {
  using namespace rt;
  if (program.launches.empty()) // nothing to launch (varlen, no sequence)
    return "";
  std::vector<CUmodule> modules;
  std::vector<CUfunction> fns;
  auto unloadModules = [&] {
    for (CUmodule m : modules)
      drv.unloadModule(m);
  };
  for (const std::string &ptx : program.modules) {
    CUmodule module;
    if (auto s = drv.loadModule(ptx, module); !s) {
      unloadModules();
      return s.message;
    }
    modules.push_back(module);
  }
  for (const GPULaunch &l : program.launches) {
    CUfunction fn;
    if (auto s = drv.getFunction(modules[l.module], l.kernel, fn); !s) {
      unloadModules();
      return s.message;
    }
    fns.push_back(fn);
  }
  // Input sets: one for the checked run; more rotate for cold-state timing
  // (docs/math.md §4: bytes touched between two runs of a set > 4 x 60 MB L2).
  int sets = 1;
  if (bench)
    sets = std::clamp<int64_t>((240ll << 20) / std::max<int64_t>(bytesMoved, 1) + 1, 2, 64);
  size_t nargs = sig.arguments.size();
  std::vector<CUdeviceptr> ptrs(sets * nargs, 0);
  // The program's workspaces: one of each, shared by the sets (their
  // launches run one after another on one stream).
  std::vector<CUdeviceptr> workspaces(program.workspaceBytes.size(), 0);
  auto cleanup = [&] {
    for (CUdeviceptr p : ptrs)
      if (p)
        drv.free(p);
    for (CUdeviceptr p : workspaces)
      drv.free(p);
    unloadModules();
  };
  for (size_t w = 0; w < workspaces.size(); ++w)
    if (Status st = drv.alloc(program.workspaceBytes[w], workspaces[w]); !st) {
      cleanup();
      return st.message;
    }
  for (int s = 0; s < sets; ++s)
    for (size_t i = 0; i < nargs; ++i) {
      CUdeviceptr &p = ptrs[s * nargs + i];
      const HostBuffer &b = buffers[i];
      Status st = drv.alloc(b.bytes.size(), p);
      if (st)
        st = drv.copyToDevice(p, b.bytes.data(), b.bytes.size());
      if (!st) {
        cleanup();
        return st.message;
      }
    }
  // params[s][i]: the parameters of launch i on input set s.
  std::vector<std::vector<std::vector<void *>>> params(sets);
  for (int s = 0; s < sets; ++s)
    for (const GPULaunch &l : program.launches) {
      params[s].emplace_back();
      for (unsigned idx : l.argumentIndices)
        params[s].back().push_back(idx < nargs ? &ptrs[s * nargs + idx]
                                               : &workspaces[idx - nargs]);
    }
  // Every launch of the program, in order, on input set `s`.
  auto launchAll = [&](int s, CUstream stream) {
    Status st = Status::success();
    for (size_t i = 0; st && i < fns.size(); ++i) {
      const GPULaunch &l = program.launches[i];
      st = drv.launch(fns[i], l.grid, l.block, l.dynamicSharedMemoryBytes,
                      stream, params[s][i].data(), l.isProgrammatic());
    }
    return st;
  };

  Status st = launchAll(0, nullptr);
  if (st)
    st = drv.synchronize(nullptr);
  for (size_t i = 0; st && i < nargs; ++i)
    if (isOutput(sig.arguments[i].role))
      st = drv.copyToHost(buffers[i].bytes.data(), ptrs[i], buffers[i].bytes.size());
  if (!st || !bench) {
    cleanup();
    return st.message;
  }

  // Timing: one CUDA graph launches every set once; replays are timed with
  // events. The copy reference moves the same bytes (read + written).
  CUstream stream;
  CUevent start, stop;
  std::vector<CUdeviceptr> copyBufs(2 * sets, 0);
  size_t copyBytes = std::max<int64_t>(bytesMoved / 2, 16);
  auto timeGraph = [&](auto record, double &us) -> Status {
    CUgraph graph;
    CUgraphExec exec;
    if (Status s = drv.beginCapture(stream); !s)
      return s;
    for (int s = 0; s < sets; ++s)
      if (Status r = record(s); !r) {
        drv.endCapture(stream, graph);
        return r;
      }
    if (Status s = drv.endCapture(stream, graph); !s)
      return s;
    if (Status s = drv.instantiate(graph, exec); !s)
      return s;
    std::vector<double> samples;
    for (unsigned it = 0; it < itersOpt + 3; ++it) {
      float ms = 0;
      Status s = drv.recordEvent(start, stream);
      if (s) s = drv.launchGraph(exec, stream);
      if (s) s = drv.recordEvent(stop, stream);
      if (s) s = drv.elapsedMs(start, stop, ms);
      if (!s)
        return s;
      if (it >= 3)
        samples.push_back(1000.0 * ms / sets);
    }
    us = median(samples);
    return drv.destroyGraph(graph, exec);
  };
  st = drv.createStream(stream);
  if (st) st = drv.createEvent(start);
  if (st) st = drv.createEvent(stop);
  for (int i = 0; st && i < 2 * sets; ++i)
    st = drv.alloc(copyBytes, copyBufs[i]);
  if (st)
    st = timeGraph([&](int s) { return launchAll(s, stream); }, bench->us);
  if (st)
    st = timeGraph([&](int s) {
      return drv.copyDeviceToDeviceAsync(copyBufs[2 * s + 1], copyBufs[2 * s],
                                         copyBytes, stream);
    }, bench->copyUs);
  bench->sets = sets;
  for (CUdeviceptr p : copyBufs)
    if (p)
      drv.free(p);
  cleanup();
  return st.message;
}
} // namespace

/// gdn-run's work; main adds the check of the standard output.
static int run(int argc, char **argv) {
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv, "gdn embedded JIT runner\n");
  llvm::raw_ostream &log = jsonOpt ? llvm::nulls() : llvm::outs();

  if (!emitOpt.empty() && emitOpt != "ptx")
    return fail("unknown --emit='" + emitOpt + "' (expected: ptx)");
  if (launchOpt != -1 && (emitOpt.empty() || launchOpt < 0))
    return fail("--launch needs --emit=ptx and an index >= 0");
  // --emit=ptx prints the kernels and runs nothing: an option of a run with
  // it would be silently ignored.
  if (!emitOpt.empty())
    for (auto [set, name] :
         {std::pair{bool(checkOpt), "--check"}, {bool(benchOpt), "--bench"},
          {bool(jsonOpt), "--json"}, {targetOpt == "cpu", "--target=cpu"}})
      if (set)
        return fail(llvm::Twine("--emit=ptx prints the CUDA kernels and runs "
                                "nothing; it does not take ") +
                    name);
  if (targetOpt != "auto" && targetOpt != "cuda" && targetOpt != "cpu")
    return fail("unknown --target='" + targetOpt + "' (expected auto, cuda or cpu)");
  if (itersOpt < 1 || itersOpt > 100000)
    return fail("--iters must be in [1, 100000]");
  for (auto [opt, name] :
       {std::pair{&tolO, "--tol-o"}, {&tolState, "--tol-state"}})
    if (!std::isfinite(double(*opt)) || *opt < 0)
      return fail(std::string(name) + " must be a finite tolerance >= 0, got " +
                  std::to_string(double(*opt)));

  DialectRegistry registry;
  registerGDNDialect(registry);
  registerGDNDependentDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // A diagnostic points at the op's line in the user's file; the generic
  // dump of the op ("see current operation") adds only noise here.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  std::string errorMessage;
  auto file = openInputFile(inputFile, &errorMessage);
  if (!file)
    return fail(errorMessage);
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseModule(sourceMgr, &context);
  if (!module)
    return 1;
  FailureOr<Signature> sig = analyze(*module, functionOpt);
  if (failed(sig))
    return 1;
  // The schedule is checked whatever the target (the CPU lowering has no
  // use for it, but a bad one is still a mistake).
  ScheduleAttr pins; // null: nothing pinned
  if (!llvm::StringRef(scheduleOpt).trim().empty()) {
    std::string error;
    pins = ScheduleAttr::parseText(scheduleOpt, &context, error);
    if (!pins)
      return fail("--schedule: " + error);
  }
  // The reference's description of the op (a gdn.commit: only its rows).
  const reference::Problem p = [&] {
    reference::Problem problem;
    if (RecurrentOp op = recurrentOpOf(*module, sig->function))
      problem = problemOf(op);
    problem.N = sig->N;
    return problem;
  }();
  if (parentsOpt != "random" && parentsOpt != "chain") {
    llvm::SmallVector<llvm::StringRef> items;
    llvm::StringRef(parentsOpt).split(items, ',');
    int64_t x;
    for (llvm::StringRef item : items)
      if (item.trim().getAsInteger(10, x))
        return fail("--parents: '" + item + "' is not an integer");
    if (p.parentTable && int64_t(items.size()) != p.intermediateSteps &&
        int64_t(items.size()) != p.N * p.intermediateSteps)
      return fail("--parents: expected " + llvm::Twine(p.intermediateSteps) +
                  " or " + llvm::Twine(p.N * p.intermediateSteps) +
                  " entries, got " + llvm::Twine(items.size()));
  }

  GPUOptions gpuOptions{chipOpt, smCountOpt, scheduleOpt};
  if (emitOpt == "ptx") {
    FailureOr<GPUProgram> program = compileForGPU(*module, *sig, gpuOptions);
    if (failed(program))
      return 1;
    int launches = static_cast<int>(program->launches.size());
    if (launchOpt >= launches)
      return fail("--launch=" + llvm::Twine(launchOpt.getValue()) + ": @" +
                  sig->function + " has " + llvm::Twine(launches) +
                  " launches");
    if (launchOpt >= 0) {
      llvm::outs() << program->modules[program->launches[launchOpt].module];
      return 0;
    }
    for (const std::string &ptx : program->modules)
      llvm::outs() << ptx;
    return 0;
  }
  // Inputs, checks and timings are those of the recurrence.
  if (sig->op != OpKind::Recurrent)
    return fail("@" + sig->function +
                " holds a gdn.commit or gdn.replay_commit: gdn-run can print "
                "its PTX (--emit=ptx) but runs and checks gdn.recurrent only "
                "(run it through the C API)");

  // Pick the target.
  std::unique_ptr<CudaDriver> drv;
  std::string target = targetOpt;
  if (target != "cpu") {
    auto status = CudaDriver::open(deviceOpt, drv);
    if (!status) {
      if (target == "cuda")
        return fail(status.message);
      log << "gdn-run: no GPU (" << status.message << "); running on the CPU\n";
      target = "cpu";
    } else {
      target = "cuda";
    }
  }
  log << "gdn-run: " << inputFile << " @" << sig->function << ": N=" << p.N
      << " T=" << p.T << " H=" << p.H << " HV=" << p.HV << " K=" << p.K
      << " V=" << p.V << "\n";
  if (drv)
    log << "target: cuda (" << drv->deviceName() << ", sm_"
        << drv->computeCapability() << ", " << drv->smCount() << " SMs)\n";
  else
    log << "target: cpu\n";

  // The host memory of the whole run, bounded before any allocation.
  int64_t hostBytes = hostMemoryBytes(*sig, target == "cpu", checkOpt);
  if (hostBytes > (int64_t(maxGiBOpt) << 30))
    return fail("the run needs about " + llvm::Twine(hostBytes >> 20) +
                " MiB of host memory (arguments, fp64 values" +
                (checkOpt ? ", the check's copies" : "") + "), more than --max-gib=" +
                llvm::Twine(maxGiBOpt) + " GiB");
  std::mt19937_64 rng(seedOpt);
  std::vector<HostBuffer> buffers;
  int64_t bytesMoved = 0;
  for (const Argument &arg : sig->arguments) {
    buffers.push_back(makeInput(arg, rng, p.slots, p.T, p.intermediateRows));
    if (!arg.isDense() && !buffers.back().values.empty()) {
      // An input whose strides overlap (e.g. 0: one row read for every n)
      // holds one value per address: the reference reads what the kernel
      // will read.
      int64_t unused = 0, width = arg.elementType.getIntOrFloatBitWidth() / 8;
      HostBuffer &b = buffers.back();
      b.bytes = fromStrided(arg, toStrided(arg, b.bytes), unused);
      for (size_t e = 0; e < b.values.size(); ++e)
        b.values[e] = decode(arg.elementType, &b.bytes[e * width]);
    }
    bytesMoved += arg.numElements() * arg.elementType.getIntOrFloatBitWidth() /
                  8 * (arg.role == Role::State ? 2 : 1);
  }
  // A quantized state: the kernel reads e4m3 x its row's scale.
  auto roleIndex = [&](Role role) -> int {
    for (size_t i = 0; i < sig->arguments.size(); ++i)
      if (sig->arguments[i].role == role)
        return int(i);
    return -1;
  };
  int scaleArg = roleIndex(Role::StateScale);
  // Checkpoint offsets: each sequence's length // interval rows, in order
  // (FlashInfer's checkpoint_cu_starts), from the lengths drawn above.
  if (int ck = roleIndex(Role::CheckpointOffsets); ck >= 0) {
    int cu = roleIndex(Role::CuSeqlens);
    const Argument &arg = sig->arguments[ck];
    int64_t width = arg.elementType.getIntOrFloatBitWidth() / 8, row = 0;
    for (int64_t n = 0; n <= p.N; ++n) {
      if (n > 0) {
        int64_t len = cu >= 0 ? int64_t(buffers[cu].values[n]) -
                                    int64_t(buffers[cu].values[n - 1])
                              : p.T;
        row += len / p.checkpointInterval;
      }
      encode(arg.elementType, row, &buffers[ck].bytes[n * width]);
      buffers[ck].values[n] = row;
    }
  }
  int stateArg = roleIndex(Role::State) >= 0 ? roleIndex(Role::State)
                                             : roleIndex(Role::InitialState);
  bool vk = p.layout == reference::StateLayout::VK;
  if (scaleArg >= 0 && stateArg >= 0)
    applyRowScales(sig->arguments[stateArg], vk, buffers[stateArg].values,
                   buffers[scaleArg].values);
  reference::Inputs refIn;
  for (size_t i = 0; i < buffers.size(); ++i) {
    // The values move to the reference's inputs (one fp64 copy in all).
    std::vector<double> vals = std::move(buffers[i].values);
    switch (sig->arguments[i].role) {
    case Role::Q: refIn.q = std::move(vals); break;
    case Role::K: refIn.k = std::move(vals); break;
    case Role::V: refIn.v = std::move(vals); break;
    case Role::G: refIn.g = std::move(vals); break;
    case Role::A: refIn.a = std::move(vals); break;
    case Role::ALog: refIn.A_log = std::move(vals); break;
    case Role::DtBias: refIn.dt_bias = std::move(vals); break;
    case Role::Beta: case Role::BLogits: refIn.beta = std::move(vals); break;
    case Role::InitialState: case Role::State: refIn.initialState = std::move(vals); break;
    case Role::StateIndices:
      refIn.stateIndices.assign(vals.begin(), vals.end());
      break;
    case Role::CuSeqlens:
      refIn.cuSeqlens.assign(vals.begin(), vals.end());
      break;
    case Role::IntermediateStateIndices:
      refIn.intermediateIndices.assign(vals.begin(), vals.end());
      break;
    case Role::ParentTokens:
      refIn.parentTokens.assign(vals.begin(), vals.end());
      break;
    case Role::CheckpointOffsets:
      refIn.checkpointOffsets.assign(vals.begin(), vals.end());
      break;
    case Role::IntermediateStates:
    case Role::StateCheckpoints:
      break;
    case Role::FinalState: case Role::O: break;
    case Role::Accepted: break; // gdn.commit (refused above)
    case Role::StateScale: break; // applied to the state above
    case Role::IntermediateStateScale:
    case Role::CheckpointScale:
      break; // written only
    case Role::KWindow: case Role::VWindow: case Role::GWindow:
    case Role::BetaWindow: break; // written only
    }
  }

  // The bytes of every buffer before the run: pool slots that no sequence
  // uses must come back bit-identical.
  std::vector<std::vector<uint8_t>> before;
  for (const HostBuffer &b : buffers)
    before.push_back(b.bytes);
  // Strided operands run from buffers of their whole span, gaps poisoned,
  // and come back row-major after the run.
  bool anyStrided = false;
  for (size_t i = 0; i < buffers.size(); ++i)
    if (!sig->arguments[i].isDense()) {
      buffers[i].bytes = toStrided(sig->arguments[i], buffers[i].bytes);
      anyStrided = true;
    }

  // Compile and run.
  auto t0 = std::chrono::steady_clock::now();
  BenchResult bench;
  double compileMs = 0;
  // The recurrence's complete schedule as gdn-select-schedule gives it (what
  // the compile below builds): printed, and its precision sets the default
  // state tolerance.
  // (Read before the compile below lowers the op.)
  RecurrentOp recurrence = recurrentOpOf(*module, sig->function);
  bool stochasticRounding = recurrence && recurrence.getStochasticRounding();
  ScheduleAttr chosen;
  if (target == "cuda")
    if (const GPUTarget *gpu = lookupGPUTarget(chipOpt))
      if (recurrence)
        chosen = selectSchedule(recurrence, *gpu, pins, smCountOpt);
  if (target == "cuda") {
    FailureOr<GPUProgram> program = compileForGPU(*module, *sig, gpuOptions);
    if (failed(program))
      return 1;
    if (chosen)
      log << "schedule: " << chosen << "\n";
    compileMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    log << "compiled in " << llvm::format("%.1f", compileMs) << " ms";
    if (program->launches.empty())
      log << ": nothing to launch";
    for (const GPULaunch &l : program->launches) // in launch order
      log << (&l == &program->launches.front() ? ": " : "; ") << "kernel "
          << l.kernel << ", grid " << l.grid[0] << "x" << l.grid[1] << "x"
          << l.grid[2] << ", block " << l.block[0];
    log << "\n";
    std::string err = runOnGPU(*drv, *program, *sig, buffers, bytesMoved,
                               benchOpt ? &bench : nullptr);
    if (!err.empty())
      return fail(err);
  } else {
    auto program = compileForCPU(*module, *sig);
    if (failed(program))
      return 1;
    compileMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    log << "compiled in " << llvm::format("%.1f", compileMs) << " ms (LLVM JIT)\n";
    // Keep pristine inputs for the check: an in-place state is overwritten.
    std::vector<HostBuffer> work = buffers;
    std::vector<void *> ptrs;
    for (HostBuffer &b : work)
      ptrs.push_back(b.bytes.data());
    if (failed((*program)->run(ptrs)))
      return fail("the CPU function failed to run");
    for (size_t i = 0; i < buffers.size(); ++i)
      if (isOutput(sig->arguments[i].role))
        buffers[i].bytes = work[i].bytes;
    if (benchOpt) {
      std::vector<double> samples;
      unsigned iters = std::min<unsigned>(itersOpt, 10);
      for (unsigned it = 0; it < iters; ++it) {
        auto s = std::chrono::steady_clock::now();
        (void)(*program)->run(ptrs);
        samples.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - s).count());
      }
      bench.us = median(samples);
    }
  }
  log << "ran on " << target << "\n";
  int64_t gapsChanged = 0;
  for (size_t i = 0; i < buffers.size(); ++i)
    if (!sig->arguments[i].isDense())
      buffers[i].bytes =
          fromStrided(sig->arguments[i], buffers[i].bytes, gapsChanged);

  llvm::json::Object result{{"file", inputFile}, {"function", sig->function},
                            {"target", target}, {"compile_ms", compileMs},
                            {"bytes", bytesMoved}};
  if (chosen) {
    std::string text;
    llvm::raw_string_ostream(text) << chosen;
    result["schedule"] = text;
  }
  int exitCode = 0;
  if (checkOpt) {
    // An e4m3 store is off by up to half a spacing (3 mantissa bits, a row
    // scale), a stochastically rounded one by up to a whole spacing
    // (docs/math.md §6).
    double e4m3Tol = stochasticRounding ? 8e-2 : 4e-2;
    // The rounding of one store of a state of type `t` (docs/math.md §3).
    auto storeTolOf = [&](Type t) -> double {
      return t.isBF16()                 ? 4e-3
             : t.isF16()                ? 1e-3
             : isa<Float8E4M3FNType>(t) ? e4m3Tol
                                        : 1e-5;
    };
    // An EAGLE tree reloads its parents' stored states: where the kernel's
    // f32 value and the reference's f64 one round a stored element to
    // neighbouring values, what follows from it differs by that rounding.
    double reloadTol = 0;
    for (const Argument &arg : sig->arguments)
      if (p.parentTable && arg.role == Role::IntermediateStates)
        reloadTol = storeTolOf(arg.elementType);
    // The tolerance of a state (or checkpoint) of type `t`: --tol-state,
    // else wider for a narrow state (rounded once on store), an f32 one
    // after tf32 products (their rounding; docs/math.md §3) and one
    // computed from reloaded narrow parents.
    auto stateTolOf = [&](Type t) -> double {
      if (tolState.getNumOccurrences())
        return tolState;
      double tol = storeTolOf(t);
      if (tol == 1e-5 && chosen && chosen.singleTF32())
        tol = 2.5e-3;
      return std::max(tol, reloadTol);
    };
    double oTol = tolO.getNumOccurrences() ? double(tolO)
                  : chosen && chosen.bf16Products()
                      ? 3.7e-3
                      : std::max(double(tolO), reloadTol);
    double stateTol = tolState;
    for (const Argument &arg : sig->arguments)
      if (arg.role == Role::FinalState || arg.role == Role::State)
        stateTol = stateTolOf(arg.elementType);
    reference::Outputs ref;
    std::string err = reference::run(p, refIn, ref);
    if (!err.empty())
      return fail(err);
    auto report = [&](StringRef what, const std::vector<double> &got,
                      const std::vector<double> &want, double tol) {
      double maxAbs = reference::maxAbsError(got, want);
      double rms = reference::rmsRelativeError(got, want);
      bool ok = std::isfinite(rms) && rms <= tol;
      log << "check " << llvm::left_justify(what, 12) << " max-abs "
          << llvm::format("%.3e", maxAbs) << "  rms-rel "
          << llvm::format("%.3e", rms) << "  (tol " << llvm::format("%.1e", tol)
          << ")  " << (ok ? "ok" : "FAILED") << "\n";
      result[(what + "_rms_rel").str()] = number(rms);
      result[(what + "_max_abs").str()] = number(maxAbs);
      if (!ok)
        exitCode = 1;
    };
    // Whether block `b` (of `bytes` bytes) of buffer `arg` differs from
    // before the run; false for no buffer (arg < 0). The rows a kernel must
    // not write: unwritten checkpoints and step states, and their scales.
    auto blockChanged = [&](int arg, int64_t b, int64_t bytes) {
      return arg >= 0 && std::memcmp(&buffers[arg].bytes[b * bytes],
                                     &before[arg][b * bytes], bytes) != 0;
    };
    // The scales of one state row block of an e4m3 buffer: [HV, V] f32.
    const int64_t scaleBlockBytes = p.HV * p.V * 4;
    // Pools: which slots the sequences use, and which rows are padding.
    std::vector<bool> used(p.slots, false), padding(p.N, false);
    for (int64_t n = 0; n < p.N && p.slots > 0; ++n) {
      int64_t idx = refIn.stateIndices[n];
      padding[n] = idx < 0;
      if (idx >= 0)
        used[idx] = true;
    }
    for (size_t i = 0; i < buffers.size(); ++i) {
      const Argument &arg = sig->arguments[i];
      std::vector<double> got = widen(arg, buffers[i]);
      if (arg.role == Role::O) {
        if (p.varlen) {
          // Tokens past cu_seqlens[N] are no sequence's: left untouched.
          size_t used = refIn.cuSeqlens.back() * p.HV * p.V;
          size_t width = arg.elementType.getIntOrFloatBitWidth() / 8;
          if (std::memcmp(buffers[i].bytes.data() + used * width,
                          before[i].data() + used * width,
                          buffers[i].bytes.size() - used * width) != 0) {
            log << "check o: tokens past cu_seqlens[N] were written  FAILED\n";
            exitCode = 1;
          }
          got.resize(used);
          ref.o.resize(used);
        }
        // Against the reference rounded as the kernel stores o: a bf16 o
        // is otherwise off by its own rounding (2^-9 relative) alone.
        report("o", got, roundedTo(arg.elementType, ref.o), oTol);
        // The tokens of padding rows output exactly zero.
        int64_t tokenSize = p.HV * p.V, bad = 0;
        for (int64_t n = 0; n < p.N; ++n) {
          int64_t lo = p.varlen ? refIn.cuSeqlens[n] : n * p.T;
          int64_t hi = p.varlen ? refIn.cuSeqlens[n + 1] : (n + 1) * p.T;
          for (int64_t j = lo * tokenSize; padding[n] && j < hi * tokenSize; ++j)
            bad += got[j] != 0.0 || std::signbit(got[j]);
        }
        if (bad) {
          log << "check o: " << bad << " elements of padding rows are not 0  FAILED\n";
          exitCode = 1;
        }
      } else if (arg.role == Role::KWindow || arg.role == Role::VWindow ||
                 arg.role == Role::GWindow || arg.role == Role::BetaWindow) {
        // Written (row, head, step) entries against the reference: k and v
        // exactly (copies of the inputs), g and beta within f32's rounding
        // of their math; the others untouched.
        bool kw = arg.role == Role::KWindow, vw = arg.role == Role::VWindow;
        const std::vector<double> &want = kw   ? ref.kWindow
                                          : vw ? ref.vWindow
                                          : arg.role == Role::GWindow
                                              ? ref.gWindow
                                              : ref.betaWindow;
        int64_t L = p.windowSteps, heads = kw ? p.H : p.HV;
        int64_t width = kw ? p.K : vw ? p.V : 1;
        int64_t entryBytes =
            width * arg.elementType.getIntOrFloatBitWidth() / 8;
        int64_t windowRows = p.slots > 0 ? p.slots : p.N;
        std::vector<double> gotW, refW;
        int64_t changed = 0, untouched = 0;
        for (int64_t r = 0; r < windowRows; ++r)
          for (int64_t h = 0; h < heads; ++h)
            for (int64_t st = 0; st < L; ++st) {
              int64_t e = (r * heads + h) * L + st;
              if (ref.windowWritten[r * L + st]) {
                gotW.insert(gotW.end(), got.begin() + e * width,
                            got.begin() + (e + 1) * width);
                refW.insert(refW.end(), want.begin() + e * width,
                            want.begin() + (e + 1) * width);
              } else {
                ++untouched;
                changed += blockChanged(i, e, entryBytes);
              }
            }
        StringRef name = roleName(arg.role);
        report(name, gotW, refW, kw || vw ? 0.0 : 1e-5);
        log << "check unwritten " << name << " steps: " << changed << " of "
            << untouched << " changed  " << (changed ? "FAILED" : "ok")
            << "\n";
        if (changed)
          exitCode = 1;
      } else if (arg.role == Role::StateCheckpoints) {
        // Written rows against the reference, the others untouched; e4m3
        // rows times the scales the kernel stored with them.
        int sc = roleIndex(Role::CheckpointScale);
        if (sc >= 0)
          applyRowScales(arg, vk, got, widen(sig->arguments[sc], buffers[sc]));
        int64_t block = p.HV * p.K * p.V;
        int64_t blockBytes =
            block * arg.elementType.getIntOrFloatBitWidth() / 8;
        std::vector<double> gotW, refW;
        int64_t changed = 0, untouched = 0;
        for (int64_t r = 0; r < p.checkpointRows; ++r) {
          if (ref.checkpointWritten[r]) {
            gotW.insert(gotW.end(), got.begin() + r * block,
                        got.begin() + (r + 1) * block);
            refW.insert(refW.end(), ref.checkpoints.begin() + r * block,
                        ref.checkpoints.begin() + (r + 1) * block);
          } else {
            ++untouched;
            changed += blockChanged(i, r, blockBytes) ||
                       blockChanged(sc, r, scaleBlockBytes);
          }
        }
        report("checkpoints", gotW, refW, stateTolOf(arg.elementType));
        log << "check unwritten checkpoint rows: " << changed << " of "
            << untouched << " changed  " << (changed ? "FAILED" : "ok") << "\n";
        if (changed)
          exitCode = 1;
      } else if (arg.role == Role::IntermediateStates) {
        // Written (row, step) blocks against the reference, others untouched.
        // e4m3 x the scales the kernel stored with them.
        int sc = roleIndex(Role::IntermediateStateScale);
        if (sc >= 0)
          applyRowScales(arg, vk, got, widen(sig->arguments[sc], buffers[sc]));
        int64_t block = p.HV * p.K * p.V;
        int64_t blockBytes = block * arg.elementType.getIntOrFloatBitWidth() / 8;
        std::vector<bool> written(p.intermediateRows * p.intermediateSteps, false);
        for (int64_t n = 0; n < p.N; ++n) {
          int64_t row = p.intermediateIndexed ? refIn.intermediateIndices[n] : n;
          if (padding[n] || row < 0)
            continue;
          int64_t len = p.varlen ? refIn.cuSeqlens[n + 1] - refIn.cuSeqlens[n] : p.T;
          for (int64_t st = 0; st < std::min(len, p.intermediateSteps); ++st)
            written[row * p.intermediateSteps + st] = true;
        }
        std::vector<double> gotW, refW;
        int64_t changed = 0, untouched = 0;
        for (size_t bIdx = 0; bIdx < written.size(); ++bIdx) {
          if (written[bIdx]) {
            gotW.insert(gotW.end(), got.begin() + bIdx * block, got.begin() + (bIdx + 1) * block);
            refW.insert(refW.end(), ref.intermediate.begin() + bIdx * block,
                        ref.intermediate.begin() + (bIdx + 1) * block);
          } else {
            ++untouched;
            changed += blockChanged(i, bIdx, blockBytes) ||
                       blockChanged(sc, bIdx, scaleBlockBytes);
          }
        }
        double interTol = tolState.getNumOccurrences()
                              ? double(tolState)
                              : std::max(storeTolOf(arg.elementType), reloadTol);
        report("intermediate", gotW, refW, interTol);
        log << "check unwritten intermediate steps: " << changed << " of " << untouched
            << " changed  " << (changed ? "FAILED" : "ok") << "\n";
        if (changed)
          exitCode = 1;
      } else if (arg.role == Role::FinalState || arg.role == Role::State) {
        if (scaleArg >= 0) // e4m3 x the scale the kernel stored with it
          applyRowScales(arg, vk, got,
                         widen(sig->arguments[scaleArg], buffers[scaleArg]));
        if (p.slots == 0) {
          report("final_state", got, ref.finalState, stateTol);
          continue;
        }
        // Used slots against the reference, the others bit-identical.
        int64_t slotSize = p.HV * p.K * p.V;
        int64_t slotBytes = slotSize * arg.elementType.getIntOrFloatBitWidth() / 8;
        int64_t changed = 0;
        std::vector<double> gotUsed, refUsed;
        for (int64_t s = 0; s < p.slots; ++s) {
          if (used[s]) {
            gotUsed.insert(gotUsed.end(), got.begin() + s * slotSize,
                           got.begin() + (s + 1) * slotSize);
            refUsed.insert(refUsed.end(), ref.finalState.begin() + s * slotSize,
                           ref.finalState.begin() + (s + 1) * slotSize);
          } else {
            changed += blockChanged(i, s, slotBytes) ||
                       blockChanged(scaleArg, s, scaleBlockBytes);
          }
        }
        report("final_state", gotUsed, refUsed, stateTol);
        log << "check untouched slots: " << changed << " of "
            << std::count(used.begin(), used.end(), false) << " changed  "
            << (changed ? "FAILED" : "ok") << "\n";
        result["untouched_slots_changed"] = changed;
        if (changed)
          exitCode = 1;
      }
    }
    if (anyStrided) {
      log << "check gaps of strided buffers: " << gapsChanged
          << " bytes changed  " << (gapsChanged ? "FAILED" : "ok") << "\n";
      if (gapsChanged)
        exitCode = 1;
    }
    result["check"] = exitCode == 0 ? "ok" : "failed";
  }
  if (benchOpt) {
    double gbps = bytesMoved / (bench.us * 1e3);
    result["us"] = number(bench.us);
    result["gb_per_s"] = number(gbps);
    log << "bench: " << llvm::format("%.2f", bench.us) << " us median, "
        << llvm::format("%.3g", gbps) << " GB/s (" << bytesMoved << " bytes)";
    if (target == "cuda") {
      result["copy_us"] = number(bench.copyUs);
      result["of_copy"] = number(bench.copyUs / bench.us);
      result["input_sets"] = bench.sets;
      log << "; device copy of the same bytes " << llvm::format("%.2f", bench.copyUs)
          << " us -> " << llvm::format("%.2f", bench.copyUs / bench.us)
          << " of copy (" << bench.sets << " rotating input sets, CUDA-graph replays)";
    }
    log << "\n";
  }
  if (jsonOpt)
    llvm::outs() << llvm::json::Value(std::move(result)) << "\n";
  return exitCode;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  int exitCode = run(argc, argv);
  // A failed write of the results (a full disk, /dev/full) is an error, not
  // an abort in the stream's destructor at exit.
  llvm::outs().flush();
  if (llvm::outs().has_error()) {
    llvm::errs() << "gdn-run: error: cannot write the output: "
                 << llvm::outs().error().message() << "\n";
    llvm::outs().clear_error();
    return 1;
  }
  return exitCode;
}
