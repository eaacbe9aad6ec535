set -u
mkdir -p /tmp/b /tmp/gdn-lib
xz -dc .carry/gdn-run.xz > /tmp/b/gdn-run && chmod +x /tmp/b/gdn-run
xz -dc .carry/libGDNCAPI.so.xz > /tmp/gdn-lib/libGDNCAPI.so
export GDN_LIBRARY=/tmp/gdn-lib/libGDNCAPI.so PYTHONPATH=$PWD/python
R=/tmp/b/gdn-run
echo "== checks"
for v in 1 2; do
  export GDN_TC_VARIANT=$v
  for args in "bench/sweeps/fla_t12_n8_kv.mlir" "bench/sweeps/fla_t12_n8_kv.mlir --warps-per-block=4" \
      "bench/sweeps/fla_t12_n8_kv.mlir --warps-per-block=2" "bench/sweeps/fused_t12_n1_vk.mlir --chunked-solve=2" \
      "examples/qwen3_next_mtp.mlir --chunked-solve=2" "examples/sglang_varlen_extend.mlir --chunked-solve=2" \
      "examples/kv_k128_v64.mlir --chunked-solve=2" "examples/sglang_pool_decode.mlir --chunked-solve=2"; do
    out=$($R --target=cuda --check $args 2>&1); rc=$?
    echo "v$v rc=$rc $args :: $(echo "$out" | grep -c ' ok$') ok, $(echo "$out" | grep -ci 'fail\|error') bad"
    [ $rc = 0 ] || echo "$out" | tail -5
  done
done
echo "== bench"
for round in 1 2; do
  for f in bench/sweeps/fla_t12_n8_kv.mlir bench/profile/fla_t12_n64_kv.mlir .gpu-tmp/fla_t12_n256_kv.mlir; do
    for v in 0 1 2; do
      echo "r$round v$v $f $(GDN_TC_VARIANT=$v $R --target=cuda --bench $f 2>&1 | grep 'bench:' | sed 's/ (.*//')"
    done
  done
done | tee $OUT/ab.log
for v in 0 1 2; do
  echo "== phase clocks v$v"
  GDN_TC_VARIANT=$v GDN_PHASE_CLOCK=1 GDN_CACHE_DIR=/tmp/c$v python3 .gpu-tmp/phase.py 64,256 2>&1 | tee $OUT/phase-v$v.txt
done
echo "== summary"; grep "^r" $OUT/ab.log | awk '{print $1, $2, $3, $5}'
