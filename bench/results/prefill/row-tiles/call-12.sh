#!/usr/bin/env bash
# Session 55, call 12: the rows call 11 did not reach, on one build (main
# at 10e8aff, whose kernels and cost model are 6f04385's): (1) gdn-run
# --bench, the cost model's schedule beside one row tile pinned
# (`solve = chunk_parallel, columns_per_lane = 2`: the cost model then
# picks what it picked before the row tiles, 8 warps), on the grids the
# rule covers untimed (N = 3; HV = 64 at N = 4 and 16; N = 64) and the two
# call 11 timed; and two row tiles pinned where the rule keeps one, each on
# the grid of the one-tile default (half its warps): one sequence of 8192
# split in 4, one of 2048 and one of 8192 at HV = 64 unsplit, two varlen
# batches, KDA; two rounds, the second while the call is under 120 s.
# (2) Where carried, branch solves-cap (the first launch capped at 64
# registers: 8 CTAs an SM, not 7) beside main, and its check at N = 2,
# T = 1000. (3) Nsight Compute's durations of the two launches at N = 4,
# T = 4096, both ways. (4) The prefill entry points' GPU tests over this
# build's libGDNCAPI.so, with whatever anchor site earlier calls unpacked.
#   carry: .carry/gdn-run.xz, .carry/libGDNCAPI.so.xz (scripts/carry-static.sh),
#   .carry/cap/gdn-run.xz (branch solves-cap, stripped static gdn-run)
# PART=2 (the next call, written in session 55 after this one spent the
# session's device time in part 1's first 16 rows, `ab-12-h100.log`): the
# rows part 1 did not reach, each with 120 s (five of part 1's ran past
# its 60 s, likely gdn-run drawing the inputs on one core: since c3d05e4
# on every core), into ab-2.log, then the same register-cap rows,
# profiles and tests. About 450 s.
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
rowlimit=$([ "${PART:-1}" = 1 ] && echo 60 || echo 120)
R4='solve = chunk_parallel, columns_per_lane = 4, max_registers = 0, chunk_prefetch_distance = 1'
bench() { local r; r=$(timeout $rowlimit ${BIN:-$run} --bench --iters=5 ${2:+"--schedule=#gdn.schedule<$2>"} /tmp/$1.mlir 2>&1)
  echo "${BIN:+cap }$1 [$2]: $(echo "$r" | grep -E '^bench|error' | tail -1 | cut -c1-70)"; }
if [ "${PART:-1}" = 1 ]; then
for round in 1 2; do
  [ $round = 2 ] && [ $((SECONDS-t0)) -gt 120 ] && { echo "no round 2: $((SECONDS-t0)) s"; break; }
  for f in n3_4096 n4_4096 n16_2048 n64_2048 hv64_n4 hv64_n16; do bench $f ""; bench $f "$ONE"; done
  bench n1_8192 ""; bench n1_8192 "$R4, warps = 2, segments = 4"
  bench n1_2048 ""; bench n1_2048 "$R4, warps = 1"
  bench hv64_n1 ""; bench hv64_n1 "$R4, warps = 2"
  bench vl8 ""; bench vl8 "$R4, warps = 2"; bench vl8 "$R4, warps = 4"
  bench vl64 ""; bench vl64 "$R4, warps = 2"
  bench kda4 ""; bench kda4 "$R4, warps = 4"
  echo "round $round at $((SECONDS-t0)) s"
done 2>&1 | tee $out/ab.log
else
{ bench n16_2048 "$ONE"
  for f in n64_2048 hv64_n16; do bench $f ""; bench $f "$ONE"; done
  bench hv64_n1 ""; bench hv64_n1 "$R4, warps = 2"
  bench vl8 ""; bench vl8 "$R4, warps = 2"; bench vl8 "$R4, warps = 4"
  bench vl64 ""; bench vl64 "$R4, warps = 2"
  bench kda4 ""; bench kda4 "$R4, warps = 4"
  echo "rows at $((SECONDS-t0)) s"; } 2>&1 | tee $out/ab-2.log
fi
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
