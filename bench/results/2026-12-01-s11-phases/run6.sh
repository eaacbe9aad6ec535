set -u
mkdir -p /tmp/b /tmp/gdn-lib
xz -dc .carry/gdn-run.xz > /tmp/b/gdn-run && chmod +x /tmp/b/gdn-run
xz -dc .carry/libGDNCAPI.so.xz > /tmp/gdn-lib/libGDNCAPI.so
export GDN_LIBRARY=/tmp/gdn-lib/libGDNCAPI.so PYTHONPATH=$PWD/python
R=/tmp/b/gdn-run
GDN_PHASE_CLOCK=1 GDN_CACHE_DIR=/tmp/c1 python3 .gpu-tmp/phase.py 8,64,256 2>&1 | tee $OUT/phase-prefetch.txt
for f in bench/profile/fla_t12_n64_kv.mlir .gpu-tmp/fla_t12_n256_kv.mlir; do
  for d in 66 99 132 198; do
    echo "d$d $f $($R --target=cuda --bench --l2-prefetch-distance=$d $f 2>&1 | grep 'bench:' | sed 's/ (.*//')"
  done
done | tee $OUT/distance.log
