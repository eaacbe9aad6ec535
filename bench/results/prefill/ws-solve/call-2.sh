#!/usr/bin/env bash
# Session 49, call 2 (not run: no device start was left; README.md): the
# warp-specialized solve (the gdn-run of call 1, .carry/ws/bins.txz)
# checked on the examples h200-check.sh runs the chunked solves on: MTP
# (T = 4 in a chunk of 8), a kv state, varlen extends into a bf16 and an
# e4m3 pool; and T = 17 at N = 2.
set -u
out=${OUT:-/tmp}; bin=/tmp/gdn-bin; mkdir -p $bin
xz -dc .carry/ws/bins.txz | tar -C $bin -xf - gdn-run; chmod +x $bin/gdn-run
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $out/gpu.txt
python3 -c "import sys; sys.path.insert(0, 'bench/profile')
from prefill_sweep import recurrent; open('/tmp/t17.mlir', 'w').write(recurrent(2, 17))"
WS='#gdn.schedule<solve = tensor_cores, producer_stages = 2>'
for f in examples/qwen3_next_mtp.mlir examples/kv_k128_v64.mlir examples/sglang_varlen_extend.mlir examples/sglang_varlen_extend_fp8.mlir /tmp/t17.mlir; do
  echo "== $f: $(timeout 60 $bin/gdn-run --check --schedule="$WS" $f 2>&1 | grep -E '^check|error' | sed 's/  */ /g' | tr '\n' ' ') rc=${PIPESTATUS[0]}"
done | tee $out/checks-examples.log
