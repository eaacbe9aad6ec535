// gdn-run compiles every example for the CPU (LLVM JIT) and checks it against
// the fp64 reference: RMS-relative error <= 2e-3 on o, <= 1e-5 on the state.
// RUN: gdn-run --target=cpu --check %examples/qwen3_next_decode.mlir | FileCheck %s
// RUN: gdn-run --target=cpu --check %examples/qwen3_next_mtp.mlir | FileCheck %s
// RUN: gdn-run --target=cpu --check %examples/kv_k128_v64.mlir | FileCheck %s
// RUN: gdn-run --target=cpu --check %examples/qwen35_27b_gqa3.mlir | FileCheck %s
// RUN: gdn-run --target=cpu --check --seed=7 %examples/qwen3_next_decode.mlir | FileCheck %s
// RUN: gdn-run --target=cpu --check %examples/sglang_varlen_extend.mlir | FileCheck %s
// CHECK: target: cpu
// CHECK: check final_state {{.*}} ok
// CHECK: check o {{.*}} ok

// The check can fail: o is compared with the reference rounded to bf16, and
// what remains (fp32 accumulation, ~1e-6) is missed by a tighter tolerance.
// RUN: not gdn-run --target=cpu --check --tol-o=1e-9 %examples/qwen3_next_decode.mlir | FileCheck %s --check-prefix=STRICT
// STRICT: check o {{.*}} FAILED
// A correct bf16 kernel passes a tolerance below bf16's own rounding of o
// (2^-9): the reference is rounded to o's dtype before the comparison.
// RUN: gdn-run --target=cpu --check --tol-o=1e-4 %examples/qwen3_next_decode.mlir | FileCheck %s --check-prefix=ROUNDED
// RUN: gdn-run --target=cpu --check --tol-o=1e-4 --seed=3 %examples/sglang_pool_decode_bf16.mlir | FileCheck %s --check-prefix=ROUNDED
// ROUNDED: check o {{.*}} ok

// --json prints one object for scripts.
// RUN: gdn-run --target=cpu --check --json %examples/kv_k128_v64.mlir | FileCheck %s --check-prefix=JSON
// JSON: {{.*}}"check":"ok"{{.*}}"target":"cpu"
