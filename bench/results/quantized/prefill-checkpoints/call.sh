#!/usr/bin/env bash
# Session 47 call A (main = 289b9c5 kernels; carry .carry/gdn-run.xz and
# .carry/libGDNCAPI.so.xz): the prefill entry points' and the fp8 state's
# GPU tests through libGDNCAPI, then an e4m3 state with checkpoints under the cost model.
set -u
out=${OUT:-/tmp}; t0=$SECONDS
bin=/tmp/gdn-bin; mkdir -p $bin
xz -dc .carry/gdn-run.xz > $bin/gdn-run; xz -dc .carry/libGDNCAPI.so.xz > $bin/libGDNCAPI.so; chmod +x $bin/gdn-run
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $out/gpu.txt 2>&1
export GDN_LIBRARY=$bin/libGDNCAPI.so PYTHONPATH=$PWD/python GDN_CACHE_DIR=/tmp/gc PYTHONUNBUFFERED=1
timeout 300 python3 -m pytest -q -rs python/tests/test_fla_chunk.py python/tests/test_flashinfer_prefill.py python/tests/test_sglang_chunk.py python/tests/test_quantized.py > $out/pytest-prefill-fp8.log 2>&1
echo "pytest rc=$? at $((SECONDS-t0)) s" >> $out/pytest-prefill-fp8.log
cat $out/gpu.txt > $out/f3.log
for f in gdn kda; do
  m=bench/results/quantized/prefill-checkpoints/e4m3-checkpoints-$f.mlir
  for s in "" "--schedule=#gdn.schedule<max_registers = 0>"; do
    echo "== $f ${s:-cost-model}"
    timeout 60 $bin/gdn-run --check ${s:+"$s"} $m 2>&1 | grep -E "^check|schedule:|error|ran on"; echo "check rc=${PIPESTATUS[0]}"
    timeout 40 $bin/gdn-run --bench --iters=5 ${s:+"$s"} $m 2>&1 | grep -E "^bench|error"
  done
done >> $out/f3.log 2>&1
echo "elapsed $((SECONDS-t0)) s" >> $out/f3.log
tail -12 $out/pytest-prefill-fp8.log | cut -c1-200
cut -c1-200 $out/f3.log
