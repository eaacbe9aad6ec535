//===- KernelMath.cpp - fp32 math shared by the gdn lowerings -------------===//
#include "gdn/Conversion/KernelMath.h"
#include "gdn/Dialect/GDN/IR/GDNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

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

Value KernelMath::toF32(Value x) {
  Type element = getElementTypeOrSelf(x.getType());
  if (element.isF32())
    return x;
  return arith::ExtFOp::create(b, loc,
                               withElementType(x.getType(), b.getF32Type()), x);
}

Value KernelMath::fromF32(Value x, Type elementType) {
  if (elementType.isF32())
    return x;
  return arith::TruncFOp::create(b, loc, withElementType(x.getType(), elementType),
                                 x);
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
  Value raw = memref::LoadOp::create(b, loc, indices, ValueRange{n});
  Value row = raw;
  if (!raw.getType().isInteger(64))
    row = arith::ExtSIOp::create(b, loc, b.getI64Type(), raw);
  Value zero = arith::ConstantIntOp::create(b, loc, b.getI64Type(), 0);
  Value valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, row, zero);
  if (poolValid)
    valid = arith::AndIOp::create(b, loc, valid, poolValid);
  return {arith::IndexCastOp::create(b, loc, b.getIndexType(), row), valid};
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
  Value raw = memref::LoadOp::create(b, loc, indices, ValueRange{n});
  Value slot = raw;
  if (!raw.getType().isInteger(64))
    slot = arith::ExtSIOp::create(b, loc, b.getI64Type(), raw);
  Value zero = arith::ConstantIntOp::create(b, loc, b.getI64Type(), 0);
  Value valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, slot, zero);
  return {arith::IndexCastOp::create(b, loc, b.getIndexType(), slot), valid};
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
  // A negative slot or buffer row is a padding row: nothing is touched.
  auto indexOrN = [&](Value indices) -> Value {
    if (!indices)
      return n;
    Value x = loadI64(indices, n);
    Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, x,
                                     constant(0));
    valid = arith::AndIOp::create(b, loc, valid, ok);
    return toIndex(x);
  };
  r.slot = indexOrN(op.getStateIndices());
  r.row = indexOrN(op.getIntermediateStateIndices());
  r.valid = valid;
  return r;
}
