#!/usr/bin/env bash
# Session 52, call 8: the split's P against HV and T with the join of
# 2134a19 (join-smem), for the cost model's choice (chooseSegments):
# gdn-run --bench of one sequence at HV = 8, 16, 32 (H = HV / 2), T = 4096 to
# 16384, segments = 4, 8, 16 and the cost model's default. About 140 s (the
# last three rows ran as a second call, appended to the same log).
#   carry: .carry/s51c/bins.txz (gdn-run of 2134a19, stripped static, xz -9e)
set -u; out=${OUT:-/tmp}
mkdir -p /tmp/gdn-c; xz -dc .carry/s51c/bins.txz | tar -C /tmp/gdn-c -xf -
python3 - <<'PY'
import sys; sys.path.insert(0, 'bench/profile')
import prefill_sweep as ps
for hv in (8, 16, 32):
    ps.H, ps.HV = hv // 2, hv
    for t in (4096, 8192, 16384):
        open(f'/tmp/h{hv}_{t}.mlir', 'w').write(ps.recurrent(1, t))
PY
b=/tmp/gdn-c/gdn-run
bench() { local r; r=$(timeout 60 $b --bench --iters=5 ${2:+"--schedule=#gdn.schedule<solve = chunk_parallel, warps = 4, chunk_prefetch_distance = 1, $2>"} /tmp/$1.mlir 2>&1)
  echo "$1 [$2]: $(echo "$r" | grep -E '^bench|error' | tail -1 | cut -c1-40) | $(echo "$r" | grep '^schedule:' | grep -oE '(warps|segments) = [0-9]+' | tr '\n' ' ')"; }
{ bench h8_4096 ""; bench h8_4096 "segments = 8"; bench h8_4096 "segments = 16"
  bench h8_16384 ""; bench h8_16384 "segments = 8"; bench h8_16384 "segments = 16"
  bench h16_8192 ""; bench h16_8192 "segments = 8"; bench h16_16384 ""; bench h16_16384 "segments = 8"
  bench h32_8192 "segments = 8"; bench h32_16384 ""; bench h32_16384 "segments = 8"
  bench h32_8192 ""; bench h16_4096 ""; bench h16_4096 "segments = 8"; bench h32_4096 ""
  bench h32_4096 "segments = 4"; } | tee $out/p-hv-t.log
