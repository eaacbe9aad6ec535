#!/usr/bin/env bash
# Session 48's call 3, run in session 49 (README.md): four checks of
# gs0 against the fp64 reference, then main and gs0 at N = 4 T = 4096 (two
# rounds) and N = 16 T = 2048, about 150 s.
#   main  0e6eb37 (before the shared Gram)
#   gs0   9063d1a (the shared Gram on main's q/k staging)
#   carry: .carry/m48gs/bins.txz, the two stripped static gdn-run binaries
#   named main and gs0 in one tar (xz -9e --lzma2=dict=256MiB: 19 MB)
set -u
out=${OUT:-/tmp}; t0=$SECONDS; bin=/tmp/gdn-bin; mkdir -p $bin
xz -dc .carry/m48gs/bins.txz | tar -C $bin -xf -; chmod +x $bin/*
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $out/gpu.txt
python3 - <<'PY'
import sys; sys.path.insert(0,'bench/profile')
from prefill_sweep import recurrent
open('/tmp/t1000.mlir','w').write(recurrent(2,1000))
open('/tmp/ck.mlir','w').write(recurrent(2,1000,False,64,40))
open('/tmp/vl.mlir','w').write(recurrent(6,2000,True,64,40,pool=8))
open('/tmp/n4.mlir','w').write(recurrent(4,4096))
open('/tmp/n16.mlir','w').write(recurrent(16,2048))
PY
chk() { echo "== check $1 $2 [${3:-cost model}]"; timeout 40 $bin/$2 --check ${3:+"--schedule=#gdn.schedule<$3>"} /tmp/$1.mlir > /tmp/chk.txt 2>&1; rc=$?; grep -E '^check|error' /tmp/chk.txt; echo "rc=$rc"; }
{ chk t1000 gs0; chk ck gs0; chk vl gs0; chk t1000 gs0 "solve = chunk_parallel, staged_tokens = 32"; } > $out/checks.log 2>&1
grep -E '^==|^rc' $out/checks.log | paste - - | cut -c1-120
echo "checks at $((SECONDS-t0)) s"
for row in n4 n4 n16; do for b in main gs0; do
  echo "$row $b: $(timeout 40 $bin/$b --bench --iters=5 /tmp/$row.mlir 2>&1 | grep -E '^bench|error' | tail -1 | cut -c1-60)"
done; done | tee $out/ab.log
echo "elapsed $((SECONDS-t0)) s"
