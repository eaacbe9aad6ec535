//===- KernelMath.cpp - fp32 math shared by the gdn lowerings -------------===//
#include "gdn/Conversion/KernelMath.h"
#include "gdn/Dialect/GDN/IR/GDNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/bit.h"

#include <cmath>

using namespace mlir;
using namespace mlir::gdn;

Value KernelMath::constant(TypedAttr value) {
  if (!constantBlock)
    return arith::ConstantOp::create(b, loc, value);
  Value &cached = constants[value];
  if (!cached) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(constantBlock);
    cached = arith::ConstantOp::create(b, loc, value);
  }
  return cached;
}

Value KernelMath::f32(double c) { return constant(b.getF32FloatAttr(c)); }

Value KernelMath::index(int64_t c) { return constant(b.getIndexAttr(c)); }

Value KernelMath::i32(int64_t c) { return constant(b.getI32IntegerAttr(c)); }

static Type withElementType(Type t, Type element) {
  if (auto vt = dyn_cast<VectorType>(t))
    return VectorType::get(vt.getShape(), element);
  return element;
}

/// A vector of an even number of elements: converted a pair at a time by
/// the GPU's cvt instructions.
static bool inPairs(Value x) {
  auto vt = dyn_cast<VectorType>(x.getType());
  return vt && vt.getRank() == 1 && vt.getNumElements() % 2 == 0;
}

Value KernelMath::toF32(Value x) {
  Type element = getElementTypeOrSelf(x.getType());
  if (element.isF32())
    return x;
  Type f32Type = withElementType(x.getType(), b.getF32Type());
  if (!isa<Float8E4M3FNType>(element))
    return arith::ExtFOp::create(b, loc, f32Type, x);
  if (flavor == Flavor::CPU || !inPairs(x))
    return e4m3ToF32(x);
  // cvt.rn.f16x2.e4m3x2 a pair, then f32.
  SmallVector<Value> halves;
  for (Value h : e4m3HalfPairs(x)) {
    halves.push_back(vector::ExtractOp::create(b, loc, h, 0));
    halves.push_back(vector::ExtractOp::create(b, loc, h, 1));
  }
  Value half = vector::FromElementsOp::create(
      b, loc, VectorType::get({int64_t(halves.size())}, b.getF16Type()),
      halves);
  return arith::ExtFOp::create(b, loc, f32Type, half);
}

SmallVector<Value> KernelMath::e4m3HalfPairs(Value x) {
  auto vt = cast<VectorType>(x.getType());
  int64_t count = vt.getNumElements();
  Value bits = arith::BitcastOp::create(
      b, loc, VectorType::get({count}, b.getI8Type()), x);
  auto halfPair = VectorType::get({2}, b.getF16Type());
  SmallVector<Value> pairs;
  for (int64_t i = 0; i < count; i += 2) {
    Value pair = vector::FromElementsOp::create(
        b, loc, VectorType::get({2}, b.getI8Type()),
        ValueRange{vector::ExtractOp::create(b, loc, bits, i),
                   vector::ExtractOp::create(b, loc, bits, i + 1)});
    pairs.push_back(NVVM::ConvertF8x2ToF16x2Op::create(
        b, loc, halfPair, pair, /*relu=*/false, vt.getElementType()));
  }
  return pairs;
}

Value KernelMath::fromF32(Value x, Type elementType) {
  if (elementType.isF32())
    return x;
  if (!isa<Float8E4M3FNType>(elementType))
    return arith::TruncFOp::create(
        b, loc, withElementType(x.getType(), elementType), x);
  if (flavor == Flavor::CPU || !inPairs(x))
    return e4m3FromF32(x);
  // cvt.rn.satfinite.e4m3x2.f32 a pair into an i16: its first operand goes
  // to the high byte, so (x[i + 1], x[i]) gives the bytes in memory order.
  // The pairs stay 16-bit words (two to a register, no byte shuffles).
  auto vt = cast<VectorType>(x.getType());
  int64_t count = vt.getNumElements();
  SmallVector<Value> pairs;
  for (int64_t i = 0; i < count; i += 2) {
    Value lo = vector::ExtractOp::create(b, loc, x, i);
    Value hi = vector::ExtractOp::create(b, loc, x, i + 1);
    pairs.push_back(NVVM::ConvertF32x2ToF8x2Op::create(
        b, loc, b.getI16Type(), hi, lo, NVVM::FPRoundingMode::RN,
        NVVM::SaturationMode::SATFINITE, /*relu=*/false, elementType));
  }
  Value packed = vector::FromElementsOp::create(
      b, loc, VectorType::get({count / 2}, b.getI16Type()), pairs);
  return vector::BitCastOp::create(
      b, loc, VectorType::get({count}, elementType), packed);
}

Value KernelMath::i32Like(Type shape, int64_t v) {
  TypedAttr value = b.getI32IntegerAttr(v);
  if (auto vt = dyn_cast<VectorType>(shape))
    value =
        DenseElementsAttr::get(VectorType::get(vt.getShape(), b.getI32Type()),
                               cast<IntegerAttr>(value).getValue());
  return arith::ConstantOp::create(b, loc, value);
}

// e4m3 (OCP FP8 E4M3FN): sign, 4 exponent bits (bias 7), 3 mantissa bits;
// exponent 0 holds the subnormals m 2^-9, 0x7F / 0xFF is NaN, no infinity.
Value KernelMath::e4m3ToF32(Value x) {
  Type shape = x.getType();
  auto typed = [&](Type element) { return withElementType(shape, element); };
  Type i32 = typed(b.getI32Type()), f32Type = typed(b.getF32Type());
  auto c = [&](int64_t v) { return i32Like(shape, v); };
  Value u = arith::ExtUIOp::create(
      b, loc, i32, arith::BitcastOp::create(b, loc, typed(b.getI8Type()), x));
  Value sign = arith::ShLIOp::create(
      b, loc, arith::AndIOp::create(b, loc, u, c(0x80)), c(24));
  Value e = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, u, c(3)), c(0xF));
  Value mant = arith::AndIOp::create(b, loc, u, c(7));
  // Normal: exponent e - 7 + 127, the mantissa's 3 bits on top of f32's 23.
  Value normal = arith::OrIOp::create(
      b, loc,
      arith::ShLIOp::create(b, loc, arith::AddIOp::create(b, loc, e, c(120)),
                            c(23)),
      arith::ShLIOp::create(b, loc, mant, c(20)));
  // Subnormal: m 2^-9, exact in f32.
  Value sub = arith::BitcastOp::create(
      b, loc, i32,
      arith::MulFOp::create(
          b, loc, arith::UIToFPOp::create(b, loc, f32Type, mant),
          arith::BitcastOp::create(b, loc, f32Type, c(0x3B000000)))); // 2^-9
  Value isSub =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, e, c(0));
  Value isNaN =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                            arith::AndIOp::create(b, loc, u, c(0x7F)), c(0x7F));
  Value magnitude = arith::SelectOp::create(
      b, loc, isNaN, c(0x7FC00000),
      arith::SelectOp::create(b, loc, isSub, sub, normal));
  return arith::BitcastOp::create(
      b, loc, f32Type, arith::OrIOp::create(b, loc, magnitude, sign));
}

Value KernelMath::e4m3FromF32(Value x) {
  Type shape = x.getType();
  auto typed = [&](Type element) { return withElementType(shape, element); };
  Type i32 = typed(b.getI32Type()), f32Type = typed(b.getF32Type());
  auto c = [&](int64_t v) { return i32Like(shape, v); };
  auto f = [&](double v) {
    return arith::BitcastOp::create(
        b, loc, f32Type, c(llvm::bit_cast<uint32_t>(static_cast<float>(v))));
  };
  Value bits = arith::BitcastOp::create(b, loc, i32, x);
  Value sign = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, bits, c(24)), c(0x80));
  Value a = arith::BitcastOp::create(
      b, loc, f32Type, arith::AndIOp::create(b, loc, bits, c(0x7FFFFFFF)));
  Value isNaN = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, a, a);
  // Saturate (448 is the largest finite), then round to nearest even.
  Value sat = saturateE4M3(a);
  // Normal (>= 2^-6): round f32's mantissa to 3 bits (the carry may raise
  // the exponent), rebias the exponent from 127 to 7.
  Value sb = arith::BitcastOp::create(b, loc, i32, sat);
  Value odd = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, sb, c(20)), c(1));
  Value rounded = arith::ShRUIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, sb,
                            arith::AddIOp::create(b, loc, odd, c(0x7FFFF))),
      c(20));
  Value normal = arith::SubIOp::create(b, loc, rounded, c(120 << 3));
  // Subnormal (< 2^-6): the nearest even multiple of 2^-9; adding 2^23
  // rounds x 2^9 < 8 to an integer, to nearest even (no fastmath flags:
  // nothing fuses).
  Value magic = f(8388608.0);
  Value sub = arith::FPToUIOp::create(
      b, loc, i32,
      arith::SubFOp::create(
          b, loc,
          arith::AddFOp::create(
              b, loc, arith::MulFOp::create(b, loc, sat, f(512.0)), magic),
          magic));
  Value isSub = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, sat,
                                      f(1.0 / 64));
  Value code = arith::SelectOp::create(
      b, loc, isNaN, c(0x7F),
      arith::SelectOp::create(b, loc, isSub, sub, normal));
  return arith::BitcastOp::create(
      b, loc, typed(b.getType<Float8E4M3FNType>()),
      arith::TruncIOp::create(b, loc, typed(b.getI8Type()),
                              arith::OrIOp::create(b, loc, code, sign)));
}

Value KernelMath::saturateE4M3(Value a) {
  Value max = arith::BitcastOp::create(
      b, loc, a.getType(),
      i32Like(a.getType(),
              llvm::bit_cast<uint32_t>(static_cast<float>(kE4M3Max))));
  // On the GPU as llvm.intr.minnum (min.f32): convert-gpu-to-nvvm would make
  // arith.minnumf a libdevice call (__nv_fminf), which needs a CUDA toolkit
  // at compile time and, without one, left an unresolved call in the PTX.
  if (flavor == Flavor::GPU)
    return LLVM::MinNumOp::create(b, loc, a, max);
  return arith::MinNumFOp::create(b, loc, a, max);
}

Value KernelMath::hash32(Value x) {
  auto c = [&](uint32_t v) { return i32(static_cast<int32_t>(v)); };
  auto xorShift = [&](Value v, int64_t by) {
    return arith::XOrIOp::create(b, loc, v,
                                 arith::ShRUIOp::create(b, loc, v, c(by)));
  };
  x = xorShift(x, 16);
  x = arith::MulIOp::create(b, loc, x, c(0x7feb352dU));
  x = xorShift(x, 15);
  x = arith::MulIOp::create(b, loc, x, c(0x846ca68bU));
  return xorShift(x, 16);
}

Value KernelMath::e4m3Stochastic(Value y, Value position) {
  Type i32Type = b.getI32Type(), f32Type = b.getF32Type();
  auto c = [&](uint32_t v) { return i32(static_cast<int32_t>(v)); };
  Value bits = arith::BitcastOp::create(b, loc, i32Type, y);
  Value random = hash32(arith::XOrIOp::create(b, loc, bits, hash32(position)));
  Value sign = arith::AndIOp::create(b, loc, bits, c(0x80000000U));
  Value a = arith::BitcastOp::create(
      b, loc, f32Type, arith::AndIOp::create(b, loc, bits, c(0x7FFFFFFFU)));
  Value sat = saturateE4M3(a); // a NaN is kept below
  // Normal (>= 2^-6): e4m3 keeps f32's top 3 mantissa bits; 20 random bits
  // added below them carry into the kept ones with probability equal to
  // the dropped bits' fraction, then the dropped bits are cleared (448's are
  // 0, so 448 stays 448).
  Value sb = arith::BitcastOp::create(b, loc, i32Type, sat);
  Value normal = arith::AndIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, sb,
                            arith::ShRUIOp::create(b, loc, random, c(12))),
      c(0xFFF00000U));
  // Subnormal (< 2^-6, multiples of 2^-9): floor(a 2^9 + u) 2^-9 with u in
  // [0, 1) from 23 random bits (a 2^9 < 8 and u are exact in f32; no
  // fastmath flags, so nothing fuses).
  Value u = arith::MulFOp::create(
      b, loc,
      arith::UIToFPOp::create(b, loc, f32Type,
                              arith::ShRUIOp::create(b, loc, random, c(9))),
      f32(0x1p-23));
  Value steps = arith::FPToUIOp::create(
      b, loc, i32Type,
      arith::AddFOp::create(b, loc,
                            arith::MulFOp::create(b, loc, sat, f32(512.0)), u));
  Value sub = arith::BitcastOp::create(
      b, loc, i32Type,
      arith::MulFOp::create(b, loc,
                            arith::UIToFPOp::create(b, loc, f32Type, steps),
                            f32(0x1p-9)));
  Value isSub = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, sat,
                                      f32(0x1p-6));
  Value rounded = arith::BitcastOp::create(
      b, loc, f32Type,
      arith::OrIOp::create(
          b, loc, arith::SelectOp::create(b, loc, isSub, sub, normal), sign));
  Value isNaN = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, y, y);
  return arith::SelectOp::create(b, loc, isNaN, y, rounded);
}

Value KernelMath::positionIn(Value memref, ValueRange indices) {
  auto type = cast<MemRefType>(memref.getType());
  Value position = indices.front();
  for (int64_t i = 1; i < type.getRank(); ++i) {
    Value size = type.isDynamicDim(i)
                     ? memref::DimOp::create(b, loc, memref, i).getResult()
                     : index(type.getDimSize(i));
    position = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, position, size), indices[i]);
  }
  return arith::IndexCastOp::create(b, loc, b.getI32Type(), position);
}

std::pair<Value, Value> KernelMath::e4m3Scale(Value amax) {
  Value zero = f32(0.0);
  Value some = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, amax,
                                     f32(kE4M3MinAmax));
  Value scale = div(amax, f32(kE4M3Max));
  Value inv =
      arith::SelectOp::create(b, loc, some, div(f32(kE4M3Max), amax), zero);
  return {scale, inv};
}

Value KernelMath::maxAbs(Value acc, Value x) {
  // |x| as max(x, -x): arith only (the GPU lowering loads no math dialect).
  Value abs =
      arith::MaximumFOp::create(b, loc, x, arith::NegFOp::create(b, loc, x));
  return arith::MaximumFOp::create(b, loc, acc, abs);
}

// GPU kernels let LLVM contract a product and a sum into one fma.rn.f32 (one
// rounding instead of two), as nvcc and Triton do by default; without the
// flag NVPTX emits mul.rn/add.rn pairs, twice the instructions. The CPU
// flavour, the fp64 reference's fp32 twin, rounds every operation.
arith::FastMathFlags KernelMath::contraction() const {
  return flavor == Flavor::GPU ? arith::FastMathFlags::contract
                               : arith::FastMathFlags::none;
}

Value KernelMath::add(Value x, Value y) {
  return arith::AddFOp::create(b, loc, x, y, contraction());
}
Value KernelMath::sub(Value x, Value y) {
  return arith::SubFOp::create(b, loc, x, y, contraction());
}
Value KernelMath::mul(Value x, Value y) {
  return arith::MulFOp::create(b, loc, x, y, contraction());
}
Value KernelMath::div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }

Value KernelMath::ptx(StringRef instruction, Value x) {
  // One PTX instruction on an f32 register: "<instr> $0, $1;".
  std::string text = (instruction + " $0, $1;").str();
  return LLVM::InlineAsmOp::create(
             b, loc, b.getF32Type(), ValueRange{x}, text, "=f,f",
             /*has_side_effects=*/false, /*is_align_stack=*/false,
             LLVM::tailcallkind::TailCallKind::None, /*asm_dialect=*/nullptr,
             /*operand_attrs=*/nullptr)
      .getResult(0);
}

Value KernelMath::exp(Value x) {
  if (flavor == Flavor::CPU)
    return math::ExpOp::create(b, loc, x);
  // exp(x) = 2^(x log2 e); ex2.approx has ~2 ulp error and maps -inf to 0
  // and +inf to +inf. .ftz: a denormal result (x < -87) is 0, a denormal
  // input gives 1, and the SASS skips the denormal rescaling (3 ops).
  return ptx("ex2.approx.ftz.f32", mul(x, f32(M_LOG2E)));
}

Value KernelMath::log(Value x) {
  if (flavor == Flavor::CPU)
    return math::LogOp::create(b, loc, x);
  // Callers take the log of 1 + exp(x) >= 1: .ftz never flushes.
  return mul(ptx("lg2.approx.ftz.f32", x), f32(M_LN2));
}

Value KernelMath::sqrt(Value x) {
  if (flavor == Flavor::CPU)
    return math::SqrtOp::create(b, loc, x);
  return ptx("sqrt.rn.f32", x); // IEEE round-to-nearest square root
}

Value KernelMath::rcp(Value x) {
  if (flavor == Flavor::CPU)
    return div(f32(1.0), x);
  // rcp.approx.ftz.f32: max error 1 ulp, 1/inf = 0; denormal inputs flush
  // to zero (callers pass x >= 1e-6).
  return ptx("rcp.approx.ftz.f32", x);
}

Value KernelMath::rsqrt(Value x) {
  if (flavor == Flavor::CPU)
    return div(f32(1.0), sqrt(x));
  // rsqrt.approx: max relative error 2^-22.9 (PTX ISA), one MUFU op where
  // 1 / sqrt.rn takes two IEEE slow-path checks; .ftz, as x >= 1e-6.
  return ptx("rsqrt.approx.ftz.f32", x);
}

Value KernelMath::sigmoid(Value x) {
  // exp(-x) overflows to +inf for x < -88: 1 / (1 + inf) = 0, not NaN.
  return rcp(add(f32(1.0), exp(arith::NegFOp::create(b, loc, x))));
}

Value KernelMath::softplus(Value x) {
  Value big = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x,
                                    f32(20.0));
  Value soft = flavor == Flavor::CPU
                   ? Value(math::Log1pOp::create(b, loc, exp(x)))
                   : log(add(f32(1.0), exp(x)));
  return arith::SelectOp::create(b, loc, big, x, soft);
}

Value KernelMath::fusedGate(Value a, Value aLog, Value dtBias) {
  Value sp = softplus(add(a, dtBias));
  Value g = arith::NegFOp::create(b, loc, mul(exp(aLog), sp));
  Value zero = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, sp,
                                     f32(0.0));
  return arith::SelectOp::create(b, loc, zero, f32(0.0), g);
}

Value KernelMath::decayOf(RecurrentOp op, Value x, Value aLog, Value dtBias) {
  return exp(logDecayOf(op, x, aLog, dtBias));
}

Value KernelMath::emitDecay(RecurrentOp op, Value n, Value t, Value hv,
                            Value key) {
  if (!op.getG() && !op.getA())
    return f32(1.0);
  return exp(emitLogDecay(op, n, t, hv, key));
}

KernelMath::GateInputs KernelMath::loadGates(RecurrentOp op, Value n, Value t,
                                             Value hv) {
  assert(!op.hasPerKeyDecay() && !op.hasPerChannelBeta() &&
         "loadGates: one gate value a head");
  GateInputs in;
  auto load = [&](Value mem, ValueRange idx) {
    return mem ? Value(memref::LoadOp::create(b, loc, mem, idx)) : Value();
  };
  in.gate = load(op.getG() ? op.getG() : op.getA(), {n, t, hv});
  if (in.gate && op.hasFusedGating()) {
    in.aLog = load(op.getALog(), hv);
    in.dtBias = load(op.getDtBias(), hv);
  }
  in.beta = load(op.getBeta() ? op.getBeta() : op.getB(), {n, t, hv});
  return in;
}

Value KernelMath::gateDecay(RecurrentOp op, const GateInputs &in) {
  return in.gate ? decayOf(op, toF32(in.gate), in.aLog, in.dtBias) : f32(1.0);
}

Value KernelMath::gateBeta(RecurrentOp op, const GateInputs &in) {
  return in.beta ? betaOf(op, toF32(in.beta)) : f32(1.0);
}

Value KernelMath::logDecayOf(RecurrentOp op, Value x, Value aLog, Value dtBias) {
  if (op.getG())
    return x;
  return fusedGate(x, aLog, dtBias);
}

Value KernelMath::emitLogDecay(RecurrentOp op, Value n, Value t, Value hv,
                               Value key) {
  Value gate = op.getG() ? op.getG() : op.getA();
  if (!gate)
    return f32(0.0);
  SmallVector<Value> idx = {n, t, hv};
  if (op.hasPerKeyDecay())
    idx.push_back(key);
  Value x = toF32(memref::LoadOp::create(b, loc, gate, idx));
  if (!op.hasFusedGating())
    return logDecayOf(op, x, Value(), Value());
  Value aLog = memref::LoadOp::create(b, loc, op.getALog(), ValueRange{hv});
  // Per key: dt_bias is [HV * K], entry hv * K + k.
  Value biasIdx = hv;
  if (op.hasPerKeyDecay())
    biasIdx = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, hv, index(op.getDims().K)), key);
  Value dtBias = memref::LoadOp::create(b, loc, op.getDtBias(), ValueRange{biasIdx});
  return logDecayOf(op, x, aLog, dtBias);
}

std::tuple<Value, Value, Value> KernelMath::emitTokenRange(RecurrentOp op,
                                                          Value n) {
  Value cu = op.getCuSeqlens();
  if (!cu)
    return {n, index(0), index(op.getDims().T)};
  auto at = [&](Value i) -> Value {
    Value x = memref::LoadOp::create(b, loc, cu, ValueRange{i});
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), x);
  };
  // Whatever cu_seqlens holds, the range stays inside the packed tokens:
  // lo in [0, T], hi in [lo, T] (a decreasing entry is an empty sequence).
  Value total = index(op.getDims().T);
  Value next = arith::AddIOp::create(b, loc, n, index(1));
  Value lo = arith::MinSIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, at(n), index(0)), total);
  Value hi = arith::MinSIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, at(next), lo), total);
  return {index(0), lo, hi};
}

std::pair<Value, Value> KernelMath::emitIntermediateRow(RecurrentOp op, Value n,
                                                       Value poolValid) {
  Value indices = op.getIntermediateStateIndices();
  if (!op.getIntermediateStates() || !indices)
    return {n, poolValid};
  Value row = loadI64(indices, n);
  // 0 <= row < R in one unsigned compare: a negative row or one past the
  // buffer (a caller's bad index) writes nothing.
  Value valid = inRange(row, op.getIntermediateStates());
  if (poolValid)
    valid = arith::AndIOp::create(b, loc, valid, poolValid);
  return {arith::IndexCastOp::create(b, loc, b.getIndexType(), row), valid};
}

std::pair<Value, Value> KernelMath::emitCheckpointRange(RecurrentOp op,
                                                        Value n) {
  Value offsets = op.getCheckpointOffsets();
  auto at = [&](Value i) -> Value {
    Value x = memref::LoadOp::create(b, loc, offsets, ValueRange{i});
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), x);
  };
  Value rows =
      index(cast<ShapedType>(op.getStateCheckpoints().getType()).getDimSize(0));
  Value next = arith::AddIOp::create(b, loc, n, index(1));
  Value lo = arith::MinSIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, at(n), index(0)), rows);
  Value hi = arith::MinSIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, at(next), lo), rows);
  return {lo, hi};
}

std::pair<Value, Value> KernelMath::emitCheckpointRow(RecurrentOp op, Value lo,
                                                      Value hi, Value done,
                                                      Value poolValid) {
  Value interval = index(*op.getCheckpointInterval());
  Value j = arith::DivUIOp::create(b, loc, done, interval);
  Value row = arith::SubIOp::create(
      b, loc, arith::AddIOp::create(b, loc, lo, j), index(1));
  auto cmp = [&](arith::CmpIPredicate p, Value x, Value y) -> Value {
    return arith::CmpIOp::create(b, loc, p, x, y);
  };
  Value cond = arith::AndIOp::create(
      b, loc,
      cmp(arith::CmpIPredicate::eq,
          arith::RemUIOp::create(b, loc, done, interval), index(0)),
      arith::AndIOp::create(b, loc, cmp(arith::CmpIPredicate::sge, j, index(1)),
                            cmp(arith::CmpIPredicate::slt, row, hi)));
  if (poolValid)
    cond = arith::AndIOp::create(b, loc, cond, poolValid);
  return {row, cond};
}

Value KernelMath::emitParentSource(RecurrentOp op, Value n, Value step,
                                   Value rowValid) {
  Type i64 = b.getI64Type();
  auto constant = [&](int64_t c) -> Value {
    return arith::ConstantIntOp::create(b, loc, i64, c);
  };
  auto cmp = [&](arith::CmpIPredicate pred, Value x, Value y) -> Value {
    return arith::CmpIOp::create(b, loc, pred, x, y);
  };
  int64_t steps =
      cast<ShapedType>(op.getIntermediateStates().getType()).getDimSize(1);
  // Varlen sequences may run past the table: clamp the load, then ignore it.
  Value entry = step;
  if (op.isVarlen())
    entry = arith::MinUIOp::create(b, loc, step, index(steps - 1));
  Value p = loadI64(op.getRetrieveParentToken(), ValueRange{n, entry});
  Value s = arith::IndexCastOp::create(b, loc, i64, step);
  // Steps > 0 inside the table, of rows that have stored states.
  Value inTable = cmp(arith::CmpIPredicate::sgt, s, constant(0));
  if (op.isVarlen())
    inTable = arith::AndIOp::create(
        b, loc, inTable, cmp(arith::CmpIPredicate::slt, s, constant(steps)));
  if (rowValid)
    inTable = arith::AndIOp::create(b, loc, inTable, rowValid);
  // 0 <= p < step: a stored parent; anything else is a root.
  Value isParent = arith::AndIOp::create(
      b, loc, cmp(arith::CmpIPredicate::sge, p, constant(0)),
      cmp(arith::CmpIPredicate::slt, p, s));
  Value chain = cmp(arith::CmpIPredicate::eq, p,
                    arith::SubIOp::create(b, loc, s, constant(1)));
  Value source = arith::SelectOp::create(b, loc, isParent, p, constant(kRestart));
  Value carried = arith::OrIOp::create(
      b, loc, chain,
      arith::XOrIOp::create(
          b, loc, inTable,
          arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1)));
  source = arith::SelectOp::create(b, loc, carried, constant(kCarried), source);
  return arith::TruncIOp::create(b, loc, b.getI32Type(), source);
}

std::pair<Value, Value> KernelMath::emitStateSlot(RecurrentOp op, Value n) {
  Value indices = op.getStateIndices();
  if (!indices)
    return {n, Value()};
  Value slot = loadI64(indices, n);
  // 0 <= slot < slots: a negative slot is padding, and so is one past the
  // pool (a caller's bad index), never an access outside it.
  Value pool = op.getInitialState() ? op.getInitialState() : op.getFinalState();
  Value valid = inRange(slot, pool);
  return {arith::IndexCastOp::create(b, loc, b.getIndexType(), slot), valid};
}

Value KernelMath::inRange(Value i64Index, Value buffer) {
  int64_t rows = cast<ShapedType>(buffer.getType()).getDimSize(0);
  return arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ult, i64Index,
      arith::ConstantIntOp::create(b, loc, b.getI64Type(), rows));
}

Value KernelMath::betaOf(RecurrentOp op, Value x) {
  if (op.getBeta())
    return x;
  Value beta = sigmoid(x);
  // allow_neg_eigval: beta in (0, 2), eigenvalue 1 - beta |k|^2 in (-1, 1).
  return op.getAllowNegEigval() ? mul(f32(2.0), beta) : beta;
}

Value KernelMath::emitBeta(RecurrentOp op, Value n, Value t, Value hv,
                           Value column) {
  Value input = op.getBeta() ? op.getBeta() : op.getB();
  if (!input)
    return f32(1.0);
  SmallVector<Value> idx = {n, t, hv};
  if (op.hasPerChannelBeta())
    idx.push_back(column);
  return betaOf(op, toF32(memref::LoadOp::create(b, loc, input, idx)));
}

Value KernelMath::loadI64(Value memref, ValueRange idx) {
  Value raw = memref::LoadOp::create(b, loc, memref, idx);
  if (raw.getType().isInteger(64))
    return raw;
  return arith::ExtSIOp::create(b, loc, b.getI64Type(), raw);
}

KernelMath::CommitRow KernelMath::emitCommitRow(CommitOp op, Value n) {
  Type i64 = b.getI64Type();
  auto constant = [&](int64_t c) -> Value {
    return arith::ConstantIntOp::create(b, loc, i64, c);
  };
  auto toIndex = [&](Value x) -> Value {
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), x);
  };
  // a = min(accepted[n], T): a count past the buffer commits its last step.
  Value accepted = loadI64(op.getAccepted(), n);
  Value a = arith::MinSIOp::create(b, loc, accepted, constant(op.getDims().T));
  Value valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, a,
                                      constant(1));
  CommitRow r;
  r.step = toIndex(arith::SubIOp::create(b, loc, a, constant(1)));
  // A negative slot or buffer row is a padding row: nothing is touched;
  // so is one past the pool or the buffer (a caller's bad index).
  auto indexOrN = [&](Value indices, Value buffer) -> Value {
    if (!indices)
      return n;
    Value x = loadI64(indices, n);
    valid = arith::AndIOp::create(b, loc, valid, inRange(x, buffer));
    return toIndex(x);
  };
  r.slot = indexOrN(op.getStateIndices(), op.getState());
  r.row =
      indexOrN(op.getIntermediateStateIndices(), op.getIntermediateStates());
  r.valid = valid;
  return r;
}
