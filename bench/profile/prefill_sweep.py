"""Long-T prefill through gdn-run: the cost model's schedule against pinned
alternatives (the token loop, tensor-core warps), and --check of the
chunked forms against the fp64 reference at lengths around the chunk and
with prefix-cache checkpoints. Shapes: Qwen3-Next's linear attention on one
rank (H = 16, HV = 32, K = V = 128), bf16 q/k/v/beta, f32 log-space g,
f32 initial and final state in the vk layout, qk L2 norm in the kernel.
Run on the GPU machine as

    python3 bench/profile/prefill_sweep.py GDN_RUN[,GDN_RUN...] [MODE]

With several builds (an A/B), each check runs on each build and each
bench row on each in turn, ROUNDS times, one column a build.

MODE (MODES below): none, bench/results/prefill/sweep.log; --forms, the
checks of solve = chunk_parallel and the forms side by side (forms.log);
--precision, the tensor cores' precision = tf32 against tf32x3, accuracy
and speed (precision.log); --bf16, precision = bf16 (the cost model's
with bf16 q and k) against tf32, checks and speed (bf16.log); --varlen, varlen batches on the token loop
against the tensor cores (varlen.log); --varlen-short, the same for
means of 4 to 32 tokens a sequence, the varlen rule's threshold
(varlen-short.log); --warps, the scan's warps on small grids
(warps.log); --varlen-cp, chunk_parallel on varlen batches against
the one-launch form (varlen-cp.log); --kda, a per-key decay (KDA) in chunk_parallel, its checks and
against the token loop; --kda-short, the same at T = 17 to 256 (the
rule's crossover); --kda-shapes, KDA's checks at K = 16 to 96 with
chunk_parallel pinned; --varlen-warps, varlen chunk_parallel
under the cost model (4 warps, the next chunk's copies in flight) against
its rule before (8 warps, no copies; varlen-warps.log); --chunks, 16- against 32- and 64-token chunks on
tensor cores, checks and speed (chunks/); --ws-solve, the warp-specialized
solve (a producer warpgroup solving each chunk, producer_stages = 2), its
checks and against the cost model's chunk_parallel (ws-solve/). Timings are gdn-run --bench: the
median of CUDA-graph replays over rotating input sets."""
import subprocess
import sys
import tempfile
from pathlib import Path

H, HV, K, V = 16, 32, 128, 128


def recurrent(N, T, varlen=False, interval=0, rows=0, pool=0, kda=False, K=K, V=V):
    """A gdn.recurrent of N sequences of T tokens (varlen: N sequences
    packed into T tokens, lengths drawn by gdn-run) as a function; kda: a
    log-space decay per key, g [.., HV, K] (Kimi's KDA); K, V: the head
    sizes (default Qwen3-Next's)."""
    B = 1 if varlen else N
    tok = lambda w, dt: f"memref<{B}x{T}x{w}x{dt}>"
    q, v = tok(H, f"{K}xbf16"), tok(HV, f"{V}xbf16")
    g = f"memref<{B}x{T}x{HV}x{K}xf32>" if kda else f"memref<{B}x{T}x{HV}xf32>"
    beta = f"memref<{B}x{T}x{HV}xbf16>"
    slots = pool or N
    state = f"memref<{slots}x{HV}x{V}x{K}xf32>"
    args = [("q", q), ("k", q), ("v", v), ("g", g), ("beta", beta)]
    if pool:
        args.append(("state_indices", f"memref<{N}xi32>"))
    if varlen:
        args.append(("cu_seqlens", f"memref<{N + 1}xi32>"))
    if interval:
        args.append(("checkpoint_offsets", f"memref<{N + 1}xi32>"))
    args.append(("initial_state", state))
    if interval:
        args.append(("state_checkpoints", f"memref<{rows}x{HV}x{V}x{K}xf32>"))
    args += [("final_state", state), ("o", v)]
    params = ", ".join(f"%{n}: {t}" for n, t in args if not (pool and n == "final_state"))
    operands = " ".join(
        f"{n}(%{'initial_state' if pool and n == 'final_state' else n} : {t})"
        for n, t in args)
    attrs = "qk_l2norm, state_layout = #gdn.layout<vk>"
    if interval:
        attrs += f", checkpoint_interval = {interval} : i64"
    return (f"func.func @prefill({params}) {{\n  gdn.recurrent {operands} {{{attrs}}}\n"
            f"  return\n}}\n")


CHECKS = [  # (what, N, T, varlen, interval, rows, schedule)
    ("lengths 1/63/64/65/1000 fixed", [(2, t, False, 0, 0, "") for t in (1, 63, 64, 65, 1000)]),
    ("varlen, pool, checkpoints every 64", [(6, 2000, True, 64, 40, "")]),
    ("varlen tensor cores", [(6, 2000, True, 0, 0, "solve = tensor_cores, staged_tokens = 16")]),
    ("fixed, checkpoints every 64, token loop", [(2, 1000, False, 64, 30, "solve = token_by_token")]),
    ("fixed, checkpoints every 64, tensor cores", [(2, 1000, False, 64, 30, "")]),
]
BENCH = [  # (N, T, varlen, [schedules]); "" = the cost model's
    (64, 1024, False, ["", "precision = tf32x3"]),
    (1, 4096, False, [""]),
    (1, 16384, False, [""]),
    (4, 4096, False, [""]),
    (16, 4096, False, [""]),
    (4, 16384, True, ["", "solve = token_by_token"]),
]


CP = "solve = chunk_parallel"
FORM_CHECKS = [  # T = 1 stages only when asked (staged_tokens pinned)
    ("chunk_parallel lengths 1/63/64/65/1000",
     [(2, t, False, 0, 0, CP + ", staged_tokens = 16") for t in (1, 63, 64, 65, 1000)]),
    ("chunk_parallel, checkpoints every 64", [(2, 1000, False, 64, 30, CP)]),
    ("chunk_parallel, 2 warps", [(3, 333, False, 0, 0, CP + ", warps = 2")]),
]
FORM_BENCH = [
    (1, 4096, False, ["solve = tensor_cores, warps = 8"] +
     [f"{CP}, warps = {w}" for w in (8, 2)]),
    (4, 4096, False, ["solve = tensor_cores, warps = 8"] + [f"{CP}, warps = {w}" for w in (8, 2)]),
    (16, 4096, False, ["solve = tensor_cores, warps = 8", f"{CP}, warps = 8"]),
    (64, 1024, False, ["solve = tensor_cores, warps = 8", f"{CP}, warps = 8"]),
]


TC = "solve = tensor_cores, staged_tokens = 16, warps = 8"
TF32 = "precision = tf32"
PRECISION_CHECKS = [  # precision = tf32 against tf32x3
    ("chunk_parallel tf32 lengths 1/63/64/65/1000",
     [(2, t, False, 0, 0, f"{CP}, staged_tokens = 16, {TF32}") for t in (1, 63, 64, 65, 1000)]),
    ("chunk_parallel tf32, checkpoints every 64", [(2, 1000, False, 64, 30, TF32)]),
    ("chunk_parallel tf32x3", [(2, 1000, False, 0, 0, "precision = tf32x3")]),
    ("long T tf32", [(1, 4096, False, 0, 0, TF32)]),
    ("long T tf32x3", [(1, 4096, False, 0, 0, "precision = tf32x3")]),
    ("varlen tensor cores tf32, pool, checkpoints every 64", [(6, 2000, True, 64, 40, f"{TC}, {TF32}")]),
]
PRECISION_BENCH = [
    (1, 4096, False, [TF32, "precision = tf32x3"]),
    (4, 4096, False, [TF32, "precision = tf32x3"]),
    (16, 4096, False, [TF32, "precision = tf32x3"]),
    (64, 1024, False, [TF32, "precision = tf32x3"]),
    (1, 16384, False, [TF32]),
]
BF16 = f"{CP}, precision = bf16"
TCB = "solve = tensor_cores, warps = 8, precision = bf16"
BF16_CHECKS = [  # precision = bf16 (the cost model's with bf16 q and k)
    ("bf16 lengths", [(2, t, False, 0, 0, BF16) for t in (17, 63, 64, 65, 1000)]),
    ("bf16 long", [(1, 4096, False, 0, 0, BF16), (1, 4096, False, 0, 0, f"{CP}, {TF32}")]),
    ("bf16 checkpoints", [(2, 1000, False, 64, 30, BF16)]),
    ("bf16 C=32", [(2, 1000, False, 0, 0, BF16 + ", staged_tokens = 32")]),
    ("bf16 2 warps", [(3, 333, False, 0, 0, BF16 + ", warps = 2")]),
    ("bf16 varlen pool checkpoints", [(6, 2000, True, 64, 40, TCB)]),
]
BF16_BENCH = [(N, T, False, [f"{CP}, {TF32}", BF16])
              for N, T in ((1, 4096), (4, 4096), (16, 4096), (64, 1024))] + [
    (64, 4096, True, ["solve = tensor_cores, warps = 8, precision = tf32", TCB])]
VARLEN_BENCH = [  # mean length T / N: 64, 256, 4096
    (64, 4096, True, ["", TC, TC + ", precision = tf32x3"]),
    (16, 4096, True, ["", TC]),
    (4, 16384, True, ["", TC]),
]
VARLEN_SHORT_BENCH = [  # mean length T / N: 4, 8, 16, 32 (the varlen rule's threshold)
    (N, T, True, ["solve = token_by_token", TC])
    for N, T in ((1024, 4096), (512, 4096), (256, 4096), (8, 128), (128, 4096), (32, 4096))
]
VARLEN_SHORT_CHECKS = [
    ("varlen tensor cores, mean 8 and 16 tokens, pool", [(64, t, True, 0, 0, TC) for t in (512, 1024)]),
]
AB_CHECKS = [
    ("chunk_parallel lengths 65/1000", [(2, t, False, 0, 0, "") for t in (65, 1000)]),
    ("varlen tensor cores, pool, checkpoints every 64", [(6, 2000, True, 64, 40, "")]),
]
AB_BENCH = [  # the cost model's rows, for an A/B of two builds
    (1, 4096, False, [""]),
    (4, 4096, False, [""]),
    (16, 2048, False, [""]),
    (64, 4096, True, [""]),
]
C32 = "staged_tokens = 32"
CHUNK_CHECKS = [  # 32- and 64-token chunks on tensor cores
    ("chunk_parallel C = 32 lengths 1/31/32/33/63/64/65/1000",
     [(2, t, False, 0, 0, f"{CP}, {C32}") for t in (1, 31, 32, 33, 63, 64, 65, 1000)]),
    ("chunk_parallel C = 32, checkpoints every 64", [(2, 1000, False, 64, 30, f"{CP}, {C32}")]),
    ("chunk_parallel C = 32, 2 warps", [(3, 333, False, 0, 0, f"{CP}, {C32}, warps = 2")]),
    ("chunk_parallel C = 32, tf32x3", [(2, 1000, False, 0, 0, f"{CP}, {C32}, precision = tf32x3")]),
    ("varlen tensor cores C = 32, pool, checkpoints every 64",
     [(6, 2000, True, 64, 40, "solve = tensor_cores, warps = 8, " + C32)]),
    ("chunk_parallel C = 64 (dynamic shared memory) lengths 1/63/64/65/1000",
     [(2, t, False, 0, 0, f"{CP}, staged_tokens = 64") for t in (1, 63, 64, 65, 1000)]),
    ("chunk_parallel C = 64, checkpoints every 64", [(2, 1000, False, 64, 30, f"{CP}, staged_tokens = 64")]),
]
CHUNK_BENCH = [  # 16- against 32- and 64-token chunks
    (N, T, False, [f"{CP}, staged_tokens = {c}" for c in (16, 32, 64)])
    for N, T in ((1, 4096), (1, 16384), (4, 4096), (16, 4096), (64, 1024))
] + [(N, T, False, [f"{CP}, {C32}, warps = 4"]) for N, T in ((16, 4096), (64, 1024))] + [(64, 4096, True, [f"solve = tensor_cores, warps = 8, staged_tokens = {c}" for c in (16, 32)])]
WARPS_CHECKS = [  # the scan's warps on small grids (each warp 16 V rows: fewer warps, more CTAs)
    ("chunk_parallel 2 warps, one sequence", [(1, t, False, 0, 0, f"{CP}, warps = 2") for t in (65, 1000, 4096)]),
    ("chunk_parallel 2 warps, checkpoints every 64", [(1, 1000, False, 64, 20, f"{CP}, warps = 2")]),
    ("chunk_parallel 4 warps", [(2, 1000, False, 0, 0, f"{CP}, warps = 4")]),
    ("varlen tensor cores 2 warps, pool", [(2, 2000, True, 0, 0, "solve = tensor_cores, warps = 2")]),
]
WARPS_BENCH = [
    (1, 4096, False, [f"{CP}, warps = {w}" for w in (2, 4, 8)]),
    (2, 4096, False, [f"{CP}, warps = {w}" for w in (2, 4, 8)]),
    (1, 16384, False, [f"{CP}, warps = {w}" for w in (2, 8)]),
    (1, 1024, False, [f"{CP}, warps = {w}" for w in (2, 8)]),
    (8, 1024, False, [f"{CP}, warps = {w}" for w in (4, 8)]),
    (1, 4096, True, [f"solve = tensor_cores, warps = {w}" for w in (2, 8)]),
    (2, 8192, True, [f"solve = tensor_cores, warps = {w}" for w in (2, 4, 8)]),
]
VARLEN_CP_CHECKS = [  # chunk_parallel on varlen batches (record slots a sequence)
    ("varlen chunk_parallel, pool, checkpoints every 64", [(6, 2000, True, 64, 40, CP)]),
    ("varlen chunk_parallel, one sequence", [(1, 1000, True, 0, 0, CP)]),
    ("varlen chunk_parallel, 64 sequences of 8 tokens on average", [(64, 512, True, 0, 0, CP)]),
]
VARLEN_CP_BENCH = [  # mean length T / N: 4096, 4096, 256, 64, 16
    (N, T, True, ["solve = tensor_cores", CP])  # the one-launch form against chunk_parallel
    for N, T in ((1, 4096), (4, 16384), (16, 4096), (64, 4096), (256, 4096))
]
VARLEN_WARPS_CHECKS = VARLEN_CP_CHECKS + [  # the cost model's: 4 warps, the copies in flight
    ("varlen chunk_parallel, 32 sequences, pool, checkpoints every 64",
     [(32, 4096, True, 64, 160, "")]),
]
KDA_CHECKS = [  # a per-key decay in chunk_parallel (KeyDecayChunks.cpp), the cost model's
    ("KDA lengths 1/17/63/64/65/1000", [(2, t, False, 0, 0, "") for t in (1, 17, 63, 64, 65, 1000)]),
    ("KDA checkpoints every 64", [(2, 1000, False, 64, 40, "")]),
    ("KDA 2 warps", [(1, 1000, False, 0, 0, "warps = 2")]),
    ("KDA 8 warps (128-register cap)", [(8, 300, False, 0, 0, "")]),
    ("KDA tf32", [(2, 1000, False, 0, 0, "precision = tf32")]),
    ("KDA varlen, pool, checkpoints every 64", [(6, 2000, True, 64, 40, "")]),
]
KDA_SHAPE_CHECKS = [  # KDA at K != 128, chunk_parallel pinned (the cost model's only at K = 128)
    (f"KDA K = {k}, V = {v}", [(2, t, False, 0, 0, f"{CP}{pin}", (k, v))
                               for t in (17, 65, 300) for pin in ("", ", warps = 2")])
    for k, v in ((64, 128), (32, 128), (64, 64), (16, 64), (48, 128), (96, 128))
]
KDA_BENCH = [  # the cost model's (chunk_parallel) against the token loop; uncapped
    # registers where the cap applies (the 8-warp KDA scan spills 168 bytes under it)
    (N, T, False, ["", "solve = token_by_token"] + (["max_registers = 0"] if N > 2 else []))
    for N, T in ((1, 4096), (4, 4096), (16, 2048))
]
KDA_SHORT_BENCH = [  # the rule's crossover: chunk_parallel from T > 16 on (keyDecayChunks)
    (N, T, False, ["", "solve = token_by_token"]) for N in (1, 16) for T in (17, 32, 64, 128, 256)
]
OLD_VARLEN = "warps = 8, chunk_prefetch_distance = 0"  # the rule before session 43
VARLEN_WARPS_BENCH = [  # mean length T / N: 4096, 256, 574, 64
    (N, T, True, ["", OLD_VARLEN]) for N, T in ((4, 16384), (16, 4096), (32, 18368), (64, 4096))
]
WS = "solve = tensor_cores, producer_stages = 2"  # the warp-specialized solve
WS_CHECKS = [  # a producer warpgroup solving each chunk (WarpSpecializedSolve.cpp)
    ("warp-specialized solve lengths 17/63/64/65/1000", [(2, t, False, 0, 0, WS) for t in (17, 63, 64, 65, 1000)]),
    ("warp-specialized solve, checkpoints every 64", [(2, 1000, False, 64, 40, WS)]),
    ("warp-specialized solve, one sequence (2 consumer warps)", [(1, 4096, False, 0, 0, WS)]),
    ("warp-specialized solve, tf32x3", [(2, 1000, False, 0, 0, f"{WS}, precision = tf32x3")]),
    ("warp-specialized solve, varlen pool, checkpoints every 64", [(6, 2000, True, 64, 40, WS)]),
]
WS_BENCH = [(N, T, varlen, ["", WS]) for N, T, varlen, _ in AB_BENCH]
MODES = {  # flag: (checks, benches, log in bench/results/prefill/)
    "": (CHECKS, BENCH),  # sweep.log
    "--quick": (CHECKS, BENCH[:2]),
    "--forms": (FORM_CHECKS, FORM_BENCH),  # forms.log
    "--precision": (PRECISION_CHECKS, PRECISION_BENCH),  # precision.log
    "--bf16": (BF16_CHECKS, BF16_BENCH),  # bf16.log
    "--varlen": ([], VARLEN_BENCH),  # varlen.log
    "--varlen-short": (VARLEN_SHORT_CHECKS, VARLEN_SHORT_BENCH),  # varlen-short.log
    "--ab": (AB_CHECKS, AB_BENCH),  # two builds side by side
    "--chunks": (CHUNK_CHECKS, CHUNK_BENCH),  # chunks/
    "--warps": (WARPS_CHECKS, WARPS_BENCH),  # the scan's warps on small grids
    "--varlen-cp": (VARLEN_CP_CHECKS, VARLEN_CP_BENCH),  # chunk_parallel on varlen batches
    "--varlen-warps": (VARLEN_WARPS_CHECKS, VARLEN_WARPS_BENCH),  # varlen-warps.log
    "--kda": (KDA_CHECKS, KDA_BENCH),  # KDA in chunk_parallel
    "--kda-short": ([], KDA_SHORT_BENCH),
    "--ws-solve": (WS_CHECKS, WS_BENCH),  # against chunk_parallel, ws-solve/
    "--kda-shapes": (KDA_SHAPE_CHECKS, []),  # KDA checks at K != 128  # KDA: chunk_parallel against the token loop at short T
}


ROUNDS = 2  # of the benches, with several builds


def run(gdn_run, text, flags):
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(text)
    out = subprocess.run([gdn_run, *flags, f.name], capture_output=True, text=True)
    return out.returncode, out.stdout + out.stderr


def main():
    builds, mode = sys.argv[1].split(","), (sys.argv[2:] or [""])[0]
    if mode not in MODES:
        sys.exit(f"unknown mode {mode!r}: expected one of {sorted(MODES)}")
    checks, benches = MODES[mode]
    kda = mode.startswith("--kda")
    table = []  # (case, [a result a build])
    for what, cases in checks:
        for N, T, varlen, interval, rows, sched, *dims in cases:  # dims: (K, V), if not 128
            flags = ["--check"] + ([f"--schedule=#gdn.schedule<{sched}>"] if sched else [])
            kv = dict(zip("KV", dims[0])) if dims else {}
            text = recurrent(N, T, varlen, interval, rows, pool=N + 2 if varlen else 0, kda=kda,
                             **kv)
            results = []
            for gdn_run in builds:
                rc, out = run(gdn_run, text, flags)
                lines = [l for l in out.splitlines()
                         if l.startswith(("check", "schedule:")) or "error" in l]
                print(f"== check {what}: N={N} T={T} {sched or 'cost model'} rc={rc}"
                      + (f" ({gdn_run})" if len(builds) > 1 else ""))
                print("\n".join(lines), flush=True)
                results.append("ok" if rc == 0 else "FAILED")
            table.append((f"check {what} T={T}", results))
    for rnd in range(ROUNDS if len(builds) > 1 else 1):  # builds interleaved a row
        for N, T, varlen, scheds in benches:
            for sched in scheds:
                flags = ["--bench", "--iters=5"] + (
                    [f"--schedule=#gdn.schedule<{sched}>"] if sched else [])
                results = []
                for gdn_run in builds:
                    rc, out = run(gdn_run, recurrent(N, T, varlen, kda=kda), flags)
                    bench = [l for l in out.splitlines() if l.startswith("bench") or "error" in l]
                    print("\n".join(l for l in out.splitlines() if l.startswith("schedule:")))
                    us = bench[-1].split()[1] if bench and bench[-1].startswith("bench") else "error"
                    print(f"== bench N={N} T={T}{' varlen' if varlen else ''} "
                          f"{sched or 'cost model'}{f' round {rnd} ({gdn_run})' if len(builds) > 1 else ''}"
                          f": {bench[-1] if bench else out[-300:]}", flush=True)
                    results.append(us)
                table.append((f"N={N} T={T}{' varlen' if varlen else ''} {sched or 'cost model'}",
                              results))
    print(f"\n| case | {' | '.join(builds)} (us or check) |\n|---|{'---|' * len(builds)}")
    for name, r in table:
        print(f"| {name} | {' | '.join(r)} |")


if __name__ == "__main__":
    main()
