//===- Schedule.cpp - GPU schedule of gdn.recurrent and its cost model ----===//
#include "ScheduleRules.h"
#include "gdn/Conversion/GDNToGPU/Schedule.h"
#include "gdn/Conversion/GDNToGPU/GPUTarget.h"
#include "gdn/Dialect/GDN/IR/GDNOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <limits>
#include <tuple>

using namespace mlir;
using namespace mlir::gdn;

namespace {
/// Lanes along V for `rows` columns a lane: 1 in vk (K is contiguous), or
/// the fewest that leave whole keys a lane when K < 32; in kv as many as
/// make a key row's share of a warp 64 contiguous bytes (two sectors), as
/// long as the shapes divide and the state tile stays <= 64 registers.
int64_t autoLanesV(RecurrentOp op, int64_t rows) {
  auto d = op.getDims();
  if (op.isVKLayout()) {
    for (int64_t l = 1; l <= kWarpSize; l *= 2)
      if (d.K % (kWarpSize / l) == 0 && d.V % (rows * l) == 0)
        return l;
    return 1;
  }
  for (int64_t l : {16, 8, 4, 2})
    if (rows * l * 4 <= 64 && d.V % (rows * l) == 0 &&
        d.K % (kWarpSize / l) == 0 && rows * d.K / (kWarpSize / l) <= 64)
      return l;
  return 1;
}

/// The cost model of the default schedule (measured on the H200, see
/// docs/cost-model.md): decode is bound by memory latency at small N and by
/// bandwidth at large N. Few V columns a lane give many short warps, which
/// hides latency when the problem is small; more columns a lane give more
/// independent 16-byte loads in flight per thread, which wins once the grid
/// has enough warps to fill the machine. So take the most columns a lane
/// (8, 4, 2, 1) that still leaves at least kTargetWarps warps. With staged
/// tokens (T > 1) each token is a dependent chain of reductions, and 4 or 8
/// independent columns a lane beat more, shorter warps (T = 4 and 12, N = 1:
/// 4 columns 7-14% faster than 1). Once 8 columns a lane fill the machine
/// (T = 1), CTAs of one warp beat CTAs of four (N = 8 to 256: 1.3-4.5%
/// faster; docs/cost-model.md#columns-per-lane, #one-warp-ctas).
constexpr int64_t kTargetWarps = 4096; // ~half the warp slots of 132 SMs,
                                       // scaled by the device's SM count

/// State values a thread holds in registers at most (columns_per_lane * K /
/// (32 / lanes_along_v)): what ptxas keeps without spilling (K = 256 with 4
/// columns a lane in vk is 32).
constexpr int64_t kMaxStateValues = 64;

/// Tokens staged in shared memory at a time: none for a single token (it
/// would only add a barrier), else up to 16 (fixed T) or 8 (varlen, where
/// most sequences are short), within 32 KiB of buffers and one gate-computing
/// thread per token.
int64_t autoChunk(RecurrentOp op) {
  auto d = op.getDims();
  if (!op.isVarlen() && d.T == 1)
    return 0;
  return op.isVarlen() ? 8 : std::min<int64_t>(d.T, 16);
}

constexpr int64_t kMaxStagingBytes = 32 * 1024;
/// Staged tokens unrolled by default: none. Unrolling 4 or all 12 tokens
/// measured slower from N = 8 on (code size; kv T = 12: 1.2-2x) and gained at
/// most 7% at N = 1.
constexpr int64_t kAutoUnroll = 1;

} // namespace

FailureOr<GPUSchedule> gdn::selectGPUSchedule(RecurrentOp op,
                                              ScheduleAttr pins,
                                              const GPUTarget &target,
                                              int64_t smCount) {
  if (!pins)
    pins = ScheduleAttr::get(op.getContext());
  // The pins (0: chosen where 0 is no legal value; sizes are in range, as
  // the attribute's verifier checks them).
  int64_t rowsOpt = pins.getColumnsPerLane().value_or(0);
  int64_t warpsOpt = pins.getWarps().value_or(0);
  int64_t lanesVOpt = pins.getLanesAlongV().value_or(0);
  std::optional<int64_t> chunkPin = pins.getStagedTokens();
  int64_t unrollOpt = pins.getUnrollTokens().value_or(0);
  std::optional<Reductions> reductionsPin;
  if (pins.getReductions())
    reductionsPin = pins.getReductions().getValue();
  std::optional<ChunkSolve> solvePin;
  if (pins.getSolve())
    solvePin = pins.getSolve().getValue();
  std::optional<int64_t> stagesPin = pins.getProducerStages();
  if (smCount < 0 || smCount > kMaxSMCount)
    return op.emitOpError() << "cannot be lowered to the GPU: sm-count = "
                            << smCount << " must be in [0, " << kMaxSMCount
                            << "]";
  int64_t sms = smCount > 0 ? smCount : target.smCount;
  int64_t targetWarps = kTargetWarps * sms / 132;
  auto d = op.getDims();
  GPUSchedule s{rowsOpt, warpsOpt, lanesVOpt, 0, 0, unrollOpt, false, false};
  // The chunked solve only when asked for: measured slower than the token
  // loop everywhere (docs/cost-model.md#cuda-core-chunked-solve).
  s.chunkedSolve = solvePin ? int64_t(*solvePin) : 0;
  // Chosen: the tensor-core solve for the final state of a fixed 8 < T <= 16
  // (more than one tile of tokens, one chunk) where its mapping is free: T = 12 measured 1.1x
  // (N = 1) to 1.7x (N = 64 / 256) faster than the token loop; T = 4 even
  // to 9% slower (docs/cost-model.md#tensor-core-solve). Varlen is
  // not chosen (unmeasured; most of its chunks are partial), nor T > 16.
  // (One chunk of bf16 or f16 q and k, as measured: several chunks, or f32
  // q and k, hold up to 255 registers; a pinned warp count must divide V
  // into 16-column warps.) Not on a tiny grid, where the token loop fed by a
  // producer warp is faster since the kernels' fp32 math contracts to fma
  // (T = 12, N = 1, HV = 32: 6.77 vs 9.06 us kv, 7.63 vs 9.19 us vk; at N = 8
  // the tensor cores keep 18.6 vs 28.5 us; docs/cost-model.md#tensor-core-solve).
  Type qkType = cast<ShapedType>(op.getQ().getType()).getElementType();
  if (!solvePin && target.mmaSyncTF32 && !op.isVarlen() && d.T > 8 &&
      d.T <= 16 &&
      !tinyGrid(op, targetWarps) &&
      (qkType.isBF16() || qkType.isF16()) &&
      (warpsOpt == 0 || (warpsOpt <= 8 && d.V % (16 * warpsOpt) == 0)) &&
      (!chunkPin || chunkPin == 16) && rowsOpt == 0 && lanesVOpt == 0 &&
      stagesPin.value_or(0) == 0 &&
      pins.getConsumerRegisters().value_or(0) == 0 &&
      !op.getIntermediateStates() && !op.hasParentTable() &&
      !op.hasPerKeyDecay() && !op.hasPerChannelBeta() && d.K % 8 == 0 &&
      d.K <= 128 && d.V % 32 == 0)
    s.chunkedSolve = GPUSchedule::kTensorCoreSolve;
  if (s.tensorCores() && !target.mmaSyncTF32)
    return op.emitOpError() << "cannot be lowered to the GPU: solve = "
                               "tensor_cores needs mma.sync with tf32 "
                               "operands (sm_80 on), not "
                            << target.chip;
  if (s.tensorCores()) {
    // A warp holds 16 V columns x K keys as m16n8k8 accumulator fragments
    // (TensorCoreSolve.cpp): 2 columns a lane, 8 lanes along V.
    if ((rowsOpt != 0 && rowsOpt != 2) || (lanesVOpt != 0 && lanesVOpt != 8))
      return op.emitOpError()
             << "cannot be lowered to the GPU: solve = tensor_cores maps 16 "
                "V columns to a warp: columns_per_lane must be 2 and "
                "lanes_along_v 8 (or both left to the cost model), not "
             << rowsOpt << " and " << lanesVOpt;
    s.rows = 2;
    s.lanesV = 8;
  }
  bool staged = chunkPin ? *chunkPin > 0 : autoChunk(op) > 0;
  bool bandwidthBound = false;
  if (s.rows == 0) {
    // In kv the lanes along V grow as the columns a lane shrink, so the warp
    // count does not change; 4 columns x 4 lanes measured best there (8 x 2
    // was 10-40% slower), hence the shorter candidate list.
    SmallVector<int64_t> candidates =
        !op.isVKLayout() ? SmallVector<int64_t>{4, 2, 1}
        : staged         ? SmallVector<int64_t>{8, 4}
                         : SmallVector<int64_t>{8, 4, 2, 1};
    auto lanesFor = [&](int64_t r) {
      return lanesVOpt ? lanesVOpt : autoLanesV(op, r);
    };
    // Only column counts that the checks below take: whole columns a warp
    // (V a multiple of rows x lanes), whole keys a lane (K a multiple of the
    // lanes along K; a power of two of them, the only counts run on the GPU
    // so far), and a state tile within the register budget (a pinned
    // lanes_along_v leaves fewer lanes along K, more keys a lane).
    auto fits = [&](int64_t r) {
      int64_t lanes = lanesFor(r);
      return lanes >= 1 && lanes <= kWarpSize && d.V % (r * lanes) == 0 &&
             d.K % (kWarpSize / lanes) == 0 &&
             llvm::isPowerOf2_64(d.K / (kWarpSize / lanes)) &&
             r * d.K * lanes <= kMaxStateValues * kWarpSize;
    };
    int64_t bestWarps = -1;
    for (int64_t r : candidates) {
      if (!fits(r))
        continue;
      int64_t warps = d.N * d.HV * (d.V / (r * lanesFor(r)));
      if (warps > bestWarps) { // ties keep the larger r
        s.rows = r;
        bestWarps = warps;
      }
      if (warps >= targetWarps) {
        bandwidthBound = r == candidates.front();
        break;
      }
    }
    // None fits (a pinned lanes_along_v with large K): the most columns that do,
    // else one column (a pinned lanes_along_v: the smallest tile) or the first
    // candidate, refused below with the reason.
    for (int64_t r = candidates.back() / 2; s.rows == 0 && r >= 1; r /= 2)
      if (fits(r))
        s.rows = r;
    if (s.rows == 0)
      s.rows = lanesVOpt ? 1 : candidates.front();
  }
  // Staged kernels (T > 1, varlen) split a warp's 8 V columns over more
  // lanes than decode does: shallower K trees for the token chain and, in vk,
  // 16-byte bf16 state rows. vk: 4 columns x 2 lanes once the grid fills the
  // machine (verify N = 8 / 64: 7% faster, varlen extend: 31%), 2 x 4 below
  // (verify N = 1: 5%, T = 12 N = 1: 8%); kv: 2 x 4 instead of 4 x 4 while
  // the grid is tiny (FLA-style N = 1, T = 4 / 12: 11-14% faster; from N = 8
  // on slower). docs/cost-model.md#staged-v-lanes.
  // (Head sizes of real models only: K a power of two >= 64.)
  // (And a state tile within the register budget: 8 columns over 2 or 4
  // lanes hold 8 K / 32 values a thread, K <= 256.)
  // (Not for fp32 per-token states: fp32StepStates.)
  if (staged && rowsOpt == 0 && lanesVOpt == 0 && !s.tensorCores() &&
      !fp32StepStates(op) && d.V % 8 == 0 && d.K >= 64 && llvm::isPowerOf2_64(d.K) &&
      8 * d.K <= kMaxStateValues * kWarpSize) {
    // Tiny: warps of 8 columns fill at most an eighth of the target.
    bool smallGrid = tinyGrid(op, targetWarps);
    if (op.isVKLayout()) {
      s.lanesV = bandwidthBound ? 2 : 4;
      s.rows = 8 / s.lanesV;
    } else if (smallGrid) {
      s.lanesV = 4;
      s.rows = 2;
    }
  }
  // Decode in vk on a grid that one column a lane does not fill (N = 1 at
  // HV = 32): 2 lanes along V, so a lane's K slice is 8 keys (16-byte bf16
  // loads) and each reduction one shuffle level shallower. Measured at N = 1
  // (HV = 32), warm in L2 (gdn-run): bf16 pool 2.95 -> 2.41 us, f32 in place
  // 3.34 -> 3.22 us, 2 x 2 or 4 lanes slower; cold (bench_gdn): 0.65 ->
  // 0.67 / 0.75 -> 0.76 of a copy (docs/cost-model.md#decode-two-v-lanes).
  if (!staged && op.isVKLayout() && rowsOpt == 0 && lanesVOpt == 0 &&
      s.rows == 1 && !bandwidthBound && d.K >= 64 && d.K % 16 == 0 &&
      d.V % (2 * std::max<int64_t>(warpsOpt, 1)) == 0)
    s.lanesV = 2;
  // Decode of a 2-byte (bf16/f16) vk state on a grid of at least 8x the
  // target warps: 2 lanes along V and 4 columns a lane, so a lane's K slice
  // of a column is K / 16 >= 8 keys, whole 16-byte vectors (one lane along V
  // moves 8-byte halves at K = 128), with the reductions side by side in
  // CTAs of 4 warps. Measured at K = 128
  // (gdn-run, bf16 pool, HV = 32): N = 64 37.20 -> 33.62 us, N = 256 132.96
  // -> 118.06 us; 2 lanes with 8 columns, or side by side alone, gained at
  // most 3%. At N = 8 (1x the target) it was 3% slower (6.92 -> 7.12 us)
  // and the KDA bf16 pool even.
  // Not for KDA (a per-key decay; a per-channel beta likewise unmeasured):
  // bench_gdn cold, N = 64 / 256 49.17 -> 52.30 / 171.23 -> 186.27 us
  // (docs/cost-model.md#decode-16-byte-slices).
  Value state = op.getInitialState() ? op.getInitialState() : op.getFinalState();
  bool streaming = false; // the bandwidth-bound 2-byte decode below
  if (!staged && op.isVKLayout() && rowsOpt == 0 && lanesVOpt == 0 &&
      !op.hasPerKeyDecay() && !op.hasPerChannelBeta() &&
      bandwidthBound && d.N * d.HV * (d.V / 8) >= 8 * targetWarps &&
      state && elementBytes(state) == 2 && d.K >= 128 &&
      d.K % 16 == 0 && d.V % (8 * std::max<int64_t>(warpsOpt, 1)) == 0) {
    s.lanesV = 2;
    s.rows = 4;
    bandwidthBound = false; // side by side, CTAs of several warps
    streaming = true;
  }
  if (s.lanesV == 0)
    s.lanesV = autoLanesV(op, s.rows);
  if (s.lanesV < 1 || s.lanesV > kWarpSize || !llvm::isPowerOf2_64(s.lanesV))
    return op.emitOpError() << "cannot be lowered to the GPU: lanes_along_v = "
                            << s.lanesV << " must be a power of two in [1, 32]";
  if (d.K % s.lanesK() != 0)
    return op.emitOpError() << "cannot be lowered to the GPU: K = " << d.K
                            << " must be a multiple of 32 / lanes_along_v = "
                            << s.lanesK();
  s.kPerLane = d.K / s.lanesK();
  // Side-by-side reductions shorten a token's dependent chain (N = 1: 4-18%
  // faster, FLA-style N = 8: 18%) but hold more registers, which costs
  // bandwidth once the grid is bandwidth-bound (bf16 pool decode and verify,
  // N >= 8: 5-13% slower); docs/cost-model.md#overlap-reductions.
  // KDA (per-key decay, per-channel beta) is built in the side-by-side form
  // only.
  s.overlapReductions = (reductionsPin && *reductionsPin != Reductions::in_turn) ||
                        (!reductionsPin && !bandwidthBound) ||
                        op.hasPerKeyDecay() || op.hasPerChannelBeta();
  if (s.warps == 0 && bandwidthBound && op.isVKLayout() && !staged)
    s.warps = 1;
  // Tensor cores: the most warps, 16 V columns each (the fewest copies of a
  // head's Gram pass and of its staged tokens). For one chunk (T <= 16, not
  // varlen), since the 128-register cap, 8 warps are the fastest at every N
  // measured (T = 12, HV = 32: N = 2 / 4 / 8 by 8 / 14 / 3% over the 2 / 2 /
  // 4 warps of the rule before, N = 16 by 5% and N >= 64 by 3-7% over 4;
  // docs/cost-model.md#tensor-core-warps). Several chunks hold more registers (varlen on
  // 8 warps spills 36 bytes under the cap): there the most warps that still
  // give two CTAs an SM, else 2.
  if (s.warps == 0 && s.tensorCores()) {
    bool oneChunk = !op.isVarlen() && d.T <= 16;
    s.warps = d.V % 32 == 0 ? 2 : 1;
    for (int64_t w : {8, 4})
      if (d.V % (16 * w) == 0 &&
          (oneChunk || d.N * d.HV * (d.V / (16 * w)) >= 2 * sms)) {
        s.warps = w;
        break;
      }
  }
  if (s.warps == 0) {
    s.warps = 1;
    for (int64_t w : {4, 2})
      if (d.V % (w * s.warpRows()) == 0) {
        s.warps = w;
        break;
      }
  }
  if (s.rows < 1 || s.rows > 16 || s.warps < 1 || s.warps > 32)
    return op.emitOpError() << "cannot be lowered to the GPU: columns_per_lane = "
                            << s.rows << " must be in [1, 16] and warps = "
                            << s.warps << " in [1, 32]";
  // The state tile lives in registers: keep it within a budget that ptxas
  // can hold without spilling (K = 256 with R = 4 in vk is 32 values).
  if (s.rows * s.kPerLane > kMaxStateValues)
    return op.emitOpError() << "cannot be lowered to the GPU: a thread would "
                               "hold columns_per_lane * K / (32 / lanes_along_v) = "
                            << s.rows * s.kPerLane
                            << " state values, more than " << kMaxStateValues
                            << " (K = " << d.K << " must be at most "
                            << kMaxStateValues * s.lanesK() / s.rows
                            << " for this schedule)";
  if (d.V % s.blockRows() != 0)
    return op.emitOpError() << "cannot be lowered to the GPU: V = " << d.V
                            << " is not a multiple of columns_per_lane * "
                               "lanes_along_v * warps = "
                            << s.blockRows();
  if (d.V / s.blockRows() > std::numeric_limits<int32_t>::max())
    return op.emitOpError() << "cannot be lowered to the GPU: V / (columns_per_lane * "
                               "lanes_along_v * warps) = "
                            << d.V / s.blockRows()
                            << " blocks exceed the grid limit 2^31 - 1";
  if (!chunkPin) {
    s.chunk = autoChunk(op);
    if (s.tensorCores()) // whole mma tiles of 8 tokens
      s.chunk = llvm::alignTo(s.chunk, 8);
    while (s.chunk > 1 && stagingBytes(op, s, s.chunk) > kMaxStagingBytes)
      s.chunk /= 2;
  } else {
    s.chunk = *chunkPin; // 0: inputs straight from global memory
  }
  if (s.chunkedSolve) {
    auto refuse = [&](StringRef why) {
      return op.emitOpError()
             << "cannot be lowered to the GPU: solve = "
             << stringifyChunkSolve(ChunkSolve(s.chunkedSolve)) << " needs "
             << why;
    };
    if (op.hasParentTable())
      return refuse("a chain of tokens (no parent table, EAGLE tree)");
    if (op.getIntermediateStates())
      return refuse("the final state only (no intermediate_states)");
    if (op.hasPerKeyDecay())
      return refuse("a decay per head (no per-key decay, KDA)");
    if (op.hasPerChannelBeta())
      return refuse("a beta per head (no per-channel beta)");
    if (s.chunk == 0)
      return refuse(!chunkPin
                        ? "tokens staged in shared memory (staged_tokens > 0: "
                          "a single token is not staged unless asked)"
                        : "tokens staged in shared memory (staged_tokens > 0)");
    if (s.tensorCores() && s.chunk != 8 && s.chunk != 16)
      return refuse("staged_tokens = 8 or 16 on tensor cores (mma tiles of 8 "
                    "tokens), not " +
                    std::to_string(s.chunk));
    if (s.tensorCores() && d.K % 8 != 0)
      return refuse("K a multiple of 8 on tensor cores (mma tiles of 8 keys)");
  }
  // Two staged tokens a step (reductions = token_pairs), where a token chain
  // of the side-by-side form is the whole kernel: a tiny grid, no
  // intermediate states (with them 20% slower: verify T = 4 N = 1 4.26 ->
  // 5.14 us) and no tree. H200: T = 12 N = 1 6.52 -> 6.34 us, MTP T = 4
  // N = 1 5.16 -> 4.93; forced on wider grids 4-12% slower
  // (docs/cost-model.md#token-pairs). Staged token loops only; never
  // with the chunked solve.
  bool pairable = s.overlapReductions && s.chunk > 0 && !s.chunkedSolve &&
                  !op.hasParentTable();
  s.pairTokens =
      pairable && (reductionsPin == Reductions::token_pairs ||
                   (!reductionsPin &&
                    tinyGrid(op, targetWarps) && !op.getIntermediateStates()));
  if (s.unroll == 0)
    s.unroll = kAutoUnroll;
  if (s.unroll > 64)
    return op.emitOpError() << "cannot be lowered to the GPU: unroll_tokens = "
                            << s.unroll << " must be at most 64";
  if (s.chunk > s.warps * kWarpSize)
    return op.emitOpError() << "cannot be lowered to the GPU: staged_tokens = "
                            << s.chunk << " exceeds the " << s.warps * kWarpSize
                            << " threads of a CTA";
  if (stagingBytes(op, s, s.chunk) > 48 * 1024)
    return op.emitOpError() << "cannot be lowered to the GPU: staged_tokens = "
                            << s.chunk << " needs "
                            << stagingBytes(op, s, s.chunk)
                            << " bytes of shared memory, more than 48 KiB";
  if (failed(selectWarpSpecialization(op, pins, target, targetWarps, s)) ||
      failed(selectPrefetch(op, pins, target, streaming, sms, s)))
    return failure();
  // Programmatic launch, once asked for: the next kernel may launch at this
  // one's start, so its CTAs load their states while this grid runs, except
  // after a producer warp's recurrence: those tiny grids are latency-bound on
  // one warp a scheduler, and the next grid's CTAs on their SMs slowed them
  // down. H200, chains of kernels on different states, cold: decode N = 1
  // f32 2.86 -> 2.46 us (after the recurrence 2.56), bf16 pool N = 1 / 8
  // 3.13 -> 1.91 / 8.45 -> 7.16 (2.88 / 10.51), T = 12 N = 64 (tensor cores)
  // 109.9 -> 111.7 (156.8); with a producer: T = 12 N = 1 6.76 -> 6.96 (at
  // the start 10.68), verify T = 4 N = 1 4.22 -> 3.68 (5.52)
  // (docs/cost-model.md#programmatic-launch).
  s.programmaticLaunch =
      pins.getLaunch() ? int64_t(pins.getLaunch().getValue()) : 0;
  if (s.programmaticLaunch == int64_t(LaunchMode::programmatic))
    s.programmaticLaunch = s.stages > 0 ? GPUSchedule::kLaunchAfterRecurrence
                                        : GPUSchedule::kLaunchAtStart;
  if (s.programmaticLaunch && !target.gridDependencyControl)
    return op.emitOpError() << "cannot be lowered to the GPU: launch = "
                            << stringifyLaunchMode(pins.getLaunch().getValue())
                            << " needs griddepcontrol (sm_90 on)";
  if (d.HV > 65535 || d.N > 65535)
    return op.emitOpError() << "cannot be lowered to the GPU: N = " << d.N
                            << " and HV = " << d.HV
                            << " must each be at most 65535 (grid limits)";
  return s;
}


bool gdn::producerNorms(RecurrentOp op, const GPUSchedule &s) {
  return s.stages > 0 && s.consumerRegisters == 0 && s.overlapReductions &&
         !s.chunkedSolve && !op.hasPerKeyDecay();
}

ScheduleAttr gdn::toScheduleAttr(MLIRContext *context, const GPUSchedule &s) {
  Reductions reductions = s.pairTokens          ? Reductions::token_pairs
                          : s.overlapReductions ? Reductions::side_by_side
                                                : Reductions::in_turn;
  return ScheduleAttr::get(
      context, s.rows, s.lanesV, s.warps, s.chunk, s.unroll,
      ReductionsAttr::get(context, reductions),
      ChunkSolveAttr::get(context, ChunkSolve(s.chunkedSolve)), s.stages,
      s.consumerRegisters, s.statePrefetchDistance, s.inputPrefetchDistance,
      LaunchModeAttr::get(context, LaunchMode(s.programmaticLaunch)));
}

ScheduleAttr gdn::pinnedSchedule(RecurrentOp op) {
  return op->getAttrOfType<ScheduleAttr>(GDNDialect::kScheduleAttrName);
}
