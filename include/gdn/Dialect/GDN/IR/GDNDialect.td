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
  // The generated printer and parser, but for #gdn.launch, which is bare
  // inside #gdn.schedule and has brackets standalone (GDNDialect.cpp).
  let useDefaultAttributePrinterParser = 0;
  // `gdn.schedule` on an op must be a #gdn.schedule, `gdn.launch` a
  // #gdn.launch on a gpu.launch_func (GDNAttrs.cpp).
  let hasOperationAttrVerify = 1;
  // Discardable attributes with generated helpers
  // (GDNDialect::get<Name>AttrHelper()):
  //   gdn.launch  on a gpu.launch_func that convert-gdn-to-gpu creates: how
  //               the kernel must be launched after the previous kernel of
  //               its stream (GDN_LaunchMode), written from the schedule's
  //               `launch` parameter; absent: `ordinary`. It names the point
  //               the kernel was built for (`programmatic_at_start` or
  //               `programmatic_after_recurrence`), never the pin
  //               `programmatic`. Read by the JIT (GPULaunch::mode); any
  //               mode but `ordinary` is a launch with programmatic stream
  //               serialization.
  let discardableAttrs = (ins "::mlir::gdn::LaunchModeAttr":$launch);
  let extraClassDeclaration = [{
    /// The discardable attribute of gdn.recurrent that pins its GPU
    /// schedule (a #gdn.schedule).
    static constexpr ::llvm::StringLiteral kScheduleAttrName = "gdn.schedule";

    ::mlir::Attribute parseAttribute(::mlir::DialectAsmParser &parser,
                                     ::mlir::Type type) const override;
    void printAttribute(::mlir::Attribute attr,
                        ::mlir::DialectAsmPrinter &printer) const override;
  }];
}

#endif // GDN_DIALECT_TD
