/*===- gdn-c/GDN.h - C API of the gdn compiler and runtime ---------*- C -*-===*\
|*                                                                             *|
|* A stable C ABI for hosts that are not C++ (Python ctypes, other compilers). *|
|* Compile a gdn.recurrent kernel from MLIR text or from a plain struct (a     *|
|* gdn.commit kernel from MLIR text), then launch it with raw device pointers  *|
|* on a CUDA stream, or run it on host memory with the CPU lowering.           *|
|*                                                                             *|
|* Errors: every function returning gdnStatus sets a thread-local message      *|
|* (gdnGetLastError) on failure and never aborts the process.                  *|
|* Threads: compiling is thread-safe (one lock per compiler); kernels are      *|
|* owned by their compiler and stay valid until gdnCompilerDestroy.            *|
|* Semantics of the recurrence: the gdn.recurrent op's description (GDNOps.td, *|
|* docs/DESIGN.md) and docs/math.md.                                           *|
\*===----------------------------------------------------------------------===*/
#ifndef GDN_C_GDN_H
#define GDN_C_GDN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gdnStatus {
  GDN_OK = 0,
  GDN_ERROR_INVALID_ARGUMENT = 1, /* bad pointer, count, shape or option */
  GDN_ERROR_COMPILE = 2,          /* the MLIR did not parse, verify or lower */
  GDN_ERROR_CUDA = 3,             /* a CUDA driver call failed */
  GDN_ERROR_NO_DEVICE = 4,        /* no CUDA driver or no GPU */
  GDN_ERROR_UNSUPPORTED = 5       /* e.g. a CPU kernel launched on a stream */
} gdnStatus;

typedef enum gdnTarget { GDN_TARGET_CPU = 0, GDN_TARGET_CUDA = 1 } gdnTarget;

typedef enum gdnDType {
  GDN_DTYPE_F32 = 0,
  GDN_DTYPE_BF16 = 1,
  GDN_DTYPE_F16 = 2,
  GDN_DTYPE_I32 = 3, /* index tables (gdnKernelArgumentDType only) */
  GDN_DTYPE_I64 = 4,
  GDN_DTYPE_F8E4M3 = 5 /* e4m3 (finite, max 448): state_dtype,
                          intermediate_dtype or checkpoint_dtype only, with
                          a scale a state row (state_scale,
                          intermediate_state_scale, checkpoint_scale) */
} gdnDType;

typedef enum gdnDecay {
  GDN_DECAY_NONE = 0,        /* S is not decayed */
  GDN_DECAY_LOG_SPACE = 1,   /* g [N, T, HV], exp(g) */
  GDN_DECAY_FUSED_GATING = 2 /* a [N,T,HV], A_log [HV] f32, dt_bias [HV] f32 */
} gdnDecay; /* per_key_decay (KDA): g, a [N, T, HV, K] and dt_bias [HV * K] */

typedef enum gdnBeta {
  GDN_BETA_ONE = 0,   /* beta = 1 */
  GDN_BETA_GIVEN = 1, /* beta [N, T, HV] */
  GDN_BETA_LOGITS = 2 /* b [N, T, HV], beta = sigmoid(b) in fp32 */
} gdnBeta; /* per_channel_beta: beta, b [N, T, HV, V] */

typedef enum gdnStateLayout {
  GDN_LAYOUT_KV = 0, /* state [N, HV, K, V] (FLA) */
  GDN_LAYOUT_VK = 1  /* state [N, HV, V, K] (SGLang/vLLM/FlashInfer) */
} gdnStateLayout;

/* A gdn.recurrent described without MLIR. Shapes: q, k [N, T, H, K];
 * v, o [N, T, HV, V] (HV % H == 0). The kernel's arguments, in order:
 *   q, k, v,
 *   g                        (decay == LOG_SPACE)
 *   a, A_log, dt_bias        (decay == FUSED_GATING)
 *   beta | b                 (beta == GIVEN | LOGITS)
 *   state_indices            (num_slots > 0; slot per sequence, < 0: padding)
 *   cu_seqlens               (cu_seqlens_bits != 0; varlen sequence starts)
 *   intermediate_state_indices (intermediate_index_bits != 0)
 *   retrieve_parent_token    (parent_index_bits != 0; EAGLE tree, [N, steps])
 *   checkpoint_offsets       (checkpoint_interval > 0; [N + 1])
 *   state                    (has_initial_state && has_final_state &&
 * state_in_place) initial_state            (when present, not in place)
 *   intermediate_states      (intermediate_rows > 0)
 *   intermediate_state_scale (intermediate_dtype == F8E4M3: f32
 * [intermediate_rows, intermediate_steps, HV, V], a stored row's scale)
 *   k_window, v_window, g_window, beta_window (replay_steps > 0)
 *   state_checkpoints        (checkpoint_interval > 0)
 *   checkpoint_scale         (checkpoint_dtype == F8E4M3: f32
 * [checkpoint_rows, HV, V], a stored row's scale)
 *   state_scale              (state_dtype == F8E4M3: f32 [N or num_slots, HV,
 * V], S = e4m3 x scale of its row; read, and written with the state; the state
 * is then in place or only initial or only final) final_state (when present,
 * not in place)
 *   o
 * States are state_dtype, [N, HV, ...] or, with a pool, [num_slots, HV, ...]:
 * padding rows (index < 0, and an index >= num_slots) touch no slot and
 * output zeros; likewise an intermediate_state_indices entry outside
 * [0, intermediate_rows) writes no row. gdnKernelArgumentName/Bytes describe
 * each argument.
 */
#define GDN_ABI_VERSION 7 /* of gdnRecurrentDesc; raised on every change */

typedef struct gdnRecurrentDesc {
  uint32_t struct_size; /* sizeof(gdnRecurrentDesc) and GDN_ABI_VERSION of */
  uint32_t abi_version; /* the caller's header: set both with
                           gdnRecurrentDescInit; a mismatch is
                           GDN_ERROR_INVALID_ARGUMENT, never a read past
                           the caller's struct */
  int64_t N, T, H, HV, K, V; /* N >= 1 (>= 0 with cu_seqlens), the others
                                >= 1; no argument over 2^40 bytes */
  gdnDType input_dtype; /* q, k, v and o */
  gdnDType gate_dtype;  /* g or a (A_log and dt_bias are always f32) */
  gdnDType beta_dtype;  /* beta or b */
  gdnDecay decay;
  gdnBeta beta;
  int qk_l2norm;        /* nonzero: q, k L2-normalised in the kernel (eps 1e-6) */
  int has_scale;        /* nonzero: q is scaled by `scale` as given (finite;
                           0 and negative values too, as FLA does); 0:
                           by K^-0.5 */
  float scale;
  gdnStateLayout layout;
  int has_initial_state;
  int has_final_state;
  int state_in_place;   /* initial and final state are one argument */
  int64_t num_slots;    /* > 0: the states are a pool [num_slots, HV, ...] */
  int state_index_bits; /* with a pool: state_indices [N] is int32 (32) or int64 (64) */
  gdnDType state_dtype; /* storage of the states (computed in f32, rounded once on store) */
  int allow_neg_eigval; /* nonzero, with beta == LOGITS: beta = 2 sigmoid(b) */
  int cu_seqlens_bits;  /* 0, or varlen: cu_seqlens [N + 1] is int32 (32) or int64
                           (64), T counts all packed tokens and the token tensors
                           are [1, T, ...] */
  int64_t intermediate_rows;  /* > 0: verify, the state after every token goes to
                                 intermediate_states [rows, steps, HV, ...] */
  int64_t intermediate_steps; /* steps of that buffer (T unless varlen) */
  int intermediate_index_bits; /* 0: row n (batch-scoped, rows = N); 32/64: rows
                                  from intermediate_state_indices [N] (< 0: none) */
  gdnDType intermediate_dtype; /* storage of the intermediate states (F8E4M3
                                  adds intermediate_state_scale) */
  int sm_count;         /* multiprocessors of the target device, for the cost
                           model (0: the chip's largest part, e.g. 132;
                           at most 4096) */
  int per_key_decay;    /* nonzero (KDA, needs a decay): the decay is per key
                           channel, g or a [N, T, HV, K] and, with fused
                           gating, dt_bias [HV * K] (SGLang's flattened
                           [HV, K]); A_log stays [HV] */
  int per_channel_beta; /* nonzero (needs beta GIVEN or LOGITS): beta or b per
                           value channel, [N, T, HV, V] */
  int parent_index_bits; /* 0, or EAGLE tree verify (needs intermediate_rows
                            > 0): retrieve_parent_token [N, intermediate_steps]
                            is int32 (32) or int64 (64); step s starts from
                            the state after its parent step (see the op) */
  /* Operands that are views (ABI 3). Strides in elements, outermost first;
     all zero: dense row-major. Else every entry used is set, and the layout
     rules of the op apply (docs/DESIGN.md, "Strided operands"): the
     innermost stride is 1 and every other a multiple of min(16 bytes, the
     innermost dimension's largest power-of-two divisor), so e.g. q, k and v
     may be views of a fused projection (SGLang's mixed_qkv, token stride
     2 H K + HV V). The kernel's pointer is the address of element [0, ...];
     strides of size-1 dimensions are not used. A bad stride is
     GDN_ERROR_COMPILE naming the operand. */
  int64_t q_strides[4];    /* q [N, T, H, K] */
  int64_t k_strides[4];    /* k [N, T, H, K] */
  int64_t v_strides[4];    /* v [N, T, HV, V] */
  int64_t gate_strides[4]; /* g or a: [N, T, HV] uses the first 3 entries,
                              [N, T, HV, K] (per_key_decay) all 4 */
  int64_t beta_strides[4]; /* beta or b, likewise ([N, T, HV, V]) */
  int64_t state_slot_stride; /* elements from one slot (pool) or row n of
                                the states to the next, the rest of a slot
                                dense ([slots, HV, V, K] views of a larger
                                per-slot record); 0: dense */
  int64_t intermediate_row_stride; /* likewise, rows of intermediate_states;
                                      0: dense */
  /* The GPU schedule (ABI 4): NULL or "" for the cost model's, else the
     text of a #gdn.schedule<...> attribute whose parameters pin those of the
     kernel, e.g. "#gdn.schedule<columns_per_lane = 2, warps = 4>"
     (docs/schedule.md lists every parameter). A text that is not one is
     GDN_ERROR_INVALID_ARGUMENT with the parser's message; a schedule the
     kernel cannot take is GDN_ERROR_COMPILE with the reason. Read during
     gdnCompileDesc only. */
  const char *schedule;
  /* Replayed verify (ABI 5): > 0, the op writes each token's raw inputs into
     the replay windows of L = replay_steps steps, arguments after
     intermediate_states (see the op's k_window): k_window [rows, H, L, K]
     and v_window [rows, HV, L, V] in input_dtype, g_window and beta_window
     [rows, HV, L] f32, rows = num_slots with a pool, else N; 0: none. A
     gdn.replay_commit of those windows compiles for the GPU only with
     L <= 256 (its steps are unrolled); gdnChooseVerifyMode picks snapshots
     past it. */
  int64_t replay_steps;
  /* Prefix-cache checkpoints (ABI 6; FlashInfer's state_checkpoints,
     checkpoint_cu_starts and checkpoint_every_n_tokens; see the op's
     state_checkpoints): checkpoint_interval > 0 tokens adds the arguments
     checkpoint_offsets [N + 1] (int32 or int64: checkpoint_offset_bits 32
     or 64) and state_checkpoints [checkpoint_rows, HV, ...] in the state
     layout, dense, in checkpoint_dtype (f32, bf16, f16, or F8E4M3 with
     the argument checkpoint_scale after it, each row quantized as a final
     state is, docs/math.md §6). Sequence n
     writes the state after its ((j + 1) * checkpoint_interval)-th token to
     row offsets[n] + j while that row is below offsets[n + 1], never a row
     outside [0, checkpoint_rows). GPU kernels that stage tokens need a
     checkpoint_interval that is a multiple of their staged_tokens (the cost
     model picks one; 64 always is). 0: none. */
  int64_t checkpoint_interval;
  int64_t checkpoint_rows;
  int checkpoint_offset_bits;
  gdnDType checkpoint_dtype;
  /* Stochastic rounding (ABI 7; the op's stochastic_rounding): nonzero, an
     F8E4M3 final state or F8E4M3 intermediate states are rounded to one of
     the two neighbouring e4m3 values with the probability of its nearness,
     unbiased on average, instead of to the nearest (docs/math.md §6), and
     so are F8E4M3 checkpoints; needs one of them, else GDN_ERROR_COMPILE
     with the verifier's message. */
  int stochastic_rounding;
} gdnRecurrentDesc;

/* Zero-fills `desc` (every option off or automatic, scale K^-0.5) and sets
 * struct_size and abi_version from this header. Call it before filling in a
 * description. */
static inline void gdnRecurrentDescInit(gdnRecurrentDesc *desc) {
  unsigned char *p = (unsigned char *)desc;
  for (unsigned long i = 0; i < sizeof(*desc); ++i)
    p[i] = 0;
  desc->struct_size = (uint32_t)sizeof(*desc);
  desc->abi_version = GDN_ABI_VERSION;
}

/* Handles. A handle is valid from its creation until gdnCompilerDestroy of
 * its compiler (a kernel's too); every function checks it against a registry
 * of live handles and answers GDN_ERROR_INVALID_ARGUMENT (NULL / -1 for the
 * queries) for one that is not, e.g. used after destroy. A call in flight
 * in another thread (a compile, a run, a launch, a query) holds its
 * compiler: gdnCompilerDestroy waits for it to return before freeing the
 * compiler and its kernels (strings the queries returned die with them). */
typedef struct gdnCompilerImpl *gdnCompiler;
typedef struct gdnKernelImpl *gdnKernel;

/* The library version, e.g. "0.1.0". */
const char *gdnVersion(void);

/* The last error of the calling thread ("" if none). The string is owned by
 * the library and valid until this thread's next gdn* call (which may
 * replace it): copy it before calling again, including in the same
 * expression. */
const char *gdnGetLastError(void);

/* The chip name gdn builds for on a CUDA device of compute capability
 * major.minor (e.g. 9, 0 -> "sm_90a": the arch-specific variant where gdn
 * has one), to pass as `chip`; NULL when gdn does not build for it. The
 * string is static. */
const char *gdnChipForDevice(int major, int minor);

typedef enum gdnVerifyMode {
  GDN_VERIFY_SNAPSHOTS = 0, /* state after every draft token, then gdn.commit a layer */
  GDN_VERIFY_REPLAY = 1     /* replay windows, then one gdn.replay_commit */
} gdnVerifyMode;

/* The speculative-verify scheme the cost model expects to be faster for one
 * round (docs/cost-model.md, "Replay or snapshots"; measured on sm_90a):
 * state_dtype the pool's (GDN_DTYPE_F32, _BF16 or _F16); T >= 1 draft tokens
 * a row, N >= 1 rows, layers >= 1 a round; expected_accepted the mean
 * accepted tokens a row, 0 <= expected_accepted <= T; tree nonzero for an
 * EAGLE tree. Sets *mode; GDN_ERROR_INVALID_ARGUMENT (naming the argument)
 * for anything else. */
gdnStatus gdnChooseVerifyMode(gdnDType state_dtype, int64_t T, int64_t N,
                              int64_t layers, double expected_accepted,
                              int tree, gdnVerifyMode *mode);

/* Creates a compiler: an MLIR context, an in-memory kernel cache and the disk
 * cache directory ($GDN_CACHE_DIR, else $XDG_CACHE_HOME/gdn-mlir, else
 * ~/.cache/gdn-mlir; GDN_CACHE_DIR=off disables the disk cache). */
gdnStatus gdnCompilerCreate(gdnCompiler *compiler);
/* Destroys a compiler and its kernels; a handle that is not live (NULL,
 * destroyed already) is ignored. */
void gdnCompilerDestroy(gdnCompiler compiler);

/* Compiles the function `function` (NULL: the only one holding a
 * gdn.recurrent or a gdn.commit) of the MLIR module `mlir` for `target`. The
 * function's body is the op and a return, its arguments the op's operands
 * (a gdn.commit: intermediate_states, accepted, state_indices,
 * intermediate_state_indices, intermediate_state_scale, state_scale, state,
 * as present). `chip` (NULL:
 * "sm_90a") is used for GPU targets. Repeated calls with the same arguments
 * return the cached kernel. */
gdnStatus gdnCompileText(gdnCompiler compiler, const char *mlir,
                         const char *function, gdnTarget target,
                         const char *chip, gdnKernel *kernel);

/* As gdnCompileText, for a gdn.recurrent described by `desc`. */
gdnStatus gdnCompileDesc(gdnCompiler compiler, const gdnRecurrentDesc *desc,
                         gdnTarget target, const char *chip,
                         gdnKernel *kernel);

/* Number of arguments, and for argument i its role name ("q", "k", "v", "g",
 * "a", "A_log", "dt_bias", "beta", "b", "state_indices", "cu_seqlens",
 * "intermediate_state_indices", "retrieve_parent_token", "initial_state",
 * "intermediate_states", "intermediate_state_scale",
 * "final_state", "state", "o", "state_scale"; a gdn.commit also "accepted")
 * and its size in
 * bytes. NULL / -1 for a bad index. */
int gdnKernelNumArguments(gdnKernel kernel);
const char *gdnKernelArgumentName(gdnKernel kernel, int index);
int64_t gdnKernelArgumentBytes(gdnKernel kernel, int index);
/* Argument i's element type (a gdnDType: F32, BF16, F16, or I32 / I64 for
 * index tables), rank, extent along dimension `dim`, and stride along it in
 * elements (the memref type's: dense row-major unless the operand is a
 * view): what a host checks its buffers against. gdnKernelArgumentBytes is
 * the span from the pointer passed to the last element, gaps included.
 * -1 for a bad handle, index or dim. */
int gdnKernelArgumentDType(gdnKernel kernel, int index);
int gdnKernelArgumentRank(gdnKernel kernel, int index);
int64_t gdnKernelArgumentDim(gdnKernel kernel, int index, int dim);
int64_t gdnKernelArgumentStride(gdnKernel kernel, int index, int dim);
/* Argument i's offset in elements: from the pointer a caller passes (the
 * buffer's base) to its element [0, ...]: a static subview's offset, 0
 * for every other argument. gdnKernelRunHost and gdnKernelLaunch take the
 * base; a host holding a view of element [0, ...] passes its address minus
 * offset elements. -1 for a bad handle or index. */
int64_t gdnKernelArgumentOffset(gdnKernel kernel, int index);
/* 1 if the kernel writes argument i (o, final_state, state,
 * intermediate_states, the replay windows, state_checkpoints and the e4m3
 * scales: its buffer must be writable), 0 if it only reads it, -1 for a bad
 * handle or index. */
int gdnKernelArgumentWritten(gdnKernel kernel, int index);

/* A CUDA kernel is a list of launches that gdnKernelLaunch issues in order.
 * gdnKernelNumLaunches: their number (0 for a kernel that launches nothing:
 * varlen with N = 0, whose gdnKernelLaunch returns GDN_OK at once; -1 for a
 * CPU kernel or a handle that is not live). For launch i (0 <= i <
 * gdnKernelNumLaunches), its entry name and the PTX of the module holding
 * it (launches of one module share the string); NULL for a bad handle or
 * index. The strings live as long as the kernel. */
int gdnKernelNumLaunches(gdnKernel kernel);
const char *gdnKernelLaunchName(gdnKernel kernel, int index);
const char *gdnKernelLaunchPTX(gdnKernel kernel, int index);

/* The PTX of a CUDA kernel's first launch, gdnKernelLaunchPTX(kernel, 0)
 * (NULL for a CPU kernel; "" for one that launches nothing). */
const char *gdnKernelPTX(gdnKernel kernel);

/* Launches a CUDA kernel, each of its launches in order, on `stream` (a
 * CUstream; NULL: the legacy default stream) of the calling thread's current
 * device; a launch that fails stops the list (the error names it; the
 * launches before it were issued). `args[i]` is the device
 * address of argument i (16-byte aligned, laid out as its type says; NULL
 * only for an
 * argument of 0 bytes, which is never addressed). A written argument
 * (gdnKernelArgumentWritten) must share no byte with another argument: one
 * launch reads and writes them in no defined order. Not checked here, as the
 * buffers' sizes are not: the caller knows its buffers (the Python package
 * reads an overlapping input from a copy). Asynchronous; no
 * allocation and no host synchronisation, so it can be captured in a CUDA
 * graph. The first launch on a device loads the module (not capturable). */
gdnStatus gdnKernelLaunch(gdnKernel kernel, void *const *args, int num_args,
                          void *stream);

/* Runs a CPU kernel synchronously on host memory (same argument rules). */
gdnStatus gdnKernelRunHost(gdnKernel kernel, void *const *args, int num_args);

#ifdef __cplusplus
}
#endif

#endif /* GDN_C_GDN_H */
