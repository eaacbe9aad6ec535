#!/usr/bin/env bash
# Session 53, call 10 (written in session 52, which had no device time
# left): (1) the splits the cost model now takes by default, never run
# on a GPU, against the fp64 reference: T = 4096 at HV = 8 / 16 / 32 (8 / 4 /
# 2 segments), KDA at T = 4096, and the scaled e4m3 state's prefill
# (test/Target/PTX/ptxas-scaled-tensor-cores.mlir's long.mlir: 2 segments by
# default, 4 pinned for the join); (2) the join as one loop over its steps
# (branch join-loop) against the fp64 reference; (3) gdn-run
# --bench of main's split scans without the register cap (its default since
# session 52's last commits) beside max_registers = 128 (GDN at HV = 8 and
# 32, KDA), and of main beside join-loop at P = 4 / 8 / 16, with each
# module's compile time and the join's PTX size and ptxas time at P = 16;
# (4) the prefill entry points' GPU tests over main's libGDNCAPI.so. About
# 420 s.
#   carry: .carry/s52main/bins.txz (gdn-run of main at the end of session
#   52), .carry/s52loop/bins.txz (gdn-run of join-loop), stripped static,
#   xz; .carry/libGDNCAPI.so.xz (main's C API library)
set -u
out=${OUT:-/tmp}; t0=$SECONDS
for v in main loop; do mkdir -p /tmp/gdn-$v; xz -dc .carry/s52$v/bins.txz | tar -C /tmp/gdn-$v -xf -; done
main=/tmp/gdn-main/gdn-run; loop=/tmp/gdn-loop/gdn-run
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $out/gpu.txt
python3 - <<'PY'
import re, sys; sys.path.insert(0, 'bench/profile')
import prefill_sweep as ps
open('/tmp/t1000.mlir', 'w').write(ps.recurrent(2, 1000))
open('/tmp/k64.mlir', 'w').write(ps.recurrent(2, 1000, K=64, V=64))
open('/tmp/vl.mlir', 'w').write(ps.recurrent(6, 2000, True, 64, 40, pool=8))
open('/tmp/n1_32k.mlir', 'w').write(ps.recurrent(1, 32768))
for hv in (8, 16, 32):
    ps.H, ps.HV = hv // 2, hv
    open(f'/tmp/h{hv}_4096.mlir', 'w').write(ps.recurrent(1, 4096))
    if hv == 32:
        open('/tmp/kda_4096.mlir', 'w').write(ps.recurrent(1, 4096, kda=True))
ps.H, ps.HV = 4, 8
open('/tmp/h8_8192.mlir', 'w').write(ps.recurrent(1, 8192))
open('/tmp/h8_32k.mlir', 'w').write(ps.recurrent(1, 32768))
open('/tmp/kda8_32k.mlir', 'w').write(ps.recurrent(1, 32768, kda=True))
t = open('test/Target/PTX/ptxas-scaled-tensor-cores.mlir').read()
open('/tmp/fp8.mlir', 'w').write(t.split('//--- long.mlir\n', 1)[1].split('//---', 1)[0])
PY
chk() { local r rc; r=$(timeout 120 $1 --check ${3:+"--schedule=#gdn.schedule<$3>"} /tmp/$2.mlir 2>&1); rc=$?
  echo "== $(basename $(dirname $1)) $2 [$3]: $(echo "$r" | grep -E '^check|^schedule|error' | grep -oE 'check .*|segments = [0-9]+|error.*' | sed 's/  */ /g' | tr '\n' ' ' | cut -c1-500) rc=$rc"; }
{ chk $main h8_4096 ""; chk $main h16_4096 ""; chk $main h32_4096 ""; chk $main kda_4096 ""
  chk $main fp8 ""; chk $main fp8 "segments = 4"; chk $main fp8 "segments = 1"
  chk $loop t1000 "solve = chunk_parallel, segments = 3"; chk $loop t1000 "solve = chunk_parallel, segments = 8"
  chk $loop t1000 "solve = chunk_parallel, segments = 16"; chk $loop k64 "solve = chunk_parallel, segments = 8, warps = 4"
  chk $loop vl "solve = chunk_parallel, segments = 8"; chk $loop fp8 "segments = 4"
  chk $loop t1000 "solve = chunk_parallel, segments = 8, precision = tf32x3"
} > $out/checks.log 2>&1
cut -c1-240 $out/checks.log; echo "checks at $((SECONDS-t0)) s"
S='solve = chunk_parallel, warps = 4, chunk_prefetch_distance = 1'
bench() { local r; r=$(timeout 60 $1 --bench --iters=5 "--schedule=#gdn.schedule<$S, $3>" /tmp/$2.mlir 2>&1)
  echo "$(basename $(dirname $1)) $2 [$3]: $(echo "$r" | grep -E '^bench|error' | tail -1 | cut -c1-32) | $(echo "$r" | grep -oE 'compiled in [0-9.]+ ms')"; }
{ # main's default (no register cap on a split scan) beside the cap of 1234721
  for c in "" ", max_registers = 128"; do
    bench $main h8_32k "segments = 16$c"; bench $main n1_32k "segments = 4$c"; bench $main kda8_32k "segments = 16$c"
  done
  for b in $main $loop; do bench $b h8_32k "segments = 16"; bench $b h8_8192 "segments = 8"; bench $b n1_32k "segments = 4"; done
  # The join's PTX (launch 2 at P = 16) through this machine's ptxas: the
  # other half of a first call's compile (the driver's), which `compiled in`
  # leaves out.
  for b in $main $loop; do
    $b --emit=ptx --launch=2 "--schedule=#gdn.schedule<$S, segments = 16>" /tmp/h8_32k.mlir > /tmp/j.ptx
    t=$( { TIMEFORMAT=%R; time ptxas -arch=sm_90a /tmp/j.ptx -o /dev/null; } 2>&1 | tail -1)
    echo "$(basename $(dirname $b)) join ptx $(wc -c < /tmp/j.ptx) bytes, ptxas $t s"
  done; } | tee $out/ab.log
echo "bench at $((SECONDS-t0)) s"
mkdir -p /tmp/gdn-lib; xz -dc .carry/libGDNCAPI.so.xz > /tmp/gdn-lib/libGDNCAPI.so
GDN_LIBRARY=/tmp/gdn-lib/libGDNCAPI.so GDN_CACHE_DIR=/tmp/gdn-cache PYTHONPATH=$PWD/python \
  timeout 200 python3 -m pytest -q -rs python/tests/test_fla_chunk.py python/tests/test_flashinfer_prefill.py \
  python/tests/test_sglang_chunk.py python/tests/test_kda.py > $out/pytest.log 2>&1
tail -4 $out/pytest.log; echo "pytest at $((SECONDS-t0)) s"
