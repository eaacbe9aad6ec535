//===- ScheduleRules.h - the cost model's rules and checks ------*- C++ -*-===//
//
// Private to the GPU schedule (Schedule*.cpp): the facts both the cost
// model's rules and the legality checks read (ScheduleShapes.cpp), the rules
// that choose each parameter (ScheduleMapping.cpp, SchedulePipeline.cpp, each
// file's list giving the order they run in) and the resolved schedule that
// the checks (ScheduleLegality.cpp) and the kernel builder read. Why each
// rule chooses what it does: docs/cost-model.md, one section a rule.
//
//===----------------------------------------------------------------------===//
#ifndef GDN_LIB_CONVERSION_GDNTOGPU_SCHEDULERULES_H
#define GDN_LIB_CONVERSION_GDNTOGPU_SCHEDULERULES_H

#include "gdn/Conversion/GDNToGPU/Schedule.h"

#include <optional>
#include <string>

namespace mlir {
namespace gdn {
struct GPUTarget;

//===----------------------------------------------------------------------===//
// Facts (ScheduleShapes.cpp)
//===----------------------------------------------------------------------===//

/// Warps that keep about half the warp slots of 132 SMs busy: the cost
/// model's measure of a full device, scaled by its SM count
/// (docs/cost-model.md#columns-per-lane).
constexpr int64_t kTargetWarps = 4096;
/// State values a thread holds in registers at most (columns_per_lane * K /
/// (32 / lanes_along_v)): what ptxas keeps without spilling (K = 256 with 4
/// columns a lane in vk is 32).
constexpr int64_t kMaxStateValues = 64;
/// Shared memory a kernel may declare statically, 48 KiB: the most the
/// cost model gives a CTA's staging buffers or a producer's ring. Pinned
/// schedules may take up to the chip's GPUTarget::maxSharedBytes (less
/// kSharedReserveBytes); buffers past 48 KiB are then views of dynamic
/// shared memory (KernelContext::dynamicBuffer).
constexpr int64_t kStaticSharedBytes = 48 * 1024;
/// max_registers of the tensor-core CTAs of 4 or more warps the cost model
/// caps: 16 warps an SM (docs/cost-model.md#tensor-core-register-cap).
constexpr int64_t kTensorCoreRegisters = 128;
/// concurrent_solves = 1 (ChunkParallel.cpp): the solves' register cap,
/// and their persistent CTAs an SM, as many of 4 warps under the cap as
/// fit an SM's 65536 registers beside a scan CTA of 4 warps at any count
/// (255 a thread, 256 allocated: 32768): 4 at 64. A group of
/// kSolveGroupChunks chunks of a (sequence, value head) shares one count
/// the scan waits for, so it reads a count once a group, not once a chunk
/// (docs/cost-model.md#concurrent-solves).
constexpr int64_t kConcurrentSolveRegisters = 64;
constexpr int64_t kConcurrentSolveCTAs =
    (65536 - 4 * 32 * 256) / (4 * 32 * kConcurrentSolveRegisters);
constexpr int64_t kSolveGroupChunks = 8;
/// The fewest registers a thread (max_registers, .maxnreg) with which
/// ptxas compiles the tensor-core forms' mma.sync (m16n8k16: "Insufficient
/// registers (24) ... Try ... 28 or higher", ptxas 13).
constexpr int64_t kTensorCoreMinRegisters = 28;
/// The CUDA-core chunked solve (solve = cuda_cores, ChunkedSolve.cpp)
/// unrolls its substitution and products over the chunk's tokens and a
/// lane's columns, so its compile grows with staged_tokens^2 x
/// columns_per_lane: on the 2-core development machine 2.6 s at 64 tokens
/// x 4 columns, 17.7 s at 64 x 16, 40 s at 128 x 4, 100 s and 2.2 GB at
/// 128 x 16 (K = 32, V = 64). It takes chunks of at most
/// kCudaCoreMaxChunkTokens tokens and kCudaCoreMaxChunkColumns tokens x
/// columns.
constexpr int64_t kCudaCoreMaxChunkTokens = 64;
constexpr int64_t kCudaCoreMaxChunkColumns = 256;
/// Shared memory a kernel keeps beside its staging buffers or ring: a
/// producer's mbarriers (8 bytes a stage) and ptxas's own.
constexpr int64_t kSharedReserveBytes = 1024;
/// Mean tokens a sequence from which a varlen prefill on tensor cores takes
/// chunk_parallel's two launches rather than the one-launch form: measured
/// ahead at 64 (and from 4096), behind at 16
/// (docs/cost-model.md#varlen-chunk-parallel).
constexpr int64_t kVarlenChunkParallelTokens = 64;

/// Bytes of one element of `x` (either form: gdn-select-schedule also runs
/// before bufferization).
int64_t elementBytes(Value x);
/// Keys of the state a lane holds, K / (32 / lanesV); 0 where lanesV is no
/// lane count (the checks refuse it).
int64_t keysPerLane(RecurrentOp op, int64_t lanesV);
/// A grid so small that warps of 8 V columns fill at most an eighth of
/// `targetWarps`: latency decides.
bool tinyGrid(RecurrentOp op, int64_t targetWarps);
/// Tokens staged at a time where the caller pins none: none for a single
/// token, else up to 16 (fixed T) or 8 (varlen), before the shared-memory
/// budget (chooseStagedTokens).
int64_t defaultStagedTokens(RecurrentOp op);
/// Shared memory of the staging buffers of `chunk` tokens under `s`, without
/// a producer (a producer's ring: ringBytes).
int64_t stagingBytes(RecurrentOp op, ScheduleAttr s, int64_t chunk);
/// Static shared memory of chunk_parallel's scan under
/// chunk_prefetch_distance = 1: its staging buffers, as allocated, and the
/// second set of the chunk's (StagingLayout::chunkSetBytes).
int64_t chunkPrefetchBytes(RecurrentOp op, ScheduleAttr s);
/// Tokens of a context-parallel segment (segments > 1, SegmentScan.cpp):
/// ceil(T / segments) rounded up to whole chunks of staged_tokens (T a
/// varlen batch's packed total).
int64_t segmentTokens(RecurrentOp op, ScheduleAttr s);
/// Why `s`'s segments cannot split `op`'s scan (a clause after "segments =
/// P "), or none: the legality check (ScheduleLegality.cpp) and the cost
/// model's choice read this one definition. Prefetch distances not chosen
/// yet count as none.
std::optional<std::string> segmentsRefusal(RecurrentOp op, ScheduleAttr s);
/// The segments' join (SegmentJoinKernel): state rows a CTA, and threads a
/// CTA (each one column of K, or more in turn).
constexpr int64_t kSegmentJoinRows = 4;
/// The cost model's split (chooseSegments): sequences of at least
/// kSegmentMinT tokens, segments of at least kSegmentMinTokens while the
/// split grid holds one CTA an SM and of kSegmentSharedMinTokens for a
/// second, at most kSegmentCTAsAnSM CTAs an SM of kSegmentWarps warps, and
/// at most kSegmentMaxSegments segments (32 measured slower than 16, and
/// the join's P - 2 steps are unrolled: its compile grows with P)
/// (docs/cost-model.md#context-parallel-segments).
constexpr int64_t kSegmentMinT = 4096;
constexpr int64_t kSegmentMinTokens = 512;
constexpr int64_t kSegmentSharedMinTokens = 2048;
constexpr int64_t kSegmentCTAsAnSM = 2;
constexpr int64_t kSegmentMaxSegments = 16;
/// The most segments a pin may ask for: the join's P - 2 steps are unrolled
/// (as a loop they ran 1.12-1.15x slower), so the compile grows with P: at
/// HV = 8, K = V = 128 on the 2-core development machine 2.5 s at 16, 14.4
/// s at 32; 512 took 33 s and 3.7 GB at K = V = 32, 128 took 724 s at K =
/// 128 (docs/cost-model.md#context-parallel-segments).
constexpr int64_t kSegmentMaxPinned = 32;
constexpr int64_t kSegmentWarps = 4;
constexpr int64_t kSegmentJoinThreads = 128;
/// The join's keys a loop trip (each thread's A_p loads, a register each,
/// issued together).
constexpr int64_t kSegmentJoinKeysATrip = 128;
/// Shared memory of a producer's ring of `stages` slots.
int64_t ringBytes(RecurrentOp op, ScheduleAttr s, int64_t stages);
/// Whether cp.async.bulk can move a token's q and k rows and the CTA's
/// columns of v.
bool bulkCopies(RecurrentOp op, ScheduleAttr s);
/// Whether q and k are bf16 (the operands of bf16 mma: precision = bf16,
/// and the Gram products at any precision).
bool bf16QueriesAndKeys(RecurrentOp op);
/// Whether every slot of a state pool starts on 16 bytes.
bool alignedSlots(Value state);
/// Whether staged tokens under `s` can go two a step (reductions =
/// token_pairs): a staged token loop in the side-by-side form, without a
/// tree or a chunked solve.
bool pairableTokens(RecurrentOp op, ScheduleAttr s);
/// Verify of a chain in vk writing fp32 per-token states (FlashInfer's MTP
/// regime).
bool fp32StepStates(RecurrentOp op);
/// Verify in vk writing e4m3 per-token states (intermediate_state_scale).
bool e4m3StepStates(RecurrentOp op);
/// Whether a kernel under `s` can prefetch a later CTA's state tile into L2
/// (state_prefetch_distance > 0), the chip aside.
bool statePrefetchable(RecurrentOp op, ScheduleAttr s);
/// Whether a kernel under `s` can prefetch a later CTA's staged inputs into
/// L2 (input_prefetch_distance > 0), the chip aside.
bool inputsPrefetchable(RecurrentOp op, ScheduleAttr s);

//===----------------------------------------------------------------------===//
// Rules (ScheduleMapping.cpp, SchedulePipeline.cpp)
//===----------------------------------------------------------------------===//

/// What the cost model's rules read and write: the op, its target and pins,
/// and the schedule so far, `s`: ScheduleAttr::zero() with the pins over it.
/// A rule reads whether its parameter is pinned from `pins` and keeps a
/// pinned value; where none is pinned, a size of 0 in `s` (columns, lanes,
/// warps, unroll) is not chosen yet. Each rule reads only the pins and what
/// the rules before it chose (each file's list gives the order).
struct ScheduleDraft {
  ScheduleDraft(RecurrentOp op, const GPUTarget &target, ScheduleAttr pins,
                int64_t sms);

  RecurrentOp op;
  RecurrentOp::Dims d;
  const GPUTarget &target;
  ScheduleAttr pins;   ///< never null (#gdn.schedule<>: nothing pinned)
  int64_t sms;         ///< multiprocessors of the device
  int64_t targetWarps; ///< kTargetWarps scaled to `sms`
  /// Whether tokens go through shared memory: a pinned staged_tokens > 0,
  /// else more than one token (defaultStagedTokens).
  bool staged;
  /// Whether the most columns a lane already leave targetWarps warps
  /// (chooseColumnsPerLane): bandwidth, not latency, decides.
  bool bandwidthBound = false;
  /// The bandwidth-bound 2-byte decode (chooseDecode16ByteSlices).
  bool streaming = false;
  ScheduleAttr s;
  /// Sets the parameter `get` reads in `s` (ScheduleAttr::with).
  template <typename Getter, typename T> void set(Getter get, T v) {
    s = s.with(get, v);
  }
};

/// A rule: chooses one or a few parameters of `x.s` that the pins leave.
using ScheduleRule = void (*)(ScheduleDraft &x);
/// The rules of the thread-to-data mapping, in the order they run
/// (ScheduleMapping.cpp): the solve, the columns a lane, the lanes along V,
/// the reductions, the warps, the staged tokens.
ArrayRef<ScheduleRule> mappingRules();
/// The rules of what overlaps the memory traffic with the math on that
/// mapping, and of the launch, in the order they run after the mapping's
/// (SchedulePipeline.cpp).
ArrayRef<ScheduleRule> pipelineRules();

//===----------------------------------------------------------------------===//
// The complete schedule (Schedule.cpp)
//===----------------------------------------------------------------------===//

/// The schedule the kernel of `op` is built with under `complete`
/// (ScheduleAttr::isComplete): `complete` with the reductions the op forces
/// (KDA: side by side; token_pairs where tokens do not pair:
/// side_by_side). What chooseSchedule returns is resolved already.
ScheduleAttr resolvedSchedule(RecurrentOp op, ScheduleAttr complete);

} // namespace gdn
} // namespace mlir

#endif // GDN_LIB_CONVERSION_GDNTOGPU_SCHEDULERULES_H
