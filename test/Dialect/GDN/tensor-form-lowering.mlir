// RUN: not gdn-opt %s -convert-gdn-to-cpu 2>&1 | FileCheck %s --check-prefix=CPU
// RUN: not gdn-opt %s -convert-gdn-to-gpu 2>&1 | FileCheck %s --check-prefix=GPU

// The lowerings consume the memref form only; the tensor form gets a
// diagnostic that says what to run first, not a crash.

// CPU: error: 'gdn.recurrent' op is in tensor form; convert-gdn-to-cpu needs the memref form: run --one-shot-bufferize first
// GPU: error: 'gdn.recurrent' op is in tensor form; convert-gdn-to-gpu needs the memref form: run --one-shot-bufferize first
func.func @tensor_form(%q: tensor<1x1x1x32xf32>, %k: tensor<1x1x1x32xf32>, %v: tensor<1x1x1x8xf32>) -> tensor<1x1x1x8xf32> {
  %init = tensor.empty() : tensor<1x1x1x8xf32>
  %o = gdn.recurrent q(%q : tensor<1x1x1x32xf32>) k(%k : tensor<1x1x1x32xf32>) v(%v : tensor<1x1x1x8xf32>) o(%init : tensor<1x1x1x8xf32>) -> tensor<1x1x1x8xf32>
  return %o : tensor<1x1x1x8xf32>
}
