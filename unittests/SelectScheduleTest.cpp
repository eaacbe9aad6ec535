//===- SelectScheduleTest.cpp - the schedule gdn-select-schedule gives ----===//
//
// selectSchedule, which gdn-select-schedule and gdn-run both call: the op's
// own #gdn.schedule under the pass option's pins, the rest the cost
// model's (chooseSchedule).
//
//===----------------------------------------------------------------------===//
#include "GDNContextTest.h"

#include "gdn/Conversion/GDNToGPU/GPUTarget.h"
#include "gdn/Conversion/GDNToGPU/Schedule.h"
#include "gdn/Dialect/GDN/IR/GDNOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include <string>

using namespace mlir;
using namespace mlir::gdn;

namespace {
struct SelectScheduleTest : GDNContextTest {
  /// A fixed batch of 40 bf16 tokens (the cost model: chunk_parallel with
  /// precision = bf16), its op pinning `own` (a #gdn.schedule or "").
  OwningOpRef<ModuleOp> parseRecurrence(const std::string &own) {
    std::string attrs = "qk_l2norm, state_layout = #gdn.layout<vk>";
    if (!own.empty())
      attrs += ", gdn.schedule = " + own;
    std::string text =
        "func.func @f(%q: memref<1x40x1x16xbf16>, %k: memref<1x40x1x16xbf16>, "
        "%v: memref<1x40x1x32xbf16>, %g: memref<1x40x1xf32>, "
        "%beta: memref<1x40x1xf32>, %s: memref<1x1x32x16xf32>, "
        "%o: memref<1x40x1x32xbf16>) {\n"
        "  gdn.recurrent q(%q : memref<1x40x1x16xbf16>) "
        "k(%k : memref<1x40x1x16xbf16>) v(%v : memref<1x40x1x32xbf16>) "
        "g(%g : memref<1x40x1xf32>) beta(%beta : memref<1x40x1xf32>) "
        "initial_state(%s : memref<1x1x32x16xf32>) "
        "final_state(%s : memref<1x1x32x16xf32>) "
        "o(%o : memref<1x40x1x32xbf16>) {" +
        attrs + "}\n  return\n}\n";
    return parseSourceString<ModuleOp>(text, &context);
  }
  RecurrentOp recurrenceOf(ModuleOp module) {
    RecurrentOp found;
    module.walk([&](RecurrentOp op) { found = op; });
    return found;
  }
};

TEST_F(SelectScheduleTest, TheOpsOwnPinsHoldUnderTheOptions) {
  const GPUTarget *target = lookupGPUTarget("sm_90a");
  ASSERT_TRUE(target);
  OwningOpRef<ModuleOp> plain = parseRecurrence("");
  OwningOpRef<ModuleOp> pinned =
      parseRecurrence("#gdn.schedule<precision = tf32x3>");
  ASSERT_TRUE(plain && pinned);
  RecurrentOp free = recurrenceOf(*plain), own = recurrenceOf(*pinned);
  // The cost model alone: bf16 products over several chunks of bf16 q, k.
  EXPECT_TRUE(selectSchedule(free, *target, nullptr).bf16Products());
  // The op's own pin holds where the option pins nothing else...
  ScheduleAttr kept = selectSchedule(own, *target, nullptr);
  EXPECT_TRUE(kept.isComplete());
  EXPECT_FALSE(kept.singleTF32());
  EXPECT_FALSE(
      selectSchedule(own, *target, parseSchedule("#gdn.schedule<warps = 8>"))
          .singleTF32());
  // ...and the option's parameter wins over the op's.
  ScheduleAttr tf32 = selectSchedule(
      own, *target, parseSchedule("#gdn.schedule<precision = tf32>"));
  EXPECT_TRUE(tf32.singleTF32());
  EXPECT_FALSE(tf32.bf16Products());
}
} // namespace
