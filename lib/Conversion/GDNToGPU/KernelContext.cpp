//===- KernelContext.cpp - a kernel's primitive accesses --------------------===//
//
// Vector loads and stores at the widest alignment a buffer guarantees, raw
// addresses for the bulk copies and prefetches, warp sums
// (KernelContext.h).
//
//===----------------------------------------------------------------------===//

#include "KernelContext.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/STLExtras.h"

#include <cassert>

using namespace mlir;
using namespace mlir::gdn;

int64_t KernelContext::vectorAlignment(int64_t count, Type elementType) {
  int64_t bytes = count * elementType.getIntOrFloatBitWidth() / 8;
  // Never more than the 16 bytes callers guarantee for their buffers (the C
  // API checks it); the offsets themselves are multiples of the vector size.
  return std::min<int64_t>(bytes & -bytes, 16);
}

SmallVector<Value> KernelContext::extractAll(Value vec) {
  SmallVector<Value> out;
  for (int64_t i = 0, e = cast<VectorType>(vec.getType()).getNumElements();
       i < e; ++i)
    out.push_back(vector::ExtractOp::create(b, loc, vec, i));
  return out;
}

Value KernelContext::fromElements(ArrayRef<Value> elements) {
  return vector::FromElementsOp::create(
      b, loc, VectorType::get({int64_t(elements.size())}, b.getF32Type()),
      elements);
}

Value KernelContext::loadVector(Value src, ValueRange idx, int64_t count) {
  Type et = cast<MemRefType>(src.getType()).getElementType();
  return vector::LoadOp::create(b, loc, VectorType::get({count}, et), src, idx,
                                /*nontemporal=*/false,
                                llvm::MaybeAlign(vectorAlignment(count, et)));
}

void KernelContext::storeVector(ArrayRef<Value> elements, Value dst,
                                ValueRange idx) {
  Type et = cast<MemRefType>(dst.getType()).getElementType();
  int64_t count = elements.size();
  Value vec = vector::FromElementsOp::create(
      b, loc, VectorType::get({count}, b.getF32Type()), elements);
  vector::StoreOp::create(b, loc, m.fromF32(vec, et), dst, idx,
                          /*nontemporal=*/false,
                          llvm::MaybeAlign(vectorAlignment(count, et)));
}

SmallVector<Value> KernelContext::withIndices(ArrayRef<Value> prefix, Value x,
                                              Value y) {
  SmallVector<Value> idx(prefix);
  idx.push_back(x);
  idx.push_back(y);
  return idx;
}

Value KernelContext::butterfly(Value x, int64_t from, int64_t to,
                               function_ref<Value(Value, Value)> combine) {
  for (int64_t offset = from; offset >= to; offset /= 2) {
    Value other = gpu::ShuffleOp::create(b, loc, x, offset, kWarpSize,
                                         gpu::ShuffleMode::XOR)
                      .getShuffleResult();
    x = combine(x, other);
  }
  return x;
}

Value KernelContext::byteAddress(Value mem, ValueRange idx) {
  auto type = cast<MemRefType>(mem.getType());
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, mem);
  Value linear = meta.getOffset();
  for (auto [i, stride] : llvm::zip(idx, meta.getStrides()))
    linear = arith::AddIOp::create(b, loc, linear,
                                   arith::MulIOp::create(b, loc, i, stride));
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, mem);
  Value bytes = arith::MulIOp::create(
      b, loc, linear, m.index(type.getElementTypeBitWidth() / 8));
  return arith::IndexCastOp::create(b, loc, b.getI64Type(),
                                    arith::AddIOp::create(b, loc, base, bytes));
}

Value KernelContext::sharedAddress(Value mem, ValueRange idx) {
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), /*shared=*/3),
      byteAddress(mem, idx));
}

Value KernelContext::clusterAddress(Value mem, ValueRange idx) {
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), /*cluster=*/7),
      byteAddress(mem, idx));
}

Value KernelContext::globalAddress(Value mem, ValueRange idx) {
  Value generic = LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext()),
      byteAddress(mem, idx));
  return LLVM::AddrSpaceCastOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), /*global=*/1),
      generic);
}

Value KernelContext::memoryPTX(StringRef text, StringRef constraints,
                               Type result, ValueRange operands) {
  std::string clobbered =
      constraints.empty() ? "~{memory}" : (constraints + ",~{memory}").str();
  auto op = LLVM::InlineAsmOp::create(
      b, loc, result, operands, text, clobbered,
      /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::tailcallkind::TailCallKind::None, /*asm_dialect=*/nullptr,
      /*operand_attrs=*/nullptr);
  return result ? op.getResult(0) : Value();
}

Operation *KernelContext::openIfZero(Value x) {
  auto ifOp = scf::IfOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, m.index(0)),
      /*withElseRegion=*/false);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  return ifOp;
}

Value KernelContext::workgroupBuffer(ArrayRef<int64_t> shape,
                                     Type elementType, int64_t alignment) {
  auto space =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  Value buf = kernel.addWorkgroupAttribution(
      MemRefType::get(shape, elementType, MemRefLayoutAttrInterface(), space),
      loc);
  kernel.setWorkgroupAttributionAttr(kernel.getNumWorkgroupAttributions() - 1,
                                     LLVM::LLVMDialect::getAlignAttrName(),
                                     b.getI64IntegerAttr(alignment));
  return buf;
}

/// Bytes of a buffer of `type`.
static int64_t bytesOf(MemRefType type) {
  return type.getNumElements() *
         llvm::divideCeil(type.getElementTypeBitWidth(), 8);
}

Value KernelContext::dynamicBuffer(ArrayRef<int64_t> shape, Type elementType,
                                   int64_t alignment) {
  auto space =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  // The base and every view at the start of the kernel, in order, so each
  // dominates every use.
  OpBuilder at(b.getContext());
  if (!dynamicBase) {
    at.setInsertionPointToStart(&kernel.getBody().front());
    dynamicBase = gpu::DynamicSharedMemoryOp::create(
        at, loc,
        MemRefType::get({ShapedType::kDynamic}, at.getI8Type(),
                        MemRefLayoutAttrInterface(), space));
  }
  at.setInsertionPointAfter(dynamicLast ? dynamicLast
                                        : dynamicBase.getDefiningOp());
  auto type =
      MemRefType::get(shape, elementType, MemRefLayoutAttrInterface(), space);
  dynamicBytes = llvm::alignTo(dynamicBytes, alignment);
  Value shift = arith::ConstantIndexOp::create(at, loc, dynamicBytes);
  dynamicBytes += bytesOf(type);
  auto view =
      memref::ViewOp::create(at, loc, type, dynamicBase, shift, ValueRange{});
  dynamicLast = view;
  return view;
}

void KernelContext::groupBarrier() {
  if (!group) {
    gpu::BarrierOp::create(b, loc);
    return;
  }
  NVVM::BarrierOp::create(b, loc, Type(), i32(group->barrierId),
                          i32(group->threads), NVVM::BarrierReductionAttr(),
                          Value());
}

void KernelContext::inThreadGroup(int64_t first, int64_t threads,
                                  int64_t barrierId,
                                  function_ref<void()> body) {
  assert(first % kWarpSize == 0 && threads % kWarpSize == 0 &&
         barrierId > 0 && barrierId < 16 && !group && "a group of whole warps");
  Value cta = tid, ctaWarp = warp;
  tid = arith::SubIOp::create(b, loc, tid, m.index(first));
  warp = arith::SubIOp::create(b, loc, warp, m.index(first / kWarpSize));
  group = ThreadGroup{threads, barrierId};
  body();
  group.reset();
  tid = cta;
  warp = ctaWarp;
}

int64_t gdn::dynamicSharedBytes(gpu::GPUFuncOp kernel) {
  int64_t end = 0;
  kernel.walk([&](memref::ViewOp view) {
    if (!view.getSource().getDefiningOp<gpu::DynamicSharedMemoryOp>())
      return;
    auto shift = getConstantIntValue(view.getByteShift());
    end = std::max<int64_t>(end, shift.value_or(0) + bytesOf(view.getType()));
  });
  return end;
}
