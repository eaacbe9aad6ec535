//===- GDNDialect.td - gdn dialect definition --------------*- tablegen -*-===//
#ifndef GDN_DIALECT_TD
#define GDN_DIALECT_TD

include "mlir/IR/OpBase.td"

def GDN_Dialect : Dialect {
  let name = "gdn";
  let summary = "Gated Delta Rule (GDN) linear-attention recurrences";
  let description = [{
    The `gdn` dialect models the Gated Delta Rule recurrence used by the linear
    attention layers of Qwen3-Next, Qwen3.5 and Kimi Linear as one op,
    `gdn.recurrent`, whose operands and attributes state the whole contract of
    the hand-written kernels it replaces (FLA `fused_recurrent_gated_delta_rule`,
    SGLang `fused_sigmoid_gating_delta_rule_update`, FlashInfer `gdn_decode`).
    Passes lower it to GPU kernels (`convert-gdn-to-gpu`, then NVVM and PTX) or
    to plain loops for the CPU (`convert-gdn-to-cpu`).
  }];
  let cppNamespace = "::mlir::gdn";
  let useDefaultAttributePrinterParser = 1;
  // `gdn.schedule` on an op must be a #gdn.schedule (GDNAttrs.cpp).
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    /// The discardable attribute of gdn.recurrent that pins its GPU
    /// schedule (a #gdn.schedule).
    static constexpr ::llvm::StringLiteral kScheduleAttrName = "gdn.schedule";
  }];
}

#endif // GDN_DIALECT_TD
