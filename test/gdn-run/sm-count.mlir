// The cost model scales with the device's multiprocessors (--sm-count, the C
// API's sm_count; 0 = the chip's largest part, 132 for sm_90a). Qwen3-Next
// decode at N = 8 fills 132 SMs with 8 V columns a lane in one-warp CTAs; on
// twice the SMs it keeps 4 columns a lane in CTAs of 4 warps.
// RUN: gdn-run --emit=ptx %examples/qwen3_next_decode.mlir | FileCheck %s --check-prefix=H200
// RUN: gdn-run --emit=ptx --sm-count=132 %examples/qwen3_next_decode.mlir | FileCheck %s --check-prefix=H200
// RUN: gdn-run --emit=ptx --sm-count=264 %examples/qwen3_next_decode.mlir | FileCheck %s --check-prefix=BIG
// H200: .maxntid 32, 1, 1
// BIG: .maxntid 128, 1, 1
