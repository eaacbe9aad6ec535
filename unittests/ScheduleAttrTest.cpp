//===- ScheduleAttrTest.cpp - #gdn.schedule's generic setters ---------===//
//
// ScheduleAttr::with, zero and pinnedBy work over the generated storage's
// tuple of parameters (GDNDialect.cpp), so a new parameter needs no line in
// them; these tests check that they touch exactly the parameter asked for.
//
//===----------------------------------------------------------------------===//
#include "GDNContextTest.h"

#include "gdn/Dialect/GDN/IR/GDNDialect.h"

#include <string>

using namespace mlir;
using namespace mlir::gdn;

namespace {
struct ScheduleAttrTest : GDNContextTest {};

TEST_F(ScheduleAttrTest, WithSetsOnlyTheParameterItsGetterReads) {
  ScheduleAttr none = ScheduleAttr::get(&context);
  EXPECT_EQ(none.with(&ScheduleAttr::getWarps, 4),
            parseSchedule("#gdn.schedule<warps = 4>"));
  EXPECT_EQ(none.with(&ScheduleAttr::getUnrollTokens, 1),
            parseSchedule("#gdn.schedule<unroll_tokens = 1>"));
  EXPECT_EQ(none.with(&ScheduleAttr::getInputPrefetchDistance, 0),
            parseSchedule("#gdn.schedule<input_prefetch_distance = 0>"));
  EXPECT_EQ(none.with(&ScheduleAttr::getReductions, Reductions::token_pairs),
            parseSchedule("#gdn.schedule<reductions = token_pairs>"));
  ScheduleAttr mma = none.with(&ScheduleAttr::getReductions, Reductions::mma);
  EXPECT_EQ(mma, parseSchedule("#gdn.schedule<reductions = mma>"));
  EXPECT_TRUE(mma.mmaReductions());
  EXPECT_FALSE(mma.tokenPairs());
  EXPECT_EQ(none.with(&ScheduleAttr::getSolve, ChunkSolve::cuda_cores),
            parseSchedule("#gdn.schedule<solve = cuda_cores>"));
  EXPECT_EQ(none.with(&ScheduleAttr::getLaunch, LaunchMode::ordinary),
            parseSchedule("#gdn.schedule<launch = ordinary>"));
  // Over a schedule whose other sizes already hold the value set.
  ScheduleAttr twos =
      parseSchedule("#gdn.schedule<columns_per_lane = 2, lanes_along_v = 2, "
                    "staged_tokens = 2>");
  EXPECT_EQ(
      twos.with(&ScheduleAttr::getWarps, 2),
      parseSchedule("#gdn.schedule<columns_per_lane = 2, lanes_along_v = 2, "
                    "warps = 2, staged_tokens = 2>"));
  // Back to absent, and a value already there (the same attribute).
  EXPECT_EQ(
      twos.with(&ScheduleAttr::getLanesAlongV, std::nullopt),
      parseSchedule("#gdn.schedule<columns_per_lane = 2, staged_tokens = 2>"));
  EXPECT_EQ(twos.with(&ScheduleAttr::getStagedTokens, 2), twos);
}

TEST_F(ScheduleAttrTest, ZeroHasEveryParameterAtZero) {
  ScheduleAttr zero = ScheduleAttr::zero(&context);
  EXPECT_TRUE(zero.isComplete());
  EXPECT_EQ(zero.getColumnsPerLane(), 0);
  EXPECT_EQ(zero.getConsumerRegisters(), 0);
  EXPECT_EQ(zero.getReductions().getValue(), Reductions::in_turn);
  EXPECT_EQ(zero.getSolve().getValue(), ChunkSolve::token_by_token);
  EXPECT_EQ(zero.getLaunch().getValue(), LaunchMode::ordinary);
}

TEST_F(ScheduleAttrTest, PinnedByKeepsWhatThePinsLeaveAbsent) {
  ScheduleAttr own =
      parseSchedule("#gdn.schedule<columns_per_lane = 4, warps = 2, "
                    "reductions = in_turn>");
  ScheduleAttr pins =
      parseSchedule("#gdn.schedule<warps = 1, solve = cuda_cores>");
  EXPECT_EQ(own.pinnedBy(pins),
            parseSchedule("#gdn.schedule<columns_per_lane = 4, warps = 1, "
                          "reductions = in_turn, solve = cuda_cores>"));
  EXPECT_EQ(own.pinnedBy(ScheduleAttr()), own);
  EXPECT_EQ(ScheduleAttr::get(&context).pinnedBy(own), own);
}

TEST_F(ScheduleAttrTest, DerivedValuesOfACompleteSchedule) {
  ScheduleAttr s = ScheduleAttr::zero(&context).pinnedBy(
      parseSchedule("#gdn.schedule<columns_per_lane = 4, lanes_along_v = 2, "
                    "warps = 4, producer_stages = 2, consumer_registers = 232, "
                    "reductions = token_pairs, solve = tensor_cores>"));
  EXPECT_EQ(s.lanesAlongK(), 16);
  EXPECT_EQ(s.warpColumns(), 8);
  EXPECT_EQ(s.blockColumns(), 32);
  EXPECT_EQ(s.producerWarps(), 4);
  EXPECT_EQ(s.threads(), 8 * 32);
  EXPECT_TRUE(s.sideBySide() && s.tokenPairs());
  EXPECT_TRUE(s.chunkedSolve() && s.tensorCores());
}
} // namespace
