//===- RecurrentBuilderTest.cpp - gdnRecurrentDesc to a gdn.recurrent -----===//
//
// gdnCompileDesc builds the described op with OpBuilder (lib/CAPI/
// RecurrentBuilder.cpp). For descriptions that together use every field,
// the built function must print exactly as the MLIR text the C API wrote
// and parsed before it built ops: the same arguments in the order of
// gdn-c/GDN.h, the same operands, attributes and schedule. (The texts
// below are that text path's output, compared against the builder on the
// unit and Python test suites' 280 distinct descriptions before the text
// path was deleted.) A description out of range is an error naming the
// field, never a crash.
//
//===----------------------------------------------------------------------===//
#include "RecurrentBuilder.h"

#include "GDNContextTest.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include "gtest/gtest.h"

#include <string>

using namespace mlir;
using namespace mlir::gdn;

namespace {
struct RecurrentBuilderTest : GDNContextTest {
  static gdnRecurrentDesc desc() {
    gdnRecurrentDesc d;
    gdnRecurrentDescInit(&d);
    d.N = 1, d.T = 1, d.H = 1, d.HV = 1, d.K = 32, d.V = 8;
    return d;
  }
  /// The printed module of `d` (verified), or "error: " and the builder's
  /// error.
  std::string build(const gdnRecurrentDesc &d, const char *schedule = "") {
    ScheduleAttr attr;
    std::string error;
    if (*schedule) {
      attr = ScheduleAttr::parseText(schedule, &context, error);
      if (!attr)
        return "schedule: " + error;
    }
    OwningOpRef<ModuleOp> module =
        buildRecurrentModule(d, attr, &context, error);
    if (!module)
      return "error: " + error;
    EXPECT_TRUE(succeeded(verify(*module)));
    std::string text;
    llvm::raw_string_ostream(text) << *module;
    return text;
  }
};

TEST_F(RecurrentBuilderTest, Minimal) {
  EXPECT_EQ(build(desc()), R"(module {
  func.func @gdn_recurrent(%arg0: memref<1x1x1x32xf32>, %arg1: memref<1x1x1x32xf32>, %arg2: memref<1x1x1x8xf32>, %arg3: memref<1x1x1x8xf32>) {
    gdn.recurrent q(%arg0 : memref<1x1x1x32xf32>) k(%arg1 : memref<1x1x1x32xf32>) v(%arg2 : memref<1x1x1x8xf32>) o(%arg3 : memref<1x1x1x8xf32>)
    return
  }
})");
}

// SGLang decode on a bf16 pool: fused gating, beta logits, state in place,
// int32 slots, scale, L2 norm, vk, a pinned schedule.
TEST_F(RecurrentBuilderTest, PoolDecode) {
  gdnRecurrentDesc d = desc();
  d.N = 4, d.H = 2, d.HV = 4, d.K = 64, d.V = 32;
  d.input_dtype = GDN_DTYPE_BF16, d.gate_dtype = GDN_DTYPE_BF16,
  d.beta_dtype = GDN_DTYPE_BF16, d.state_dtype = GDN_DTYPE_BF16;
  d.decay = GDN_DECAY_FUSED_GATING, d.beta = GDN_BETA_LOGITS;
  d.qk_l2norm = 1, d.has_scale = 1, d.scale = 0.125f;
  d.layout = GDN_LAYOUT_VK;
  d.has_initial_state = d.has_final_state = d.state_in_place = 1;
  d.num_slots = 16, d.state_index_bits = 32;
  EXPECT_EQ(build(d, "#gdn.schedule<columns_per_lane = 2, warps = 4>"),
            R"(module {
  func.func @gdn_recurrent(%arg0: memref<4x1x2x64xbf16>, %arg1: memref<4x1x2x64xbf16>, %arg2: memref<4x1x4x32xbf16>, %arg3: memref<4x1x4xbf16>, %arg4: memref<4xf32>, %arg5: memref<4xf32>, %arg6: memref<4x1x4xbf16>, %arg7: memref<4xi32>, %arg8: memref<16x4x32x64xbf16>, %arg9: memref<4x1x4x32xbf16>) {
    gdn.recurrent q(%arg0 : memref<4x1x2x64xbf16>) k(%arg1 : memref<4x1x2x64xbf16>) v(%arg2 : memref<4x1x4x32xbf16>) a(%arg3 : memref<4x1x4xbf16>) A_log(%arg4 : memref<4xf32>) dt_bias(%arg5 : memref<4xf32>) b(%arg6 : memref<4x1x4xbf16>) state_indices(%arg7 : memref<4xi32>) initial_state(%arg8 : memref<16x4x32x64xbf16>) final_state(%arg8 : memref<16x4x32x64xbf16>) o(%arg9 : memref<4x1x4x32xbf16>) {gdn.schedule = #gdn.schedule<columns_per_lane = 2, warps = 4>, qk_l2norm, scale = 1.250000e-01 : f32, state_layout = #gdn.layout<vk>}
    return
  }
})");
}

// KDA varlen: per-key log-space decay, per-channel beta, 64-bit
// cu_seqlens, separate initial and final states, a negative scale.
TEST_F(RecurrentBuilderTest, KDAVarlen) {
  gdnRecurrentDesc d = desc();
  d.N = 3, d.T = 7, d.H = 2, d.HV = 2, d.K = 32, d.V = 16;
  d.decay = GDN_DECAY_LOG_SPACE, d.per_key_decay = 1;
  d.beta = GDN_BETA_GIVEN, d.per_channel_beta = 1, d.beta_dtype = GDN_DTYPE_F16;
  d.cu_seqlens_bits = 64;
  d.has_initial_state = d.has_final_state = 1;
  d.has_scale = 1, d.scale = -0.3f;
  EXPECT_EQ(build(d), R"(module {
  func.func @gdn_recurrent(%arg0: memref<1x7x2x32xf32>, %arg1: memref<1x7x2x32xf32>, %arg2: memref<1x7x2x16xf32>, %arg3: memref<1x7x2x32xf32>, %arg4: memref<1x7x2x16xf16>, %arg5: memref<4xi64>, %arg6: memref<3x2x32x16xf32>, %arg7: memref<3x2x32x16xf32>, %arg8: memref<1x7x2x16xf32>) {
    gdn.recurrent q(%arg0 : memref<1x7x2x32xf32>) k(%arg1 : memref<1x7x2x32xf32>) v(%arg2 : memref<1x7x2x16xf32>) g(%arg3 : memref<1x7x2x32xf32>) beta(%arg4 : memref<1x7x2x16xf16>) cu_seqlens(%arg5 : memref<4xi64>) initial_state(%arg6 : memref<3x2x32x16xf32>) final_state(%arg7 : memref<3x2x32x16xf32>) o(%arg8 : memref<1x7x2x16xf32>) {scale = -3.000000e-01 : f32}
    return
  }
})");
}

// Tree verify: intermediate states with row indices and parents, views of
// a fused projection, pitched pool slots and rows, allow_neg_eigval.
TEST_F(RecurrentBuilderTest, TreeVerifyOnViews) {
  gdnRecurrentDesc d = desc();
  d.N = 2, d.T = 4, d.H = 1, d.HV = 2, d.K = 32, d.V = 32;
  d.decay = GDN_DECAY_FUSED_GATING, d.per_key_decay = 1;
  d.beta = GDN_BETA_LOGITS, d.allow_neg_eigval = 1;
  d.layout = GDN_LAYOUT_VK;
  d.has_initial_state = d.has_final_state = d.state_in_place = 1;
  d.num_slots = 8, d.state_index_bits = 64, d.state_slot_stride = 4096;
  d.intermediate_rows = 3, d.intermediate_steps = 4;
  d.intermediate_index_bits = 32, d.parent_index_bits = 64;
  d.intermediate_dtype = GDN_DTYPE_BF16, d.intermediate_row_stride = 16384;
  int64_t token = 2 * 32 + 2 * 32 + 2 * 32; // q, k, v of one token
  for (int64_t *s : {d.q_strides, d.k_strides, d.v_strides}) {
    s[0] = 4 * token, s[1] = token, s[2] = 32, s[3] = 1;
  }
  EXPECT_EQ(build(d), R"(module {
  func.func @gdn_recurrent(%arg0: memref<2x4x1x32xf32, strided<[768, 192, 32, 1]>>, %arg1: memref<2x4x1x32xf32, strided<[768, 192, 32, 1]>>, %arg2: memref<2x4x2x32xf32, strided<[768, 192, 32, 1]>>, %arg3: memref<2x4x2x32xf32>, %arg4: memref<2xf32>, %arg5: memref<64xf32>, %arg6: memref<2x4x2xf32>, %arg7: memref<2xi64>, %arg8: memref<2xi32>, %arg9: memref<2x4xi64>, %arg10: memref<8x2x32x32xf32, strided<[4096, 1024, 32, 1]>>, %arg11: memref<3x4x2x32x32xbf16, strided<[16384, 2048, 1024, 32, 1]>>, %arg12: memref<2x4x2x32xf32>) {
    gdn.recurrent q(%arg0 : memref<2x4x1x32xf32, strided<[768, 192, 32, 1]>>) k(%arg1 : memref<2x4x1x32xf32, strided<[768, 192, 32, 1]>>) v(%arg2 : memref<2x4x2x32xf32, strided<[768, 192, 32, 1]>>) a(%arg3 : memref<2x4x2x32xf32>) A_log(%arg4 : memref<2xf32>) dt_bias(%arg5 : memref<64xf32>) b(%arg6 : memref<2x4x2xf32>) state_indices(%arg7 : memref<2xi64>) intermediate_state_indices(%arg8 : memref<2xi32>) retrieve_parent_token(%arg9 : memref<2x4xi64>) initial_state(%arg10 : memref<8x2x32x32xf32, strided<[4096, 1024, 32, 1]>>) intermediate_states(%arg11 : memref<3x4x2x32x32xbf16, strided<[16384, 2048, 1024, 32, 1]>>) final_state(%arg10 : memref<8x2x32x32xf32, strided<[4096, 1024, 32, 1]>>) o(%arg12 : memref<2x4x2x32xf32>) {allow_neg_eigval, state_layout = #gdn.layout<vk>}
    return
  }
})");
}

TEST_F(RecurrentBuilderTest, OutOfRangeIsAnErrorNamingTheField) {
  gdnRecurrentDesc d = desc();
  d.HV = 0;
  EXPECT_EQ(build(d), "error: HV must be >= 1, got 0");
  d = desc();
  d.input_dtype = GDN_DTYPE_I32;
  EXPECT_EQ(build(d), "error: unknown dtype in gdnRecurrentDesc");
  d = desc();
  d.num_slots = 4; // no state
  EXPECT_EQ(build(d), "error: a pool (num_slots > 0) needs a state and "
                      "state_index_bits 32 or 64");
  d = desc();
  d.parent_index_bits = 32; // no intermediate_rows
  EXPECT_EQ(build(d), "error: parent_index_bits must be 0, or 32 or 64 with "
                      "intermediate_rows > 0");
  d = desc();
  d.q_strides[0] = int64_t(1) << 62, d.q_strides[3] = 1;
  d.N = 2;
  EXPECT_NE(build(d).find("view span more than 2^40 bytes"), std::string::npos);
  d = desc();
  d.K = int64_t(1) << 40;
  EXPECT_NE(build(d).find("takes more than 2^40 bytes"), std::string::npos);
}
} // namespace
