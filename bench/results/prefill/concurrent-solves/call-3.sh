#!/usr/bin/env bash
# Session 57, call 3: concurrent_solves = 1 with the next item's q and k
# copies in flight while an item is solved (two sets of q and k in shared
# memory, the step call 2 pointed to), against the cost model's two
# launches on three of call 1's grids, one build; its checks (T = 65,
# HV = 64 T = 1000) first, then Nsight Compute's solves and scan at N = 4 T = 4096
# (each alone). Then a second look at row-tiles call 12's varlen row (two
# row tiles on 4 warps, 1.07x once) on two varlen mixes. (Cut to
# about 120 s after four tries got no machine.)
#   carry: .carry/gdn-run.xz (scripts/carry-static.sh); optionally
#   .carry/ea/gdn-run.xz, branch early-acquire's stripped static gdn-run
set -u
out=${OUT:-/tmp}; t0=$SECONDS
mkdir -p /tmp/gdn; xz -dc .carry/gdn-run.xz > /tmp/gdn/gdn-run; chmod +x /tmp/gdn/gdn-run
run=/tmp/gdn/gdn-run
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $out/gpu.txt
python3 - <<'PY'
import sys; sys.path.insert(0, 'bench/profile')
import prefill_sweep as ps
w = lambda name, text: open(f'/tmp/{name}.mlir', 'w').write(text)
w('t65', ps.recurrent(2, 65)); w('t1000', ps.recurrent(2, 1000)); w('n4_1000', ps.recurrent(4, 1000))
w('n4_4096', ps.recurrent(4, 4096)); w('n2_4096', ps.recurrent(2, 4096)); w('n4_8192', ps.recurrent(4, 8192))
w('n16_2048', ps.recurrent(16, 2048))
w('vl8', ps.recurrent(8, 16384, True)); w('vl16', ps.recurrent(16, 32768, True))
w('vl4', ps.recurrent(4, 16384, True))
ps.HV, ps.H = 64, 32
w('hv64_n2', ps.recurrent(2, 4096)); w('hv64_t1000', ps.recurrent(2, 1000))
PY
CS='concurrent_solves = 1, segments = 1'
{ for f in t65 hv64_t1000; do
    echo "check $f: $(timeout 60 $run --check "--schedule=#gdn.schedule<$CS>" /tmp/$f.mlir 2>&1 | grep -E 'check|error|rror' | tail -2 | cut -c1-160 | tr '\n' ' ')"
  done; echo "checks at $((SECONDS-t0)) s"; } 2>&1 | tee $out/checks.log
bench() { local r; r=$(timeout 90 $run --bench --iters=5 ${2:+"--schedule=#gdn.schedule<$2>"} /tmp/$1.mlir 2>&1)
  echo "$1 [$2]: $(echo "$r" | grep -E '^bench|error' | tail -1 | cut -c1-70)"; }
{ for f in n4_4096 n2_4096 n16_2048; do bench $f ""; bench $f "$CS"; done
  echo "bench at $((SECONDS-t0)) s"; } 2>&1 | tee $out/bench.log
for s in "" "$CS"; do
  tag=${s:+concurrent}; tag=${tag:-default}
  timeout 90 ncu --clock-control none --section SpeedOfLight --section LaunchStats --section Occupancy \
    -k regex:prefill --launch-count 3 -f -o /tmp/c-$tag $run --bench --iters=1 \
    ${s:+"--schedule=#gdn.schedule<$s>"} /tmp/n4_4096.mlir > /dev/null 2>&1
  ncu -i /tmp/c-$tag.ncu-rep --page details > $out/ncu-n4-$tag.txt 2>&1
  echo "== $tag"; grep -E "prefill_|^    Duration|Registers Per|DRAM Throughput|Achieved Occupancy" \
    $out/ncu-n4-$tag.txt | sed 's/  */ /g'
done 2>&1 | tee $out/ncu.log
R4='solve = chunk_parallel, columns_per_lane = 4, max_registers = 0, chunk_prefetch_distance = 1, warps = 4'
{ for f in vl8 vl4; do bench $f ""; bench $f "$R4"; done
  echo "varlen at $((SECONDS-t0)) s"; } 2>&1 | tee $out/varlen.log
# Where carried, branch early-acquire's static gdn-run (the scan acquires
# each next group's count half a group ahead): its check and the
# concurrent rows again.
if [ -f .carry/ea/gdn-run.xz ]; then
  mkdir -p /tmp/ea; xz -dc .carry/ea/gdn-run.xz > /tmp/ea/gdn-run; chmod +x /tmp/ea/gdn-run
  { echo "check ea t65: $(timeout 60 /tmp/ea/gdn-run --check "--schedule=#gdn.schedule<$CS>" /tmp/t65.mlir 2>&1 | grep -E 'check|error|rror' | tail -2 | cut -c1-160 | tr '\n' ' ')"
    for f in n4_4096 n2_4096 n16_2048; do run=/tmp/ea/gdn-run bench $f "$CS"; done
    echo "ea at $((SECONDS-t0)) s"; } 2>&1 | tee $out/early-acquire.log
fi
