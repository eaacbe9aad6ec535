// REQUIRES: ptxas-sm100a
// The sm_100a row of the GPU target table (GPUTarget.cpp: PTX 8.6, 148 SMs,
// bulk copies, griddepcontrol, setmaxnreg, mma.sync tf32): every kernel form
// builds for it and ptxas assembles it. Never run on the chip (the row's
// `measured` is false); the cost model's rules are the H200's.
// RUN: gdn-run --emit=ptx --chip=sm_100a %examples/qwen3_next_decode.mlir > %t.decode.ptx
// RUN: %ptxas -arch=sm_100a %t.decode.ptx -o %t.decode.cubin
// RUN: FileCheck %s --check-prefix=TARGET < %t.decode.ptx
// TARGET: .version 8.6
// TARGET: .target sm_100a
// RUN: gdn-run --emit=ptx --chip=sm_100a --schedule='#gdn.schedule<state_prefetch_distance = 1036>' %examples/../bench/sweeps/decode_n64_bf16_pool.mlir > %t.prefetch.ptx
// RUN: %ptxas -arch=sm_100a %t.prefetch.ptx -o %t.prefetch.cubin
// RUN: FileCheck %s --check-prefix=PREFETCH < %t.prefetch.ptx
// PREFETCH: cp.async.bulk.prefetch.L2.global
// RUN: gdn-run --emit=ptx --chip=sm_100a --schedule='#gdn.schedule<producer_stages = 2, consumer_registers = 128, warps = 4, columns_per_lane = 2, launch = programmatic>' %examples/sglang_verify_t4.mlir > %t.producer.ptx
// RUN: %ptxas -arch=sm_100a %t.producer.ptx -o %t.producer.cubin
// RUN: FileCheck %s --check-prefix=PRODUCER < %t.producer.ptx
// PRODUCER-DAG: griddepcontrol.wait;
// PRODUCER-DAG: setmaxnreg.inc.sync.aligned.u32 128;
// PRODUCER-DAG: cp.async.bulk.shared::cluster.global
// RUN: gdn-run --emit=ptx --chip=sm_100a %examples/../bench/profile/fla_t12_n64_kv.mlir > %t.tc.ptx
// RUN: %ptxas -arch=sm_100a %t.tc.ptx -o %t.tc.cubin
// RUN: FileCheck %s --check-prefix=TC < %t.tc.ptx
// TC: prefetch.global.L2
// TC: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
