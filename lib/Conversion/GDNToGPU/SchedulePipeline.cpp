//===- SchedulePipeline.cpp - the producer warp and L2 prefetch rules -----===//
//
// The cost model's rules for what overlaps a kernel's memory traffic with its
// math: a producer warp feeding a ring of staged chunks (producer_stages,
// consumer_registers) and the L2 prefetches of a later CTA's data
// (state_prefetch_distance, input_prefetch_distance), each with its checks.
// Called by selectGPUSchedule (Schedule.cpp) once the mapping is chosen.
//
//===----------------------------------------------------------------------===//
#include "ScheduleRules.h"
#include "gdn/Conversion/GDNToGPU/GPUTarget.h"
#include "gdn/Dialect/GDN/IR/GDNOps.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::gdn;

/// The producer warp of `s` (producer_stages, consumer_registers) and its
/// checks: cp.async.bulk moves 16-byte multiples between 16-byte aligned
/// addresses, so a token's q and k rows and the CTA's slice of v must be
/// whole 16-byte multiples in identity layouts (the C API guarantees
/// 16-byte aligned buffers); one producer lane computes each token's gates.
LogicalResult gdn::selectWarpSpecialization(RecurrentOp op, ScheduleAttr pins,
                                       const GPUTarget &target,
                                       int64_t targetWarps, GPUSchedule &s) {
  auto d = op.getDims();
  std::optional<int64_t> stagesPin = pins.getProducerStages();
  s.stages = stagesPin.value_or(0);
  // Chosen on a tiny grid (tinyGrid: N * HV <= 32 at V = 128) only, for
  // verify (per-token states, EAGLE trees included) and for the final state
  // of 8 < T <= 16 bf16/f16 tokens (in place of the tensor cores). Since the
  // fp32 math contracts to fma (session 6) the producer pays only where one
  // token chain a warp is all the machine runs: HV = 32, verify T = 4 N = 1
  // 4.59 vs 5.18 us without, T = 12 N = 1 8.06 vs 9.65, tree N = 1 5.13 vs
  // 6.07, final state T = 12 N = 1 6.77 vs 8.14 (kv); from N = 8 on it is
  // even or slower (verify T = 4 N = 8 / 64 / 256: 16.52 / 107.34 / 407.28 vs
  // 15.89 / 101.66 / 371.74; tree N = 8 18.25 vs 16.76;
  // docs/cost-model.md#producer-warp). (Before, with separate mul/add, it
  // also won verify T <= 4 at N = 64 / 256 by 5% / 11%.)
  // (Only where it is allowed: the chip, the copies, the ring in 48 KiB.)
  bool verify = op.getIntermediateStates() && tinyGrid(op, targetWarps) &&
                !fp32StepStates(op);
  Type qkType = cast<ShapedType>(op.getQ().getType()).getElementType();
  bool finalState = !op.getIntermediateStates() && !op.isVarlen() &&
                    d.T > 8 && d.T <= 16 &&
                    (qkType.isBF16() || qkType.isF16()) &&
                    tinyGrid(op, targetWarps);
  s.consumerRegisters = pins.getConsumerRegisters().value_or(0);
  if (!stagesPin && target.bulkAsyncCopies && s.chunk > 0 &&
      s.chunk <= kWarpSize && !s.chunkedSolve && (verify || finalState) &&
      bulkCopies(op, s) && ringBytes(op, s, 2) <= 48 * 1024)
    s.stages = 2;
  if (s.consumerRegisters != 0 && s.stages == 0)
    return op.emitOpError() << "cannot be lowered to the GPU: consumer_registers "
                               "needs a producer warp (producer_stages > 0)";
  if (s.stages == 0)
    return success();
  auto fail = [&]() {
    return op.emitOpError() << "cannot be lowered to the GPU: producer_stages = "
                            << s.stages << " ";
  };
  if (!target.bulkAsyncCopies)
    return fail() << "needs bulk async copies and mbarrier transactions "
                     "(sm_90 on)";
  if (s.stages > 8)
    return fail() << "must be at most 8";
  if (s.chunk == 0)
    return fail() << "needs staged tokens (staged_tokens > 0)";
  if (s.chunkedSolve)
    return fail() << "(a producer warp) and a chunked solve cannot be combined";
  if (s.chunk > kWarpSize)
    return fail() << "needs staged_tokens <= 32 (one producer lane a token), not "
                  << s.chunk;
  if (!bulkCopies(op, s))
    return fail() << "copies rows of q and k (" << d.K * elementBytes(op.getQ())
                  << " bytes), v (" << d.V * elementBytes(op.getV())
                  << ") and the CTA's columns of v ("
                  << s.blockRows() * elementBytes(op.getV())
                  << ") with cp.async.bulk, which "
                     "needs multiples of 16 bytes";
  int64_t bytes = ringBytes(op, s, s.stages);
  if (bytes > 48 * 1024)
    return fail() << "with staged_tokens = " << s.chunk << " needs " << bytes
                  << " bytes of shared memory, more than 48 KiB";
  if (s.consumerRegisters == 0)
    return success();
  if (s.warps % 4 != 0)
    return op.emitOpError()
           << "cannot be lowered to the GPU: consumer_registers needs whole "
              "consumer warpgroups (setmaxnreg acts on warpgroups), but "
              "warps = "
           << s.warps << " is not a multiple of 4";
  // setmaxnreg takes multiples of 8 in [24, 256]; the producer warpgroup
  // keeps kProducerRegisters and the CTA's total stays within 64K.
  int64_t total = 4 * kWarpSize * kProducerRegisters +
                  s.warps * kWarpSize * s.consumerRegisters;
  if (s.consumerRegisters % 8 != 0 || s.consumerRegisters < 24 ||
      s.consumerRegisters > 256 || total > 65536)
    return op.emitOpError()
           << "cannot be lowered to the GPU: consumer_registers = "
           << s.consumerRegisters
           << " must be a multiple of 8 in [24, 256] with the CTA's registers ("
           << total << ") at most 65536";
  return success();
}

/// The L2 prefetch of a later CTA's state tile (state_prefetch_distance) and its
/// checks: a kernel without staged tokens (the state is read once, up
/// front), an initial state in vk whose CTA tile (blockRows() whole rows of
/// K) is one contiguous run of 16-byte multiples, a fixed batch (the grid is
/// (V blocks, HV, N) in launch order), and sm_90 (cp.async.bulk.prefetch).
/// Chosen for the bandwidth-bound 2-byte decode (`streaming`) at a distance
/// of the CTAs the device holds at once (SMs x CTAs an SM, those from an
/// estimate of the registers: the state tile plus ~40), so the prefetched
/// tile is read one wave later. Measured on the H200 (bf16 pool, HV = 32,
/// CTAs of 4 warps x 8 columns, 72 registers, 7 resident an SM: 924):
/// bench_gdn cold, N = 64 46.90 -> 40.35 us (0.79 -> 0.92 of a copy), N =
/// 256 161.55 -> 138.99 (0.81 -> 0.95), 528 and 1848 within 0-3% of 924;
/// gdn-run, 2112 gained half as much, 4224 was 6-17% slower. An f32 state
/// (one-warp CTAs) gained <= 2% at 1056-4224: not chosen
/// (docs/cost-model.md#l2-state-prefetch).
/// On the tensor-core solve of a single chunk (a fixed batch) the L2
/// prefetch of the later CTA's staged inputs (input_prefetch_distance): its q, k and v rows
/// and gates, 128-byte lines by `prefetch.global.L2` (sm_90: LLVM's NVPTX
/// selects the intrinsic only there), so
/// its staging barrier waits on L2 rather than behind the DRAM queue of the
/// states in flight. Chosen where the grid outgrows the CTAs the device
/// holds (2 of 8 warps an SM), at one CTA an SM ahead. H200 gdn-run, FLA-style
/// T = 12 kv (HV = 32, two rounds): N = 64 / 128 / 256 93.5 -> 91.3 / 178.2
/// -> 172.2 / 349.3 -> 335.2 us at 132; at 264, 528 and 1056 0.1% faster to
/// 2.3% slower than none (docs/cost-model.md#l2-input-prefetch).
LogicalResult gdn::selectPrefetch(RecurrentOp op, ScheduleAttr pins,
                             const GPUTarget &target, bool streaming,
                             int64_t sms, GPUSchedule &s) {
  auto d = op.getDims();
  Value init = op.getInitialState();
  bool stateTile = s.chunk == 0 && !s.tensorCores() && s.stages == 0 &&
                   init && op.isVKLayout() && !op.isVarlen() &&
                   alignedSlots(init) &&
                   (s.blockRows() * d.K * elementBytes(init)) % 16 == 0;
  // The tensor-core solve of a single chunk prefetches the staged inputs
  // instead (KernelBuilder::prefetchLaterInputs: rows of q, k, v and the
  // gates, in any layout the verifier accepts).
  bool stagedInputs = s.tensorCores() && !op.isVarlen() && d.T <= s.chunk;
  // Tensor-core CTAs of 4 or more warps are capped at 128 registers.
  int64_t tensorCoreCTAs =
      sms * std::max<int64_t>(65536 / (128 * kWarpSize * s.warps), 1);
  std::optional<int64_t> statePin = pins.getStatePrefetchDistance();
  std::optional<int64_t> inputPin = pins.getInputPrefetchDistance();
  s.statePrefetchDistance = statePin.value_or(0);
  s.inputPrefetchDistance = inputPin.value_or(0);
  if (!statePin && streaming && stateTile && target.bulkAsyncCopies) {
    int64_t registers = llvm::alignTo(s.rows * s.kPerLane + 40, 8);
    int64_t perSM = std::min<int64_t>(
        {32, 64 / s.warps, 65536 / (registers * s.warps * kWarpSize)});
    s.statePrefetchDistance = sms * std::max<int64_t>(perSM, 1);
  }
  if (!inputPin && stagedInputs && target.bulkAsyncCopies && s.warps >= 4 &&
      d.N * d.HV * (d.V / s.blockRows()) > tensorCoreCTAs)
    s.inputPrefetchDistance = sms;
  // Both prefetches are sm_90 instructions to LLVM's NVPTX backend
  // (cp.async.bulk.prefetch, and prefetch.global.L2 with PTX 8.0).
  // A pinned distance the kernel cannot take: the parameter, then why.
  auto refuse = [&](StringRef name, int64_t distance) {
    return op.emitOpError() << "cannot be lowered to the GPU: " << name
                            << " = " << distance << " ";
  };
  if (statePin > 0 && !target.bulkAsyncCopies)
    return refuse("state_prefetch_distance", *statePin)
           << "needs cp.async.bulk.prefetch (sm_90 on)";
  if (statePin > 0 && !stateTile)
    return refuse("state_prefetch_distance", *statePin)
           << "needs a kernel without staged tokens or tensor cores "
              "(staged_tokens = 0 or T = 1), an initial state in the vk "
              "layout (identity, a CTA's "
           << s.blockRows()
           << " rows of K a multiple of 16 bytes) and a fixed batch (no "
              "cu_seqlens)";
  if (inputPin > 0 && !target.bulkAsyncCopies)
    return refuse("input_prefetch_distance", *inputPin)
           << "needs prefetch.global.L2 (sm_90 on)";
  if (inputPin > 0 && !stagedInputs)
    return refuse("input_prefetch_distance", *inputPin)
           << "needs the tensor-core solve of a single chunk (T <= "
              "staged_tokens) with a fixed batch (no cu_seqlens)";
  return success();
}
