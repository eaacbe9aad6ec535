#!/usr/bin/env bash
# The 64-token chunk scan on wgmma (branch next/wg64): checks and speed
# against main (.carry/gdn-run.xz) in one run. wg64: the scan on wgmma;
# wg64b: and the first launch's row masks + blocked inverse.
set -u
out=${OUT:-/tmp}; t0=$SECONDS
bin=/tmp/gdn-bin; mkdir -p $bin
for x in main: wg64b:wg64b/; do xz -dc .carry/${x#*:}gdn-run.xz > $bin/gdn-run-${x%%:*}; done; chmod +x $bin/*
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $out/gpu.txt
python3 - <<'PY'
import sys; sys.path.insert(0,'bench/profile')
from prefill_sweep import recurrent
cases = {'t64': (2,64), 't65': (2,65), 't1000': (2,1000), 'n1': (1,4096), 'n4': (4,4096), 'n16': (16,2048)}
for k,(N,T) in cases.items(): open(f'/tmp/{k}.mlir','w').write(recurrent(N,T))
open('/tmp/ck.mlir','w').write(recurrent(2,1000,False,64,40))
open('/tmp/vl.mlir','w').write(recurrent(6,2000,True,64,40,pool=8))
open('/tmp/kda.mlir','w').write(recurrent(2,1000,kda=True))
PY
W='solve = chunk_parallel, max_registers = 0'
chk() { echo "== check $1 $2 [$3]: $(timeout 60 $bin/gdn-run-$2 --check ${3:+"--schedule=#gdn.schedule<$3>"} /tmp/$1.mlir 2>&1 | grep -E '^check|error' | tr '\n' ' ')"; }
{ chk t1000 main ""; true
for c in t64 t65 t1000 ck vl kda; do for sch in "$W, staged_tokens = 64, warps = 8" "$W, staged_tokens = 32, warps = 8"; do chk $c wg64b "$sch"; done; done
chk t1000 wg64b "$W, staged_tokens = 64, warps = 4"; } 2>&1 | tee $out/checks.log | cut -c1-300
echo "checks done at $((SECONDS-t0)) s"
for r in 0 1; do for c in n1 n4 n16; do
  for x in "main|" "wg64b|$W, staged_tokens = 64, warps = 8" "wg64b|$W, staged_tokens = 32, warps = 8" "wg64b|$W, staged_tokens = 64, warps = 4"; do
    b=${x%%|*}; s=${x#*|}
    echo "== bench r$r $c $b [${s:-cost model}]: $(timeout 40 $bin/gdn-run-$b --bench --iters=5 ${s:+"--schedule=#gdn.schedule<$s>"} /tmp/$c.mlir 2>&1 | grep -E '^bench|error' | tail -1)"
  done; done; [ $((SECONDS-t0)) -gt 420 ] && break; done 2>&1 | tee $out/bench.log | sed 's/solve = chunk_parallel, max_registers = 0, //' | cut -c1-160
echo "elapsed $((SECONDS-t0)) s"
