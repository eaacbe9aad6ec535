#!/usr/bin/env bash
set -u
out=${OUT:-/tmp}; bin=/tmp/gdn-bin
ls $bin/gdn-run-d > /dev/null 2>&1 || { mkdir -p $bin; xz -dc .carry/wg64d/gdn-run.xz > $bin/gdn-run-d; chmod +x $bin/gdn-run-d; }
ls /tmp/n4.mlir > /dev/null 2>&1 || python3 -c "
import sys; sys.path.insert(0,'bench/profile')
from prefill_sweep import recurrent
open('/tmp/n4.mlir','w').write(recurrent(4,4096))"
W='solve = chunk_parallel, max_registers = 0'
timeout 100 ncu --section SourceCounters --section WarpStateStats -k regex:chunk_solves --launch-count 1 -f -o /tmp/src-d $bin/gdn-run-d --bench --iters=1 "--schedule=#gdn.schedule<$W, staged_tokens = 64, warps = 8>" /tmp/n4.mlir > /dev/null 2>&1; echo "ncu rc=$?"
timeout 60 ncu -i /tmp/src-d.ncu-rep --page source --csv --print-source sass > $out/src-d.csv 2> $out/src-d.err; echo "src rc=$? rows $(wc -l < $out/src-d.csv)"; head -c 300 $out/src-d.err
ncu -i /tmp/src-d.ncu-rep --page details > $out/ncu-src-d.txt 2>&1
grep -E "Stall|Warp Cycles|Issued" $out/ncu-src-d.txt | head -20
xz -T4 $out/src-d.csv
