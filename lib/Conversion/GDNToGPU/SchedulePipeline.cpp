//===- SchedulePipeline.cpp - the producer warp, L2 prefetch, launch ------===//
//
// The cost model's rules for what overlaps a kernel's memory traffic with its
// math: a producer warp feeding a ring of staged chunks (producer_stages,
// consumer_registers), the L2 prefetches of a later CTA's data
// (state_prefetch_distance, input_prefetch_distance), the next chunk's copy
// (chunk_prefetch_distance), the register cap that lets CTAs share an SM
// (max_registers), and where a programmatic launch lets the next kernel
// start (launch). Run by
// chooseSchedule (Schedule.cpp) once the mapping is chosen, in the order of
// pipelineRules() at the end of this file; each keeps a
// pinned parameter, and ScheduleLegality.cpp checks the result.
//
//===----------------------------------------------------------------------===//
#include "ScheduleRules.h"
#include "gdn/Conversion/GDNToGPU/GPUTarget.h"
#include "gdn/Dialect/GDN/IR/GDNOps.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::gdn;

/// CTAs of the kernel's grid: N * HV * V / blockColumns (varlen: N
/// sequences).
static int64_t gridCTAs(const ScheduleDraft &x) {
  return x.d.N * x.d.HV * (x.d.V / x.s.blockColumns()) * *x.s.getSegments();
}

/// The grid is at most the SMs: one CTA an SM, none sharing one.
static bool oneCTAnSM(const ScheduleDraft &x) { return gridCTAs(x) <= x.sms; }

/// chunk_parallel's scan split along T (context parallelism) where a fixed
/// batch's, or one varlen sequence's, unsplit scan leaves SMs idle: at least
/// kSegmentMinT tokens a sequence (the packed tokens of one varlen sequence)
/// and the scan's CTAs of 4 warps at most half the SMs, split into the most
/// segments (a power of two) whose scan stays within one CTA an SM at segments
/// of kSegmentMinTokens, or two at kSegmentSharedMinTokens, on 4 warps a CTA
/// (or more, pinned). One sequence, H100, with the join of X_p in shared
/// memory: 2.15x / 1.50x / 1.04x at T = 4096 HV = 8 / 16 / 32 (8 / 4 / 2
/// segments), 1.34x at T = 8192 HV = 8 (8 segments, not 4); with the join
/// before, 1.24x / 1.80x / 2.41x at T = 32768 HV = 32 / 16 / 8; one varlen
/// sequence, H200, 1.11x / 1.21x at T = 8192 / 32768
/// (docs/cost-model.md#context-parallel-segments). Not 128 CTAs (HV = 64,
/// or N = 2 at HV = 32): 2 segments took 1.20-1.21x the unsplit scan's time
/// at T = 4096 and 8192. Not two or more varlen sequences: their
/// lengths are unknown here, and at two sequences of 32768 packed tokens the
/// split measured 0.51x / 0.67x in 2 / 4 segments.
static void chooseSegments(ScheduleDraft &x) {
  ScheduleAttr &s = x.s;
  if (std::optional<int64_t> pin = x.pins.getSegments()) {
    s = s.with(&ScheduleAttr::getSegments, *pin);
    return;
  }
  auto d = x.d;
  int64_t warps = x.pins.getWarps().value_or(kSegmentWarps);
  int64_t columns = s.warpColumns() * warps;
  int64_t grid = d.N * d.HV * (d.V / columns);
  // (2-warp CTAs split measured slower: 1.20x the unsplit time in 2.)
  bool splits = warps >= kSegmentWarps && (!x.op.isVarlen() || d.N == 1) &&
                d.T >= kSegmentMinT && d.V % columns == 0 &&
                2 * grid <= x.sms;
  // The split on `warps` warps, where legal (segmentsRefusal).
  auto split = [&](int64_t P) {
    return s.with(&ScheduleAttr::getSegments, P)
        .with(&ScheduleAttr::getWarps, warps);
  };
  // Segments of kSegmentMinTokens while the split grid holds one CTA an SM;
  // a second CTA an SM only for segments of kSegmentSharedMinTokens (their
  // scan, not the join's P - 2 steps, then sets the time).
  auto pays = [&](int64_t P) {
    int64_t ctas = P * grid;
    int64_t minTokens =
        ctas <= x.sms ? kSegmentMinTokens : kSegmentSharedMinTokens;
    return P <= kSegmentMaxSegments && ctas <= kSegmentCTAsAnSM * x.sms &&
           d.T / P >= minTokens && !segmentsRefusal(x.op, split(P));
  };
  int64_t P = 1;
  while (splits && pays(2 * P))
    P *= 2;
  s = P > 1 ? split(P) : s.with(&ScheduleAttr::getSegments, P);
}

/// Never chosen: only with a pinned producer warp
/// (docs/cost-model.md#producer-warp).
static void chooseConsumerRegisters(ScheduleDraft &x) {
  x.set(&ScheduleAttr::getConsumerRegisters,
        x.pins.getConsumerRegisters().value_or(0));
}

/// A producer warp feeding a 2-slot ring with cp.async.bulk where one token
/// chain a warp is all the machine runs: verify and the final state of
/// 8 < T <= 16 bf16/f16 tokens on a tiny grid, where the chip, the copies
/// and the ring allow it (docs/cost-model.md#producer-warp; not fp32
/// per-token states: #fp32-verify-one-v-lane).
static void chooseProducerStages(ScheduleDraft &x) {
  ScheduleAttr &s = x.s;
  RecurrentOp op = x.op;
  auto d = x.d;
  if (std::optional<int64_t> pin = x.pins.getProducerStages()) {
    s = s.with(&ScheduleAttr::getProducerStages, *pin);
    return;
  }
  bool tiny = tinyGrid(op, x.targetWarps);
  bool verify = op.getIntermediateStates() && tiny && !fp32StepStates(op);
  Type qkType = cast<ShapedType>(op.getQ().getType()).getElementType();
  bool finalState = !op.getIntermediateStates() && !op.isVarlen() && d.T > 8 &&
                    d.T <= 16 && (qkType.isBF16() || qkType.isF16()) && tiny;
  if (x.target.bulkAsyncCopies && *s.getStagedTokens() > 0 &&
      *s.getStagedTokens() <= kWarpSize && !s.chunkedSolve() &&
      (verify || finalState) && bulkCopies(op, s) &&
      ringBytes(op, s, 2) <= kStaticSharedBytes)
    s = s.with(&ScheduleAttr::getProducerStages, 2);
}

/// The bandwidth-bound 2-byte decode prefetches the state tile of the CTA
/// one wave later (the CTAs the device holds at once, from a register
/// estimate of the state tile plus 40); an f32 state gained too little
/// (docs/cost-model.md#l2-state-prefetch).
static void chooseStatePrefetchDistance(ScheduleDraft &x) {
  ScheduleAttr &s = x.s;
  if (std::optional<int64_t> pin = x.pins.getStatePrefetchDistance()) {
    s = s.with(&ScheduleAttr::getStatePrefetchDistance, *pin);
    return;
  }
  if (!x.streaming || !statePrefetchable(x.op, s) || !x.target.bulkAsyncCopies)
    return;
  int64_t registers = llvm::alignTo(
      *s.getColumnsPerLane() * keysPerLane(x.op, *s.getLanesAlongV()) + 40, 8);
  int64_t perSM =
      std::min<int64_t>({32, 64 / *s.getWarps(),
                         65536 / (registers * *s.getWarps() * kWarpSize)});
  s = s.with(&ScheduleAttr::getStatePrefetchDistance,
             x.sms * std::max<int64_t>(perSM, 1));
}

/// The tensor-core solve of one chunk on a grid larger than the CTAs the
/// device holds (tensor-core CTAs of 4 or more warps: 128 registers)
/// prefetches the staged inputs of the CTA one per SM later
/// (docs/cost-model.md#l2-input-prefetch); a split scan (segments) none,
/// its grid not the one the distance counts in (checkSegments).
static void chooseInputPrefetchDistance(ScheduleDraft &x) {
  ScheduleAttr &s = x.s;
  if (std::optional<int64_t> pin = x.pins.getInputPrefetchDistance()) {
    s = s.with(&ScheduleAttr::getInputPrefetchDistance, *pin);
    return;
  }
  int64_t residentCTAs =
      x.sms *
      std::max<int64_t>(
          65536 / (kTensorCoreRegisters * kWarpSize * *s.getWarps()), 1);
  if (inputsPrefetchable(x.op, s) && x.target.bulkAsyncCopies &&
      !s.segmented() && *s.getWarps() >= 4 && gridCTAs(x) > residentCTAs)
    s = s.with(&ScheduleAttr::getInputPrefetchDistance, x.sms);
}

/// The tensor-core forms' chunk loop (chunk_parallel's scan, a varlen
/// prefill's tensor_cores) copies the next chunk while it solves this one
/// where it runs one CTA an SM (its grid at most the SMs: each chunk's
/// loads are then on the CTA's critical path) over several chunks, and a
/// second set of the chunk's buffers fits in static shared memory; so does
/// a varlen batch's chunk_parallel scan on any grid: its long sequences'
/// CTAs outlast the others and end up alone on their SMs
/// (docs/cost-model.md#chunk-prefetch, #varlen-chunk-parallel).
static void chooseChunkPrefetchDistance(ScheduleDraft &x) {
  ScheduleAttr &s = x.s;
  if (std::optional<int64_t> pin = x.pins.getChunkPrefetchDistance()) {
    s = s.with(&ScheduleAttr::getChunkPrefetchDistance, *pin);
    return;
  }
  auto d = x.d;
  // Several chunks a sequence (varlen: on average).
  bool chunks =
      d.T > *s.getStagedTokens() * (x.op.isVarlen() ? d.N : int64_t{1});
  bool fits = chunkPrefetchBytes(x.op, s) <= kStaticSharedBytes;
  // So do split scans (segments), a few CTAs an SM: 1.26x at T = 32768
  // HV = 32 in 4 segments (docs/cost-model.md#context-parallel-segments);
  // and chunk_parallel's scan of two row tiles a warp on any grid, whose 4
  // warps a CTA hide no load: without the copies 3.34x the time at N = 4
  // T = 4096, 2.19x at N = 16 T = 2048 (docs/cost-model.md#scan-row-tiles).
  bool alone = oneCTAnSM(x) || (x.op.isVarlen() && s.chunkParallel()) ||
               s.segmented() || (s.chunkParallel() && s.rowTiles() == 2);
  s = s.with(&ScheduleAttr::getChunkPrefetchDistance,
             s.tensorCores() && *s.getProducerStages() == 0 && alone &&
                     chunks && fits
                 ? 1
                 : 0);
}

/// Tensor-core CTAs of 4 or more warps on chunks of up to 16 tokens are
/// capped at 128 registers a thread where several share an SM (the grid
/// past the SMs), so 16 warps fit one as the choice of warps assumes; on a
/// grid of at most one CTA an SM a cap only spills: the varlen prefill's
/// kernel spilled 84 bytes under it and ran 10-12% slower
/// (docs/cost-model.md#tensor-core-register-cap). A split scan (two CTAs
/// an SM) stays capped: uncapped, KDA's split ran 1.14x slower and GDN's
/// no faster, though the cap makes KDA's spill.
static void chooseMaxRegisters(ScheduleDraft &x) {
  ScheduleAttr &s = x.s;
  if (std::optional<int64_t> pin = x.pins.getMaxRegisters()) {
    s = s.with(&ScheduleAttr::getMaxRegisters, *pin);
    return;
  }
  // A solving producer's CTA (4 more warps) fits one an SM under any cap.
  // Two row tiles a warp hold 128 state values a thread: never capped.
  bool cap = s.rowTiles() == 1 && *s.getWarps() >= 4 &&
             *s.getStagedTokens() <= 16 && *s.getProducerStages() == 0 &&
             *s.getConsumerRegisters() == 0 && !oneCTAnSM(x);
  s = s.with(&ScheduleAttr::getMaxRegisters, cap ? kTensorCoreRegisters : 0);
}

/// Never programmatic unless asked (only the caller knows no running kernel
/// writes the state); asked for, the next kernel launches at this one's
/// start, after the recurrence behind a producer warp
/// (docs/cost-model.md#programmatic-launch).
static void chooseLaunch(ScheduleDraft &x) {
  LaunchModeAttr pin = x.pins.getLaunch();
  LaunchMode mode = pin ? pin.getValue() : LaunchMode::ordinary;
  if (mode == LaunchMode::programmatic)
    mode = *x.s.getProducerStages() > 0
               ? LaunchMode::programmatic_after_recurrence
               : LaunchMode::programmatic_at_start;
  x.set(&ScheduleAttr::getLaunch, mode);
}

/// Never chosen: only pinned, measured slower than the two launches in
/// series (docs/cost-model.md#concurrent-solves).
static void chooseConcurrentSolves(ScheduleDraft &x) {
  x.set(&ScheduleAttr::getConcurrentSolves,
        x.pins.getConcurrentSolves().value_or(0));
}

/// In this order: each reads only what the ones before it chose.
ArrayRef<ScheduleRule> gdn::pipelineRules() {
  static constexpr ScheduleRule kRules[] = {
      chooseSegments,
      chooseConsumerRegisters,
      chooseProducerStages,
      chooseStatePrefetchDistance,
      chooseInputPrefetchDistance,
      chooseChunkPrefetchDistance,
      chooseMaxRegisters,
      chooseLaunch,
      chooseConcurrentSolves,
  };
  return kRules;
}
