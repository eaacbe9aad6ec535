//===- GDNContextTest.h - a test fixture with gdn's dialects ----*- C++ -*-===//
//
// A GoogleTest fixture whose MLIRContext has the gdn dialect and every
// dialect its pipelines use loaded, as gdn-opt registers them.
//
//===----------------------------------------------------------------------===//
#ifndef GDN_UNITTESTS_GDNCONTEXTTEST_H
#define GDN_UNITTESTS_GDNCONTEXTTEST_H

#include "gdn/Dialect/GDN/IR/GDNDialect.h"
#include "gdn/InitAllGDN.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

#include <string>

namespace mlir::gdn {

struct GDNContextTest : ::testing::Test {
  GDNContextTest() : context(registry()) { context.loadAllAvailableDialects(); }

  static DialectRegistry registry() {
    DialectRegistry registry;
    registerGDNDialect(registry);
    registerGDNDependentDialects(registry);
    return registry;
  }

  /// The #gdn.schedule of `text`, expected to parse.
  ScheduleAttr parseSchedule(const std::string &text) {
    std::string error;
    ScheduleAttr attr = ScheduleAttr::parseText(text, &context, error);
    EXPECT_TRUE(attr) << error;
    return attr;
  }

  MLIRContext context;
};

} // namespace mlir::gdn

#endif // GDN_UNITTESTS_GDNCONTEXTTEST_H
