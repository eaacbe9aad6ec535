//===- Compiler.h - compile gdn modules for the CPU or the GPU --*- C++ -*-===//
//
// The compile half of the embedded JIT runner (gdn-run, and later the C API):
// find the function whose body is one gdn.recurrent, describe its arguments,
// and lower a copy of the module to a CPU function (LLVM JIT) or to PTX with
// the list of its kernel launches.
//
//===----------------------------------------------------------------------===//
#ifndef GDN_JIT_COMPILER_H
#define GDN_JIT_COMPILER_H


#include "gdn/Dialect/GDN/IR/GDNDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir {
class ExecutionEngine;
namespace gdn {
namespace jit {

/// The largest buffer the JIT accepts for one argument (1 TiB): analyze()
/// refuses larger operands, gdnCompileDesc larger descriptions.
constexpr int64_t kMaxArgumentBytes = int64_t(1) << 40;

/// What one function argument is to the recurrence.
enum class Role {
  Q,
  K,
  V,
  G,
  A,
  ALog,
  DtBias,
  Beta,
  BLogits,
  StateIndices,             ///< pool slot per sequence (i32 or i64)
  CuSeqlens,                ///< varlen sequence starts (i32 or i64)
  IntermediateStateIndices, ///< row of each sequence in intermediate_states
  ParentTokens, ///< retrieve_parent_token: parent step of each token (tree)
  IntermediateStates, ///< per-token states (written)
  InitialState,
  FinalState,
  State, ///< both the initial and the final state (updated in place); the
         ///< pool of a gdn.commit
  O,
  Accepted, ///< gdn.commit, gdn.replay_commit: accepted tokens of each row
  KWindow,
  VWindow,
  GWindow,
  BetaWindow, ///< replay windows (replayed verify)
  StateScale, ///< scales of an f8E4M3FN state (read, written with the state)
  IntermediateStateScale, ///< scales of f8E4M3FN intermediate_states
  CheckpointOffsets, ///< first state_checkpoints row of each sequence [N + 1]
  StateCheckpoints, ///< the state every checkpoint_interval tokens (written)
  CheckpointScale   ///< scales of f8E4M3FN state_checkpoints (written)
};
StringRef roleName(Role role);
bool isOutput(Role role);

struct Argument {
  Role role;
  std::vector<int64_t> shape;
  /// Element strides of the memref type (dense row-major for an identity
  /// layout; OperandLayouts.h says which others an operand accepts).
  std::vector<int64_t> strides;
  /// Elements from the buffer's base (the pointer passed) to element
  /// [0, ...]: 0 but for a static subview's offset.
  int64_t offset = 0;
  Type elementType;
  /// Elements of the logical shape, saturated at INT64_MAX (zero strides
  /// let a small buffer have more).
  int64_t numElements() const;
  /// Whether the layout is the dense row-major one (size-1 dims aside) at
  /// offset 0.
  bool isDense() const;
  /// Elements a buffer spans from its base to the last element, the offset
  /// and the gaps of a strided layout included (numElements() when dense;
  /// 0 when empty).
  int64_t spanElements() const;
  /// Bytes a caller's buffer must hold: spanElements() times the element size.
  int64_t bytes() const;
};

/// The gdn op a compiled function runs.
enum class OpKind { Recurrent, Commit, ReplayCommit };

/// A function `func.func @name(memref...)` whose body is one gdn.recurrent,
/// gdn.commit or gdn.replay_commit (plus the return); each argument is one
/// operand of the op.
struct Signature {
  std::string function;
  OpKind op = OpKind::Recurrent;
  std::vector<Argument> arguments;
  /// Sequences of the gdn.recurrent (0: a varlen batch with none, nothing
  /// to launch), rows of the gdn.commit or gdn.replay_commit.
  int64_t N = 0;
};

/// Finds the function to run (`function`, or the only one holding a
/// gdn.recurrent or a gdn.commit) and describes it. Emits a diagnostic and
/// fails otherwise.
FailureOr<Signature> analyze(ModuleOp module, StringRef function = "");

/// A function JIT-compiled for the host CPU. Arguments are bare pointers to
/// the buffers of `Signature::arguments`, in order.
class CPUProgram {
public:
  CPUProgram(std::unique_ptr<ExecutionEngine> engine, std::string function);
  ~CPUProgram();
  /// Runs the function; `buffers[i]` is the i-th argument's host buffer.
  LogicalResult run(ArrayRef<void *> buffers);

private:
  std::unique_ptr<ExecutionEngine> engine;
  std::string function;
};

/// Lowers a copy of `module` with gdn-lower-to-cpu and JIT-compiles it.
FailureOr<std::unique_ptr<CPUProgram>> compileForCPU(ModuleOp module,
                                                     const Signature &sig);

/// Bytes of dynamic shared memory a launch may ask for: the most any chip
/// gdn builds for gives a CTA (227 KiB: sm_90, sm_100). Past 48 KiB the
/// runners' CudaDriver::launch opts the kernel in (cuFuncSetAttribute); a
/// chip with less refuses the launch with the driver's error, and the
/// schedule's legality checks refuse such kernels for it before.
/// compileForGPU and the kernel cache refuse more.
constexpr unsigned kMaxDynamicSharedMemoryBytes = 227 * 1024;

/// Kernel parameters a launch may pass: the runners' fixed parameter
/// arrays (gdnKernelLaunch, gdn-run). compileForGPU and the kernel cache
/// refuse more, so a runner never starts a list it cannot finish.
constexpr size_t kMaxKernelParameters = 32;

/// One kernel launch of a compiled function (a gpu.launch_func).
struct GPULaunch {
  /// The kernel's entry name in its module (a PTX identifier).
  std::string kernel;
  /// Index of the kernel's module in GPUProgram::modules.
  unsigned module = 0;
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  /// Bytes of dynamic shared memory (at most kMaxDynamicSharedMemoryBytes).
  unsigned dynamicSharedMemoryBytes = 0;
  /// For each kernel parameter, in order, the index of the function argument
  /// passed to it; an index i past the function's arguments (A of them) is
  /// workspace i - A of the program (GPUProgram::workspaceBytes).
  std::vector<unsigned> argumentIndices;
  /// How the launch follows the previous kernel of its stream: the
  /// gpu.launch_func's `gdn.launch` attribute (GDNDialect.td), `ordinary`
  /// when absent. Any other mode launches with programmatic stream
  /// serialization (CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION).
  LaunchMode mode = LaunchMode::ordinary;
  bool isProgrammatic() const { return mode != LaunchMode::ordinary; }
};

/// A function compiled for CUDA: the PTX of its kernel modules (one per
/// gpu.binary its launches use, in the order of their first use) and its
/// launches in program order, which a runner issues in that order on one
/// stream. No launch: nothing to run (a varlen op with no sequence).
struct GPUProgram {
  std::vector<std::string> modules;
  std::vector<GPULaunch> launches;
  /// Bytes of each device workspace the launches pass (a `gpu.alloc` of the
  /// lowered function: scratch one launch writes and a later one reads,
  /// such as the chunk-parallel solve's matrices). A runner allocates them
  /// (16-byte aligned, contents undefined) before the first launch and may
  /// free them after the last; none for most programs.
  std::vector<int64_t> workspaceBytes;
};

/// How compileForGPU lowers: for `chip` (GPUTarget.h), with `smCount`
/// multiprocessors (0: the chip's), and `schedule`, the text of a
/// #gdn.schedule<...> whose parameters pin those of every gdn.recurrent
/// (empty: the cost model's; gdn-select-schedule's option of that name).
struct GPUOptions {
  std::string chip = "sm_90a";
  int64_t smCount = 0;
  std::string schedule;
};

/// Lowers a copy of `module` with gdn-lower-to-ptx and returns the PTX and
/// launches of `sig.function` (collectGPULaunches).
FailureOr<GPUProgram> compileForGPU(ModuleOp module, const Signature &sig,
                                    const GPUOptions &options);

/// The GPUProgram of `sig.function` in `lowered`, a module after
/// gdn-lower-to-ptx: every gpu.launch_func of the function, in program
/// order, with the PTX of the gpu.binary it names. Each launch must sit in
/// the function's entry block (the list runs unconditionally), have constant
/// grid, block and dynamic shared memory sizes, and pass function arguments
/// (of the `sig.arguments.size()` the function has) as kernel operands. A
/// function without launches is accepted only when `sig.N` is 0. Emits a
/// diagnostic and fails otherwise.
FailureOr<GPUProgram> collectGPULaunches(ModuleOp lowered,
                                         const Signature &sig);

} // namespace jit
} // namespace gdn
} // namespace mlir

#endif // GDN_JIT_COMPILER_H
