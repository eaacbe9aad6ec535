// RUN: gdn-opt %s -convert-gdn-to-cpu | FileCheck %s
// RUN: gdn-opt %s -gdn-lower-to-cpu | FileCheck %s --check-prefix=LLVM
// Stochastic rounding of a quantized state on the CPU (docs/math.md §6):
// each element times its row's inverse scale is moved onto the e4m3 grid
// with random bits hash32(bits(y) ^ hash32(position)), position = the
// element's row-major index in the pool [6, 4, 16, 32], before the e4m3
// conversion.

// CHECK-LABEL: func.func @pool
// The element's position: ((slot * 4 + hv) * 16 + v) * 32 + k, as i32.
// CHECK: %[[P0:.*]] = arith.muli %{{.*}}, %c4{{.*}} : index
// CHECK: %[[P1:.*]] = arith.addi %[[P0]], %{{.*}} : index
// CHECK: %[[P2:.*]] = arith.muli %[[P1]], %c16{{.*}} : index
// CHECK: %[[P3:.*]] = arith.addi %[[P2]], %{{.*}} : index
// CHECK: %[[P4:.*]] = arith.muli %[[P3]], %c32{{.*}} : index
// CHECK: %[[P5:.*]] = arith.addi %[[P4]], %{{.*}} : index
// CHECK: %[[POS:.*]] = arith.index_cast %[[P5]] : index to i32
// hash32 (lowbias32) of the position, then of the value's bits xor it:
// CHECK: arith.shrui %[[POS]]
// CHECK: arith.muli %{{.*}}, %c2146121005_i32{{.*}} : i32
// CHECK: arith.muli %{{.*}}, %c-2073254261_i32{{.*}} : i32
// CHECK: arith.xori %{{.*}}, %{{.*}} : i32
// CHECK: arith.muli %{{.*}}, %c2146121005_i32{{.*}} : i32
// CHECK: arith.muli %{{.*}}, %c-2073254261_i32{{.*}} : i32
// Normal: 20 random bits added below the kept mantissa, then cleared.
// CHECK: arith.shrui %{{.*}}, %c12_i32{{.*}} : i32
// CHECK: arith.addi
// CHECK: arith.andi %{{.*}}, %c-1048576_i32{{.*}} : i32
// Subnormal: floor(a 2^9 + u) 2^-9.
// CHECK: arith.fptoui %{{.*}} : f32 to i32
// Then the e4m3 conversion and the store.
// CHECK: %[[E4M3:.*]] = arith.bitcast %{{.*}} : i8 to f8E4M3FN
// CHECK: memref.store %[[E4M3]], %arg4[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<6x4x16x32xf8E4M3FN>
// LLVM-LABEL: llvm.func @pool
// LLVM: llvm.mul %{{.*}}, %{{.*}} : i32
func.func @pool(%q: memref<3x1x2x32xbf16>, %v: memref<3x1x4x16xbf16>, %g: memref<3x1x4xf32>,
                %idx: memref<3xi32>, %s: memref<6x4x16x32xf8E4M3FN>, %sc: memref<6x4x16xf32>,
                %o: memref<3x1x4x16xbf16>) {
  gdn.recurrent q(%q : memref<3x1x2x32xbf16>) k(%q : memref<3x1x2x32xbf16>) v(%v : memref<3x1x4x16xbf16>)
      g(%g : memref<3x1x4xf32>) state_indices(%idx : memref<3xi32>)
      initial_state(%s : memref<6x4x16x32xf8E4M3FN>) state_scale(%sc : memref<6x4x16xf32>)
      final_state(%s : memref<6x4x16x32xf8E4M3FN>)
      o(%o : memref<3x1x4x16xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>, stochastic_rounding}
  return
}
