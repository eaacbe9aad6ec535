"""gdn's kernels inside other frameworks' models, one module a framework.

- `gdn.integrations.transformers`: Hugging Face transformers (tested with
  5.17.0): `enable(model)` switches the Gated DeltaNet layers of Qwen3-Next
  and Qwen3.5 (dense and MoE) and the KDA layers of Kimi Linear to gdn.ops
  (docs/integrations.md).
- `gdn.integrations.sglang`: SGLang 0.5.23: the linear-attention kernel
  backend "gdn" (GDNKernel, KDAKernel; `--linear-attn-decode-backend gdn`),
  an SGLang plugin once gdn-mlir is installed (docs/sglang.md).

Importing this package imports no framework; each module imports its own
only when used, and needs torch (as gdn.ops does).
"""
