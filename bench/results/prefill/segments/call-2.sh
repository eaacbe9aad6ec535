#!/usr/bin/env bash
# Session 50, call 2: call 1's segments ran 1.6-2.7x slower than the unsplit
# scan at HV = 32, where the cost model dropped chunk_prefetch_distance to 0
# (the split grid is past the SMs, and each chunk's loads then sit on a
# CTA's critical path). The same rows with the next chunk's copies pinned
# (chunk_prefetch_distance = 1), HV = 16 for the crossover, and Nsight
# Compute's duration of each of the four launches at HV = 32, P = 4.
#   carry: .carry/cp/bins.txz (call 1's build)
set -u
out=${OUT:-/tmp}; t0=$SECONDS; bin=/tmp/gdn-bin; mkdir -p $bin
xz -dc .carry/cp/bins.txz | tar -C $bin -xf -; chmod +x $bin/gdn-run
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $out/gpu.txt
python3 - <<'PY'
import sys; sys.path.insert(0, 'bench/profile')
import prefill_sweep as ps
from prefill_sweep import recurrent
open('/tmp/n1_8k.mlir', 'w').write(recurrent(1, 8192))
open('/tmp/n1_32k.mlir', 'w').write(recurrent(1, 32768))
ps.H, ps.HV = 8, 16
open('/tmp/h16_32k.mlir', 'w').write(recurrent(1, 32768))
ps.H, ps.HV = 4, 8
open('/tmp/h8_32k.mlir', 'w').write(recurrent(1, 32768))
PY
CP='solve = chunk_parallel'; PF='chunk_prefetch_distance = 1'
bench() { echo "$1 [$2]: $(timeout 60 $bin/gdn-run --bench --iters=5 "--schedule=#gdn.schedule<$2>" /tmp/$1.mlir 2>&1 | grep -E '^bench|error' | tail -1 | cut -c1-40)"; }
{ for P in 1 4; do bench n1_8k "$CP, segments = $P, $PF"; done
  for P in 1 2 4 8; do bench n1_32k "$CP, segments = $P, $PF"; done
  bench n1_32k "$CP, segments = 4, warps = 4, $PF"
  for P in 1 4 8; do bench h16_32k "$CP, segments = $P, $PF"; done
  for P in 1 4 8 16; do bench h8_32k "$CP, segments = $P, $PF"; done
} | tee $out/ab.log
echo "bench at $((SECONDS-t0)) s"
timeout 120 ncu --section SpeedOfLight --section LaunchStats -k regex:prefill --launch-count 4 -f -o /tmp/seg "$bin/gdn-run" --bench --iters=1 "--schedule=#gdn.schedule<$CP, segments = 4, $PF>" /tmp/n1_32k.mlir > /tmp/ncu.log 2>&1; echo "ncu rc=$?"
ncu -i /tmp/seg.ncu-rep --page details > $out/ncu-n1-32k-p4.txt 2>&1
grep -E '^  prefill|Duration|Grid Size|Registers Per' $out/ncu-n1-32k-p4.txt | sed 's/  */ /g'
echo "done at $((SECONDS-t0)) s"
