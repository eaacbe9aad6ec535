#!/usr/bin/env bash
# Session 54, call 11: (1) the two fixes of session 53 never run on a GPU:
# gdn-run --check of the replay windows of 65 steps on 64 threads
# (test/Conversion/GDNToGPU/convert-gdn-to-gpu-replay-window-steps.mlir)
# and of the e4m3 decode at K = 192 under the cost model's default
# (@decode_fp8_k192 of gdn-select-schedule.mlir); (2) the tensor-core scan
# with two row tiles a warp (columns_per_lane = 4, branch scan-tiles)
# against the fp64 reference: chunk_parallel on 4 and 2 warps, kv, lengths
# around the chunk, checkpoints, a varlen pool, segments, KDA, tf32x3,
# K = V = 64, the one-launch form at T = 12, an e4m3 state, the producer
# warpgroup; (3) gdn-run --bench of main (892d4e0's kernels: .carry/s53)
# beside the branch (.carry/s54) at the cost model's schedule and at
# columns_per_lane = 4, two rounds (the second if the call is under 200 s).
# About 300 s.
set -u
out=${OUT:-/tmp}; t0=$SECONDS
for v in s53 s54; do mkdir -p /tmp/gdn-$v; xz -dc .carry/$v/bins.txz | tar -C /tmp/gdn-$v -xf -; done
main=/tmp/gdn-s53/gdn-run; new=/tmp/gdn-s54/gdn-run
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $out/gpu.txt
python3 - <<'PY'
import sys; sys.path.insert(0, 'bench/profile')
import prefill_sweep as ps
w = lambda name, text: open(f'/tmp/{name}.mlir', 'w').write(text)
w('t1000', ps.recurrent(2, 1000)); w('t65', ps.recurrent(2, 65)); w('t64', ps.recurrent(2, 64))
w('kv1000', ps.recurrent(2, 1000).replace('#gdn.layout<vk>', '#gdn.layout<kv>'))
w('cp1000', ps.recurrent(2, 1000, False, 64, 30))
w('vl', ps.recurrent(6, 2000, True, 64, 40, pool=8))
w('kda1000', ps.recurrent(2, 1000, kda=True)); w('k64', ps.recurrent(2, 1000, K=64, V=64))
w('t12', ps.recurrent(64, 12)); w('h32_4096', ps.recurrent(1, 4096))
w('n4_4096', ps.recurrent(4, 4096)); w('n16_2048', ps.recurrent(16, 2048))
w('n1_8192', ps.recurrent(1, 8192)); w('n1_2048', ps.recurrent(1, 2048))
w('vl64', ps.recurrent(64, 4096, True, pool=66))
ps.HV, ps.H = 64, 32
w('hv64_n4_2048', ps.recurrent(4, 2048))
t = open('test/Target/PTX/ptxas-scaled-tensor-cores.mlir').read()
w('fp8', t.split('//--- long.mlir\n', 1)[1].split('//---', 1)[0])
t = open('test/Conversion/GDNToGPU/gdn-select-schedule.mlir').read()
i = t.index('func.func @decode_fp8_k192('); w('fp8_k192', t[i:t.index('// -----', i)])
PY
cp test/Conversion/GDNToGPU/convert-gdn-to-gpu-replay-window-steps.mlir /tmp/replay65.mlir
chk() { local r rc; r=$(timeout 120 $1 --check ${3:+"--schedule=#gdn.schedule<$3>"} /tmp/$2.mlir 2>&1); rc=$?
  echo "== $(basename $(dirname $1)) $2 [$3]: $(echo "$r" | grep -E '^check|error' | sed 's/  */ /g' | tr '\n' ' ' | cut -c1-400) rc=$rc"; }
T4='solve = chunk_parallel, warps = 4, columns_per_lane = 4'
{ chk $new replay65 ""; chk $new fp8_k192 ""; chk $main replay65 ""
  chk $new t1000 ""; chk $new h32_4096 ""; chk $new vl ""
  chk $new t1000 "$T4"; chk $new t65 "$T4"; chk $new t64 "$T4"
  chk $new t1000 "solve = chunk_parallel, warps = 2, columns_per_lane = 4"
  chk $new kv1000 "$T4"; chk $new cp1000 "$T4"; chk $new vl "$T4"
  chk $new t1000 "$T4, segments = 4, max_registers = 0"
  chk $new h32_4096 "solve = chunk_parallel, columns_per_lane = 4, max_registers = 0"
  chk $new kda1000 "$T4"; chk $new t1000 "$T4, precision = tf32x3"
  chk $new k64 "solve = chunk_parallel, warps = 2, columns_per_lane = 4"
  chk $new t12 "solve = tensor_cores, columns_per_lane = 4"
  chk $new fp8 "solve = chunk_parallel, columns_per_lane = 4, max_registers = 0"
  chk $new t1000 "solve = tensor_cores, producer_stages = 2, columns_per_lane = 4"
} > $out/checks.log 2>&1
cut -c1-300 $out/checks.log; echo "checks at $((SECONDS-t0)) s"
bench() { local r; r=$(timeout 60 $1 --bench --iters=5 ${3:+"--schedule=#gdn.schedule<$3>"} /tmp/$2.mlir 2>&1)
  echo "$(basename $(dirname $1)) $2 [$3]: $(echo "$r" | grep -E '^bench|error' | tail -1 | cut -c1-60)"; }
for round in 1 2; do
  [ $round = 2 ] && [ $((SECONDS-t0)) -gt 200 ] && { echo "no round 2: $((SECONDS-t0)) s"; break; }
  bench $main n4_4096 ""; bench $new n4_4096 ""; bench $new n4_4096 "$T4"
  bench $new n4_4096 "$T4, chunk_prefetch_distance = 0"
  bench $main n16_2048 ""; bench $new n16_2048 "$T4, max_registers = 0"
  bench $new n16_2048 "$T4, max_registers = 0, chunk_prefetch_distance = 1"
  bench $main hv64_n4_2048 ""; bench $new hv64_n4_2048 "$T4, max_registers = 0"
  bench $main vl64 ""; bench $new vl64 "$T4, max_registers = 0"
  bench $main n1_8192 ""
  bench $new n1_8192 "solve = chunk_parallel, warps = 2, columns_per_lane = 4, segments = 4, max_registers = 0"
  bench $new n1_8192 "$T4, segments = 4, max_registers = 0"
  bench $new n1_8192 "$T4, segments = 8, max_registers = 0"
  bench $main n1_2048 ""
  bench $new n1_2048 "solve = chunk_parallel, warps = 1, columns_per_lane = 4"
  bench $new n1_2048 "solve = chunk_parallel, warps = 2, columns_per_lane = 4, segments = 2, max_registers = 0"
  echo "round $round at $((SECONDS-t0)) s"
done 2>&1 | tee $out/ab.log
