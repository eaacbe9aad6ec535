// UNSUPPORTED: cuda
// Without a CUDA driver: --target=cuda is a clear error, --target=auto falls
// back to the CPU and says why.
// RUN: not gdn-run --target=cuda %examples/kv_k128_v64.mlir 2>&1 | FileCheck %s --check-prefix=CUDA
// RUN: gdn-run --check %examples/kv_k128_v64.mlir 2>&1 | FileCheck %s --check-prefix=AUTO
// CUDA: gdn-run: error: no CUDA driver: libcuda.so.1 could not be loaded
// AUTO: gdn-run: no GPU (no CUDA driver: {{.*}}); running on the CPU
// AUTO: target: cpu
