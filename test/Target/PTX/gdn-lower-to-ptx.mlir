// RUN: gdn-opt %s --verify-each=false --gdn-lower-to-ptx="schedule={#gdn.schedule<columns_per_lane = 4>}" | FileCheck %s --check-prefix=IR
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<columns_per_lane = 4>' %s | FileCheck %s
// RUN: gdn-run --emit=ptx --schedule='#gdn.schedule<columns_per_lane = 4>' %s | FileCheck %s --check-prefix=FAST --implicit-check-not=sqrt.rn --implicit-check-not=rcp.rn --implicit-check-not=div.rn
// RUN: gdn-opt %s --gdn-lower-to-ptx --mlir-print-ir-after-all -o /dev/null 2>&1 | FileCheck %s --check-prefix=STEPS
// The whole path from gdn.recurrent to PTX (with the pass manager's verifier
// off, as the JIT runs it: gdn-verify checks the IR after gdn's lowering and
// before LLVM translation): the host function keeps a
// gpu.launch_func and the kernel module becomes a gpu.binary holding PTX.

// IR: func.func @decode
// IR: gpu.launch_func @gdn_kernels::@decode_recurrent
// IR: gpu.binary @gdn_kernels  [#gpu.object<#nvvm.target<chip = "sm_90a", features = "+ptx80">, properties = {{.*}}, assembly = "{{.*}}.target sm_90a

// STEPS: IR Dump After ConvertGDNToGPUPass (convert-gdn-to-gpu)
// STEPS: IR Dump After GDNVerifyPass (gdn-verify)
// STEPS: IR Dump After SCFToControlFlowPass (convert-scf-to-cf)
// STEPS: IR Dump After ConvertGpuOpsToNVVMOps (convert-gpu-to-nvvm)
// STEPS: IR Dump After ConvertNVVMToLLVMPass (convert-nvvm-to-llvm)
// STEPS: IR Dump After GDNVerifyPass (gdn-verify)
// STEPS: IR Dump After GDNGPUModuleToPTXPass (gdn-gpu-module-to-ptx)

// The fp32 math contracts to fused multiply-adds, sigmoid(b) takes
// rcp.approx and the norms rsqrt.approx: no IEEE divide or sqrt (their
// slow-path calls) anywhere in the kernel.
// FAST: rcp.approx.ftz.f32
// FAST: fma.rn.f32
// FAST: rsqrt.approx.ftz.f32

// CHECK: .version 8.0
// CHECK: .target sm_90a
// CHECK: .visible .entry decode_recurrent(
// CHECK: .maxntid 128, 1, 1
// CHECK-NOT: .local
// The state tile comes in as 16-byte loads (4 rows of 4 fp32 a thread)...
// CHECK-COUNT-4: ld.global.v4.b32
// ... the math is approximate PTX, the reductions butterfly shuffles ...
// CHECK: ex2.approx.ftz.f32
// CHECK: shfl.sync.bfly.b32
// ... and goes out as 16-byte stores.
// CHECK-COUNT-4: st.global.v4.b32
func.func @decode(%q: memref<2x1x2x128xbf16>, %k: memref<2x1x2x128xbf16>, %v: memref<2x1x4x128xbf16>,
                  %a: memref<2x1x4xbf16>, %A_log: memref<4xf32>, %dt_bias: memref<4xf32>, %b: memref<2x1x4xbf16>,
                  %s: memref<2x4x128x128xf32>, %o: memref<2x1x4x128xbf16>) {
  gdn.recurrent q(%q : memref<2x1x2x128xbf16>) k(%k : memref<2x1x2x128xbf16>) v(%v : memref<2x1x4x128xbf16>)
      a(%a : memref<2x1x4xbf16>) A_log(%A_log : memref<4xf32>) dt_bias(%dt_bias : memref<4xf32>)
      b(%b : memref<2x1x4xbf16>)
      initial_state(%s : memref<2x4x128x128xf32>) final_state(%s : memref<2x4x128x128xf32>)
      o(%o : memref<2x1x4x128xbf16>) {qk_l2norm, state_layout = #gdn.layout<vk>}
  return
}
