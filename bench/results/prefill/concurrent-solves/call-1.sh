#!/usr/bin/env bash
# Session 56, call 1: concurrent_solves = 1 (the solves' persistent CTAs
# beside the scan, counts per group of 8 chunks) against the cost model's
# two launches, on one static build: gdn-run --check (T = 65, 1000, 4096;
# N = 1, 2, 4; HV = 64) then --bench on the grids a 4-warp scan fits one
# CTA an SM (N <= 4 at HV = 32, N = 2 at HV = 64) and two it does not
# (N = 16, HV = 64 N = 4), each command under a timeout (a count never
# reached would spin). Where carried, builds with another
# kConcurrentSolveRegisters (ScheduleRules.h; the CTAs an SM follow from
# it): .carry/cs80/gdn-run.xz (80: 3 CTAs an SM, no spills) and
# .carry/cs72/gdn-run.xz (72, which gives 4 CTAs only beside a scan of at
# most 224 registers: N = 4 T = 4096's) on the rows they would change.
#   carry: .carry/gdn-run.xz (scripts/carry-static.sh)
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
w('n1_4096', ps.recurrent(1, 4096)); w('n3_4096', ps.recurrent(3, 4096)); w('n4_4096', ps.recurrent(4, 4096))
w('n2_4096', ps.recurrent(2, 4096)); w('n1_2048', ps.recurrent(1, 2048)); w('n4_8192', ps.recurrent(4, 8192))
w('n16_2048', ps.recurrent(16, 2048))
ps.HV, ps.H = 64, 32
w('hv64_n2', ps.recurrent(2, 4096)); w('hv64_n4', ps.recurrent(4, 2048)); w('hv64_t1000', ps.recurrent(2, 1000))
PY
CS='concurrent_solves = 1, segments = 1'
{ for f in t65 t1000 n4_1000 hv64_t1000; do
    echo "check $f: $(timeout 60 $run --check "--schedule=#gdn.schedule<$CS>" /tmp/$f.mlir 2>&1 | grep -E 'check|error|rror' | tail -2 | cut -c1-160 | tr '\n' ' ')"
  done; echo "checks at $((SECONDS-t0)) s"; } 2>&1 | tee $out/checks.log
bench() { local r; r=$(timeout 90 ${BIN:-$run} --bench --iters=5 ${2:+"--schedule=#gdn.schedule<$2>"} /tmp/$1.mlir 2>&1)
  echo "${BIN:+$(basename $(dirname $BIN)) }$1 [$2]: $(echo "$r" | grep -E '^bench|error' | tail -1 | cut -c1-70)"; }
{ for f in n4_4096 n3_4096 n2_4096 n1_2048 hv64_n2 n4_8192 n1_4096 n16_2048 hv64_n4; do
    bench $f ""; bench $f "$CS"; done; echo "bench at $((SECONDS-t0)) s"; } 2>&1 | tee $out/bench.log
for v in cs80 cs72; do
  [ -f .carry/$v/gdn-run.xz ] || continue
  mkdir -p /tmp/$v; xz -dc .carry/$v/gdn-run.xz > /tmp/$v/gdn-run; chmod +x /tmp/$v/gdn-run
  { BIN=/tmp/$v/gdn-run
    echo "check $v t1000: $(timeout 60 $BIN --check "--schedule=#gdn.schedule<$CS>" /tmp/t1000.mlir 2>&1 | grep -E 'check|error|rror' | tail -1 | cut -c1-160)"
    for f in n4_4096 n3_4096 n2_4096 hv64_n2; do bench $f "$CS"; done
    echo "$v at $((SECONDS-t0)) s"; } 2>&1 | tee -a $out/variants.log
done
