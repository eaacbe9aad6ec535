//===- KernelContext.h - what every piece of a GPU kernel reads -*- C++ -*-===//
//
// One CTA per (sequence n, value head hv, block of V columns). The 32 lanes
// of a warp are split into lanesV = lanes_along_v groups along V and lanesK
// = 32 / lanesV (lanesAlongK()) along K: lane l = kLane * lanesV + vLane owns
// the R = columns_per_lane value columns [v0, v0 + R) and the KL = K / lanesK
// (kPerLane) key rows [kLane * KL, (kLane + 1) * KL) of the state, with v0 =
// block * BV + warp * R * lanesV + vLane * R (BV: blockColumns()). The
// state tile S[r][j] (R * KL fp32 values a thread) stays in registers for the
// whole token loop. Per token, every reduction over K (Sᵀk, Sᵀq, the L2 norms)
// is a per-lane partial sum and a butterfly shuffle tree over the kLane bits,
// so every lane ends with the full sum and the rank-1 update needs no
// communication.
//
// State traffic is coalesced in both layouts. `vk` ([V, K], K contiguous):
// each lane loads vector<KL> along K per row (lanesV = 1 for decode, 2 or 4
// for staged kernels: 16-byte bf16 rows, shallower trees), a warp reads
// whole rows. `kv` ([K, V], V contiguous): lanesV = 4 with R = 4 (R = 2 on
// tiny staged grids), each lane loads vector<R> along V per key row, and the
// lanes of a key row read contiguous sectors.
//
// Private to convert-gdn-to-gpu. A kernel is one form (KernelForms.h) built
// from pieces, each a layer over the one below with one responsibility:
//   KernelContext   the op, its schedule, the indices (KernelIndices.cpp)
//                   and the primitive accesses: vector loads and stores,
//                   addresses, warp sums (KernelContext.cpp);
//   KernelFeatures  hooks at named points: programmatic launch, L2 prefetch;
//   TileIO          the state tile in registers or mma fragments, and o;
//   Staging         the tokens' inputs in shared memory, chunk by chunk;
//   TokenSteps      one token (or a pair) of the recurrence in registers.
//
//===----------------------------------------------------------------------===//
#ifndef GDN_LIB_CONVERSION_GDNTOGPU_KERNELCONTEXT_H
#define GDN_LIB_CONVERSION_GDNTOGPU_KERNELCONTEXT_H

#include "gdn/Conversion/GDNToGPU/Schedule.h"
#include "gdn/Conversion/KernelMath.h"
#include "gdn/Conversion/ReplayView.h"
#include "gdn/Dialect/GDN/IR/GDNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"

#include <array>
#include <optional>

namespace mlir {
namespace gdn {

/// The kernel being built: `kernel` (a gpu.func whose arguments are the op's
/// operands, `op` its clone inside) for schedule `s`, the builder at the
/// kernel's insertion point, and the indices every piece reads.
class KernelContext {
public:
  KernelContext(OpBuilder &b, Location loc, RecurrentOp op, ScheduleAttr s,
                gpu::GPUFuncOp kernel)
      : b(b), loc(loc), op(op), s(s), d(op.getDims()),
        kPerLane(d.K / s.lanesAlongK()), m(b, loc, KernelMath::Flavor::GPU),
        kernel(kernel) {}

  /// Builds the kernel of a gdn.replay_commit: `op` is its recurrence view
  /// (ReplayView.h) and the grid's z runs over (layer, row), z = layer *
  /// replay.rows + n.
  void setReplay(const ReplayRows &rows) { replay = rows; }

protected:
  /// The kernel's entry (KernelIndices.cpp): the thread's place in the grid
  /// and in the state tile (tid, lane, warp, kLane, vBlock, hv, n, h, v0,
  /// k0; the mma-fragment mapping's with solve = tensor_cores), then the
  /// op's rows (stateRow and valid, tokenRow, tokenLo and hi, interRow and
  /// interValid). `atStart` runs between the two (a launch hook that must
  /// precede every load).
  void enterKernel(function_ref<void()> atStart);

  /// Byte alignment of a vector of `count` elements of `elementType` at an
  /// offset that is a multiple of `count`: the largest power of two dividing
  /// its size, at most 16.
  static int64_t vectorAlignment(int64_t count, Type elementType);

  /// The address of element `idx` of `mem` (a dense buffer) as an integer.
  Value byteAddress(Value mem, ValueRange idx);
  Value sharedAddress(Value mem, ValueRange idx);
  /// The same shared memory in the shared::cluster window, which holds the
  /// CTA's own shared::cta window (PTX ISA, state spaces): the bulk copy's
  /// PTX 8.0 form takes that (its shared::cta form needs PTX 8.6).
  Value clusterAddress(Value mem, ValueRange idx);
  Value globalAddress(Value mem, ValueRange idx);
  /// Inline PTX `text` (operands $0... as `constraints`, LLVM's syntax) with
  /// side effects and a memory clobber, so LLVM moves no memory access
  /// across it and never drops it: griddepcontrol.wait, and the acquire and
  /// release of concurrent_solves' counts. Its result (null for none).
  Value memoryPTX(StringRef text, StringRef constraints, Type result,
                  ValueRange operands);
  /// Opens `if (x == 0)` (an index: tid, lane) at the builder and leaves it
  /// inside the then block; the caller restores the insertion point.
  Operation *openIfZero(Value x);
  /// base + x, or x itself when base is the constant 0 (the kernels without
  /// a producer keep their staging rows unshifted).
  Value plus(Value base, Value x) {
    if (getConstantIntValue(base) == 0)
      return x;
    return arith::AddIOp::create(b, loc, base, x);
  }
  Value i32(int64_t c) { return m.i32(c); }

  /// Threads that split a staged chunk's CTA-wide work (copies, gates, the
  /// Gram, the substitution), `tid` numbering them from 0: the consumer
  /// warps, or inside inThreadGroup a producer's.
  int64_t groupThreads() const {
    return group ? group->threads : *s.getWarps() * kWarpSize;
  }
  /// Waits for groupThreads(): gpu.barrier (every thread of the CTA), or
  /// inside inThreadGroup bar.sync on its named barrier.
  void groupBarrier();
  /// `body` built for threads [first, first + threads) of the CTA (whole
  /// warps): tid and warp count from `first`, groupThreads() is `threads`
  /// and groupBarrier() bar.sync `barrierId`, `threads` (1-15: 0 is
  /// gpu.barrier's).
  void inThreadGroup(int64_t first, int64_t threads, int64_t barrierId,
                     function_ref<void()> body);
  static int64_t elementBytes(Value x) {
    return cast<MemRefType>(x.getType()).getElementTypeBitWidth() / 8;
  }

  /// The element type of `g` or `a`.
  Type gateElementType() {
    Value gate = op.getG() ? op.getG() : op.getA();
    return cast<MemRefType>(gate.getType()).getElementType();
  }

  /// A shared-memory buffer of the kernel (a workgroup attribution) of
  /// `shape` x `elementType`, aligned to `alignment` bytes.
  Value workgroupBuffer(ArrayRef<int64_t> shape, Type elementType,
                        int64_t alignment);

  /// The same in dynamic shared memory: a memref.view of the kernel's
  /// gpu.dynamic_shared_memory at the next offset aligned to `alignment`
  /// (at most 16 bytes, the base's alignment), for buffers that together
  /// pass the 48 KiB a kernel may declare statically. The launch requests
  /// dynamicSharedBytes(kernel).
  Value dynamicBuffer(ArrayRef<int64_t> shape, Type elementType,
                      int64_t alignment);

  Value offset(Value base, int64_t i) {
    return i == 0 ? base : arith::AddIOp::create(b, loc, base, m.index(i));
  }
  SmallVector<Value> extractAll(Value vec);
  Value fromElements(ArrayRef<Value> elements);
  Value loadVector(Value src, ValueRange idx, int64_t count);
  void storeVector(ArrayRef<Value> elements, Value dst, ValueRange idx);
  /// `prefix` followed by x and y: the index of a state tile element.
  static SmallVector<Value> withIndices(ArrayRef<Value> prefix, Value x,
                                        Value y);

  /// Butterfly all-reduce over the lanes that share this lane's V columns
  /// (the kLane bits): every one of them gets the sum over K.
  Value warpSum(Value x) {
    return butterflySum(x, kWarpSize / 2, *s.getLanesAlongV());
  }

  /// Butterfly all-reduce with the lane offsets from, from / 2, ..., to
  /// (powers of two; x itself when from < to).
  Value butterflySum(Value x, int64_t from, int64_t to) {
    return butterfly(x, from, to,
                     [&](Value a, Value c) { return m.add(a, c); });
  }
  Value butterfly(Value x, int64_t from, int64_t to,
                  function_ref<Value(Value, Value)> combine);
  /// Like warpSum: max |x| over the lanes that share this lane's V columns.
  Value warpMaxAbs(Value x) {
    return butterfly(x, kWarpSize / 2, *s.getLanesAlongV(),
                     [&](Value a, Value c) { return m.maxAbs(a, c); });
  }

  OpBuilder &b;
  Location loc;
  RecurrentOp op;
  ScheduleAttr s;
  RecurrentOp::Dims d;
  /// Keys of the state a lane holds: K / lanesAlongK().
  int64_t kPerLane;
  KernelMath m;
  gpu::GPUFuncOp kernel;
  // The indices (enterKernel()).
  Value tid, lane, warp;    ///< thread in the CTA, lane in its warp, warp
  Value vBlock;             ///< the CTA's block of V columns
  Value kLane, n, hv, h, v0, k0;
  Value mmaLane;            ///< tensor cores: the lane in the warp
  Value stateRow, valid; ///< state row (n or its pool slot); pool row is real
  Value tokenRow;        ///< batch row of the token tensors (n, or 0 varlen)
  Value tokenLo, hi;     ///< the sequence's tokens along T: [tokenLo, hi)
  /// The first token of the CTA's chunk loop: tokenLo, or with
  /// segmentsInZ its segment's first (hi then its segment's end).
  Value chunkLo;
  /// A persistent kernel's work item, the (x, y, z) place in the grid of
  /// the launch it stands for, where its loop sets it (concurrent_solves,
  /// ChunkParallel.cpp): enterKernel takes it for the block ids, and keeps
  /// the constants in the entry block.
  std::optional<std::array<Value, 3>> workItem;
  /// The grid's z is n * segmentsInZ + segment where set (chunk_parallel's
  /// context-parallel launches, SegmentScan.cpp); 0: z is n.
  int64_t segmentsInZ = 0;
  Value segment; ///< the CTA's segment of its sequence (segmentsInZ)
  Value interRow, interValid; ///< intermediate_states row, and whether to write
  Value checkpointLo, checkpointHi; ///< the sequence's state_checkpoints rows
  /// A replay's rows (setReplay): the tokens of row n are its slot's window
  /// row, [0, clamp(accepted[n], 0, L)); no output.
  std::optional<ReplayRows> replay;
  /// A tree replay's path (emitReplayPath: bit s set, step s runs); null
  /// for a chain, whose steps [0, hi) run.
  Value replayPath;

  /// The thread group inside inThreadGroup, none outside it.
  struct ThreadGroup {
    int64_t threads, barrierId;
  };
  std::optional<ThreadGroup> group;

  Value dynamicBase;        ///< gpu.dynamic_shared_memory, once a buffer asks
  int64_t dynamicBytes = 0; ///< bytes of dynamic shared memory handed out
  Operation *dynamicLast = nullptr; ///< the last view of it

  /// Replayed verify (op.hasReplayWindows(); nothing otherwise): the CTA's
  /// share of its sequence's first L tokens into the windows, read from
  /// global memory (ReplayWindows.cpp). Threads [0, threads) of the CTA,
  /// this one `thread`, split the CTA's columns of v, the first CTA of a k
  /// head (V block 0 of the group's first value head) also k, and V block 0
  /// of each value head the log decays and betas.
  void writeReplayWindows(Value thread, int64_t threads);
  void writeReplayWindows() { writeReplayWindows(tid, s.threads()); }
};

/// Bytes of dynamic shared memory `kernel` uses (the end of its last
/// KernelContext::dynamicBuffer), which its launches request; 0 for none.
int64_t dynamicSharedBytes(gpu::GPUFuncOp kernel);

} // namespace gdn
} // namespace mlir

#endif // GDN_LIB_CONVERSION_GDNTOGPU_KERNELCONTEXT_H
