#!/usr/bin/env bash
# Session 47, trimmed: next/wg64 at 241fa36 (d) beside a0498c0 (c); d's
# cost-model schedule (C = 16) = main's kernels, the baseline.
set -u
out=${OUT:-/tmp}; t0=$SECONDS
bin=/tmp/gdn-bin; mkdir -p $bin
xz -dc .carry/wg64c/gdn-run.xz > $bin/gdn-run-c & xz -dc .carry/wg64d/gdn-run.xz > $bin/gdn-run-d; wait; chmod +x $bin/*
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $out/gpu.txt
python3 - <<'PY'
import sys; sys.path.insert(0,'bench/profile')
from prefill_sweep import recurrent
for k,(N,T) in {'t65': (2,65), 't1000': (2,1000), 'n4': (4,4096)}.items():
    open(f'/tmp/{k}.mlir','w').write(recurrent(N,T))
open('/tmp/ck.mlir','w').write(recurrent(2,1000,False,64,40))
open('/tmp/vl.mlir','w').write(recurrent(6,2000,True,64,40,pool=8))
PY
W='solve = chunk_parallel, max_registers = 0'
chk() { echo "== check $1 $2 [$3]: $(timeout 40 $bin/gdn-run-$2 --check ${3:+"--schedule=#gdn.schedule<$3>"} /tmp/$1.mlir 2>&1 | grep -E '^check|error' | awk '{print $2, $6, $NF}' | tr '\n' ' ')"; }
{ for c in t65 t1000 ck vl; do chk $c d "$W, staged_tokens = 64, warps = 8"; done
  chk t1000 d "$W, staged_tokens = 32, warps = 8"; } 2>&1 | tee $out/checks-d.log | cut -c1-200
echo "checks at $((SECONDS-t0)) s"
for x in "d|" "c|$W, staged_tokens = 64, warps = 8" "d|$W, staged_tokens = 64, warps = 8"; do
  b=${x%%|*}; s=${x#*|}; tag=$b${s:+-64}
  timeout 40 ncu --section SpeedOfLight --section Occupancy --section LaunchStats -k regex:prefill --launch-count 2 -f -o /tmp/p-$tag $bin/gdn-run-$b --bench --iters=1 ${s:+"--schedule=#gdn.schedule<$s>"} /tmp/n4.mlir > /dev/null 2>&1
  ncu -i /tmp/p-$tag.ncu-rep --page details > $out/ncu-$tag.txt 2>&1
  echo "== $tag"; grep -E "prefill_|^    Duration|Registers Per|Achieved Occupancy|Dynamic Shared" $out/ncu-$tag.txt | sed 's/  */ /g'
done
echo "ncu at $((SECONDS-t0)) s"
for x in "d|" "c|$W, staged_tokens = 64, warps = 8" "d|$W, staged_tokens = 64, warps = 8" "d|$W, staged_tokens = 32, warps = 8"; do
  b=${x%%|*}; s=${x#*|}
  echo "== bench n4 $b [${s:-cost model}]: $(timeout 30 $bin/gdn-run-$b --bench --iters=5 ${s:+"--schedule=#gdn.schedule<$s>"} /tmp/n4.mlir 2>&1 | grep -E '^bench|error' | tail -1 | cut -c1-70)"
done 2>&1 | tee $out/bench.log
echo "elapsed $((SECONDS-t0)) s"
