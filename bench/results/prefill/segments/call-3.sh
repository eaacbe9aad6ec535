#!/usr/bin/env bash
# Session 50, call 3: call 2's fastest split at HV = 32 ran 4 warps a CTA
# (1.24x the unsplit scan, whose cost model takes 2 at N = 1): the warps
# of the split scan beside the unsplit scan on 2 and 4 warps, at HV = 32,
# 16 and 8, and one check of the 4-warp split at N = 1.
#   carry: .carry/cp/bins.txz (call 1's build)
set -u
out=${OUT:-/tmp}; t0=$SECONDS; bin=/tmp/gdn-bin; mkdir -p $bin
xz -dc .carry/cp/bins.txz | tar -C $bin -xf -; chmod +x $bin/gdn-run
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $out/gpu.txt
python3 - <<'PY'
import sys; sys.path.insert(0, 'bench/profile')
import prefill_sweep as ps
from prefill_sweep import recurrent
open('/tmp/n1.mlir', 'w').write(recurrent(1, 4096))
open('/tmp/n1_8k.mlir', 'w').write(recurrent(1, 8192))
open('/tmp/n1_32k.mlir', 'w').write(recurrent(1, 32768))
ps.H, ps.HV = 8, 16
open('/tmp/h16_32k.mlir', 'w').write(recurrent(1, 32768))
ps.H, ps.HV = 4, 8
open('/tmp/h8_32k.mlir', 'w').write(recurrent(1, 32768))
PY
CP='solve = chunk_parallel'; PF='chunk_prefetch_distance = 1'
echo "check n1 [$CP, segments = 4, warps = 4, $PF]: $(timeout 60 $bin/gdn-run --check "--schedule=#gdn.schedule<$CP, segments = 4, warps = 4, $PF>" /tmp/n1.mlir 2>&1 | grep -E '^check|error' | sed 's/  */ /g' | tr '\n' ' ')" | tee $out/checks.log
bench() { echo "$1 [$2]: $(timeout 60 $bin/gdn-run --bench --iters=5 "--schedule=#gdn.schedule<$2>" /tmp/$1.mlir 2>&1 | grep -E '^bench|error' | tail -1 | cut -c1-40)"; }
{ bench n1_32k "$CP"; bench n1_32k "$CP, warps = 4, $PF"
  for P in 2 8; do bench n1_32k "$CP, segments = $P, warps = 4, $PF"; done
  bench n1_32k "$CP, segments = 4, warps = 8, $PF"
  bench n1_8k "$CP"; bench n1_8k "$CP, segments = 4, warps = 4, $PF"
  bench n1_8k "$CP, segments = 2, warps = 4, $PF"
  bench h16_32k "$CP, segments = 8, warps = 4, $PF"
  bench h8_32k "$CP, segments = 16, warps = 4, $PF"
} | tee $out/ab.log
echo "bench at $((SECONDS-t0)) s"
