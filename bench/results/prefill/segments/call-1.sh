#!/usr/bin/env bash
# Session 50, call 1: context-parallel segments (segments = P, docs/math.md
# §7; branch cp-segments) against the fp64 reference (gdn-run --check:
# lengths around the chunk, P = 2 / 4 / 8 with the join, checkpoints, a
# varlen pool with empty segments, KDA, tf32x3), then beside the unsplit
# chunk_parallel scan in the same build (gdn-run --bench, CUDA-graph
# replays) for one sequence at HV = 32 and HV = 8. About 400 s.
#   carry: .carry/cp/bins.txz, a tar of the stripped static gdn-run
#   (scripts/build.sh --static; xz -9e)
set -u
out=${OUT:-/tmp}; t0=$SECONDS; bin=/tmp/gdn-bin; mkdir -p $bin
xz -dc .carry/cp/bins.txz | tar -C $bin -xf -; chmod +x $bin/gdn-run
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $out/gpu.txt
python3 - <<'PY'
import sys; sys.path.insert(0, 'bench/profile')
import prefill_sweep as ps
from prefill_sweep import recurrent
for k, (N, T) in {'t65': (2, 65), 't1000': (2, 1000), 'n1': (1, 4096),
                  'n1_8k': (1, 8192), 'n1_32k': (1, 32768)}.items():
    open(f'/tmp/{k}.mlir', 'w').write(recurrent(N, T))
open('/tmp/ck.mlir', 'w').write(recurrent(2, 1000, False, 64, 40))
open('/tmp/vl.mlir', 'w').write(recurrent(6, 2000, True, 64, 40, pool=8))
open('/tmp/kda.mlir', 'w').write(recurrent(2, 1000, kda=True))
ps.H, ps.HV = 4, 8
open('/tmp/h8_4k.mlir', 'w').write(recurrent(1, 4096))
open('/tmp/h8_32k.mlir', 'w').write(recurrent(1, 32768))
PY
CP='solve = chunk_parallel'
chk() { echo "== $1 [$2]: $(timeout 90 $bin/gdn-run --check "--schedule=#gdn.schedule<$2>" /tmp/$1.mlir 2>&1 | grep -E '^check|error|schedule:' | sed 's/  */ /g' | tr '\n' ' ' | cut -c1-600) rc=${PIPESTATUS[0]}"; }
{ chk t1000 "$CP, segments = 2"; chk t1000 "$CP, segments = 4"
  chk t1000 "$CP, segments = 8"; chk t65 "$CP, segments = 2"
  chk ck "$CP, segments = 4"; chk vl "$CP, segments = 4"
  chk n1 "$CP, segments = 8"; chk h8_4k "$CP, segments = 8"
  chk kda "$CP, segments = 4"; chk t1000 "$CP, segments = 4, precision = tf32x3"
  chk t1000 "$CP"
} > $out/checks.log 2>&1
sed -E 's/check ([a-z_ ]+) max-abs [^ ]+ rms-rel ([^ ]+) \(tol [^)]*\)/\1 \2/g' $out/checks.log | cut -c1-230
echo "checks at $((SECONDS-t0)) s"
bench() { echo "$1 [$2]: $(timeout 60 $bin/gdn-run --bench --iters=5 "--schedule=#gdn.schedule<$2>" /tmp/$1.mlir 2>&1 | grep -E '^bench|error' | tail -1 | cut -c1-90)"; }
{ for P in 1 4; do bench n1_8k "$CP, segments = $P"; done
  for P in 1 2 4 8; do bench n1_32k "$CP, segments = $P"; done
  bench n1_32k "$CP, segments = 4, warps = 4"
  for P in 1 4 8 16; do bench h8_32k "$CP, segments = $P"; done
} | tee $out/ab.log
echo "bench at $((SECONDS-t0)) s"
