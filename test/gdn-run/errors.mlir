// Bad input: a diagnostic with a location and a non-zero exit, never a crash.
// RUN: split-file %s %t
// RUN: not gdn-run --target=cpu %t/garbage.mlir 2>&1 | FileCheck %s --check-prefix=GARBAGE
// RUN: not gdn-run --target=cpu %t/no-op.mlir 2>&1 | FileCheck %s --check-prefix=NOOP
// RUN: not gdn-run --target=cpu %t/two-ops.mlir 2>&1 | FileCheck %s --check-prefix=TWO
// RUN: not gdn-run --target=cpu %t/shape.mlir 2>&1 | FileCheck %s --check-prefix=SHAPE
// RUN: not gdn-run --target=cpu %t/aliased.mlir 2>&1 | FileCheck %s --check-prefix=ALIAS
// RUN: not gdn-run --target=cpu %t/missing-file.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not gdn-run --target=tpu %t/no-op.mlir 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not gdn-run --emit=llvm %t/two-ops.mlir 2>&1 | FileCheck %s --check-prefix=EMIT
// RUN: not gdn-run --emit=ptx %t/k34.mlir 2>&1 | FileCheck %s --check-prefix=K34
// --emit=ptx runs nothing: the options of a run are refused, not ignored.
// RUN: not gdn-run --emit=ptx --check %examples/qwen3_next_decode.mlir 2>&1 | FileCheck %s --check-prefix=EMITOPTS -DOPT=--check
// RUN: not gdn-run --emit=ptx --bench %examples/qwen3_next_decode.mlir 2>&1 | FileCheck %s --check-prefix=EMITOPTS -DOPT=--bench
// RUN: not gdn-run --emit=ptx --json %examples/qwen3_next_decode.mlir 2>&1 | FileCheck %s --check-prefix=EMITOPTS -DOPT=--json
// RUN: not gdn-run --emit=ptx --target=cpu %examples/qwen3_next_decode.mlir 2>&1 | FileCheck %s --check-prefix=EMITOPTS -DOPT=--target=cpu
// EMITOPTS: gdn-run: error: --emit=ptx prints the CUDA kernels and runs nothing; it does not take [[OPT]]
// RUN: not gdn-run --emit=ptx --schedule='#gdn.schedule<lanes_along_v = 32>' %examples/qwen3_next_mtp.mlir 2>&1 | FileCheck %s --check-prefix=LANES
// Schedules out of range or malformed (a --schedule or a schedule= option is
// parsed and verified before it reaches the cost model), and sm-count.
// RUN: not gdn-run --emit=ptx --schedule='#gdn.schedule<reductions = 5>' %examples/qwen3_next_mtp.mlir 2>&1 | FileCheck %s --check-prefix=SWITCH
// RUN: not gdn-run --target=cpu --schedule='#gdn.schedule<reductions = 5>' %examples/qwen3_next_mtp.mlir 2>&1 | FileCheck %s --check-prefix=SWITCH
// RUN: not gdn-run --emit=ptx --schedule='#gdn.schedule<staged_tokens = false>' %examples/qwen3_next_mtp.mlir 2>&1 | FileCheck %s --check-prefix=BOOL
// RUN: not gdn-run --emit=ptx --schedule='#gdn.schedule<warps = 1> #gdn.schedule<>' %examples/qwen3_next_mtp.mlir 2>&1 | FileCheck %s --check-prefix=TRAIL
// RUN: gdn-run --emit=ptx --schedule='  #gdn.schedule<warps = 2>  ' %examples/qwen3_next_mtp.mlir | FileCheck %s --check-prefix=BLANKS
// RUN: not gdn-run --emit=ptx --sm-count=-5 %examples/qwen3_next_mtp.mlir 2>&1 | FileCheck %s --check-prefix=SMS
// RUN: not gdn-run --emit=ptx --sm-count=9223372036854775807 %examples/qwen3_next_mtp.mlir 2>&1 | FileCheck %s --check-prefix=SMSMAX
// RUN: not gdn-opt %examples/qwen3_next_mtp.mlir -gdn-select-schedule="sm-count=9223372036854775807" 2>&1 | FileCheck %s --check-prefix=SMSMAX
// RUN: not gdn-run --emit=ptx --schedule='#gdn.schedule<columns_per_lane = 9223372036854775807>' %examples/qwen3_next_mtp.mlir 2>&1 | FileCheck %s --check-prefix=ROWSMAX
// RUN: not gdn-opt %examples/qwen3_next_mtp.mlir -gdn-select-schedule="schedule={#gdn.schedule<solve = 7>}" 2>&1 | FileCheck %s --check-prefix=CHUNKED

// GARBAGE: garbage.mlir:1:1: error: custom op 'this' is unknown
// NOOP: error: no function holds a gdn.recurrent
// TWO: two-ops.mlir:1:1: error: expected exactly one gdn.recurrent in @f, found 2
// SHAPE: shape.mlir:2:3: error: 'gdn.recurrent' op operand 'k' expects shape [1, 1, 1, 32] (N, T, H, K), got [1, 1, 1, 64]
// ALIAS: aliased.mlir:2:3: error: argument #0 is used as both 'q' and 'k'; give each operand its own argument
// MISSING: gdn-run: error: {{.*}}missing-file.mlir
// TARGET: gdn-run: error: unknown --target='tpu' (expected auto, cuda or cpu)
// EMIT: gdn-run: error: unknown --emit='llvm' (expected: ptx)
// SWITCH: gdn-run: error: --schedule: '#gdn.schedule<reductions = 5>' is not a #gdn.schedule<...>: expected valid keyword or string
// SMS: error: 'gdn.recurrent' op cannot be lowered to the GPU: sm-count = -5 must be in [0, 4096]
// SMSMAX: error: 'gdn.recurrent' op cannot be lowered to the GPU: sm-count = 9223372036854775807 must be in [0, 4096]
// ROWSMAX: gdn-run: error: --schedule: '#gdn.schedule<columns_per_lane = 9223372036854775807>' is not a #gdn.schedule<...>: #gdn.schedule columns_per_lane = 9223372036854775807 must be in [1, 1048576]
// CHUNKED: qwen3_next_mtp.mlir:{{.*}}: error: gdn-select-schedule: option schedule = '#gdn.schedule<solve = 7>' is not a #gdn.schedule<...>: expected valid keyword or string
// BOOL: gdn-run: error: --schedule: '#gdn.schedule<staged_tokens = false>' is not a #gdn.schedule<...>: expected an integer size, not 'false'
// TRAIL: gdn-run: error: --schedule: '#gdn.schedule<warps = 1> #gdn.schedule<>' is not a #gdn.schedule<...>: text follows the attribute at offset 25
// BLANKS: .maxntid 64, 1, 1
// K = 34 with V = 8: no lanes along V leave whole keys a lane and whole
// columns a warp (K = 40 takes 4 lanes along V, 5 keys a lane).
// K34: k34.mlir:2:3: error: 'gdn.recurrent' op cannot be lowered to the GPU: K = 34 must be a multiple of 32 / lanes_along_v = 32
// The diagnostic alone, without the op's generic dump.
// LANES: qwen3_next_mtp.mlir:{{.*}}: error: 'gdn.recurrent' op cannot be lowered to the GPU: a thread would hold columns_per_lane * K / (32 / lanes_along_v) = 128 state values, more than 64
// LANES-NOT: see current operation

//--- garbage.mlir
this is not MLIR
//--- no-op.mlir
func.func @f() {
  return
}
//--- two-ops.mlir
func.func @f(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>)
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>)
  return
}
//--- shape.mlir
func.func @f(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x64xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x64xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>)
  return
}
//--- aliased.mlir
func.func @f(%q: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%q : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>)
  return
}
//--- k34.mlir
func.func @f(%q: memref<1x1x1x34xf32>, %k: memref<1x1x1x34xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  gdn.recurrent q(%q : memref<1x1x1x34xf32>) k(%k : memref<1x1x1x34xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>) {state_layout = #gdn.layout<vk>}
  return
}

// The body must be exactly the op and a return (the GPU path runs only the
// kernel); sizes are bounded before anything is allocated.
// RUN: not gdn-run --target=cpu %t/in-loop.mlir 2>&1 | FileCheck %s --check-prefix=BODY
// RUN: not gdn-run --target=cpu %t/extra-op.mlir 2>&1 | FileCheck %s --check-prefix=BODY
// RUN: not gdn-run --target=cpu %t/huge.mlir 2>&1 | FileCheck %s --check-prefix=HUGE
// Zero strides (expand()) give 2^58 elements in a 4 GiB span: the estimate
// saturates instead of wrapping negative past --max-gib (an abort before).
// RUN: not gdn-run --target=cpu %t/expanded.mlir 2>&1 | FileCheck %s --check-prefix=HUGE
// --max-gib bounds the check's fp64 copies too (768 MiB of arguments and
// their values, 1.5 GiB with the check), never an out-of-memory abort.
// RUN: not gdn-run --target=cpu --check --max-gib=1 %t/medium.mlir 2>&1 | FileCheck %s --check-prefix=CHECKMEM
// RUN: not gdn-run --target=cpu %t/wrap.mlir 2>&1 | FileCheck %s --check-prefix=WRAP
// RUN: not gdn-run --target=cpu --bench --iters=0 %t/k34.mlir 2>&1 | FileCheck %s --check-prefix=ITERS
// BODY: error: the body of @f must be exactly one gdn.recurrent and a return
// HUGE: gdn-run: error: the run needs about {{[0-9]+}} MiB of host memory (arguments, fp64 values), more than --max-gib=16 GiB
// CHECKMEM: gdn-run: error: the run needs about {{1[0-9][0-9][0-9]}} MiB of host memory (arguments, fp64 values, the check's copies), more than --max-gib=1 GiB
// WRAP: wrap.mlir:2:3: error: operand 'q' is larger than the runner's limit of 2^40 bytes
// ITERS: gdn-run: error: --iters must be in [1, 100000]

//--- in-loop.mlir
func.func @f(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %c3 step %c1 {
    gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>)
  }
  return
}
//--- extra-op.mlir
func.func @f(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>, %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
  gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>) v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>)
  %z = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  memref.store %z, %o[%c0, %c0, %c0, %c0] : memref<1x1x1x8xf32>
  return
}
//--- huge.mlir
func.func @f(%q: memref<4096x4096x1x256xf32>, %k: memref<4096x4096x1x256xf32>, %v: memref<4096x4096x1x1xf32>, %o: memref<4096x4096x1x1xf32>) {
  gdn.recurrent q(%q : memref<4096x4096x1x256xf32>) k(%k : memref<4096x4096x1x256xf32>) v(%v : memref<4096x4096x1x1xf32>) o(%o : memref<4096x4096x1x1xf32>)
  return
}
//--- expanded.mlir
!q = memref<16384x16384x1x1073741824xf32, strided<[0, 0, 1073741824, 1]>>
!v = memref<16384x16384x1x1xf32, strided<[0, 0, 1, 1]>>
func.func @f(%q: !q, %k: !q, %v: !v, %o: memref<16384x16384x1x1xf32>) {
  gdn.recurrent q(%q : !q) k(%k : !q) v(%v : !v) o(%o : memref<16384x16384x1x1xf32>)
  return
}
//--- medium.mlir
func.func @f(%q: memref<1x393216x1x1xf32>, %k: memref<1x393216x1x1xf32>, %v: memref<1x393216x1x64xf32>, %o: memref<1x393216x1x64xf32>) {
  gdn.recurrent q(%q : memref<1x393216x1x1xf32>) k(%k : memref<1x393216x1x1xf32>) v(%v : memref<1x393216x1x64xf32>) o(%o : memref<1x393216x1x64xf32>)
  return
}
//--- wrap.mlir
func.func @f(%q: memref<4611686018427387905x4x1x1xf32>, %k: memref<4611686018427387905x4x1x1xf32>, %v: memref<4611686018427387905x4x1x1xf32>, %o: memref<4611686018427387905x4x1x1xf32>) {
  gdn.recurrent q(%q : memref<4611686018427387905x4x1x1xf32>) k(%k : memref<4611686018427387905x4x1x1xf32>) v(%v : memref<4611686018427387905x4x1x1xf32>) o(%o : memref<4611686018427387905x4x1x1xf32>)
  return
}
