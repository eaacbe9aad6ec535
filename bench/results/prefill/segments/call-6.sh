#!/usr/bin/env bash
# Session 52, call 6: the split's P at HV = 8 and 4 (H = HV / 2) with the
# join of 2134a19 (X_p in shared memory): gdn-run --bench of one sequence
# of 8192 and 32768 tokens in 8, 16 and 32 segments and the cost model's
# default of then, and one varlen sequence of 32769 packed tokens at
# HV = 32. About 180 s. Log: p-cap-6-h100.log.
#   carry: .carry/s51c/bins.txz (gdn-run of 2134a19, stripped static, xz -9e)
set -u; out=${OUT:-/tmp}
mkdir -p /tmp/gdn-c; xz -dc .carry/s51c/bins.txz | tar -C /tmp/gdn-c -xf -
python3 - <<'PY'
import sys; sys.path.insert(0, 'bench/profile')
import prefill_sweep as ps
from prefill_sweep import recurrent
open('/tmp/vl1_32k.mlir', 'w').write(recurrent(1, 32769, True))
ps.H, ps.HV = 4, 8
open('/tmp/h8_32k.mlir', 'w').write(recurrent(1, 32768))
open('/tmp/h8_8k.mlir', 'w').write(recurrent(1, 8192))
ps.H, ps.HV = 2, 4
open('/tmp/h4_32k.mlir', 'w').write(recurrent(1, 32768))
PY
b=/tmp/gdn-c/gdn-run
bench() { local r; r=$(timeout 60 $b --bench --iters=5 ${2:+"--schedule=#gdn.schedule<solve = chunk_parallel, warps = 4, chunk_prefetch_distance = 1, $2>"} /tmp/$1.mlir 2>&1)
  echo "$1 [$2]: $(echo "$r" | grep -E '^bench|error' | tail -1 | cut -c1-40) | $(echo "$r" | grep '^schedule:' | grep -oE '(warps|segments) = [0-9]+' | tr '\n' ' ')"; }
{ bench h8_32k ""; bench h8_32k "segments = 8"; bench h8_32k "segments = 16"; bench h8_32k "segments = 32"
  bench h4_32k ""; bench h4_32k "segments = 16"; bench h4_32k "segments = 32"
  bench h8_8k ""; bench h8_8k "segments = 8"
  bench vl1_32k ""; } | tee $out/pcap.log
