#!/usr/bin/env bash
# Per-kernel profile of the wgmma 64-token scan (wg64b) against main at
# N = 4 T = 4096; then main's prefill entry-point GPU tests and F3.
set -u
out=${OUT:-/tmp}; t0=$SECONDS
bin=/tmp/gdn-bin; mkdir -p $bin
xz -dc .carry/wg64b/gdn-run.xz > $bin/gdn-run-wg64b
chmod +x $bin/gdn-run*
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $out/gpu.txt
python3 -c "
import sys; sys.path.insert(0,'bench/profile')
from prefill_sweep import recurrent
open('/tmp/n4.mlir','w').write(recurrent(4,4096))"
W='solve = chunk_parallel, max_registers = 0'
python3 -c "
import sys; sys.path.insert(0,'bench/profile')
from prefill_sweep import recurrent
open('/tmp/t65.mlir','w').write(recurrent(2,65)); open('/tmp/vl.mlir','w').write(recurrent(6,2000,True,64,40,pool=8))"
for c in t65 vl; do for s in "" "$W, staged_tokens = 64, warps = 8"; do
  echo "== check $c [${s:-cost model}]: $(timeout 40 $bin/gdn-run-wg64b --check ${s:+"--schedule=#gdn.schedule<$s>"} /tmp/$c.mlir 2>&1 | grep -E '^check|error' | awk '{print $2, $6, $NF}' | tr '\n' ' ')"
done; done
for x in "wg64b|" "wg64b|$W, staged_tokens = 64, warps = 8"; do
  b=${x%%|*}; s=${x#*|}; tag=$b-$(echo "$s" | grep -o 'staged_tokens = [0-9]*' | tr -dc 0-9)
  timeout 60 ncu --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats -k regex:prefill --launch-count 2 -f -o /tmp/p-$tag $bin/gdn-run-$b --bench --iters=1 ${s:+"--schedule=#gdn.schedule<$s>"} /tmp/n4.mlir > /tmp/ncu-$tag.log 2>&1
  ncu -i /tmp/p-$tag.ncu-rep --page details > $out/ncu-$tag.txt 2>&1
  echo "== $tag"; grep -E "prefill_|^    Duration|Registers Per|Achieved Occupancy|Theoretical Occ|Block Limit (Reg|Shared)|Stall|Warp Cycles Per Issued|Compute \(SM\) Throughput|Memory Throughput|Dynamic Shared" $out/ncu-$tag.txt | sed 's/  */ /g' | head -40
done
echo "profiles at $((SECONDS-t0)) s"
python3 -c "
import sys; sys.path.insert(0,'bench/profile')
from prefill_sweep import recurrent
open('/tmp/n16.mlir','w').write(recurrent(16,2048))"
for c in n4 n16; do for s in "" "$W, staged_tokens = 64, warps = 8" "$W, staged_tokens = 32, warps = 8"; do
  echo "== bench $c [${s:-cost model}]: $(timeout 30 $bin/gdn-run-wg64b --bench --iters=5 ${s:+"--schedule=#gdn.schedule<$s>"} /tmp/$c.mlir 2>&1 | grep -E '^bench|error' | tail -1 | cut -c1-60)"
done; done
echo "done at $((SECONDS-t0)) s"
