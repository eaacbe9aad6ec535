#!/usr/bin/env bash
# Session 51, call 2: the join with X_p in shared memory and A_p's column
# loads in one trip (SegmentJoinKernel) against the fp64 reference (P = 4, 8,
# 16 with the join; K = V = 64, where threads past K idle; KDA; a varlen pool;
# tf32x3), then beside the join of 7eaa3c3 (one L2 round trip a trip of 8
# keys) in one call: gdn-run --bench of splits with a join, and Nsight
# Compute's join durations at HV = 8, T = 32768, P = 16. About 330 s.
#   carry: .carry/s51b/bins.txz (gdn-run of 7eaa3c3), .carry/s51c/bins.txz
#   (gdn-run of this change), stripped static, xz -9e, and
#   .carry/libGDNCAPI.so.xz (this change's C API library, for the tests below)
set -u
out=${OUT:-/tmp}; t0=$SECONDS
for v in b c; do mkdir -p /tmp/gdn-$v; xz -dc .carry/s51$v/bins.txz | tar -C /tmp/gdn-$v -xf -; done
old=/tmp/gdn-b/gdn-run; new=/tmp/gdn-c/gdn-run
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $out/gpu.txt
python3 - <<'PY'
import sys; sys.path.insert(0, 'bench/profile')
import prefill_sweep as ps
from prefill_sweep import recurrent
open('/tmp/t1000.mlir', 'w').write(recurrent(2, 1000))
open('/tmp/k64.mlir', 'w').write(recurrent(2, 1000, K=64, V=64))
open('/tmp/vl.mlir', 'w').write(recurrent(6, 2000, True, 64, 40, pool=8))
open('/tmp/kda.mlir', 'w').write(recurrent(2, 1000, kda=True))
open('/tmp/n1_32k.mlir', 'w').write(recurrent(1, 32768))
open('/tmp/vl1_32k.mlir', 'w').write(recurrent(1, 32769, True))
ps.H, ps.HV = 4, 8
open('/tmp/h8_32k.mlir', 'w').write(recurrent(1, 32768))
open('/tmp/h8_4k.mlir', 'w').write(recurrent(1, 4096))
PY
CP='solve = chunk_parallel'
chk() { echo "== $1 [$2]: $(timeout 90 $new --check "--schedule=#gdn.schedule<$2>" /tmp/$1.mlir 2>&1 | grep -E '^check|error' | sed 's/  */ /g' | tr '\n' ' ' | cut -c1-600) rc=${PIPESTATUS[0]}"; }
{ chk t1000 "$CP, segments = 4"; chk t1000 "$CP, segments = 8"
  chk t1000 "$CP, segments = 16"; chk k64 "$CP, segments = 4"
  chk k64 "$CP, segments = 8, warps = 4"; chk kda "$CP, segments = 4"
  chk vl "$CP, segments = 8"; chk h8_4k "$CP, segments = 16, warps = 4"
  chk t1000 "$CP, segments = 8, precision = tf32x3"
} > $out/checks.log 2>&1
sed -E 's/check ([a-z_ ]+) max-abs [^ ]+ rms-rel ([^ ]+) \(tol [^)]*\)/\1 \2/g' $out/checks.log | cut -c1-230
echo "checks at $((SECONDS-t0)) s"
# The prefill entry points' tests of one long sequence (FLA's chunk, B = 1;
# FlashInfer's prefill, one varlen sequence with checkpoints) over this
# change's libGDNCAPI.so (.carry/libGDNCAPI.so.xz).
mkdir -p /tmp/gdn-lib; xz -dc .carry/libGDNCAPI.so.xz > /tmp/gdn-lib/libGDNCAPI.so
GDN_LIBRARY=/tmp/gdn-lib/libGDNCAPI.so GDN_CACHE_DIR=/tmp/gdn-cache PYTHONPATH=$PWD/python \
  timeout 150 python3 -m pytest -q -rs -k one_long_sequence python/tests/test_fla_chunk.py \
  python/tests/test_flashinfer_prefill.py > $out/pytest.log 2>&1
tail -3 $out/pytest.log; echo "pytest at $((SECONDS-t0)) s"
S='warps = 4, chunk_prefetch_distance = 1'
bench() { local r; r=$(timeout 60 $1 --bench --iters=5 ${3:+"--schedule=#gdn.schedule<$3>"} /tmp/$2.mlir 2>&1)
  echo "$(basename $(dirname $1)) $2 [$3]: $(echo "$r" | grep -E '^bench|error' | tail -1 | cut -c1-40) | $(echo "$r" | grep '^schedule:' | grep -oE '(warps|segments) = [0-9]+' | tr '\n' ' ')"; }
{ for b in $old $new; do
    bench $b n1_32k ""; bench $b h8_32k ""
  done
} | tee $out/ab.log
echo "bench at $((SECONDS-t0)) s"
[ "${NCU:-1}" = 0 ] && exit 0
for b in $old $new; do
  timeout 90 ncu --kernel-name regex:segment_join --launch-count 3 --metrics gpu__time_duration.sum \
    $b --bench --iters=1 "--schedule=#gdn.schedule<$CP, segments = 16, $S>" /tmp/h8_32k.mlir 2>&1 \
    | grep -E "segment_join|gpu__time_duration" | head -4 | sed "s|^|$(basename $(dirname $b)) |"
done | tee $out/ncu-join.txt
echo "ncu at $((SECONDS-t0)) s"
