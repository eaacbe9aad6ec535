// The tensor form a host emits (docs/Embedding.md), small: the state is
// updated in place in the caller's buffer.
//   my-opt layer.mlir --one-shot-bufferize="bufferize-function-boundaries \
//     function-boundary-type-conversion=identity-layout-map" --gdn-lower-to-cpu
func.func @layer(%q: tensor<2x1x2x32xf32>, %k: tensor<2x1x2x32xf32>,
                 %v: tensor<2x1x4x8xf32>, %s: tensor<2x4x8x32xf32>)
    -> (tensor<2x4x8x32xf32>, tensor<2x1x4x8xf32>) {
  %init = tensor.empty() : tensor<2x1x4x8xf32>
  %new_s, %o = gdn.recurrent q(%q : tensor<2x1x2x32xf32>)
      k(%k : tensor<2x1x2x32xf32>) v(%v : tensor<2x1x4x8xf32>)
      initial_state(%s : tensor<2x4x8x32xf32>)
      final_state(%s : tensor<2x4x8x32xf32>)
      o(%init : tensor<2x1x4x8xf32>) {qk_l2norm, state_layout = #gdn.layout<vk>}
      -> tensor<2x4x8x32xf32>, tensor<2x1x4x8xf32>
  return %new_s, %o : tensor<2x4x8x32xf32>, tensor<2x1x4x8xf32>
}
