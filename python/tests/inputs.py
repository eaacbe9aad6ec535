"""Shared helper of the torch tests: random inputs placed on a device."""


def place(x, device, dtype, fp32=("A_log", "dt_bias", "state")):
    """x's tensors as contiguous tensors on `device`: the names in `fp32` in
    float32 (gating parameters, states), the rest (q, k, v, gates) in dtype."""
    import torch
    return {name: t.to(torch.float32 if name in fp32 else dtype).to(device).contiguous()
            for name, t in x.items()}
