//===- TestKernelPieces.cpp - build one piece of a GPU kernel alone -------===//
//
// test-gdn-kernel-pieces: for every gdn.recurrent (memref form, with the
// schedule convert-gdn-to-gpu would take), a gpu.func in a gpu.module
// @gdn_test_pieces that holds only the chosen piece of a kernel
// (lib/Conversion/GDNToGPU/KernelContext.h), so that lit tests can check a
// piece without the rest of a form around it:
//   tile-io  the state tile in and out: initial_state -> final_state;
//   staging  every chunk's staging copies and gates, and nothing else;
//   token    one token step from global memory on the loaded state.
// The op is left in place.
//
//===----------------------------------------------------------------------===//
#include "KernelForms.h"
#include "gdn/Conversion/GDNToGPU/GPUTarget.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;
using namespace mlir::gdn;

namespace {
/// Builds one piece (the pieces' members are protected: a kernel class).
class PieceKernel : public TokenSteps {
public:
  using TokenSteps::TokenSteps;

  void build(StringRef piece) {
    enter();
    if (piece == "tile-io") {
      storeState(loadState());
    } else if (piece == "staging") {
      createStagingBuffers();
      runStagedChunks(SmallVector<Value>(),
                      [&](Value, Value, ValueRange state) {
                        return SmallVector<Value>(state);
                      });
    } else { // token
      storeState(token(tokenLo, Value(), loadState()));
    }
  }
};

struct TestKernelPiecesPass
    : PassWrapper<TestKernelPiecesPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestKernelPiecesPass)

  TestKernelPiecesPass() = default;
  TestKernelPiecesPass(const TestKernelPiecesPass &other)
      : PassWrapper(other) {}

  StringRef getArgument() const final { return "test-gdn-kernel-pieces"; }
  StringRef getDescription() const final {
    return "Build one piece of each gdn.recurrent's GPU kernel alone";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect, gpu::GPUDialect, LLVM::LLVMDialect,
                    memref::MemRefDialect, NVVM::NVVMDialect, scf::SCFDialect,
                    vector::VectorDialect>(); // as convert-gdn-to-gpu's
  }

  Option<std::string> piece{*this, "piece",
                            llvm::cl::desc("tile-io, staging or token"),
                            llvm::cl::init("tile-io")};
  Option<std::string> chip{*this, "chip", llvm::cl::desc("GPU target"),
                           llvm::cl::init("sm_90a")};

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (piece != "tile-io" && piece != "staging" && piece != "token") {
      module.emitError() << "test-gdn-kernel-pieces: unknown piece '" << piece
                         << "' (tile-io, staging, token)";
      return signalPassFailure();
    }
    const GPUTarget *target = lookupGPUTarget(chip);
    if (!target) {
      module.emitError() << "test-gdn-kernel-pieces: unknown chip '" << chip
                         << "'";
      return signalPassFailure();
    }
    OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
    auto kernels = gpu::GPUModuleOp::create(mb, module.getLoc(),
                                            "gdn_test_pieces");
    SymbolTable symbols(kernels);
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    mb.getUnitAttr());
    // Collected first: each kernel holds a clone of its op while it is built.
    SmallVector<RecurrentOp> ops;
    module.walk([&](RecurrentOp op) { ops.push_back(op); });
    for (RecurrentOp op : ops) {
      if (failed(op.requireMemRefForm("test-gdn-kernel-pieces")))
        return signalPassFailure();
      FailureOr<ScheduleAttr> s =
          checkGPUSchedule(op, pinnedSchedule(op), *target);
      if (failed(s))
        return signalPassFailure();
      // The piece is the token loop's staging: the chunked solves stage
      // for their solve's buffers and prefetch, which the piece lacks.
      if (piece == "staging" &&
          (*(*s).getStagedTokens() == 0 || (*s).chunkedSolve())) {
        op.emitOpError() << "test-gdn-kernel-pieces: piece=staging needs a "
                            "staged token loop (staged_tokens > 0, solve = "
                            "token_by_token)";
        return signalPassFailure();
      }
      createRecurrentKernel(
          op, *s,
          [&](Operation *) { return std::make_pair(kernels, &symbols); },
          [&](OpBuilder &b, RecurrentOp kop, gpu::GPUFuncOp kernel) {
            PieceKernel(b, op.getLoc(), kop, *s, kernel).build(piece);
          });
    }
  }
};
} // namespace

namespace mlir::gdn::test {
void registerTestKernelPiecesPass() {
  PassRegistration<TestKernelPiecesPass>();
}
} // namespace mlir::gdn::test
