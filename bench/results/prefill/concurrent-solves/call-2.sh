#!/usr/bin/env bash
# Session 57, call 2: why call 1's concurrent_solves = 1 lost on every row.
# Nsight Compute's duration, registers, occupancy and throughput of each
# launch at N = 4, T = 4096, both ways. Nsight serializes the launches, so
# the concurrent form's solves run alone (persistent CTAs, 64 registers)
# and its scan finds every count already reached: the two numbers are each
# launch's cost with no overlap, to set beside call 1's sums.
#   carry: .carry/gdn-run.xz (scripts/carry-static.sh)
set -u
out=${OUT:-/tmp}; t0=$SECONDS
mkdir -p /tmp/gdn; xz -dc .carry/gdn-run.xz > /tmp/gdn/gdn-run; chmod +x /tmp/gdn/gdn-run
run=/tmp/gdn/gdn-run
python3 -c "
import sys; sys.path.insert(0, 'bench/profile'); import prefill_sweep as ps
open('/tmp/n4_4096.mlir', 'w').write(ps.recurrent(4, 4096))"
for s in "" "concurrent_solves = 1, segments = 1"; do
  tag=${s:+concurrent}; tag=${tag:-default}
  timeout 90 ncu --clock-control none --section SpeedOfLight --section LaunchStats --section Occupancy \
    -k regex:prefill --launch-count 3 -f -o /tmp/c-$tag $run --bench --iters=1 \
    ${s:+"--schedule=#gdn.schedule<$s>"} /tmp/n4_4096.mlir > /dev/null 2>&1
  ncu -i /tmp/c-$tag.ncu-rep --page details > $out/ncu-n4-$tag.txt 2>&1
  echo "== $tag"; grep -E "prefill_|^    Duration|Registers Per|DRAM Throughput|Achieved Occupancy|Grid Size" \
    $out/ncu-n4-$tag.txt | sed 's/  */ /g'
done 2>&1 | tee $out/ncu.log
echo "ncu at $((SECONDS-t0)) s"
