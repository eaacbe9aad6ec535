// my-opt.cpp: the host compiler's driver, with gdn in it (docs/Embedding.md).
#include "gdn/InitAllGDN.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  // registerMyDialects(registry);  // the host's own dialects and passes
  mlir::gdn::registerGDNDialect(registry);
  mlir::gdn::registerGDNDependentDialects(registry);
  mlir::gdn::registerGDNPasses();
  mlir::gdn::registerGDNPipelines();
  mlir::gdn::registerGDNPipelineStepPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "my compiler with gdn\n", registry));
}
