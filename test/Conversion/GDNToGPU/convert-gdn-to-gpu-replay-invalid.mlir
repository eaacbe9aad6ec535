// RUN: gdn-opt %s -split-input-file -verify-diagnostics -convert-gdn-to-gpu

// convert-gdn-to-gpu takes a replay commit only with the complete
// token-loop schedule gdn-select-schedule attaches.
func.func @unscheduled(%kw: memref<1x2x1x3x128xf32>, %gw: memref<1x2x1x3xf32>, %acc: memref<2xi32>,
                       %s: memref<1x2x1x128x128xf32>) {
  // expected-error @+1 {{cannot be lowered to the GPU without the complete token-loop schedule gdn-select-schedule attaches; run it first}}
  gdn.replay_commit k_window(%kw : memref<1x2x1x3x128xf32>) v_window(%kw : memref<1x2x1x3x128xf32>)
      g_window(%gw : memref<1x2x1x3xf32>) beta_window(%gw : memref<1x2x1x3xf32>)
      accepted(%acc : memref<2xi32>) state(%s : memref<1x2x1x128x128xf32>)
  return
}

// -----

func.func @tensor_form(%kw: tensor<1x2x1x3x128xf32>, %gw: tensor<1x2x1x3xf32>, %acc: tensor<2xi32>,
                       %s: tensor<1x2x1x128x128xf32>) -> tensor<1x2x1x128x128xf32> {
  // expected-error @+1 {{is in tensor form; convert-gdn-to-gpu needs the memref form: run --one-shot-bufferize first}}
  %r = gdn.replay_commit k_window(%kw : tensor<1x2x1x3x128xf32>) v_window(%kw : tensor<1x2x1x3x128xf32>)
      g_window(%gw : tensor<1x2x1x3xf32>) beta_window(%gw : tensor<1x2x1x3xf32>)
      accepted(%acc : tensor<2xi32>) state(%s : tensor<1x2x1x128x128xf32>) -> tensor<1x2x1x128x128xf32>
  return %r : tensor<1x2x1x128x128xf32>
}
