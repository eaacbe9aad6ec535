"""Shared helpers of the tests: random inputs placed on a device, the
smallest gdn.recurrent function in MLIR text (f32, N = T = H = 1, K = 32,
HV = 1, V = 8), and the CUDA kernels gdn.ops compiled."""

TINY_RECURRENT = """
    func.func @f(%q: memref<1x1x1x32xf32>, %k: memref<1x1x1x32xf32>,
                 %v: memref<1x1x1x8xf32>, %o: memref<1x1x1x8xf32>) {
      gdn.recurrent q(%q : memref<1x1x1x32xf32>) k(%k : memref<1x1x1x32xf32>)
          v(%v : memref<1x1x1x8xf32>) o(%o : memref<1x1x1x8xf32>)
      return
    }"""


def place(x, device, dtype, fp32=("A_log", "dt_bias", "state")):
    """x's tensors as contiguous tensors on `device`: the names in `fp32` in
    float32 (gating parameters, states), the rest (q, k, v, gates) in dtype."""
    import torch
    return {name: t.to(torch.float32 if name in fp32 else dtype).to(device).contiguous()
            for name, t in x.items()}


def cuda_kernels(**fields):
    """The CUDA kernels gdn.ops' custom op has compiled so far whose
    description holds every field given (e.g. T=300, HV=32), for tests of
    the form the cost model took (gdn.Kernel.launches)."""
    from gdn.ops import _custom_ops
    return [k for key, k in _custom_ops._kernels.items()
            if key[0] == "cuda" and all((f, v) in key for f, v in fields.items())]
