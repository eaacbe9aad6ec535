//===- gdn-opt.cpp - the gdn optimizer driver -----------------------------===//
#include "gdn/InitAllGDN.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::gdn::registerGDNDialect(registry);
  mlir::gdn::registerGDNDependentDialects(registry);
  mlir::gdn::registerGDNPasses();
  mlir::gdn::registerGDNPipelines();
  mlir::gdn::registerGDNPipelineStepPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "gdn optimizer driver\n", registry));
}
