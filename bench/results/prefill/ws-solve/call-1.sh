#!/usr/bin/env bash
# Session 49, call 1: the warp-specialized WY solve (solve = tensor_cores,
# producer_stages = 2; branch commit c818690 and on) against the fp64
# reference, then beside the cost model's chunk_parallel in the same build
# (gdn-run --bench, CUDA-graph replays), then the prefill entry points'
# GPU tests through its libGDNCAPI. ws2: the same build but for two
# producer groups of 2 warps, each solving every other chunk
# (GDN_SOLVER_GROUPS = 2 in WarpSpecializedSolve.cpp). About 330 s.
#   carry: .carry/ws/bins.txz, a tar of the stripped static gdn-run and
#   libGDNCAPI.so of c818690 and ws2 (scripts/build.sh --static; xz -9e)
set -u
out=${OUT:-/tmp}; t0=$SECONDS; bin=/tmp/gdn-bin; mkdir -p $bin
xz -dc .carry/ws/bins.txz | tar -C $bin -xf -; chmod +x $bin/gdn-run $bin/ws2
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $out/gpu.txt
python3 - <<'PY'
import sys; sys.path.insert(0, 'bench/profile')
from prefill_sweep import recurrent
for k, (N, T) in {'t1': (2, 1), 't63': (2, 63), 't64': (2, 64), 't65': (2, 65),
                  't1000': (2, 1000), 'n1': (1, 4096), 'n4': (4, 4096),
                  'n16': (16, 2048)}.items():
    open(f'/tmp/{k}.mlir', 'w').write(recurrent(N, T))
open('/tmp/ck.mlir', 'w').write(recurrent(2, 1000, False, 64, 40))
open('/tmp/vl.mlir', 'w').write(recurrent(6, 2000, True, 64, 40, pool=8))
open('/tmp/v64.mlir', 'w').write(recurrent(64, 4096, True))
PY
WS='solve = tensor_cores, producer_stages = 2'
chk() { echo "== ${B:-gdn-run} $1 [${2:-cost model}]: $(timeout 60 $bin/${B:-gdn-run} --check ${2:+"--schedule=#gdn.schedule<$2>"} /tmp/$1.mlir 2>&1 | grep -E '^check|error|schedule:' | sed 's/  */ /g' | tr '\n' ' ' | cut -c1-600) rc=${PIPESTATUS[0]}"; }
{ chk t1000 "$WS"; chk t65 "$WS"; chk ck "$WS"; chk vl "$WS"; chk n1 "$WS"
  chk t1 "$WS"; chk t63 "$WS"; chk t1000 "$WS, precision = tf32x3"
  B=ws2 chk t1000 "$WS"; B=ws2 chk vl "$WS"; B=ws2 chk n1 "$WS"
} > $out/checks.log 2>&1
sed -E 's/check ([a-z_ ]+) max-abs [^ ]+ rms-rel ([^ ]+) \(tol [^)]*\)/\1 \2/g' $out/checks.log | cut -c1-230
echo "checks at $((SECONDS-t0)) s"
bench() { echo "$1 $2 [${3:-cost model}]: $(timeout 60 $bin/$2 --bench --iters=5 ${3:+"--schedule=#gdn.schedule<$3>"} /tmp/$1.mlir 2>&1 | grep -E '^bench|error' | tail -1 | cut -c1-70)"; }
for row in n4 n1 n16 v64; do
  bench $row gdn-run; bench $row gdn-run "$WS"; bench $row ws2 "$WS"
done | tee $out/ab.log
echo "bench at $((SECONDS-t0)) s"
export GDN_LIBRARY=$bin/libGDNCAPI.so PYTHONPATH=$PWD/python GDN_CACHE_DIR=/tmp/gc PYTHONUNBUFFERED=1
timeout 150 python3 -m pytest -q -rs python/tests/test_fla_chunk.py python/tests/test_flashinfer_prefill.py python/tests/test_sglang_chunk.py > $out/pytest-prefill.log 2>&1
echo "pytest rc=$? at $((SECONDS-t0)) s" >> $out/pytest-prefill.log
tail -4 $out/pytest-prefill.log | cut -c1-200
