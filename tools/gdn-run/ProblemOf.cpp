//===- ProblemOf.cpp - a gdn.recurrent as the fp64 reference's problem ----===//
#include "ProblemOf.h"

#include "gdn/Dialect/GDN/IR/GDNOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::gdn;
namespace ref = ::gdn::reference;

ref::Problem mlir::gdn::problemOf(RecurrentOp op) {
  ref::Problem p;
  auto d = op.getDims();
  p.N = d.N, p.T = d.T, p.H = d.H, p.HV = d.HV, p.K = d.K, p.V = d.V;
  p.decay = op.getG()              ? ref::Decay::LogSpace
            : op.hasFusedGating() ? ref::Decay::FusedGating
                                  : ref::Decay::None;
  p.beta = op.getBeta() ? ref::Beta::Given
           : op.getB()  ? ref::Beta::Logits
                        : ref::Beta::One;
  p.perKeyDecay = op.hasPerKeyDecay();
  p.perChannelBeta = op.hasPerChannelBeta();
  p.qkL2Norm = op.getQkL2norm();
  p.allowNegEigval = op.getAllowNegEigval();
  p.varlen = op.isVarlen();
  if (Value window = op.getKWindow()) // [slots, H, L, K]
    p.windowSteps = cast<MemRefType>(window.getType()).getDimSize(2);
  if (Value inter = op.getIntermediateStates()) {
    auto type = cast<MemRefType>(inter.getType());
    p.intermediateRows = type.getDimSize(0);
    p.intermediateSteps = type.getDimSize(1);
    p.intermediateIndexed = op.getIntermediateStateIndices() != nullptr;
    p.parentTable = op.hasParentTable();
    Type et = type.getElementType();
    p.intermediateStorage = et.isBF16()                 ? ref::Storage::BF16
                            : et.isF16()                ? ref::Storage::F16
                            : isa<Float8E4M3FNType>(et) ? ref::Storage::E4M3Rows
                                                        : ref::Storage::F32;
  }
  if (Value ck = op.getStateCheckpoints()) {
    p.checkpointInterval = *op.getCheckpointInterval();
    p.checkpointRows = cast<MemRefType>(ck.getType()).getDimSize(0);
  }
  p.scale = op.getScaleOrDefault();
  p.layout = op.isVKLayout() ? ref::StateLayout::VK : ref::StateLayout::KV;
  p.hasInitialState = op.getInitialState() != nullptr;
  if (op.hasStatePool()) {
    Value state = op.getInitialState() ? op.getInitialState() : op.getFinalState();
    p.slots = cast<MemRefType>(state.getType()).getDimSize(0);
  }
  return p;
}

RecurrentOp mlir::gdn::recurrentOpOf(ModuleOp module, StringRef function) {
  RecurrentOp found;
  if (auto func = module.lookupSymbol<func::FuncOp>(function))
    func.walk([&](RecurrentOp op) { found = op; });
  return found;
}
