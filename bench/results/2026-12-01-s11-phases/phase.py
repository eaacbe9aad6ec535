# Phase clocks of the tensor-core T = 12 kernel (GDN_PHASE_CLOCK build): lane 0
# of each warp writes clock deltas into the final state [n, hv, 0..7, 16 w]
# and its SM id at key 8.
import os, sys, torch
import gdn.ops as ops
names = ["staging+barrier", "gram+masks", "scale+factors", "substitution",
         "P,R (state first read)", "U,O (+o store)", "S_C", "state store"]
dev = "cuda"
for N in [int(x) for x in sys.argv[1].split(",")]:
    T, H, HV, K, V = 12, 16, 32, 128, 128
    g = torch.Generator(device="cpu").manual_seed(1)
    bf = torch.bfloat16
    r = lambda *s: torch.randn(*s, generator=g)
    q = r(N, T, H, K).to(bf).to(dev); k = r(N, T, H, K).to(bf).to(dev)
    v = r(N, T, HV, V).to(bf).to(dev)
    gg = torch.nn.functional.logsigmoid(r(N, T, HV)).to(dev)
    beta = torch.sigmoid(r(N, T, HV)).to(bf).to(dev)
    S0 = r(N, HV, K, V).to(dev)
    flush = torch.empty(512 << 20, dtype=torch.uint8, device=dev)
    rows = []
    for rep in range(6):
        flush.zero_()
        torch.cuda.synchronize()
        o, S = ops.fused_recurrent_gated_delta_rule(q, k, v, g=gg, beta=beta, initial_state=S0,
                                                    output_final_state=True, use_qk_l2norm_in_kernel=True)
        torch.cuda.synchronize()
        if rep >= 1:
            rows.append(S.view(torch.int32)[:, :, 0:9, 0::16].cpu())
    x = torch.stack(rows).to(torch.float64)  # [reps, N, HV, 9, warps]
    d = x[:, :, :, 0:8, :]
    d = torch.cat([d[:, :, :, :1], d[:, :, :, 1:] - d[:, :, :, :-1]], dim=3)
    warps = d.shape[-1]
    print(f"N = {N}: median cycles a phase over {x.shape[0]}x{N*HV} CTAs (columns: warp 0..{warps-1}); lifetime")
    for i, nm in enumerate(names):
        med = [d[:, :, :, i, w].median().item() for w in range(warps)]
        print(f"  {nm:26s}" + " ".join(f"{m:7.0f}" for m in med))
    life = x[:, :, :, 7, :].max(dim=-1).values
    print(f"  {'CTA lifetime (max warp)':26s} median {life.median().item():.0f}  p10 {life.quantile(0.1).item():.0f}  p90 {life.quantile(0.9).item():.0f}")
    sm = x[0, :, :, 8, 0].flatten()
    print(f"  SMs used {len(set(sm.tolist()))}")
