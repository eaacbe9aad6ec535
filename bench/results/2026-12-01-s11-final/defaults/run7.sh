set -u
t0=$(date +%s)
SCHEDULES=0 timeout 260 bash scripts/h200-check.sh > $OUT/check-defaults.log 2>&1; echo "check rc=$? in $(( $(date +%s) - t0 )) s"
sed 's/memref<1x/memref<64x/g; s/memref<1xi32>/memref<64xi32>/g' bench/sweeps/fused_t12_n1_vk.mlir > /tmp/vk64.mlir
/tmp/gdn-bin/gdn-run --target=cuda --check /tmp/vk64.mlir 2>&1 | grep -E "compiled|check" | tee -a $OUT/check-defaults.log
t1=$(date +%s)
PYTEST=1 BENCH_ARGS="--only FLA-style --Ts 12 --hv 32 --Ns 64" timeout 200 bash scripts/h200-python.sh > $OUT/python.log 2>&1; echo "python rc=$? in $(( $(date +%s) - t1 )) s"
tail -22 $OUT/check-defaults.log; grep -E "passed|failed" $OUT/pytest-h200.log | tail -2
