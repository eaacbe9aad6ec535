set -u
mkdir -p /tmp/b; xz -dc .carry/gdn-run.xz > /tmp/b/gdn-run && chmod +x /tmp/b/gdn-run
R=/tmp/b/gdn-run
sed 's/64x/128x/g' bench/profile/fla_t12_n64_kv.mlir > /tmp/n128.mlir
for d in 264 528; do GDN_INPUT_PREFETCH=$d $R --target=cuda --check bench/profile/fla_t12_n64_kv.mlir 2>&1 | grep "check"; done
for round in 1 2; do
  for f in bench/profile/fla_t12_n64_kv.mlir /tmp/n128.mlir .gpu-tmp/fla_t12_n256_kv.mlir; do
    for d in 0 132 264 528 1056; do
      echo "r$round d$d $f $(GDN_INPUT_PREFETCH=$d $R --target=cuda --bench $f 2>&1 | grep 'bench:' | sed 's/ (.*//')"
    done
  done
done | tee $OUT/prefetch-ab.log
echo "== summary"; awk '{print $1, $2, $3, $5}' $OUT/prefetch-ab.log
