//===- GDNAttrs.td - gdn dialect attributes ----------------*- tablegen -*-===//
#ifndef GDN_ATTRS_TD
#define GDN_ATTRS_TD

include "gdn/Dialect/GDN/IR/GDNDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def GDN_StateLayout : I32EnumAttr<"StateLayout",
    "storage order of one head's recurrent state", [
      I32EnumAttrCase<"kv", 0>,
      I32EnumAttrCase<"vk", 1>
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::gdn";
  let description = [{
    `kv`: a head's state is stored [K, V] with V contiguous (FLA's default
    `[N, HV, K, V]`). `vk`: stored [V, K] with K contiguous (SGLang/vLLM pools
    `[slots, HV, V, K]`, FlashInfer "pretranspose").
  }];
}

def GDN_StateLayoutAttr : EnumAttr<GDN_Dialect, GDN_StateLayout, "layout"> {
  let assemblyFormat = "`<` $value `>`";
}

#endif // GDN_ATTRS_TD
