set -u
mkdir -p /tmp/b /tmp/gdn-lib
xz -dc .carry/gdn-run.xz > /tmp/b/gdn-run && chmod +x /tmp/b/gdn-run
xz -dc .carry/libGDNCAPI.so.xz > /tmp/gdn-lib/libGDNCAPI.so
export GDN_LIBRARY=/tmp/gdn-lib/libGDNCAPI.so PYTHONPATH=$PWD/python
for f in bench/profile/fla_t12_n64_kv.mlir .gpu-tmp/fla_t12_n256_kv.mlir; do
  for clk in 0 1 0 1; do
    if [ $clk = 1 ]; then export GDN_PHASE_CLOCK=1; else unset GDN_PHASE_CLOCK; fi
    echo "$f clock=$clk $(/tmp/b/gdn-run --target=cuda --bench $f 2>&1 | grep 'bench:' | tr '\n' ' ')"
  done
done
unset GDN_PHASE_CLOCK
GDN_CACHE_DIR=/tmp/c0 /tmp/b/gdn-run --target=cuda --check bench/profile/fla_t12_n64_kv.mlir 2>&1 | tail -2
GDN_PHASE_CLOCK=1 GDN_CACHE_DIR=/tmp/c1 python3 .gpu-tmp/phase.py 8,64,256 2>&1 | tee $OUT/phase.txt
