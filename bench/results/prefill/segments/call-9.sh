#!/usr/bin/env bash
# Session 52, call 9: the cost model's segments after the rule of one CTA an
# SM at 512-token segments, two at 2048 (chooseSegments), where its choice
# had not been timed: HV = 64 and N = 2 at HV = 32 (128 unsplit CTAs, split
# in 2), T = 4096 at HV = 16 / 32, and T = 8192 at HV = 8; gdn-run --bench,
# the default beside segments = 1. About 150 s.
#   carry: .carry/s52/bins.txz (gdn-run of this rule, stripped static, xz)
set -u; out=${OUT:-/tmp}
mkdir -p /tmp/gdn-d; xz -dc .carry/s52/bins.txz | tar -C /tmp/gdn-d -xf -
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $out/gpu.txt
python3 - <<'PY'
import sys; sys.path.insert(0, 'bench/profile')
import prefill_sweep as ps
for hv, ts in ((64, (4096, 8192)), (32, (4096,)), (16, (4096,)), (8, (8192,))):
    ps.H, ps.HV = hv // 2, hv
    for t in ts:
        open(f'/tmp/h{hv}_{t}.mlir', 'w').write(ps.recurrent(1, t))
ps.H, ps.HV = 16, 32
open('/tmp/n2h32_8192.mlir', 'w').write(ps.recurrent(2, 8192))
PY
b=/tmp/gdn-d/gdn-run
bench() { local r; r=$(timeout 60 $b --bench --iters=5 ${2:+"--schedule=#gdn.schedule<$2>"} /tmp/$1.mlir 2>&1)
  echo "$1 [$2]: $(echo "$r" | grep -E '^bench|error' | tail -1 | cut -c1-40) | $(echo "$r" | grep '^schedule:' | grep -oE '(warps|segments) = [0-9]+' | tr '\n' ' ')"; }
{ for f in h64_8192 h64_4096 n2h32_8192; do bench $f ""; bench $f "segments = 1"; done
  bench h32_4096 ""; bench h16_4096 ""; bench h8_8192 ""; } | tee $out/rule-9.log
