//===- GDNAttrs.td - gdn dialect attributes ----------------*- tablegen -*-===//
#ifndef GDN_ATTRS_TD
#define GDN_ATTRS_TD

include "gdn/Dialect/GDN/IR/GDNDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def GDN_StateLayout : I32EnumAttr<"StateLayout",
    "storage order of one head's recurrent state", [
      I32EnumAttrCase<"kv", 0>,
      I32EnumAttrCase<"vk", 1>
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::gdn";
  let description = [{
    `kv`: a head's state is stored [K, V] with V contiguous (FLA's default
    `[N, HV, K, V]`). `vk`: stored [V, K] with K contiguous (SGLang/vLLM pools
    `[slots, HV, V, K]`, FlashInfer "pretranspose").
  }];
}

def GDN_StateLayoutAttr : EnumAttr<GDN_Dialect, GDN_StateLayout, "layout"> {
  let assemblyFormat = "`<` $value `>`";
}


//===----------------------------------------------------------------------===//
// GPU schedule
//===----------------------------------------------------------------------===//

def GDN_Reductions : I32EnumAttr<"Reductions",
    "order of a token's K-reductions in a GPU kernel", [
      I32EnumAttrCase<"in_turn", 0>,
      I32EnumAttrCase<"side_by_side", 1>,
      I32EnumAttrCase<"token_pairs", 2>,
      I32EnumAttrCase<"mma", 3>
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::gdn";
  let description = [{
    `in_turn`: decay, Sᵀk, update, Sᵀq one after another (fewest registers).
    `side_by_side`: a token's K-reductions on the carried state at once, one
    shuffle tree deep. `token_pairs`: staged tokens two at a time, every
    state sum of both on the state before the pair (side by side where
    tokens are not staged, with a tree or a chunked solve). `mma`: a
    decode of an e4m3 (f8E4M3FN) vk state whose sums Sᵀk̂ and Sᵀq̂ are one
    f16 m16n8k16 mma.sync a 16 keys of a warp's 16 rows, and whose update
    and requantization run on packed f16 pairs (MmaDecode.cpp); 8 lanes
    along V, 2 columns a lane a tile of 16 rows (8 columns, 4 tiles a
    warp, unless pinned).
  }];
}
def GDN_ReductionsAttr : EnumAttr<GDN_Dialect, GDN_Reductions, "reductions"> {
  let assemblyFormat = "`` $value";
}

def GDN_ChunkSolve : I32EnumAttr<"ChunkSolve",
    "how a GPU kernel solves a staged chunk of tokens", [
      I32EnumAttrCase<"token_by_token", 0>,
      I32EnumAttrCase<"cuda_cores", 1>,
      I32EnumAttrCase<"tensor_cores", 2>,
      I32EnumAttrCase<"chunk_parallel", 3>
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::gdn";
  let description = [{
    `token_by_token`: the token loop. `cuda_cores`: a chunk's tokens at once
    in the WY (UT-transform) form, Gram matrices in shared memory and a
    forward substitution in registers (ChunkedSolve.cpp). `tensor_cores`:
    the same with the state tile as mma.sync accumulator fragments, in the
    schedule's `precision` (TensorCoreSolve.cpp); with `producer_stages =
    2`, warp-specialized: a producer warpgroup solves each chunk a chunk
    ahead of the consumer warps' state products, handing it over in shared
    memory (WarpSpecializedSolve.cpp). `chunk_parallel`: the Gram
    matrices and triangular solves of every chunk in a launch of their own,
    all chunks at once, into a workspace; then the state scan of
    `tensor_cores` reads them (two launches; ChunkParallel.cpp).
    docs/math.md §5 has the math.
  }];
}
def GDN_ChunkSolveAttr : EnumAttr<GDN_Dialect, GDN_ChunkSolve, "solve"> {
  let assemblyFormat = "`` $value";
}

def GDN_Precision : I32EnumAttr<"Precision",
    "the precision of a tensor-core kernel's f32 mma operands", [
      I32EnumAttrCase<"tf32x3", 0>,
      I32EnumAttrCase<"tf32", 1>,
      I32EnumAttrCase<"bf16", 2>
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::gdn";
  let description = [{
    How `solve = tensor_cores` and `chunk_parallel` multiply f32 operands
    (the state, the solve's matrices, f32 q and k) on tf32 mma.sync.
    `tf32x3`: each split into a tf32 high part and a tf32 remainder, three
    products (3xTF32), about 2^-20 relative, the f32 token loop's accuracy.
    `tf32`: each rounded to the nearest tf32 (10 mantissa bits), one
    product, 2^-11 relative; bf16 and f16 q and k are exact either way.
    `bf16` (`tensor_cores` or `chunk_parallel` with bf16 q and k, K and the
    chunk multiples of 16): as `tf32`, but the scan's
    products with q and k (the state's, and the state update's) take the
    state and the chunk's factors rounded to the nearest bf16 (8 mantissa
    bits, 2^-9 relative) on bf16 m16n8k16 mma.sync: half the mma and no
    widening of q and k.
    docs/math.md §5 and docs/cost-model.md#tensor-core-precision.
  }];
}
def GDN_PrecisionAttr : EnumAttr<GDN_Dialect, GDN_Precision, "precision"> {
  let assemblyFormat = "`` $value";
}

def GDN_LaunchMode : I32EnumAttr<"LaunchMode",
    "how a GPU kernel is launched after the previous kernel of its stream", [
      I32EnumAttrCase<"ordinary", 0>,
      I32EnumAttrCase<"programmatic", 1>,
      I32EnumAttrCase<"programmatic_at_start", 2>,
      I32EnumAttrCase<"programmatic_after_recurrence", 3>
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::gdn";
  let description = [{
    `ordinary`: after the previous kernel finished. The others: programmatic
    dependent launch (griddepcontrol, sm_90): the kernel reads the state slot,
    cu_seqlens, the intermediate row and the initial state before it waits
    for the previous kernel, so only where no kernel that may still run
    writes them; it lets the next kernel launch at its own start
    (`programmatic_at_start`), once its recurrence is done, before its state
    store (`programmatic_after_recurrence`), or where the cost model says
    (`programmatic`, a pin only: the chosen schedule names the point).
  }];
}
// Bare (`launch = ordinary`) as a #gdn.schedule parameter; standalone, as
// the `gdn.launch` attribute of a gpu.launch_func (GDNDialect.td), the
// dialect's printer and parser add brackets: #gdn.launch<ordinary>.
def GDN_LaunchModeAttr : EnumAttr<GDN_Dialect, GDN_LaunchMode, "launch"> {
  let assemblyFormat = "`` $value";
}

// A size: an integer literal (not `true` / `false`, which the generic
// integer parser reads as -1 / 0).
class GDN_SizeParameter<string desc>
    : OptionalParameter<"std::optional<int64_t>", desc> {
  let parser = [{ ::mlir::gdn::parseScheduleSize($_parser) }];
}

def GDN_ScheduleAttr : AttrDef<GDN_Dialect, "Schedule"> {
  let mnemonic = "schedule";
  let summary = "the GPU schedule of a gdn.recurrent kernel";
  let description = [{
    The thread-to-data mapping and the pipeline of the GPU kernel of one
    `gdn.recurrent`, carried on the op as the discardable attribute
    `gdn.schedule` from `gdn-select-schedule` to `convert-gdn-to-gpu`, and
    the one way a host (the C API, Python, gdn-run, the pass pipelines) pins
    a schedule. Every parameter is optional: an absent one is the cost
    model's choice (docs/cost-model.md); `gdn-select-schedule` writes all of
    them. The kernel runs one CTA per (sequence n, value head hv, block of
    `columns_per_lane * lanes_along_v * warps` V columns); a warp's lanes
    split `lanes_along_v` along V and `32 / lanes_along_v` along K.

    | parameter | meaning | none |
    |---|---|---|
    | `columns_per_lane` | V columns of the state a lane holds (1-16) | |
    | `lanes_along_v` | lanes of a warp along V, a power of two (1-32) | |
    | `warps` | consumer warps per CTA (1-32) | |
    | `staged_tokens` | tokens whose q, k, v and gates go through shared memory at a time | 0 |
    | `unroll_tokens` | unroll factor of the staged token loop (1-64) | 1 |
    | `reductions` | `in_turn`, `side_by_side`, `token_pairs` or `mma` (an e4m3 decode's sums on mma.sync) | |
    | `solve` | `token_by_token`, `cuda_cores`, `tensor_cores` (a staged chunk at once, WY form) or `chunk_parallel` (every chunk's solve in a launch before the scan) | |
    | `precision` | `tf32x3`, `tf32` or `bf16`: the tensor-core products of f32 operands, split in three, rounded once to tf32, or (with bf16 q and k) rounded to bf16 on bf16 mma | |
    | `producer_stages` | ring slots a producer warp fills with cp.async.bulk copies (at most 8); with `solve = tensor_cores`, 2: a producer warpgroup's copies and chunk solves | 0 |
    | `consumer_registers` | setmaxnreg of the consumer threads under a producer warpgroup (sm_90a; a multiple of 8 in [24, 256]) | 0 |
    | `state_prefetch_distance` | CTAs ahead whose state tile thread 0 prefetches into L2 (cp.async.bulk.prefetch.L2; kernels without staged tokens, a vk initial state) | 0 |
    | `input_prefetch_distance` | CTAs ahead whose q, k, v rows and gates are prefetched into L2 (prefetch.global.L2; the tensor-core solve of one chunk) | 0 |
    | `chunk_prefetch_distance` | chunks ahead whose q, k, v rows (and chunk_parallel's record) the tensor-core forms' chunk loop copies into a second set of buffers with cp.async (0 or 1) | 0 |
    | `max_registers` | registers a thread at most (`.maxnreg`; 0: as ptxas allocates, else in [24, 255]) | 0 |
    | `launch` | `ordinary` or a programmatic dependent launch (`LaunchMode`) | |
    | `segments` | context-parallel segments a sequence: chunk_parallel's scan split along T into this many CTAs a (sequence, head, V block), joined by each segment's state map (docs/math.md §7) | 1 |
    | `concurrent_solves` | 1: chunk_parallel's solves run beside the scan, in persistent CTAs that count each group of chunks done, a counter the scan waits for (0 or 1) | 0 |

    Sizes are checked here (at least 0, or 1 where 0 means nothing; at most
    2^20); what a given op's kernel can take (shapes that divide, registers,
    shared memory, the chip) is checked by the passes, as diagnostics on the
    op.

    ```mlir
    gdn.recurrent ... {gdn.schedule = #gdn.schedule<columns_per_lane = 4, lanes_along_v = 2>}
    ```
  }];
  let parameters = (ins
    GDN_SizeParameter<"V columns of the state a lane holds">:$columns_per_lane,
    GDN_SizeParameter<"lanes of a warp along V">:$lanes_along_v,
    GDN_SizeParameter<"consumer warps per CTA">:$warps,
    GDN_SizeParameter<"tokens staged in shared memory at a time (0: none)">:$staged_tokens,
    GDN_SizeParameter<"unroll factor of the staged token loop (1: a loop)">:$unroll_tokens,
    OptionalParameter<"ReductionsAttr", "order of a token's K-reductions">:$reductions,
    OptionalParameter<"ChunkSolveAttr", "how a staged chunk is solved">:$solve,
    OptionalParameter<"PrecisionAttr", "tensor-core products of f32 operands">:$precision,
    GDN_SizeParameter<"ring slots of a producer warp (0: none)">:$producer_stages,
    GDN_SizeParameter<"setmaxnreg of the consumers (0: none)">:$consumer_registers,
    GDN_SizeParameter<"L2 prefetch distance of state tiles in CTAs (0: none)">:$state_prefetch_distance,
    GDN_SizeParameter<"L2 prefetch distance of staged inputs in CTAs (0: none)">:$input_prefetch_distance,
    GDN_SizeParameter<"chunks copied ahead into shared memory (0: none)">:$chunk_prefetch_distance,
    GDN_SizeParameter<"registers a thread at most, .maxnreg (0: no cap)">:$max_registers,
    OptionalParameter<"LaunchModeAttr", "launch after the previous kernel">:$launch,
    GDN_SizeParameter<"context-parallel segments a sequence (1: none)">:$segments,
    GDN_SizeParameter<"chunk_parallel's solves beside the scan (0: before it)">:$concurrent_solves
  );
  let builders = [
    // #gdn.schedule<>: every parameter the cost model's choice.
    // (Over the storage's tuple, so a new parameter needs no line here.)
    AttrBuilder<(ins), [{
      return std::apply(
          [&](auto... absent) { return $_get($_ctxt, absent...); },
          ::mlir::gdn::detail::ScheduleAttrStorage::KeyTy());
    }]>
  ];
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// This schedule with every parameter `pins` holds replaced by its value.
    ScheduleAttr pinnedBy(ScheduleAttr pins) const;
    /// This schedule with the parameter that `get` reads set to `value`
    /// (a size: std::nullopt makes it absent), e.g.
    /// `s.with(&ScheduleAttr::getWarps, 4)`. One overload a parameter type.
    /// The result is not verified (the cost model's draft holds zeros).
    ScheduleAttr with(std::optional<int64_t> (ScheduleAttr::*get)() const,
                      std::optional<int64_t> value) const;
    ScheduleAttr with(ReductionsAttr (ScheduleAttr::*get)() const,
                      Reductions value) const;
    ScheduleAttr with(ChunkSolveAttr (ScheduleAttr::*get)() const,
                      ChunkSolve value) const;
    ScheduleAttr with(PrecisionAttr (ScheduleAttr::*get)() const,
                      Precision value) const;
    ScheduleAttr with(LaunchModeAttr (ScheduleAttr::*get)() const,
                      LaunchMode value) const;
    /// Every parameter present and zero (an enum: its case 0): where the
    /// cost model's draft starts (ScheduleDraft). Not a valid schedule
    /// (columns_per_lane = 0; not verified), never attached to an op.
    static ScheduleAttr zero(::mlir::MLIRContext *context);

    // What the kernel builder derives from a complete schedule
    // (isComplete), defined here once beside the parameters.

    /// Lanes of a warp.
    static constexpr int64_t kWarpSize = 32;
    /// Lanes of a warp along K: 32 / lanes_along_v.
    int64_t lanesAlongK() const { return kWarpSize / *getLanesAlongV(); }
    /// V columns of a warp: columns_per_lane * lanes_along_v.
    int64_t warpColumns() const {
      return *getColumnsPerLane() * *getLanesAlongV();
    }
    /// V columns of a CTA: warpColumns() * warps.
    int64_t blockColumns() const { return warpColumns() * *getWarps(); }
    /// Warps of the producer: none, a warp, or a warpgroup under
    /// setmaxnreg (consumer_registers > 0) or solving the chunks
    /// (producerSolves).
    int64_t producerWarps() const {
      return *getProducerStages() == 0                        ? 0
             : *getConsumerRegisters() > 0 || producerSolves() ? 4
                                                              : 1;
    }
    /// The warp-specialized WY solve (solve = tensor_cores with
    /// producer_stages > 0): a producer warpgroup stages each chunk and
    /// solves it (Gram, substitution) into a ring slot a chunk ahead of the
    /// consumer warps' state products (WarpSpecializedSolve.cpp).
    bool producerSolves() const {
      return *getProducerStages() > 0 &&
             getSolve().getValue() == ChunkSolve::tensor_cores;
    }
    /// Threads of a CTA, the producer's included.
    int64_t threads() const {
      return (*getWarps() + producerWarps()) * kWarpSize;
    }
    /// A staged chunk solved at once (solve = cuda_cores or tensor_cores).
    bool chunkedSolve() const {
      return getSolve().getValue() != ChunkSolve::token_by_token;
    }
    /// The state tile on tensor cores (tensor_cores or chunk_parallel).
    bool tensorCores() const {
      return getSolve().getValue() == ChunkSolve::tensor_cores ||
             chunkParallel();
    }
    /// Row tiles of 16 V columns a warp holds on tensor cores:
    /// columns_per_lane / 2, 1 or 2 (TensorCoreSolve.cpp); 0 off them.
    int64_t rowTiles() const {
      return tensorCores() ? *getColumnsPerLane() / 2 : 0;
    }
    /// Every chunk's solve in a launch before the state scan.
    bool chunkParallel() const {
      return getSolve().getValue() == ChunkSolve::chunk_parallel;
    }
    /// chunk_parallel's scan split along T (segments > 1): a launch of each
    /// segment's state map, one joining them, the scan from each segment's
    /// start state (SegmentScan.cpp).
    bool segmented() const { return *getSegments() > 1; }
    /// chunk_parallel's solves launched before the scan, in persistent CTAs
    /// that let the scan launch beside them (programmatic dependent launch)
    /// and count each group of chunks whose records are written; the scan
    /// waits for its group's count (ChunkParallel.cpp).
    bool concurrentSolves() const { return *getConcurrentSolves() > 0; }
    /// Tensor-core products of f32 operands in one tf32 mma (precision =
    /// tf32 or bf16), not three.
    bool singleTF32() const {
      return getPrecision().getValue() != Precision::tf32x3;
    }
    /// The scan's products with q and k on bf16 mma (precision = bf16).
    bool bf16Products() const {
      return getPrecision().getValue() == Precision::bf16;
    }
    /// A token's K-reductions side by side (side_by_side or token_pairs).
    bool sideBySide() const {
      return getReductions().getValue() != Reductions::in_turn;
    }
    bool tokenPairs() const {
      return getReductions().getValue() == Reductions::token_pairs;
    }
    /// An e4m3 decode's state sums on mma.sync (reductions = mma).
    bool mmaReductions() const {
      return getReductions().getValue() == Reductions::mma;
    }
    LaunchMode launchMode() const { return getLaunch().getValue(); }
    /// Whether every parameter is present and none is a pin only (`launch =
    /// programmatic`, which gdn-select-schedule resolves): what
    /// gdn-select-schedule attaches and convert-gdn-to-gpu takes.
    bool isComplete() const;
    /// The largest value of a size parameter: larger ones are diagnostics
    /// (the cost model's products of sizes stay far from overflow).
    static constexpr int64_t kMaxSize = int64_t(1) << 20;
    /// `text` (surrounding blanks ignored) as a #gdn.schedule, or a null
    /// attribute and `error` set to why not: the parser's or verifier's
    /// first diagnostic, text after the attribute, another attribute. The
    /// one parse of a schedule a host passes (gdn-select-schedule's option,
    /// the C API, gdn-run).
    static ScheduleAttr parseText(::llvm::StringRef text,
                                  ::mlir::MLIRContext *context,
                                  std::string &error);
  }];
}

#endif // GDN_ATTRS_TD
