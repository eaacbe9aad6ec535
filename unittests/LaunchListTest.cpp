//===- LaunchListTest.cpp - the JIT's list of kernel launches -------------===//
//
// One function may lower to several kernel launches: collectGPULaunches
// must return every gpu.launch_func in program order, with its grid, block,
// dynamic shared memory, kernel operands as argument indices, launch mode
// (the verified `gdn.launch` attribute) and module, and refuse what a
// static list cannot run. The modules here are hand-written lowered IR
// (gpu.binary with PTX text); one test lowers a real gdn.recurrent.
//
//===----------------------------------------------------------------------===//
#include "GDNContextTest.h"
#include "gdn/JIT/Compiler.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

using namespace mlir;
using namespace mlir::gdn;
using namespace mlir::gdn::jit;

namespace {
struct LaunchListTest : GDNContextTest {
  /// `body` (the ops of @f, whose arguments are %a, %b, %c) in a module
  /// with two gpu.binary ops, @first and @second; null when it does not
  /// parse or verify, and `diagnostics` then holds why.
  OwningOpRef<ModuleOp> lowered(const std::string &body) {
    std::string text = moduleText(body);
    diagnostics.clear();
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
      diagnostics += d.str() + "\n";
      return success();
    });
    return parseSourceString<ModuleOp>(text, &context);
  }
  /// The module of lowered(body), as text.
  static std::string moduleText(const std::string &body) {
    return R"(
module attributes {gpu.container_module} {
  gpu.binary @first [#gpu.object<#nvvm.target<chip = "sm_90a">, "PTX of first\00">]
  gpu.binary @second [#gpu.object<#nvvm.target<chip = "sm_90a">, "PTX of second">]
  func.func @f(%a: memref<4xf32>, %b: memref<4xf32>, %c: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c32 = arith.constant 32 : index
    %s256 = arith.constant 256 : i32
)" + body + R"(
    return
  }
})";
  }
  /// collectGPULaunches of @f (3 arguments) with `N` sequences; diagnostics
  /// into `diagnostics`.
  FailureOr<GPUProgram> collect(ModuleOp module, int64_t N = 1) {
    Signature sig;
    sig.function = "f";
    sig.arguments.resize(3);
    sig.N = N;
    diagnostics.clear();
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
      diagnostics += d.str() + "\n";
      return success();
    });
    return collectGPULaunches(module, sig);
  }
  /// compileForGPU of the function in `source` (a real gdn.recurrent) under
  /// the pinned `schedule`; failure when it does not parse or analyze.
  FailureOr<GPUProgram> compileRecurrent(const char *source,
                                         const char *schedule) {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(source, &context);
    if (!module)
      return failure();
    FailureOr<Signature> sig = analyze(*module);
    if (failed(sig))
      return failure();
    GPUOptions options;
    options.schedule = schedule;
    return compileForGPU(*module, *sig, options);
  }
  std::string diagnostics;
};

// Three launches from two modules: the list keeps program order, each
// launch's own dims and operand order, and one module entry per binary.
TEST_F(LaunchListTest, LaunchesInProgramOrder) {
  OwningOpRef<ModuleOp> module = lowered(R"(
    gpu.launch_func @second::@k1 blocks in (%c3, %c1, %c2) threads in (%c32, %c2, %c1) args(%c : memref<4xf32>, %a : memref<4xf32>)
    gpu.launch_func @first::@k2 blocks in (%c2, %c1, %c1) threads in (%c32, %c1, %c1) dynamic_shared_memory_size %s256 args(%b : memref<4xf32>, %c : memref<4xf32>, %a : memref<4xf32>) {gdn.launch = #gdn.launch<programmatic_after_recurrence>}
    gpu.launch_func @second::@k3 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>) {gdn.launch = #gdn.launch<programmatic_at_start>}
)");
  ASSERT_TRUE(module) << diagnostics;
  FailureOr<GPUProgram> program = collect(*module);
  ASSERT_TRUE(succeeded(program)) << diagnostics;
  // Modules in the order of first use; the serializer's NUL dropped.
  ASSERT_EQ(program->modules.size(), 2u);
  EXPECT_EQ(program->modules[0], "PTX of second");
  EXPECT_EQ(program->modules[1], "PTX of first");
  ASSERT_EQ(program->launches.size(), 3u);
  const GPULaunch &l0 = program->launches[0], &l1 = program->launches[1],
                  &l2 = program->launches[2];
  EXPECT_EQ(l0.kernel, "k1");
  EXPECT_EQ(l1.kernel, "k2");
  EXPECT_EQ(l2.kernel, "k3");
  EXPECT_EQ(l0.module, 0u);
  EXPECT_EQ(l1.module, 1u);
  EXPECT_EQ(l2.module, 0u);
  EXPECT_EQ(std::vector<unsigned>(l0.grid, l0.grid + 3),
            (std::vector<unsigned>{3, 1, 2}));
  EXPECT_EQ(std::vector<unsigned>(l0.block, l0.block + 3),
            (std::vector<unsigned>{32, 2, 1}));
  EXPECT_EQ(std::vector<unsigned>(l1.grid, l1.grid + 3),
            (std::vector<unsigned>{2, 1, 1}));
  EXPECT_EQ(std::vector<unsigned>(l1.block, l1.block + 3),
            (std::vector<unsigned>{32, 1, 1}));
  EXPECT_EQ(l0.dynamicSharedMemoryBytes, 0u);
  EXPECT_EQ(l1.dynamicSharedMemoryBytes, 256u);
  EXPECT_EQ(l0.argumentIndices, (std::vector<unsigned>{2, 0}));
  EXPECT_EQ(l1.argumentIndices, (std::vector<unsigned>{1, 2, 0}));
  EXPECT_EQ(l2.argumentIndices, (std::vector<unsigned>{0}));
  EXPECT_EQ(l0.mode, LaunchMode::ordinary);
  EXPECT_EQ(l1.mode, LaunchMode::programmatic_after_recurrence);
  EXPECT_EQ(l2.mode, LaunchMode::programmatic_at_start);
  EXPECT_FALSE(l0.isProgrammatic());
  EXPECT_TRUE(l1.isProgrammatic());
}

// No launch: fine for a varlen op with no sequence (N = 0), an error else.
TEST_F(LaunchListTest, ZeroLaunches) {
  OwningOpRef<ModuleOp> module = lowered("");
  ASSERT_TRUE(module) << diagnostics;
  FailureOr<GPUProgram> none = collect(*module, /*N=*/0);
  ASSERT_TRUE(succeeded(none)) << diagnostics;
  EXPECT_TRUE(none->launches.empty());
  EXPECT_TRUE(none->modules.empty());
  EXPECT_TRUE(failed(collect(*module, /*N=*/1)));
  EXPECT_NE(diagnostics.find("expected a kernel launch in @f"),
            std::string::npos)
      << diagnostics;
}

// What a static list cannot run is a diagnostic, not a crash.
TEST_F(LaunchListTest, RefusesWhatAListCannotRun) {
  struct Case {
    const char *body, *error;
  } cases[] = {
      {R"(
    %n = memref.dim %a, %c1 : memref<4xf32>
    gpu.launch_func @first::@k blocks in (%n, %c1, %c1) threads in (%c32, %c1, %c1) args(%a : memref<4xf32>)
)",
       "launch dimensions must be constants"},
      {R"(
    %m = memref.alloc() : memref<4xf32>
    gpu.launch_func @first::@k blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1) args(%m : memref<4xf32>)
)",
       "must be one of its arguments"},
      {R"(
    %t = arith.constant true
    scf.if %t {
      gpu.launch_func @first::@k blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1) args(%a : memref<4xf32>)
    }
)",
       "must be in its entry block"},
      {R"(
    %big = arith.constant 232449 : i32
    gpu.launch_func @first::@k blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1) dynamic_shared_memory_size %big args(%a : memref<4xf32>)
)",
       "dynamic shared memory"},
      {R"(
    %c0 = arith.constant 0 : index
    gpu.launch_func @first::@k blocks in (%c0, %c1, %c1) threads in (%c32, %c1, %c1) args(%a : memref<4xf32>)
)",
       "of at least 1"},
      {R"(
    gpu.launch_func @first::@k clusters in (%c2, %c1, %c1) blocks in (%c2, %c1, %c1) threads in (%c32, %c1, %c1) args(%a : memref<4xf32>)
)",
       "cluster size or async dependencies"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.error);
    OwningOpRef<ModuleOp> module = lowered(c.body);
    ASSERT_TRUE(module) << diagnostics;
    EXPECT_TRUE(failed(collect(*module)));
    EXPECT_NE(diagnostics.find(c.error), std::string::npos) << diagnostics;
  }
}

// Workspaces: a gpu.alloc of a static shape passed to launches is one
// workspace (once however many launches take it), in order of first use,
// its parameter index past the function's arguments; any other value is
// refused.
TEST_F(LaunchListTest, WorkspacesFollowTheArguments) {
  OwningOpRef<ModuleOp> module = lowered(R"(
    %w = gpu.alloc () : memref<8xf32>
    %x = gpu.alloc () : memref<3xi8>
    gpu.launch_func @first::@k1 blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1) args(%a : memref<4xf32>, %w : memref<8xf32>)
    gpu.launch_func @first::@k2 blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1) args(%x : memref<3xi8>, %w : memref<8xf32>, %c : memref<4xf32>)
    gpu.dealloc %w : memref<8xf32>
    gpu.dealloc %x : memref<3xi8>
)");
  ASSERT_TRUE(module) << diagnostics;
  FailureOr<GPUProgram> program = collect(*module);
  ASSERT_TRUE(succeeded(program)) << diagnostics;
  EXPECT_EQ(program->workspaceBytes, (std::vector<int64_t>{32, 3}));
  ASSERT_EQ(program->launches.size(), 2u);
  EXPECT_EQ(program->launches[0].argumentIndices,
            (std::vector<unsigned>{0, 3}));
  EXPECT_EQ(program->launches[1].argumentIndices,
            (std::vector<unsigned>{4, 3, 2}));

  OwningOpRef<ModuleOp> dynamic = lowered(R"(
    %w = gpu.alloc (%c3) : memref<?xf32>
    gpu.launch_func @first::@k1 blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1) args(%w : memref<?xf32>)
)");
  ASSERT_TRUE(dynamic) << diagnostics;
  EXPECT_TRUE(failed(collect(*dynamic)));
  EXPECT_NE(diagnostics.find("gpu.alloc of a static shape"), std::string::npos)
      << diagnostics;
}

// solve = chunk_parallel lowers to two launches over one workspace: the
// chunk solves over (chunks, H, N) (HV = 2 H: a CTA solves both value heads
// of its key head, the shared Gram), then the scan over (V blocks, HV, N).
TEST_F(LaunchListTest, ChunkParallelIsTwoLaunchesAndAWorkspace) {
  FailureOr<GPUProgram> program = compileRecurrent(
      R"(
func.func @f(%q: memref<2x40x1x16xbf16>, %k: memref<2x40x1x16xbf16>, %v: memref<2x40x2x32xbf16>, %g: memref<2x40x2xf32>, %beta: memref<2x40x2xf32>, %s: memref<2x2x32x16xf32>, %o: memref<2x40x2x32xbf16>) {
  gdn.recurrent q(%q : memref<2x40x1x16xbf16>) k(%k : memref<2x40x1x16xbf16>) v(%v : memref<2x40x2x32xbf16>) g(%g : memref<2x40x2xf32>) beta(%beta : memref<2x40x2xf32>) initial_state(%s : memref<2x2x32x16xf32>) final_state(%s : memref<2x2x32x16xf32>) o(%o : memref<2x40x2x32xbf16>) {state_layout = #gdn.layout<vk>}
  return
})",
      "#gdn.schedule<solve = chunk_parallel, staged_tokens = 16>");
  ASSERT_TRUE(succeeded(program));
  ASSERT_EQ(program->launches.size(), 2u);
  // N * HV * ceil(40 / 16) records of 2 * 16 * 20 + 3 * 16 + 4 floats.
  EXPECT_EQ(program->workspaceBytes,
            (std::vector<int64_t>{2 * 2 * 3 * (640 + 48 + 4) * 4}));
  const GPULaunch &solves = program->launches[0], &scan = program->launches[1];
  EXPECT_EQ(std::vector<unsigned>(solves.grid, solves.grid + 3),
            (std::vector<unsigned>{3, 1, 2}));
  EXPECT_EQ(scan.grid[1], 2u);
  EXPECT_EQ(scan.grid[2], 2u);
  std::vector<unsigned> operands = {0, 1, 2, 3, 4, 5, 5, 6, 7};
  EXPECT_EQ(solves.argumentIndices, operands);
  EXPECT_EQ(scan.argumentIndices, operands);
}

// 64-token chunks at K = V = 128 stage more than the 48 KiB a kernel may
// declare statically: both launches request their buffers as dynamic
// shared memory, 16-byte aligned one after another: q and k [64, 136] bf16,
// v [64, V block] bf16, g and beta [64] f32, the Gram [2, 64, 64], the
// token decays [3, 64], Tm and M [2, 64, 68] and the factors [5, 64], f32.
TEST_F(LaunchListTest, LargeChunksRequestDynamicSharedMemory) {
  FailureOr<GPUProgram> program = compileRecurrent(
      R"(
func.func @f(%q: memref<1x130x1x128xbf16>, %k: memref<1x130x1x128xbf16>, %v: memref<1x130x1x128xbf16>, %g: memref<1x130x1xf32>, %beta: memref<1x130x1xf32>, %s: memref<1x1x128x128xf32>, %o: memref<1x130x1x128xbf16>) {
  gdn.recurrent q(%q : memref<1x130x1x128xbf16>) k(%k : memref<1x130x1x128xbf16>) v(%v : memref<1x130x1x128xbf16>) g(%g : memref<1x130x1xf32>) beta(%beta : memref<1x130x1xf32>) initial_state(%s : memref<1x1x128x128xf32>) final_state(%s : memref<1x1x128x128xf32>) o(%o : memref<1x130x1x128xbf16>) {state_layout = #gdn.layout<vk>}
  return
})",
      "#gdn.schedule<solve = chunk_parallel, staged_tokens = 64, warps = 8>");
  ASSERT_TRUE(succeeded(program));
  ASSERT_EQ(program->launches.size(), 2u);
  auto bytes = [](unsigned vColumns) {
    return 2 * 64 * 136 * 2 + 64 * vColumns * 2 + 2 * 64 * 4 +
           (2 * 64 * 64 + 3 * 64 + 2 * 64 * 68 + 5 * 64) * 4;
  };
  // The first launch on 4 warps (64 V columns), the scan on 8 (128).
  EXPECT_EQ(program->launches[0].dynamicSharedMemoryBytes, bytes(64));
  EXPECT_EQ(program->launches[1].dynamicSharedMemoryBytes, bytes(128));
  EXPECT_GT(bytes(64), 48u * 1024);
}

// A real gdn.recurrent through gdn-lower-to-ptx: one launch, its mode from
// the schedule's `launch` (the conversion's gdn.launch attribute), its
// operands the function's arguments in order.
TEST_F(LaunchListTest, RecurrentLowersToOneLaunchWithItsMode) {
  const char *source = R"(
func.func @f(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>)
  return
})";
  for (auto [pin, mode] :
       {std::pair{"", LaunchMode::ordinary},
        std::pair{"#gdn.schedule<launch = programmatic_at_start>",
                  LaunchMode::programmatic_at_start}}) {
    SCOPED_TRACE(pin);
    FailureOr<GPUProgram> program = compileRecurrent(source, pin);
    ASSERT_TRUE(succeeded(program));
    ASSERT_EQ(program->launches.size(), 1u);
    ASSERT_EQ(program->modules.size(), 1u);
    EXPECT_NE(program->modules[0].find(".entry " + program->launches[0].kernel),
              std::string::npos);
    EXPECT_EQ(program->launches[0].argumentIndices,
              (std::vector<unsigned>{0, 1, 2, 3}));
    EXPECT_EQ(program->launches[0].mode, mode);
  }
}
// A host's context without the gdn dialect: a launch without gdn.launch is
// ordinary, not a crash.
TEST(LaunchListWithoutGDN, OrdinaryLaunch) {
  DialectRegistry registry;
  registry.insert<arith::ArithDialect, func::FuncDialect, gpu::GPUDialect,
                  memref::MemRefDialect, NVVM::NVVMDialect>();
  MLIRContext context(registry);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(
      LaunchListTest::moduleText(
          "    gpu.launch_func @first::@k blocks in (%c1, %c1, %c1) threads "
          "in (%c32, %c1, %c1) args(%a : memref<4xf32>)"),
      &context);
  ASSERT_TRUE(module);
  ASSERT_EQ(context.getLoadedDialect<GDNDialect>(), nullptr);
  Signature sig;
  sig.function = "f";
  sig.arguments.resize(3);
  sig.N = 1;
  FailureOr<GPUProgram> program = collectGPULaunches(*module, sig);
  ASSERT_TRUE(succeeded(program));
  ASSERT_EQ(program->launches.size(), 1u);
  EXPECT_EQ(program->launches[0].mode, LaunchMode::ordinary);
}

} // namespace
