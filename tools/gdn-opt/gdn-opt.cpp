//===- gdn-opt.cpp - the gdn optimizer driver -----------------------------===//
//
// mlir-opt with the gdn dialect, passes and pipelines registered. Unlike
// MlirOptMain's file-level driver, it refuses input nested too deeply for
// the parser's stack (gdn/Support/ParseLimits.h), and a failed write of the
// output (a full disk, /dev/full) is a diagnostic and exit code 1, with no
// partial output file left behind.
//
//===----------------------------------------------------------------------===//
#include "gdn/InitAllGDN.h"
#include "gdn/Support/ParseLimits.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

#ifdef GDN_INCLUDE_TESTS
namespace mlir::gdn::test {
void registerTestKernelPiecesPass();
} // namespace mlir::gdn::test
#endif

/// Flushes `os` and reports a failed write; clears the error so that the
/// stream's destructor does not abort the process.
static bool writeFailed(llvm::raw_fd_ostream &os, llvm::StringRef name) {
  os.flush();
  if (!os.has_error())
    return false;
  llvm::errs() << "gdn-opt: error: cannot write '" << name
               << "': " << os.error().message() << "\n";
  os.clear_error();
  return true;
}

int main(int argc, char **argv) {
  DialectRegistry registry;
  gdn::registerGDNDialect(registry);
  gdn::registerGDNDependentDialects(registry);
  gdn::registerGDNPasses();
  gdn::registerGDNPipelines();
  gdn::registerGDNPipelineStepPasses();
#ifdef GDN_INCLUDE_TESTS
  gdn::test::registerTestKernelPiecesPass();
#endif
  auto [inputFilename, outputFilename] =
      registerAndParseCLIOptions(argc, argv, "gdn optimizer driver\n", registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  // Listings print nothing of the user's: upstream's driver does them.
  if (config.shouldShowDialects() || config.shouldListPasses())
    return asMainReturnCode(
        MlirOptMain(argc, argv, inputFilename, outputFilename, registry));

  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> file =
      openInputFile(inputFilename, &errorMessage);
  if (!file) {
    llvm::errs() << errorMessage << "\n";
    return 1;
  }
  if (std::optional<size_t> at = gdn::findDeepNesting(file->getBuffer())) {
    llvm::SourceMgr sourceMgr;
    const char *ptr = file->getBufferStart() + *at;
    sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
    sourceMgr.PrintMessage(llvm::SMLoc::getFromPointer(ptr),
                           llvm::SourceMgr::DK_Error,
                           gdn::deepNestingMessage());
    return 1;
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    llvm::errs() << errorMessage << "\n";
    return 1;
  }
  // A pass that crashes or that LLVM aborts (the NVPTX back end's fatal
  // error on IR it cannot select, an LLVM pipeline it cannot run) ends in
  // an error and exit 1, not a signal; MLIR's crash reproducer names the
  // pass and keeps its input.
  llvm::CrashRecoveryContext::Enable();
  llvm::CrashRecoveryContext recovery;
  LogicalResult result = failure();
  if (!recovery.RunSafely([&] {
        result = MlirOptMain(output->os(), std::move(file), registry, config);
      })) {
    llvm::errs() << "gdn-opt: error: a pass crashed or LLVM aborted (above); "
                    "--mlir-pass-pipeline-crash-reproducer=FILE names the "
                    "pass and writes a reproducer\n";
    return 1;
  }
  if (failed(result))
    return writeFailed(output->os(), outputFilename), 1;
  if (writeFailed(output->os(), outputFilename) ||
      writeFailed(llvm::outs(), "<stdout>"))
    return 1; // the output file is removed: it was not kept
  output->keep();
  return 0;
}
