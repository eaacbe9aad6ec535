//===- ScheduleMapping.cpp - the cost model's thread-to-data mapping ------===//
//
// The rules that choose the solve form, the columns a lane, the lanes along
// V, the reductions, the warps a CTA and the staged tokens of a
// gdn.recurrent GPU kernel. Each keeps a pinned parameter; its comment gives
// the reason and the section of docs/cost-model.md with the measurements.
// chooseSchedule (Schedule.cpp) runs them in the order of mappingRules() at
// the end of this file; none checks legality (ScheduleLegality.cpp does, on
// the result).
//
//===----------------------------------------------------------------------===//
#include "ScheduleRules.h"
#include "gdn/Conversion/GDNToGPU/GPUTarget.h"
#include "gdn/Dialect/GDN/IR/GDNOps.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <numeric>

using namespace mlir;
using namespace mlir::gdn;

namespace {
/// The unroll factor of the staged token loop where none is pinned: none
/// (docs/cost-model.md#unroll-tokens).
constexpr int64_t kDefaultUnroll = 1;
/// Staging buffers the cost model fills at most; the checks allow up to
/// the chip's shared memory (docs/cost-model.md#staged-tokens).
constexpr int64_t kDefaultStagingBytes = 32 * 1024;

int64_t pinOrZero(std::optional<int64_t> pin) { return pin.value_or(0); }

/// Lanes along V for `rows` columns a lane: 1 in vk (K is contiguous), or
/// the fewest that leave whole keys a lane when K < 32 (a 1-byte state
/// unstaged: 8 bytes a lane); in kv as many as
/// make a key row's share of a warp 64 contiguous bytes (two sectors), as
/// long as the shapes divide and the state tile stays <= 64 registers
/// (docs/cost-model.md#lanes-along-v).
int64_t defaultLanesV(RecurrentOp op, int64_t rows, bool staged) {
  auto d = op.getDims();
  if (op.isVKLayout()) {
    // A 1-byte state, unstaged: the fewest lanes that give each lane at
    // least 8 contiguous bytes of a row (2 at K = 128), if the shapes allow
    // (docs/cost-model.md#lanes-along-v); else the fewest the shapes allow.
    Value state =
        op.getInitialState() ? op.getInitialState() : op.getFinalState();
    int64_t bytes = state ? elementBytes(state) : 4;
    int64_t wanted = bytes == 1 && !staged ? 8 : 0;
    for (int64_t minBytes : {wanted, int64_t(0)})
      for (int64_t l = 1; l <= kWarpSize; l *= 2)
        if (d.K % (kWarpSize / l) == 0 && d.V % (rows * l) == 0 &&
            d.K / (kWarpSize / l) * bytes >= minBytes)
          return l;
    return 1;
  }
  for (int64_t l : {16, 8, 4, 2})
    if (rows * l * 4 <= 64 && d.V % (rows * l) == 0 &&
        d.K % (kWarpSize / l) == 0 && rows * d.K / (kWarpSize / l) <= 64)
      return l;
  return 1;
}

/// Mean tokens a sequence from which a varlen batch counts as a prefill
/// and takes the tensor cores (docs/cost-model.md#varlen-prefill).
constexpr int64_t kPrefillMeanTokens = 8;

/// Whether `x.op` is a varlen batch of prefills: T / N >= 8 tokens.
bool varlenPrefill(const ScheduleDraft &x) {
  RecurrentOp op = x.op;
  return op.isVarlen() && x.d.T >= kPrefillMeanTokens * x.d.N;
}

/// Whether a per-key decay (KDA) would take chunk_parallel's two launches
/// (the only chunked form that takes one, KeyDecayChunks.cpp): several
/// chunks of a fixed batch (two whole ones on the tiny grid, where the
/// token loop wins below: docs/cost-model.md#kda-chunks), or a varlen
/// batch of 64 tokens a sequence or more on average, K = 128 (Kimi
/// Linear's, the only K timed so far; a pin takes the others, which pass
/// the GPU checks), and no programmatic launch pinned (chooseSolve).
bool keyDecayChunks(const ScheduleDraft &x) {
  RecurrentOp op = x.op;
  LaunchModeAttr launch = x.pins.getLaunch();
  return x.d.K == 128 && x.d.T > 16 &&
         (x.d.T >= 32 || !tinyGrid(op, x.targetWarps)) &&
         (!op.isVarlen() || x.d.T >= kVarlenChunkParallelTokens * x.d.N) &&
         (!launch || launch.getValue() == LaunchMode::ordinary);
}

/// Whether the final state of `x.op` takes the tensor-core solve: bf16/f16
/// tokens of a fixed batch, one chunk (8 < T <= 16) above the tiny grid or
/// several chunks (T > 16, any grid: docs/cost-model.md#long-t-prefill),
/// or a varlen batch of prefills (docs/cost-model.md#varlen-prefill),
/// with no tree or per-channel beta, a per-key decay only in
/// chunk_parallel (keyDecayChunks), shapes of whole mma tiles and no pin
/// its mapping contradicts.
bool prefersTensorCores(const ScheduleDraft &x) {
  RecurrentOp op = x.op;
  auto d = x.d;
  ScheduleAttr pins = x.pins;
  int64_t warps = pinOrZero(pins.getWarps());
  std::optional<int64_t> chunk = pins.getStagedTokens();
  Type qkType = cast<ShapedType>(op.getQ().getType()).getElementType();
  bool oneChunk = d.T <= 16;
  return x.target.mmaSyncTF32 && (!op.isVarlen() || varlenPrefill(x)) &&
         d.T > 8 && (!oneChunk || !tinyGrid(op, x.targetWarps)) &&
         (qkType.isBF16() || qkType.isF16()) &&
         (warps == 0 || (warps <= 8 && d.V % (16 * warps) == 0)) &&
         (!chunk || chunk == 16) && !pins.getColumnsPerLane() &&
         !pins.getLanesAlongV() && pinOrZero(pins.getProducerStages()) == 0 &&
         pinOrZero(pins.getConsumerRegisters()) == 0 &&
         !op.getIntermediateStates() && !op.hasParentTable() &&
         (!op.hasPerKeyDecay() || keyDecayChunks(x)) &&
         !op.hasPerChannelBeta() && d.K % 8 == 0 && d.K <= 128 &&
         d.V % 32 == 0 && op.getCheckpointInterval().value_or(16) % 16 == 0;
}

/// A pinned reductions = mma, whose form fixes the mapping
/// (chooseTensorCoreMapping).
bool mmaPinned(const ScheduleDraft &x) {
  ReductionsAttr pin = x.pins.getReductions();
  return pin && pin.getValue() == Reductions::mma;
}

/// Whether neither columns_per_lane nor lanes_along_v is pinned (nor fixed
/// by reductions = mma): the mapping rules that set both only apply then.
bool mappingFree(const ScheduleDraft &x) {
  return !x.pins.getColumnsPerLane() && !x.pins.getLanesAlongV() &&
         !mmaPinned(x);
}
} // namespace

ScheduleDraft::ScheduleDraft(RecurrentOp op, const GPUTarget &target,
                             ScheduleAttr pins, int64_t sms)
    : op(op), d(op.getDims()), target(target),
      pins(pins ? pins : ScheduleAttr::get(op.getContext())), sms(sms),
      targetWarps(kTargetWarps * sms / 132) {
  std::optional<int64_t> chunk = this->pins.getStagedTokens();
  staged = chunk ? *chunk > 0 : defaultStagedTokens(op) > 0;
  s = ScheduleAttr::zero(op.getContext()).pinnedBy(this->pins);
}

/// The tensor-core solve where it is faster than the token loop, with
/// several chunks of a fixed batch (T > 16), or a varlen batch of 64 tokens
/// a sequence or more on average, in two launches, every chunk's solve
/// before the state scan, unless a programmatic launch is pinned; the
/// solve on CUDA cores never (docs/cost-model.md#tensor-core-solve,
/// #chunk-parallel-solve, #varlen-chunk-parallel, #cuda-core-chunked-solve).
static void chooseSolve(ScheduleDraft &x) {
  if (ChunkSolveAttr pin = x.pins.getSolve()) {
    x.set(&ScheduleAttr::getSolve, pin.getValue());
    return;
  }
  if (!prefersTensorCores(x))
    return;
  LaunchModeAttr launch = x.pins.getLaunch();
  bool ordinary = !launch || launch.getValue() == LaunchMode::ordinary;
  bool longSequences =
      !x.op.isVarlen() || x.d.T >= kVarlenChunkParallelTokens * x.d.N;
  x.set(&ScheduleAttr::getSolve, x.d.T > 16 && ordinary && longSequences
                                     ? ChunkSolve::chunk_parallel
                                     : ChunkSolve::tensor_cores);
}

/// Where the tensor cores run several chunks (T > 16: a prefill), the
/// chunked anchors' accuracy at fewer mma: the scan's products with bf16 q
/// and k on bf16 mma where the keys and the chunk are whole m16n8k16 tiles,
/// else one tf32 product; 3xTF32 for one chunk (verify), the token loop's
/// accuracy (docs/cost-model.md#tensor-core-precision). After the chunk.
static void choosePrecision(ScheduleDraft &x) {
  if (x.pins.getPrecision() || !x.s.tensorCores() || x.d.T <= 16)
    return;
  bool bf16 = bf16QueriesAndKeys(x.op) && x.d.K % 16 == 0 &&
              *x.s.getStagedTokens() % 16 == 0;
  x.set(&ScheduleAttr::getPrecision, bf16 ? Precision::bf16 : Precision::tf32);
}

/// chunk_parallel's scan of a fixed batch at K = V = 128 whose warps of one
/// row tile would fill 4-warp CTAs past the SMs (so 8 warps a CTA: N >= 3 at
/// HV = 32, N >= 2 at HV = 64) holds two row tiles a warp, 32 V columns, on
/// 4 warps, with the next chunk's copies in flight
/// (chooseChunkPrefetchDistance) and no register cap: bf16 products on
/// 16-token chunks, no per-key decay. H100, N = 3 / 4 T = 4096: 1.09x /
/// 1.06x; N = 16 T = 2048: 1.27x; HV = 64 N = 4 T = 2048: 1.27x
/// (docs/cost-model.md#scan-row-tiles). Not other head sizes, varlen
/// batches or KDA (not measured), nor smaller grids (one CTA of one row
/// tile a warp an SM, or a split scan: two row tiles on half the warps
/// measured 0.90x at N = 1 T = 8192 in 4 segments, 0.76x at T = 2048);
/// nor where a pin asks for what the row tiles measured slow with or
/// cannot take (other warps, segments, a register cap, no copies).
static bool scanRowTiles(const ScheduleDraft &x) {
  auto d = x.d;
  RecurrentOp op = x.op;
  const ScheduleAttr &pins = x.pins;
  // (Runs before choosePrecision and chooseStagedTokens: their conditions
  // for bf16 products on chunks of 16 tokens, or such pins.)
  PrecisionAttr precision = pins.getPrecision();
  bool bf16 = precision ? precision.getValue() == Precision::bf16
                        : bf16QueriesAndKeys(op);
  std::optional<int64_t> interval = op.getCheckpointInterval();
  bool chunks16 = pins.getStagedTokens().value_or(16) == 16 &&
                  (!interval || *interval % 16 == 0);
  return x.s.chunkParallel() && bf16 && chunks16 && d.T > 16 &&
         !op.isVarlen() && !op.hasPerKeyDecay() && d.K == 128 && d.V == 128 &&
         pins.getWarps().value_or(4) == 4 &&
         pins.getSegments().value_or(1) == 1 &&
         pins.getMaxRegisters().value_or(0) == 0 &&
         pins.getChunkPrefetchDistance().value_or(1) == 1 &&
         pins.getProducerStages().value_or(0) == 0 &&
         !pins.getLanesAlongV() && d.N * d.HV * (d.V / 64) > x.sms;
}

/// On tensor cores a warp holds 16 V columns x K keys as m16n8k8
/// accumulator fragments: 2 columns a lane, 8 lanes along V, or a pinned
/// 32 as two row tiles, 4 columns a lane (TensorCoreSolve.cpp); the mma decode (a pinned reductions = mma) holds
/// m16n8k16 tiles the same way, several a warp (MmaDecode.cpp).
static void chooseTensorCoreMapping(ScheduleDraft &x) {
  if (!x.s.tensorCores() && !mmaPinned(x))
    return;
  // The mma decode: 4 tiles a warp where V allows (a lane's q and k work
  // then serves 8 rows; docs/cost-model.md#mma-decode), else 1.
  // chunk_parallel's scan: two row tiles where they measured faster
  // (scanRowTiles).
  if (!x.pins.getColumnsPerLane())
    x.set(&ScheduleAttr::getColumnsPerLane,
          !x.s.tensorCores() && x.d.V % 64 == 0 ? 8
          : scanRowTiles(x)                     ? 4
                                                : 2);
  if (!x.pins.getLanesAlongV())
    x.set(&ScheduleAttr::getLanesAlongV, 8);
}

/// The most columns a lane that still leave the device's target of warps:
/// few columns hide latency on small grids, more keep more loads in flight
/// on full ones (docs/cost-model.md#columns-per-lane).
static void chooseColumnsPerLane(ScheduleDraft &x) {
  if (*x.s.getColumnsPerLane() != 0)
    return;
  RecurrentOp op = x.op;
  auto d = x.d;
  int64_t lanesPin = pinOrZero(x.pins.getLanesAlongV());
  // Staged tokens are dependent chains of reductions: 4 or 8 columns a
  // lane; kv grows its lanes along V as the columns shrink, so 8 adds no
  // warps there.
  SmallVector<int64_t> candidates =
      !op.isVKLayout() ? SmallVector<int64_t>{4, 2, 1}
      : x.staged       ? SmallVector<int64_t>{8, 4}
                       : SmallVector<int64_t>{8, 4, 2, 1};
  auto lanesFor = [&](int64_t r) {
    return lanesPin ? lanesPin : defaultLanesV(op, r, x.staged);
  };
  // Counts the checks take: whole columns a warp, whole keys a lane, a
  // state tile within the register budget.
  auto legal = [&](int64_t r) {
    int64_t lanes = lanesFor(r);
    return lanes >= 1 && lanes <= kWarpSize && d.V % (r * lanes) == 0 &&
           d.K % (kWarpSize / lanes) == 0 &&
           r * d.K * lanes <= kMaxStateValues * kWarpSize;
  };
  // The cost model's choice also wants a power of two of keys a lane, the
  // only counts it has timed.
  auto fits = [&](int64_t r) {
    return legal(r) && llvm::isPowerOf2_64(d.K / (kWarpSize / lanesFor(r)));
  };
  int64_t bestWarps = -1;
  for (int64_t r : candidates) {
    if (!fits(r))
      continue;
    int64_t warps = d.N * d.HV * (d.V / (r * lanesFor(r)));
    if (warps > bestWarps) { // ties keep the larger r
      x.set(&ScheduleAttr::getColumnsPerLane, r);
      bestWarps = warps;
    }
    if (warps >= x.targetWarps) {
      x.bandwidthBound = r == candidates.front();
      break;
    }
  }
  // None fits (a pinned lanes_along_v with large K, K = 72, a V of 16):
  // the most columns that fit, else the most the checks take, else one
  // column (a pinned lanes_along_v: the smallest tile) or the first
  // candidate, which the checks refuse with the reason.
  for (auto accepts :
       {function_ref<bool(int64_t)>(fits), function_ref<bool(int64_t)>(legal)})
    for (int64_t r = candidates.front();
         *x.s.getColumnsPerLane() == 0 && r >= 1; r /= 2)
      if (accepts(r))
        x.set(&ScheduleAttr::getColumnsPerLane, r);
  if (*x.s.getColumnsPerLane() == 0)
    x.set(&ScheduleAttr::getColumnsPerLane, lanesPin ? 1 : candidates.front());
}

/// Staged token loops split a warp's 8 V columns over 2 or 4 lanes:
/// shallower K trees for the token chain, 16-byte rows in vk
/// (docs/cost-model.md#staged-v-lanes; not fp32 per-token states:
/// #fp32-verify-one-v-lane).
static void chooseStagedVLanes(ScheduleDraft &x) {
  auto d = x.d;
  // Head sizes of real models only (K a power of two >= 64), and 8 columns
  // over 2 or 4 lanes within the register budget (K <= 256).
  if (!x.staged || !mappingFree(x) || x.s.tensorCores() ||
      fp32StepStates(x.op) || d.V % 8 != 0 || d.K < 64 ||
      !llvm::isPowerOf2_64(d.K) || 8 * d.K > kMaxStateValues * kWarpSize)
    return;
  if (x.op.isVKLayout()) {
    x.set(&ScheduleAttr::getLanesAlongV, x.bandwidthBound ? 2 : 4);
    x.set(&ScheduleAttr::getColumnsPerLane, 8 / *x.s.getLanesAlongV());
    // e4m3 per-token states where 8 columns a lane fill the grid: 4
    // columns x 4 lanes, 16 keys a lane, so each step's row quantization
    // (the row's max over its lanes, the scale's quotients) serves twice the
    // elements and a row's stores are 16 bytes; reductions side by side
    // (docs/cost-model.md#e4m3-step-states).
    if (x.bandwidthBound && e4m3StepStates(x.op) &&
        16 * d.K <= kMaxStateValues * kWarpSize && d.V % 16 == 0) {
      x.set(&ScheduleAttr::getLanesAlongV, 4);
      x.set(&ScheduleAttr::getColumnsPerLane, 4);
      x.bandwidthBound = false;
    }
  } else if (tinyGrid(x.op, x.targetWarps)) {
    x.set(&ScheduleAttr::getLanesAlongV, 4);
    x.set(&ScheduleAttr::getColumnsPerLane, 2);
  }
}

/// Decode in vk on a grid one column a lane does not fill: 2 lanes along V,
/// so a lane's K slice is 8 keys (16-byte bf16 loads) and each reduction one
/// shuffle level shallower (docs/cost-model.md#decode-two-v-lanes).
static void chooseDecodeTwoVLanes(ScheduleDraft &x) {
  auto d = x.d;
  int64_t warps = std::max<int64_t>(pinOrZero(x.pins.getWarps()), 1);
  if (!x.staged && x.op.isVKLayout() && mappingFree(x) &&
      *x.s.getColumnsPerLane() == 1 && !x.bandwidthBound && d.K >= 64 &&
      d.K % 16 == 0 && d.V % (2 * warps) == 0)
    x.set(&ScheduleAttr::getLanesAlongV, 2);
}

/// Bandwidth-bound decode of a 2-byte vk state (not KDA): 2 lanes along V x
/// 4 columns, whole 16-byte vectors a lane, reductions side by side in CTAs
/// of several warps; a 1-byte (e4m3) state 4 lanes along V x 4 columns,
/// again whole 16-byte vectors a lane, from a grid 8 times smaller (N = 8
/// at HV = 32), its L2 prefetch (streaming) only on the full grid
/// (docs/cost-model.md#decode-16-byte-slices).
static void chooseDecode16ByteSlices(ScheduleDraft &x) {
  RecurrentOp op = x.op;
  auto d = x.d;
  Value state =
      op.getInitialState() ? op.getInitialState() : op.getFinalState();
  int64_t warps = std::max<int64_t>(pinOrZero(x.pins.getWarps()), 1);
  int64_t bytes = state ? elementBytes(state) : 0;
  int64_t warps8 = d.N * d.HV * (d.V / 8); // warps of 8 columns
  bool full = x.bandwidthBound && warps8 >= 8 * x.targetWarps;
  bool e4m3 = bytes == 1 && warps8 >= x.targetWarps;
  if (x.staged || !op.isVKLayout() || !mappingFree(x) || op.hasPerKeyDecay() ||
      op.hasPerChannelBeta() || !(full || e4m3) || (bytes != 2 && bytes != 1) ||
      d.K < 128 || d.K % 16 != 0 || d.V % (16 / bytes * warps) != 0 ||
      // 4 columns on 4 / bytes lanes: the state tile in the register budget
      // (K <= 128 for e4m3, 256 for bf16).
      4 * d.K * (4 / bytes) > kMaxStateValues * kWarpSize)
    return;
  x.set(&ScheduleAttr::getLanesAlongV, 4 / bytes);
  x.set(&ScheduleAttr::getColumnsPerLane, 4);
  x.bandwidthBound = false; // side by side, CTAs of several warps
  x.streaming = full;
}

/// Where no rule above split the warp: the layout's default lanes along V
/// (docs/cost-model.md#lanes-along-v).
static void chooseLanesAlongV(ScheduleDraft &x) {
  if (*x.s.getLanesAlongV() == 0)
    x.set(&ScheduleAttr::getLanesAlongV,
          defaultLanesV(x.op, *x.s.getColumnsPerLane(), x.staged));
}

/// Side by side unless the grid is bandwidth-bound (fewer registers then);
/// KDA is built side by side only (docs/cost-model.md#overlap-reductions).
/// The mma decode only where pinned: it has not been measured yet.
static void chooseReductions(ScheduleDraft &x) {
  if (mmaPinned(x)) {
    x.set(&ScheduleAttr::getReductions, Reductions::mma);
    return;
  }
  ReductionsAttr pin = x.pins.getReductions();
  bool sideBySide =
      (pin ? pin.getValue() != Reductions::in_turn : !x.bandwidthBound) ||
      x.op.hasPerKeyDecay() || x.op.hasPerChannelBeta();
  x.set(&ScheduleAttr::getReductions,
        sideBySide ? Reductions::side_by_side : Reductions::in_turn);
}

/// One-warp CTAs for bandwidth-bound vk decode
/// (docs/cost-model.md#one-warp-ctas); on tensor cores the most warps of 16
/// (or a pinned 32) columns (#tensor-core-warps); else 4, 2 or 1, the most that divide V
/// (#warps-a-cta).
static void chooseWarps(ScheduleDraft &x) {
  ScheduleAttr &s = x.s;
  auto d = x.d;
  if (*s.getWarps() != 0)
    return;
  if (x.bandwidthBound && x.op.isVKLayout() && !x.staged) {
    s = s.with(&ScheduleAttr::getWarps, 1);
    return;
  }
  if (s.tensorCores()) {
    int64_t columns = s.warpColumns();
    // chunk_parallel's scan: a warp holds 16 V rows (32 with
    // columns_per_lane = 4: warpColumns()) whatever the warps, so
    // fewer warps a CTA make more CTAs: the fewest whose grid still fits one
    // CTA an SM (N = 1 at HV = 32: 2 warps, 128 CTAs), else 8; a varlen
    // batch's else 4, twice the SMs for its longest sequences, which outlast
    // the others (docs/cost-model.md#chunk-parallel-warps,
    // #varlen-chunk-parallel).
    // (A pinned chunk larger than the CTA's threads keeps more warps: the
    // first launch's substitution takes a thread a token.)
    // A pinned solving producer (producerSolves) holds its state tile as
    // that scan does, so takes the same rule.
    int64_t chunk = x.pins.getStagedTokens().value_or(0);
    if (s.chunkParallel() || x.pins.getProducerStages().value_or(0) > 0)
      for (int64_t w : {2, 4})
        if (d.V % (columns * w) == 0 && chunk <= w * kWarpSize &&
            (d.N * d.HV * (d.V / (columns * w)) <= x.sms ||
             (w == 4 && x.op.isVarlen()))) {
          s = s.with(&ScheduleAttr::getWarps, w);
          return;
        }
    // One chunk: the most warps. Several (long T, a varlen prefill): 8
    // warps share a chunk's staging on any grid
    // (docs/cost-model.md#long-t-prefill, #varlen-prefill); other varlen
    // batches: the most warps that still give two CTAs an SM, else 2.
    bool anyGrid = !x.op.isVarlen() || varlenPrefill(x);
    s = s.with(&ScheduleAttr::getWarps, d.V % (2 * columns) == 0 ? 2 : 1);
    for (int64_t w : {8, 4})
      if (d.V % (columns * w) == 0 &&
          (anyGrid || d.N * d.HV * (d.V / (columns * w)) >= 2 * x.sms)) {
        s = s.with(&ScheduleAttr::getWarps, w);
        return;
      }
    return;
  }
  s = s.with(&ScheduleAttr::getWarps, 1);
  for (int64_t w : {4, 2})
    if (d.V % (w * s.warpColumns()) == 0) {
      s = s.with(&ScheduleAttr::getWarps, w);
      return;
    }
}

/// Up to 16 tokens (8 varlen) at a time, whole mma tiles of 8 on tensor
/// cores (16 under a pinned precision = bf16, its m16n8k16 tiles), halved
/// until the buffers fit 32 KiB (docs/cost-model.md#staged-tokens).
static void chooseStagedTokens(ScheduleDraft &x) {
  ScheduleAttr &s = x.s;
  if (std::optional<int64_t> pin = x.pins.getStagedTokens()) {
    // 0: inputs straight from global memory
    s = s.with(&ScheduleAttr::getStagedTokens, *pin);
    return;
  }
  int64_t chunk = defaultStagedTokens(x.op);
  PrecisionAttr precision = x.pins.getPrecision();
  int64_t tile = precision && precision.getValue() == Precision::bf16 ? 16 : 8;
  if (s.tensorCores()) // whole mma tiles; a varlen prefill's chunks are full
    chunk = varlenPrefill(x) ? 16 : llvm::alignTo(chunk, tile);
  while (chunk > 1 && stagingBytes(x.op, s, chunk) > kDefaultStagingBytes)
    chunk /= 2;
  // Checkpoints are stored at chunk ends: a chunk divides their interval.
  if (std::optional<int64_t> interval = x.op.getCheckpointInterval();
      interval && chunk > 0)
    chunk = std::gcd(chunk, *interval);
  s = s.with(&ScheduleAttr::getStagedTokens, chunk);
}

/// Two staged tokens a step where a side-by-side token chain is the whole
/// kernel: a tiny grid without intermediate states
/// (docs/cost-model.md#token-pairs); a pinned token_pairs where tokens do not
/// pair (pairableTokens) is side by side.
static void chooseTokenPairs(ScheduleDraft &x) {
  ReductionsAttr pin = x.pins.getReductions();
  if (pairableTokens(x.op, x.s) &&
      (pin ? pin.getValue() == Reductions::token_pairs
           : tinyGrid(x.op, x.targetWarps) && !x.op.getIntermediateStates()))
    x.set(&ScheduleAttr::getReductions, Reductions::token_pairs);
}

/// The staged token loop is not unrolled: unrolling lost more from N = 8 on
/// than it gained at N = 1 (docs/cost-model.md#unroll-tokens).
static void chooseUnrollTokens(ScheduleDraft &x) {
  if (*x.s.getUnrollTokens() == 0)
    x.set(&ScheduleAttr::getUnrollTokens, kDefaultUnroll);
}

/// In this order: each reads only what the ones before it chose.
ArrayRef<ScheduleRule> gdn::mappingRules() {
  static constexpr ScheduleRule kRules[] = {
      chooseSolve,        chooseTensorCoreMapping, chooseColumnsPerLane,
      chooseStagedVLanes, chooseDecodeTwoVLanes,   chooseDecode16ByteSlices,
      chooseLanesAlongV,  chooseReductions,        chooseWarps,
      chooseStagedTokens, choosePrecision,         chooseTokenPairs,
      chooseUnrollTokens,
  };
  return kRules;
}
