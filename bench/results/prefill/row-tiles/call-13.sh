#!/usr/bin/env bash
# Next call (written in session 55, after call 12 spent the session's
# device time in its first 16 rows; `ab-12-h100.log`): call 12's rows it
# did not reach, on one build of main (the cost model's schedule beside
# one row tile pinned, `solve = chunk_parallel, columns_per_lane = 2`):
# N = 16 under one row tile, N = 64, HV = 64 at N = 16 and at N = 1 (two
# row tiles pinned on half the warps), two varlen batches and KDA (two row
# tiles pinned); branch solves-cap (the first launch capped at 64
# registers) beside main, with its check at N = 2, T = 1000; Nsight
# Compute's durations of the two launches at N = 4, T = 4096; the prefill
# entry points' GPU tests over main's libGDNCAPI.so. Each bench row gets
# 120 s (five of call 12's ran past its 60 s, likely gdn-run drawing the
# inputs on one core: since c3d05e4 on every core).
# About 450 s.
#   carry: .carry/gdn-run.xz, .carry/libGDNCAPI.so.xz (scripts/carry-static.sh),
#   .carry/cap/gdn-run.xz (branch solves-cap, stripped static gdn-run)
set -u
out=${OUT:-/tmp}; t0=$SECONDS
mkdir -p /tmp/gdn; xz -dc .carry/gdn-run.xz > /tmp/gdn/gdn-run; chmod +x /tmp/gdn/gdn-run
run=/tmp/gdn/gdn-run
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $out/gpu.txt
python3 - <<'PY'
import sys; sys.path.insert(0, 'bench/profile')
import prefill_sweep as ps
w = lambda name, text: open(f'/tmp/{name}.mlir', 'w').write(text)
w('n3_4096', ps.recurrent(3, 4096)); w('n4_4096', ps.recurrent(4, 4096))
w('n16_2048', ps.recurrent(16, 2048)); w('n64_2048', ps.recurrent(64, 2048))
w('n1_8192', ps.recurrent(1, 8192)); w('n1_2048', ps.recurrent(1, 2048))
w('vl8', ps.recurrent(8, 16384, True)); w('vl64', ps.recurrent(64, 4096, True, pool=66))
w('kda4', ps.recurrent(4, 4096, kda=True)); w('t1000', ps.recurrent(2, 1000))
ps.HV, ps.H = 64, 32
w('hv64_n4', ps.recurrent(4, 2048)); w('hv64_n16', ps.recurrent(16, 2048))
w('hv64_n1', ps.recurrent(1, 8192))
PY
ONE='solve = chunk_parallel, columns_per_lane = 2'
R4='solve = chunk_parallel, columns_per_lane = 4, max_registers = 0, chunk_prefetch_distance = 1'
bench() { local r; r=$(timeout 120 ${BIN:-$run} --bench --iters=5 ${2:+"--schedule=#gdn.schedule<$2>"} /tmp/$1.mlir 2>&1)
  echo "${BIN:+cap }$1 [$2]: $(echo "$r" | grep -E '^bench|error' | tail -1 | cut -c1-70)"; }
{ bench n16_2048 "$ONE"
  for f in n64_2048 hv64_n16; do bench $f ""; bench $f "$ONE"; done
  bench hv64_n1 ""; bench hv64_n1 "$R4, warps = 2"
  bench vl8 ""; bench vl8 "$R4, warps = 2"; bench vl8 "$R4, warps = 4"
  bench vl64 ""; bench vl64 "$R4, warps = 2"
  bench kda4 ""; bench kda4 "$R4, warps = 4"
  echo "rows at $((SECONDS-t0)) s"; } 2>&1 | tee $out/ab.log
if [ -f .carry/cap/gdn-run.xz ]; then
  cap=/tmp/gdn/gdn-run-cap; xz -dc .carry/cap/gdn-run.xz > $cap; chmod +x $cap
  { timeout 60 $cap --check /tmp/t1000.mlir 2>&1 | grep -E "schedule|check|error" | cut -c1-200
    for f in n4_4096 n16_2048 hv64_n16 n1_8192 vl8 kda4; do bench $f ""; BIN=$cap bench $f ""; done
    echo "cap at $((SECONDS-t0)) s"; } 2>&1 | tee $out/cap.log
fi
for s in "" "$ONE"; do
  tag=${s:+one}; tag=${tag:-default}
  timeout 60 ncu --clock-control none --section SpeedOfLight --section LaunchStats -k regex:prefill \
    --launch-count 2 -f -o /tmp/p-$tag $run --bench --iters=1 ${s:+"--schedule=#gdn.schedule<$s>"} \
    /tmp/n4_4096.mlir > /dev/null 2>&1
  ncu -i /tmp/p-$tag.ncu-rep --page details > $out/ncu-n4-$tag.txt 2>&1
  echo "== $tag"; grep -E "prefill_|^    Duration|Registers Per|DRAM Throughput" $out/ncu-n4-$tag.txt | sed 's/  */ /g'
done
echo "ncu at $((SECONDS-t0)) s"
site=$PWD/.carry/anchor-site
mkdir -p /tmp/gdn-lib; xz -dc .carry/libGDNCAPI.so.xz > /tmp/gdn-lib/libGDNCAPI.so
GDN_LIBRARY=/tmp/gdn-lib/libGDNCAPI.so GDN_CACHE_DIR=/tmp/gdn-cache \
  PYTHONPATH=$site:$site/nvidia_cutlass_dsl/dsl_packages:$PWD/python \
  timeout 120 python3 -m pytest -q -rs python/tests/test_fla_chunk.py python/tests/test_flashinfer_prefill.py \
  python/tests/test_sglang_chunk.py python/tests/test_kda.py > $out/pytest.log 2>&1
tail -6 $out/pytest.log; echo "pytest at $((SECONDS-t0)) s"
