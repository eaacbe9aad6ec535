// REQUIRES: cuda
// On a machine with an NVIDIA GPU (GDN_TEST_CUDA=1 when running lit): every
// example runs on the GPU and matches the fp64 reference. CPU-only CI reports
// this test UNSUPPORTED; scripts/h200-check.sh runs the same on the H200.
// RUN: gdn-run --target=cuda --check %examples/qwen3_next_decode.mlir | FileCheck %s
// RUN: gdn-run --target=cuda --check %examples/qwen3_next_mtp.mlir | FileCheck %s
// RUN: gdn-run --target=cuda --check %examples/kv_k128_v64.mlir | FileCheck %s
// RUN: gdn-run --target=cuda --check %examples/qwen35_27b_gqa3.mlir | FileCheck %s
// RUN: gdn-run --target=cuda --check %examples/kimi_linear_kda_decode.mlir | FileCheck %s
// RUN: gdn-run --target=cuda --check %examples/kimi_linear_kda_verify_t4.mlir | FileCheck %s --check-prefix=VERIFY
// CHECK: target: cuda
// CHECK: check final_state {{.*}} ok
// CHECK: check o {{.*}} ok
// VERIFY: target: cuda
// VERIFY: check intermediate {{.*}} ok
// VERIFY: check o {{.*}} ok
