#!/usr/bin/env bash
# Session 48, call 1 (one H100 or H200), three gdn-run builds:
#   old  main's parent aeb647e's ChunkParallel.cpp (the record copied 4
#        bytes a piece where it is not cp.async)
#   main 0e6eb37 (16-byte record copies, 825e38a)
#   sw   main + swizzled keys (q and k staged in blocks of 16 keys)
#   gs   sw + the shared Gram (the first launch a CTA a key head, its
#        products formed once for the HV / H value heads)
# Checks of sw and gs against the fp64 reference on every path that reads the
# swizzled buffers; prefill_sweep.py's --ab rows on the three builds; then
# Nsight Compute's source counters of both chunk_parallel launches of main
# and sw at N = 4 T = 4096 (the cost model's schedule), by barrier phase.
#   carry: .carry/m48bins/bins.txz (the four stripped gdn-run binaries in one
#   tar, xz -9e with a 256 MiB dictionary: about 21 MB where four .xz are 67)
set -u
out=${OUT:-/tmp}; t0=$SECONDS; bin=/tmp/gdn-bin; mkdir -p $bin
xz -dc .carry/m48bins/bins.txz | tar -C $bin -xf -; chmod +x $bin/*
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $out/gpu.txt
python3 - <<'PY'
import sys; sys.path.insert(0,'bench/profile')
from prefill_sweep import recurrent
cases = {'t1': (2,1), 't63': (2,63), 't64': (2,64), 't65': (2,65), 't1000': (2,1000),
         'n4': (4,4096), 'n1': (1,4096)}
for k,(N,T) in cases.items():
    open(f'/tmp/{k}.mlir','w').write(recurrent(N,T))
open('/tmp/ck.mlir','w').write(recurrent(2,1000,False,64,40))
open('/tmp/vl.mlir','w').write(recurrent(6,2000,True,64,40,pool=8))
PY
CP='solve = chunk_parallel'
chk() { echo "== check $1 $2 [${3:-cost model}]: $(timeout 60 $bin/$2 --check ${3:+"--schedule=#gdn.schedule<$3>"} /tmp/$1.mlir 2>&1 | grep -E '^check|error|schedule:' | sed 's/  */ /g' | tr '\n' ' ' | cut -c1-400)"; }
{ for c in t65 t1000 ck vl; do chk $c sw; chk $c gs; done
  chk t1 sw; chk t63 sw
  chk t1000 sw "$CP, warps = 8, chunk_prefetch_distance = 0"
  chk t1000 sw "$CP, warps = 8, precision = tf32"
  chk vl sw "$CP, warps = 4"
  chk t1000 gs "$CP, staged_tokens = 32"
  chk t1000 main; } 2>&1 | tee $out/checks.log | cut -c1-260
echo "checks at $((SECONDS-t0)) s"
# The A/B rows of prefill_sweep.py (its AB_BENCH), each row on every build
# in turn, two rounds; gdn-run --bench: the median of CUDA-graph replays.
python3 - $bin > $out/ab.log 2>&1 <<'PY'
import subprocess, sys
sys.path.insert(0, 'bench/profile')
from prefill_sweep import recurrent, AB_BENCH
bin_ = sys.argv[1]; builds = ['old', 'main', 'sw', 'gs']
rows = {}
for rnd in range(2):
    for N, T, varlen, _ in AB_BENCH:
        path = f'/tmp/ab-{N}-{T}-{int(varlen)}.mlir'
        open(path, 'w').write(recurrent(N, T, varlen))
        for b in builds:
            out = subprocess.run([f'{bin_}/{b}', '--bench', '--iters=5', path],
                                 capture_output=True, text=True, timeout=60)
            line = [l for l in (out.stdout + out.stderr).splitlines() if l.startswith('bench')]
            print(f'round {rnd} N={N} T={T}{" varlen" if varlen else ""} {b}: {line[-1] if line else (out.stdout + out.stderr)[-200:]}', flush=True)
            rows.setdefault((N, T, varlen), {}).setdefault(b, []).append(line[-1].split()[1] if line else 'error')
print('\n| row | ' + ' | '.join(builds) + ' (us, two rounds) |\n|---|' + '---|' * len(builds))
for (N, T, varlen), r in rows.items():
    print(f'| N={N} T={T}{" varlen" if varlen else ""} | ' + ' | '.join(' / '.join(r[b]) for b in builds) + ' |')
PY
tail -7 $out/ab.log; echo "ab at $((SECONDS-t0)) s"
for bk in sw:recurrent gs:chunk_solves main:recurrent; do b=${bk%%:*}; k=${bk#*:}
  timeout 60 ncu --section SourceCounters --section WarpStateStats --section SpeedOfLight -k regex:prefill_$k --launch-count 1 -f -o /tmp/src-$b-$k $bin/$b --bench --iters=1 /tmp/n4.mlir > /dev/null 2>&1; echo "ncu $b $k rc=$?"
  ncu -i /tmp/src-$b-$k.ncu-rep --page source --csv --print-source sass > /tmp/src-$b-$k.csv 2> $out/src-$b-$k.err
  ncu -i /tmp/src-$b-$k.ncu-rep --page details > $out/ncu-$b-$k.txt 2>&1
  python3 bench/profile/ncu_phases.py /tmp/src-$b-$k.csv --top 12 > $out/phases-$b-$k.txt 2>&1
  xz -T4 -c /tmp/src-$b-$k.csv > $out/src-$b-$k.csv.xz
  grep -E "^    Duration|DRAM Throughput|Memory Throughput" $out/ncu-$b-$k.txt | head -3 | sed 's/  */ /g' | tr '\n' ' '; echo
  grep -E "^\| all" $out/phases-$b-$k.txt
  echo "at $((SECONDS-t0)) s"
done
echo "elapsed $((SECONDS-t0)) s"
