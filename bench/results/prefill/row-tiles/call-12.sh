#!/usr/bin/env bash
# Next call (written in session 54, which had no device time left): the
# rows call 11 did not reach, and the prefill entry points' GPU tests over
# a library whose cost model takes two row tiles. (1) gdn-run --bench of
# main before the row tiles (.carry/s53: 892d4e0) beside main at 6f04385
# (.carry/s54b) under each's cost model, two rounds: the grids the rule
# covers untimed (N = 3; HV = 64 at N = 4 and 16; N = 64 at HV = 32), and,
# on 6f04385, two row tiles pinned where the rule keeps one (one sequence
# of 8192 split on 2 warps of two tiles, the same grid as 4 of one; a
# varlen batch of 64; KDA at N = 4). (2) The prefill entry points' GPU tests
# over 6f04385's libGDNCAPI.so. About 300 s.
#   carry: .carry/s53/bins.txz, .carry/s54b/bins.txz,
#   .carry/s54b/libGDNCAPI.so.xz (about 54 MB with the tree)
set -u
out=${OUT:-/tmp}; t0=$SECONDS
for v in s53 s54b; do mkdir -p /tmp/gdn-$v; xz -dc .carry/$v/bins.txz | tar -C /tmp/gdn-$v -xf -; done
old=/tmp/gdn-s53/gdn-run; new=/tmp/gdn-s54b/gdn-run
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $out/gpu.txt
python3 - <<'PY'
import sys; sys.path.insert(0, 'bench/profile')
import prefill_sweep as ps
w = lambda name, text: open(f'/tmp/{name}.mlir', 'w').write(text)
w('n3_4096', ps.recurrent(3, 4096)); w('n64_2048', ps.recurrent(64, 2048))
w('n1_8192', ps.recurrent(1, 8192)); w('vl64', ps.recurrent(64, 4096, True, pool=66))
w('kda4', ps.recurrent(4, 4096, kda=True))
ps.HV, ps.H = 64, 32
w('hv64_n4', ps.recurrent(4, 2048)); w('hv64_n16', ps.recurrent(16, 2048))
PY
T4='solve = chunk_parallel, warps = 4, columns_per_lane = 4, max_registers = 0, chunk_prefetch_distance = 1'
bench() { local r; r=$(timeout 60 $1 --bench --iters=5 ${3:+"--schedule=#gdn.schedule<$3>"} /tmp/$2.mlir 2>&1)
  echo "$(basename $(dirname $1)) $2 [$3]: $(echo "$r" | grep -E '^bench|error' | tail -1 | cut -c1-60)"; }
for round in 1 2; do
  [ $round = 2 ] && [ $((SECONDS-t0)) -gt 150 ] && { echo "no round 2: $((SECONDS-t0)) s"; break; }
  for f in n3_4096 hv64_n4 hv64_n16 n64_2048; do bench $old $f ""; bench $new $f ""; done
  bench $new n1_8192 ""
  bench $new n1_8192 "solve = chunk_parallel, warps = 2, columns_per_lane = 4, segments = 4, max_registers = 0, chunk_prefetch_distance = 1"
  bench $new vl64 ""; bench $new vl64 "$T4"
  bench $new kda4 ""; bench $new kda4 "$T4"
  echo "round $round at $((SECONDS-t0)) s"
done 2>&1 | tee $out/ab.log
mkdir -p /tmp/gdn-lib; xz -dc .carry/s54b/libGDNCAPI.so.xz > /tmp/gdn-lib/libGDNCAPI.so
GDN_LIBRARY=/tmp/gdn-lib/libGDNCAPI.so GDN_CACHE_DIR=/tmp/gdn-cache PYTHONPATH=$PWD/python \
  timeout 200 python3 -m pytest -q -rs python/tests/test_fla_chunk.py python/tests/test_flashinfer_prefill.py \
  python/tests/test_sglang_chunk.py python/tests/test_kda.py > $out/pytest.log 2>&1
tail -4 $out/pytest.log; echo "pytest at $((SECONDS-t0)) s"
