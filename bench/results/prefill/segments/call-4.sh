#!/usr/bin/env bash
# Session 51, call 1: the review-fix split kernels (main at 4960807: the scan
# starts segment 0 from a copy of the initial state in the workspace) against
# the fp64 reference (gdn-run --check, call-1.sh's list plus one long varlen
# sequence), one long varlen sequence unsplit against split (gdn-run
# --bench), and the prefill entry points' GPU tests over the same build's
# libGDNCAPI.so (FLA chunk with B = 1, T = 8192 takes the split by
# default). About 500 s.
#   carry: .carry/s51/bins.txz, a tar of the stripped static gdn-run and
#   libGDNCAPI.so (scripts/build.sh --static; xz -9e)
set -u
out=${OUT:-/tmp}; t0=$SECONDS; bin=/tmp/gdn-bin; mkdir -p $bin
xz -dc .carry/s51/bins.txz | tar -C $bin -xf -; chmod +x $bin/gdn-run
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
open('/tmp/vl1.mlir', 'w').write(recurrent(1, 4097, True))
open('/tmp/kda.mlir', 'w').write(recurrent(2, 1000, kda=True))
for k, (N, T) in {'vl1_8k': (1, 8193), 'vl1_32k': (1, 32769), 'vl2_32k': (2, 32769)}.items():
    open(f'/tmp/{k}.mlir', 'w').write(recurrent(N, T, True))
ps.H, ps.HV = 4, 8
open('/tmp/h8_4k.mlir', 'w').write(recurrent(1, 4096))
open('/tmp/h8_vl1_32k.mlir', 'w').write(recurrent(1, 32769, True))
PY
CP='solve = chunk_parallel'
chk() { echo "== $1 [$2]: $(timeout 90 $bin/gdn-run --check "--schedule=#gdn.schedule<$2>" /tmp/$1.mlir 2>&1 | grep -E '^check|error|schedule:' | sed 's/  */ /g' | tr '\n' ' ' | cut -c1-600) rc=${PIPESTATUS[0]}"; }
{ chk t1000 "$CP, segments = 2"; chk t1000 "$CP, segments = 4"
  chk t1000 "$CP, segments = 8"; chk t65 "$CP, segments = 2"
  chk ck "$CP, segments = 4"; chk vl "$CP, segments = 4"
  chk n1 "$CP, segments = 8"; chk h8_4k "$CP, segments = 8"
  chk vl1 "$CP, segments = 4, warps = 4"
  chk kda "$CP, segments = 4"; chk t1000 "$CP, segments = 4, precision = tf32x3"
  chk t1000 "$CP"
} > $out/checks.log 2>&1
sed -E 's/check ([a-z_ ]+) max-abs [^ ]+ rms-rel ([^ ]+) \(tol [^)]*\)/\1 \2/g' $out/checks.log | cut -c1-230
echo "checks at $((SECONDS-t0)) s"
mkdir -p /tmp/gdn-lib; cp $bin/libGDNCAPI.so /tmp/gdn-lib/
GDN_LIBRARY=/tmp/gdn-lib/libGDNCAPI.so GDN_CACHE_DIR=/tmp/gdn-cache PYTHONPATH=$PWD/python \
  timeout 240 python3 -m pytest -q -rs python/tests/test_fla_chunk.py \
  python/tests/test_flashinfer_prefill.py python/tests/test_sglang_chunk.py \
  python/tests/test_kda.py > $out/pytest.log 2>&1
tail -6 $out/pytest.log; echo "pytest at $((SECONDS-t0)) s"
S4='segments = 4, warps = 4, chunk_prefetch_distance = 1'
bench() { local r; r=$(timeout 60 $bin/gdn-run --bench --iters=5 ${2:+"--schedule=#gdn.schedule<$2>"} /tmp/$1.mlir 2>&1)
  echo "$1 [$2]: $(echo "$r" | grep -E '^bench|error' | tail -1 | cut -c1-90) | $(echo "$r" | grep '^schedule:' | grep -oE '(warps|segments) = [0-9]+' | tr '\n' ' ')"; }
{ bench n1_8k ""; bench n1_8k "$CP"
  bench vl1_8k ""; bench vl1_8k "$CP, $S4"; bench vl1_8k "$CP, segments = 2, warps = 4, chunk_prefetch_distance = 1"
  bench vl1_32k ""; bench vl1_32k "$CP, $S4"; bench vl1_32k "$CP, segments = 8, warps = 4, chunk_prefetch_distance = 1"
  bench vl2_32k ""; bench vl2_32k "$CP, segments = 2, warps = 4, chunk_prefetch_distance = 1"
  bench vl2_32k "$CP, $S4"
  bench h8_vl1_32k ""; bench h8_vl1_32k "$CP, segments = 8, warps = 4, chunk_prefetch_distance = 1"
  bench h8_vl1_32k "$CP, segments = 16, warps = 4, chunk_prefetch_distance = 1"
} | tee $out/ab.log
echo "bench at $((SECONDS-t0)) s"
